package remoteclient

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeconfigHash identifies a kubeconfig: a remote cluster's clients are rebuilt when it changes.
func KubeconfigHash(kubeconfig []byte) string {
	sum := sha256.Sum256(kubeconfig)
	return hex.EncodeToString(sum[:])
}

// ParseKubeconfig returns the REST configuration of the current context of kubeconfig, the contents of a kubeconfig
// file kept in a Secret, or an error saying what makes it unusable. The error never quotes the kubeconfig's
// credentials.
//
// The kubeconfig must carry its credentials itself. It is rejected when any user reads a token, client certificate or
// client key from a file, runs an exec plugin or uses an auth provider, and when a cluster's server URL carries
// credentials: whoever can write the Secret must not make the operator hand its own files (its service account token)
// to a server of their choice, or run a command in the operator's pod. A cluster's certificate-authority file is
// allowed: it only decides which servers are trusted.
func ParseKubeconfig(kubeconfig []byte) (*rest.Config, error) {
	if len(bytes.TrimSpace(kubeconfig)) == 0 {
		return nil, errors.New("it is empty")
	}
	config, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("it can't be decoded as a kubeconfig: %w", err)
	}
	if err := validateSelfContained(config); err != nil {
		return nil, err
	}
	if len(config.CurrentContext) == 0 {
		return nil, errors.New("it has no current-context")
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*config, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("its current context %q is not usable: %w", config.CurrentContext, err)
	}
	return restConfig, nil
}

// validateSelfContained rejects what ParseKubeconfig documents, naming every offending user and cluster.
func validateSelfContained(config *clientcmdapi.Config) error {
	var problems []string
	for _, name := range sortedKeys(config.AuthInfos) {
		auth := config.AuthInfos[name]
		if auth == nil {
			continue
		}
		var fields []string
		for _, f := range []struct {
			set   bool
			field string
		}{
			{len(auth.TokenFile) != 0, "tokenFile"},
			{len(auth.ClientCertificate) != 0, "client-certificate"},
			{len(auth.ClientKey) != 0, "client-key"},
			{auth.Exec != nil, "exec"},
			{auth.AuthProvider != nil, "auth-provider"},
		} {
			if f.set {
				fields = append(fields, f.field)
			}
		}
		if len(fields) != 0 {
			problems = append(problems, fmt.Sprintf("user %q uses %s (only credentials held in the kubeconfig itself are accepted: token, client-certificate-data, client-key-data, username and password)", name, strings.Join(fields, ", ")))
		}
	}
	for _, name := range sortedKeys(config.Clusters) {
		cluster := config.Clusters[name]
		if cluster == nil {
			continue
		}
		// The URL is never quoted: it may hold credentials.
		u, err := url.Parse(cluster.Server)
		switch {
		case err != nil:
			problems = append(problems, fmt.Sprintf("cluster %q has a server that is not a URL", name))
		case u.User != nil:
			problems = append(problems, fmt.Sprintf("cluster %q has credentials in its server URL (put them in a user)", name))
		}
	}
	if len(problems) != 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
