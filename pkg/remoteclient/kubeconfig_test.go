package remoteclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// testToken is the credential of the test kubeconfigs; no error may quote it.
const testToken = "remote-token-do-not-leak"

// newKubeconfig returns a self-contained kubeconfig reaching server with testToken, changed by mutate.
func newKubeconfig(t *testing.T, server string, mutate func(*clientcmdapi.Config)) []byte {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["remote"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	config.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: testToken}
	config.Contexts["remote"] = &clientcmdapi.Context{Cluster: "remote", AuthInfo: "operator"}
	config.CurrentContext = "remote"
	if mutate != nil {
		mutate(config)
	}
	data, err := clientcmd.Write(*config)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseKubeconfigReturnsTheCurrentContextsConfig(t *testing.T) {
	t.Parallel()
	config, err := ParseKubeconfig(newKubeconfig(t, "https://remote.example.com:6443", nil))
	if err != nil {
		t.Fatal(err)
	}
	if config.Host != "https://remote.example.com:6443" || config.BearerToken != testToken || !config.Insecure {
		t.Errorf("unexpected REST config: host %q, insecure %v, token set %v", config.Host, config.Insecure, config.BearerToken == testToken)
	}
}

func TestParseKubeconfigAcceptsACertificateAuthorityFile(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "remote.crt")
	if err := os.WriteFile(caFile, []byte("not checked here"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := ParseKubeconfig(newKubeconfig(t, "https://remote.example.com:6443", func(c *clientcmdapi.Config) {
		c.Clusters["remote"].InsecureSkipTLSVerify = false
		c.Clusters["remote"].CertificateAuthority = caFile
	}))
	if err != nil {
		t.Fatalf("a CA file only decides which servers are trusted and must be accepted: %v", err)
	}
}

func TestParseKubeconfigRejectsUnusableKubeconfigsWithoutQuotingCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		kubeconfig func(t *testing.T) []byte
		wantErr    string
	}{
		{
			name:       "empty",
			kubeconfig: func(*testing.T) []byte { return []byte(" \n") },
			wantErr:    "it is empty",
		},
		{
			name:       "not YAML",
			kubeconfig: func(*testing.T) []byte { return []byte("token: " + testToken + "\n  : [") },
			wantErr:    "it can't be decoded as a kubeconfig",
		},
		{
			name: "no current context",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) { c.CurrentContext = "" })
			},
			wantErr: "it has no current-context",
		},
		{
			name: "current context missing",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) { c.CurrentContext = "elsewhere" })
			},
			wantErr: `its current context "elsewhere" is not usable`,
		},
		{
			name: "no server",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "", nil)
			},
			wantErr: `its current context "remote" is not usable`,
		},
		{
			name: "token file",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) {
					c.AuthInfos["operator"].TokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
				})
			},
			wantErr: `user "operator" uses tokenFile`,
		},
		{
			name: "client certificate and key files",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) {
					c.AuthInfos["operator"].ClientCertificate = "/etc/tls/tls.crt"
					c.AuthInfos["operator"].ClientKey = "/etc/tls/tls.key"
				})
			},
			wantErr: `user "operator" uses client-certificate, client-key`,
		},
		{
			name: "exec plugin",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) {
					c.AuthInfos["operator"].Exec = &clientcmdapi.ExecConfig{Command: "/bin/sh", APIVersion: "client.authentication.k8s.io/v1", InteractiveMode: clientcmdapi.NeverExecInteractiveMode}
				})
			},
			wantErr: `user "operator" uses exec`,
		},
		{
			name: "auth provider",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://remote.example.com", func(c *clientcmdapi.Config) {
					c.AuthInfos["operator"].AuthProvider = &clientcmdapi.AuthProviderConfig{Name: "oidc"}
				})
			},
			wantErr: `user "operator" uses auth-provider`,
		},
		{
			name: "credentials in the server URL",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://admin:"+testToken+"@remote.example.com", nil)
			},
			wantErr: `cluster "remote" has credentials in its server URL`,
		},
		{
			name: "server that is not a URL",
			kubeconfig: func(t *testing.T) []byte {
				return newKubeconfig(t, "https://admin:"+testToken+"@remote example.com", nil)
			},
			wantErr: `cluster "remote" has a server that is not a URL`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseKubeconfig(tc.kubeconfig(t))
			if err == nil {
				t.Fatalf("want an error containing %q, got none", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("want an error containing %q, got %q", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), testToken) {
				t.Errorf("the error quotes the token: %q", err)
			}
		})
	}
}

func TestKubeconfigHashTellsKubeconfigsApart(t *testing.T) {
	t.Parallel()
	a := newKubeconfig(t, "https://a.example.com", nil)
	b := newKubeconfig(t, "https://b.example.com", nil)
	if KubeconfigHash(a) != KubeconfigHash(append([]byte{}, a...)) {
		t.Error("the same kubeconfig hashes differently")
	}
	if KubeconfigHash(a) == KubeconfigHash(b) {
		t.Error("two kubeconfigs hash the same")
	}
}
