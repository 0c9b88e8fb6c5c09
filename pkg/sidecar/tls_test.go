package sidecar

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

func TestTLSFlagsAreCheckedTogether(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		want     TLSSettings
		wantErrs []string
	}{
		{name: "no TLS"},
		{
			name: "CQL with client certificates and Alternator",
			args: []string{"--cql-tls-certificate-file=/s/tls.crt", "--cql-tls-key-file=/s/tls.key", "--cql-tls-client-ca-file=/c/ca-bundle.crt",
				"--alternator-tls-certificate-file=/a/tls.crt", "--alternator-tls-key-file=/a/tls.key"},
			want: TLSSettings{
				CQL:        &CQLTLS{CertificateFile: "/s/tls.crt", KeyFile: "/s/tls.key", ClientCAFile: "/c/ca-bundle.crt"},
				Alternator: &AlternatorTLS{CertificateFile: "/a/tls.crt", KeyFile: "/a/tls.key"},
			},
		},
		{
			name:     "a certificate without its key",
			args:     []string{"--cql-tls-certificate-file=/s/tls.crt"},
			wantErrs: []string{"--cql-tls-certificate-file and --cql-tls-key-file must be set together for CQL"},
		},
		{
			name:     "a key without its certificate",
			args:     []string{"--alternator-tls-key-file=/a/tls.key"},
			wantErrs: []string{"--alternator-tls-certificate-file and --alternator-tls-key-file must be set together for Alternator"},
		},
		{
			name:     "a client CA without a serving certificate",
			args:     []string{"--cql-tls-client-ca-file=/c/ca-bundle.crt"},
			wantErrs: []string{"--cql-tls-client-ca-file needs --cql-tls-certificate-file and --cql-tls-key-file"},
		},
		{
			name:     "a relative path",
			args:     []string{"--cql-tls-certificate-file=tls.crt", "--cql-tls-key-file=/s/tls.key"},
			wantErrs: []string{`--cql-tls-certificate-file must be an absolute path, got "tls.crt"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var f TLSFlags
			cmd := &cobra.Command{}
			f.addFlags(cmd)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			got, errs := f.settings()
			var gotErrs []string
			for _, err := range errs {
				gotErrs = append(gotErrs, err.Error())
			}
			if diff := cmp.Diff(tt.wantErrs, gotErrs); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("settings differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOptionsValidateRejectsHalfConfiguredTLS(t *testing.T) {
	t.Parallel()
	o := validOptions()
	o.TLS.CQLCertificateFile = "/s/tls.crt"
	err := o.Validate()
	if err == nil || !strings.Contains(err.Error(), "--cql-tls-certificate-file and --cql-tls-key-file must be set together") {
		t.Errorf("want the half-configured CQL TLS rejected, got %v", err)
	}
}

func TestMergeConfigServesTLSNextToThePlainPortsAndOwnsItsKeys(t *testing.T) {
	t.Parallel()
	custom := []byte(`
client_encryption_options:
  enabled: false
alternator_https_port: 9999
num_tokens: 16
`)
	s := testSettings()
	s.TLS = TLSSettings{
		CQL:        &CQLTLS{CertificateFile: "/s/tls.crt", KeyFile: "/s/tls.key", ClientCAFile: "/c/ca-bundle.crt"},
		Alternator: &AlternatorTLS{CertificateFile: "/a/tls.crt", KeyFile: "/a/tls.key"},
	}
	got, ignored := mergeCustomConfig(t, custom, s)
	want := map[string]any{
		"client_encryption_options": map[string]any{
			"enabled": true, "certificate": "/s/tls.crt", "keyfile": "/s/tls.key",
			"truststore": "/c/ca-bundle.crt", "require_client_auth": true,
		},
		"native_transport_port_ssl":             9142,
		"native_shard_aware_transport_port_ssl": 19142,
		"alternator_https_port":                 8043,
		"alternator_encryption_options":         map[string]any{"certificate": "/a/tls.crt", "keyfile": "/a/tls.key"},
		"num_tokens":                            16,
	}
	for k, v := range want {
		if diff := cmp.Diff(v, got[k]); diff != "" {
			t.Errorf("key %q differs (-want +got):\n%s", k, diff)
		}
	}
	if diff := cmp.Diff([]string{"alternator_https_port", "client_encryption_options"}, ignored); diff != "" {
		t.Errorf("ignored keys differ (-want +got):\n%s", diff)
	}
}

func TestMergeConfigWithoutTLSKeepsTheUsersTLSSettings(t *testing.T) {
	t.Parallel()
	custom := []byte("client_encryption_options:\n  enabled: true\n  certificate: /mine.crt\n")
	got, ignored := mergeCustomConfig(t, custom, testSettings())
	if diff := cmp.Diff(map[string]any{"enabled": true, "certificate": "/mine.crt"}, got["client_encryption_options"]); diff != "" {
		t.Errorf("the user's client_encryption_options differ (-want +got):\n%s", diff)
	}
	if _, ok := got["native_transport_port_ssl"]; ok || len(ignored) != 0 {
		t.Errorf("TLS keys set (%v) or user keys ignored (%q) without TLS", got["native_transport_port_ssl"], ignored)
	}
}

// The sidecar owns the keys of the endpoints it serves TLS for, and only those: Alternator over HTTPS alone (the
// user's certificate with automatic TLS off) leaves a custom config's own CQL TLS as it is, and the reverse.
func TestMergeConfigOwnsTheKeysOfTheEndpointsItServes(t *testing.T) {
	t.Parallel()
	custom := []byte(`
alternator_enforce_authorization: true
client_encryption_options:
  enabled: true
  certificate: /mine.crt
native_transport_port_ssl: 9143
alternator_https_port: 9999
`)
	tests := []struct {
		name        string
		tls         TLSSettings
		want        map[string]any
		wantIgnored []string
	}{
		{
			name: "Alternator over HTTPS alone",
			tls:  TLSSettings{Alternator: &AlternatorTLS{CertificateFile: "/a/tls.crt", KeyFile: "/a/tls.key"}},
			want: map[string]any{
				"alternator_enforce_authorization": true,
				"client_encryption_options":        map[string]any{"enabled": true, "certificate": "/mine.crt"},
				"native_transport_port_ssl":        9143,
				"alternator_https_port":            8043,
				"alternator_encryption_options":    map[string]any{"certificate": "/a/tls.crt", "keyfile": "/a/tls.key"},
			},
			wantIgnored: []string{"alternator_https_port"},
		},
		{
			name: "CQL alone",
			tls:  TLSSettings{CQL: &CQLTLS{CertificateFile: "/s/tls.crt", KeyFile: "/s/tls.key"}},
			want: map[string]any{
				"alternator_enforce_authorization": true,
				"client_encryption_options":        map[string]any{"enabled": true, "certificate": "/s/tls.crt", "keyfile": "/s/tls.key"},
				"native_transport_port_ssl":        9142,
				"alternator_https_port":            9999,
			},
			wantIgnored: []string{"client_encryption_options", "native_transport_port_ssl"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := testSettings()
			s.TLS = tt.tls
			got, ignored := mergeCustomConfig(t, custom, s)
			for k, v := range tt.want {
				if diff := cmp.Diff(v, got[k]); diff != "" {
					t.Errorf("key %q differs (-want +got):\n%s", k, diff)
				}
			}
			if _, ok := got["alternator_port"]; ok {
				t.Errorf("plain HTTP is configured: %v", got["alternator_port"])
			}
			if diff := cmp.Diff(tt.wantIgnored, ignored); diff != "" {
				t.Errorf("ignored keys differ (-want +got):\n%s", diff)
			}
		})
	}
}

// mergeCustomConfig is MergeConfig of custom over no base, parsed, with the keys it ignored.
func mergeCustomConfig(t *testing.T, custom []byte, s ScyllaDBSettings) (map[string]any, []string) {
	t.Helper()
	return mergeParsedConfig(t, nil, custom, s)
}

// mergeParsedConfig is MergeConfig, parsed, with the keys it ignored.
func mergeParsedConfig(t *testing.T, base, custom []byte, s ScyllaDBSettings) (map[string]any, []string) {
	t.Helper()
	out, ignored, err := MergeConfig(base, custom, s)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return got, ignored
}
