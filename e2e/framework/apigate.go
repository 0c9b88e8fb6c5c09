package framework

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// APIServerGate is an HTTPGate in front of a control plane's API server. It serves HTTPS on loopback with a
// certificate of its own, because clients built from a kubeconfig send no credentials to a plain HTTP server, and adds
// no credentials of its own: a program given a kubeconfig written by WriteGatedKubeconfig reaches the API server
// through it as itself, so that the audit log and RBAC see the program, and a test can hold one of the program's
// requests (before the API server sees it, or after it answered) and kill the program at that point.
type APIServerGate struct {
	*HTTPGate
	// CAData is the PEM certificate the gate serves, self-signed: what clients of the gate must trust.
	CAData []byte
}

// StartAPIServerGate starts an APIServerGate in front of cp's API server. Close it when done.
func StartAPIServerGate(cp *ControlPlane) (*APIServerGate, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(cp.adminConfig.CAData) {
		return nil, fmt.Errorf("the admin config of %s holds no CA certificate", cp.Name)
	}
	now := time.Now().Add(-time.Hour)
	serving, err := newCertificate(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "api-server-gate"},
		NotBefore:             now,
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}, nil)
	if err != nil {
		return nil, err
	}
	serverTLS := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{serving.cert.Raw}, PrivateKey: serving.key, Leaf: serving.cert}},
		MinVersion:   tls.VersionTLS12,
		// HTTP/1.1 alone: each request is one exchange the gate can hold on its own.
		NextProtos: []string{"http/1.1"},
	}
	// Every watch of the program holds a connection for as long as it runs, so connections are not limited.
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		MaxIdleConnsPerHost: 16,
	}
	gate, err := startHTTPGate(cp.adminConfig.Host, transport, serverTLS)
	if err != nil {
		return nil, fmt.Errorf("can't start a gate in front of the API server of %s: %w", cp.Name, err)
	}
	return &APIServerGate{HTTPGate: gate, CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: serving.cert.Raw})}, nil
}

// WriteGatedKubeconfig writes to path, readable only by its owner, a copy of cred's kubeconfig that reaches the API
// server through gate, with cred's token.
func WriteGatedKubeconfig(cred *ServiceAccountCredential, gate *APIServerGate, path string) error {
	if cred.Kubeconfig == nil || len(cred.Kubeconfig.Clusters) == 0 {
		return errors.New("the credential has no kubeconfig with a cluster to reach through the gate")
	}
	config := cred.Kubeconfig.DeepCopy()
	for _, cluster := range config.Clusters {
		cluster.Server = gate.URL
		cluster.CertificateAuthority = ""
		cluster.CertificateAuthorityData = gate.CAData
	}
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return fmt.Errorf("can't write the gated kubeconfig of ServiceAccount %s: %w", cred.ServiceAccount, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("can't restrict the gated kubeconfig of ServiceAccount %s: %w", cred.ServiceAccount, err)
	}
	return nil
}
