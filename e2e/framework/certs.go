package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki holds the paths of the certificates and keys of one control plane.
type pki struct {
	CACert, CAKey                        string
	ServingCert, ServingKey              string
	AdminCert, AdminKey                  string
	ServiceAccountPub, ServiceAccountKey string
}

// keyPair is a certificate with its private key.
type keyPair struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// generatePKI writes a CA, a serving certificate for the API server, a cluster-admin client certificate and a
// service-account signing key pair into dir. All keys are ECDSA P-256, which every component accepts.
func generatePKI(dir string, serviceIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("can't create PKI directory: %w", err)
	}
	p := &pki{
		CACert: filepath.Join(dir, "ca.crt"), CAKey: filepath.Join(dir, "ca.key"),
		ServingCert: filepath.Join(dir, "apiserver.crt"), ServingKey: filepath.Join(dir, "apiserver.key"),
		AdminCert: filepath.Join(dir, "admin.crt"), AdminKey: filepath.Join(dir, "admin.key"),
		ServiceAccountPub: filepath.Join(dir, "sa.pub"), ServiceAccountKey: filepath.Join(dir, "sa.key"),
	}
	now := time.Now().Add(-time.Hour)
	ca, err := newCertificate(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "local-control-plane-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
	if err != nil {
		return nil, err
	}
	serving, err := newCertificate(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now,
		NotAfter:    now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{
			"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback, serviceIP},
	}, ca)
	if err != nil {
		return nil, err
	}
	admin, err := newCertificate(&x509.Certificate{
		// The system:masters group is bound to cluster-admin.
		Subject:     pkix.Name{CommonName: "local-admin", Organization: []string{"system:masters"}},
		NotBefore:   now,
		NotAfter:    now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
	if err != nil {
		return nil, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("can't generate service account key: %w", err)
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("can't encode service account public key: %w", err)
	}

	for _, w := range []struct {
		path string
		kind string
		der  func() ([]byte, error)
	}{
		{p.CACert, "CERTIFICATE", func() ([]byte, error) { return ca.cert.Raw, nil }},
		{p.CAKey, "PRIVATE KEY", func() ([]byte, error) { return x509.MarshalPKCS8PrivateKey(ca.key) }},
		{p.ServingCert, "CERTIFICATE", func() ([]byte, error) { return serving.cert.Raw, nil }},
		{p.ServingKey, "PRIVATE KEY", func() ([]byte, error) { return x509.MarshalPKCS8PrivateKey(serving.key) }},
		{p.AdminCert, "CERTIFICATE", func() ([]byte, error) { return admin.cert.Raw, nil }},
		{p.AdminKey, "PRIVATE KEY", func() ([]byte, error) { return x509.MarshalPKCS8PrivateKey(admin.key) }},
		{p.ServiceAccountPub, "PUBLIC KEY", func() ([]byte, error) { return saPub, nil }},
		{p.ServiceAccountKey, "EC PRIVATE KEY", func() ([]byte, error) { return x509.MarshalECPrivateKey(saKey) }},
	} {
		der, err := w.der()
		if err != nil {
			return nil, fmt.Errorf("can't encode %s: %w", w.path, err)
		}
		if err := os.WriteFile(w.path, pem.EncodeToMemory(&pem.Block{Type: w.kind, Bytes: der}), 0o600); err != nil {
			return nil, fmt.Errorf("can't write %s: %w", w.path, err)
		}
	}
	return p, nil
}

// newCertificate signs template with a new key, by parent or, if parent is nil, by itself.
func newCertificate(template *x509.Certificate, parent *keyPair) (*keyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("can't generate key for %q: %w", template.Subject.CommonName, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, fmt.Errorf("can't generate serial number: %w", err)
	}
	template.SerialNumber = serial
	signerCert, signerKey := template, crypto.Signer(key)
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, signerCert, key.Public(), signerKey)
	if err != nil {
		return nil, fmt.Errorf("can't sign certificate %q: %w", template.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("can't parse certificate %q: %w", template.Subject.CommonName, err)
	}
	return &keyPair{cert: cert, key: key}, nil
}
