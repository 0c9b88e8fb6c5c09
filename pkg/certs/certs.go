// Package certs generates the certificate authorities and certificates the operator's programs serve and trust,
// encodes them as PEM, and decides when they must be renewed or rolled over.
//
// A KeyPair is a certificate with its private key. NewSelfSignedCA makes a CA; KeyPair.Sign issues a serving or
// client certificate from a CA. Reconcile (rotation.go) keeps a CA, a trust bundle and one issued certificate
// current and says when to look again; it regenerates nothing that is still good.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// KeyAlgorithm is the algorithm of a generated private key.
type KeyAlgorithm string

const (
	// ECDSAP256 is an ECDSA key on the NIST P-256 curve: the default, small and fast.
	ECDSAP256 KeyAlgorithm = "ECDSA-P256"
	// RSA2048 is a 2048-bit RSA key, for peers that can't use ECDSA.
	RSA2048 KeyAlgorithm = "RSA-2048"
	// RSA4096 is a 4096-bit RSA key.
	RSA4096 KeyAlgorithm = "RSA-4096"
)

// Usage says what an issued certificate is for.
type Usage string

const (
	// ServingUsage is a TLS server certificate (ExtKeyUsage ServerAuth).
	ServingUsage Usage = "Serving"
	// ClientUsage is a TLS client certificate (ExtKeyUsage ClientAuth).
	ClientUsage Usage = "Client"
)

// Backdate is how far before its issuing time a certificate's NotBefore is set, so that a peer whose clock is a
// little behind accepts it at once.
const Backdate = time.Minute

// KeyPair is a certificate and its private key.
type KeyPair struct {
	Certificate *x509.Certificate
	Key         crypto.Signer
}

// CertificateRequest describes a certificate to issue.
type CertificateRequest struct {
	CommonName  string
	DNSNames    []string
	IPAddresses []net.IP
	Usage       Usage
	// Validity is how long the certificate is valid from its issuing time. It is cut short to the signing CA's
	// NotAfter, as a certificate can't outlive its issuer.
	Validity time.Duration
	// KeyAlgorithm of the certificate's key; empty means ECDSAP256.
	KeyAlgorithm KeyAlgorithm
}

// GenerateKey returns a new private key of the given algorithm; empty means ECDSAP256.
func GenerateKey(alg KeyAlgorithm) (crypto.Signer, error) {
	switch alg {
	case ECDSAP256, "":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case RSA2048:
		return rsa.GenerateKey(rand.Reader, 2048)
	case RSA4096:
		return rsa.GenerateKey(rand.Reader, 4096)
	default:
		return nil, fmt.Errorf("unknown key algorithm %q, want one of %q, %q, %q", alg, ECDSAP256, RSA2048, RSA4096)
	}
}

// ValidateKeyAlgorithm rejects an algorithm GenerateKey doesn't know.
func ValidateKeyAlgorithm(alg KeyAlgorithm) error {
	switch alg {
	case ECDSAP256, RSA2048, RSA4096, "":
		return nil
	default:
		return fmt.Errorf("unknown key algorithm %q, want one of %q, %q, %q", alg, ECDSAP256, RSA2048, RSA4096)
	}
}

// NewSelfSignedCA returns a new CA valid for validity from now: IsCA, MaxPathLen 0 (it signs only leaf
// certificates), key usages CertSign and CRLSign.
func NewSelfSignedCA(commonName string, validity time.Duration, alg KeyAlgorithm, now time.Time) (*KeyPair, error) {
	if validity <= 0 {
		return nil, fmt.Errorf("CA validity must be positive, got %v", validity)
	}
	if len(commonName) == 0 {
		return nil, errors.New("CA common name must not be empty")
	}
	key, err := GenerateKey(alg)
	if err != nil {
		return nil, err
	}
	template, err := newTemplate(commonName, key.Public(), now, now.Add(validity))
	if err != nil {
		return nil, err
	}
	template.IsCA = true
	template.BasicConstraintsValid = true
	template.MaxPathLen = 0
	template.MaxPathLenZero = true
	template.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	return createKeyPair(template, template, key, key)
}

// Sign issues the certificate req describes, signed by ca.
func (ca *KeyPair) Sign(req CertificateRequest, now time.Time) (*KeyPair, error) {
	if !ca.Certificate.IsCA {
		return nil, fmt.Errorf("certificate %q is not a CA", ca.Certificate.Subject.CommonName)
	}
	if req.Validity <= 0 {
		return nil, fmt.Errorf("certificate validity must be positive, got %v", req.Validity)
	}
	if len(req.CommonName) == 0 && len(req.DNSNames) == 0 && len(req.IPAddresses) == 0 {
		return nil, errors.New("a certificate needs a common name, a DNS name or an IP address")
	}
	var extUsage x509.ExtKeyUsage
	switch req.Usage {
	case ServingUsage:
		extUsage = x509.ExtKeyUsageServerAuth
	case ClientUsage:
		extUsage = x509.ExtKeyUsageClientAuth
	default:
		return nil, fmt.Errorf("unknown certificate usage %q, want %q or %q", req.Usage, ServingUsage, ClientUsage)
	}
	notAfter := now.Add(req.Validity)
	if notAfter.After(ca.Certificate.NotAfter) {
		notAfter = ca.Certificate.NotAfter
	}
	if !notAfter.After(now) {
		return nil, fmt.Errorf("CA %q expired at %v", ca.Certificate.Subject.CommonName, ca.Certificate.NotAfter)
	}
	key, err := GenerateKey(req.KeyAlgorithm)
	if err != nil {
		return nil, err
	}
	template, err := newTemplate(req.CommonName, key.Public(), now, notAfter)
	if err != nil {
		return nil, err
	}
	template.KeyUsage = x509.KeyUsageDigitalSignature
	if _, isRSA := key.(*rsa.PrivateKey); isRSA {
		// RSA key exchange in TLS 1.2 encrypts with the certificate's key.
		template.KeyUsage |= x509.KeyUsageKeyEncipherment
	}
	template.ExtKeyUsage = []x509.ExtKeyUsage{extUsage}
	template.BasicConstraintsValid = true
	template.DNSNames = append([]string(nil), req.DNSNames...)
	template.IPAddresses = append([]net.IP(nil), req.IPAddresses...)
	return createKeyPair(template, ca.Certificate, key, ca.Key)
}

func newTemplate(commonName string, pub crypto.PublicKey, now, notAfter time.Time) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("can't generate a serial number: %w", err)
	}
	subjectKeyID, err := subjectKeyID(pub)
	if err != nil {
		return nil, err
	}
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-Backdate).UTC(),
		NotAfter:     notAfter.UTC(),
		SubjectKeyId: subjectKeyID,
	}, nil
}

// subjectKeyID is the SHA-256 of the public key, truncated as RFC 7093 method 1 allows.
func subjectKeyID(pub crypto.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("can't marshal public key: %w", err)
	}
	sum := sha256.Sum256(der)
	return sum[:20], nil
}

func createKeyPair(template, parent *x509.Certificate, key, signer crypto.Signer) (*KeyPair, error) {
	der, err := x509.CreateCertificate(rand.Reader, template, parent, key.Public(), signer)
	if err != nil {
		return nil, fmt.Errorf("can't create certificate %q: %w", template.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("can't parse created certificate %q: %w", template.Subject.CommonName, err)
	}
	return &KeyPair{Certificate: cert, Key: key}, nil
}

// IsSignedBy reports whether cert's signature verifies with ca's key.
func IsSignedBy(cert, ca *x509.Certificate) bool {
	return cert.CheckSignatureFrom(ca) == nil
}

// Verify checks that cert chains to one of roots for usage at now, and, when name is not empty, that it is valid
// for that DNS name or IP address.
func Verify(cert *x509.Certificate, roots []*x509.Certificate, usage Usage, name string, now time.Time) error {
	pool := x509.NewCertPool()
	for _, r := range roots {
		pool.AddCert(r)
	}
	extUsage := x509.ExtKeyUsageServerAuth
	if usage == ClientUsage {
		extUsage = x509.ExtKeyUsageClientAuth
	}
	_, err := cert.Verify(x509.VerifyOptions{
		DNSName:     name,
		Roots:       pool,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{extUsage},
	})
	return err
}
