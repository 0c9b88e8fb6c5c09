package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

const (
	certificatePEMType = "CERTIFICATE"
	privateKeyPEMType  = "PRIVATE KEY"
)

// EncodeCertificatesPEM returns certs as concatenated PEM CERTIFICATE blocks, in order.
func EncodeCertificatesPEM(certs ...*x509.Certificate) []byte {
	var buf bytes.Buffer
	for _, c := range certs {
		// Writing to a bytes.Buffer can't fail.
		_ = pem.Encode(&buf, &pem.Block{Type: certificatePEMType, Bytes: c.Raw})
	}
	return buf.Bytes()
}

// DecodeCertificatesPEM parses every PEM block of data, which must all be certificates; it fails on no block, on
// another block type and on trailing data that is not PEM.
func DecodeCertificatesPEM(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	rest := data
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != certificatePEMType {
			return nil, fmt.Errorf("PEM block %d is %q, want %q", len(certs)+1, block.Type, certificatePEMType)
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("can't parse certificate %d: %w", len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("data after certificate %d is not PEM", len(certs))
	}
	if len(certs) == 0 {
		return nil, errors.New("no PEM certificate found")
	}
	return certs, nil
}

// EncodePrivateKeyPEM returns key as a PKCS #8 PEM PRIVATE KEY block.
func EncodePrivateKeyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("can't marshal private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: privateKeyPEMType, Bytes: der}), nil
}

// DecodePrivateKeyPEM parses a single PEM private key: PKCS #8 ("PRIVATE KEY"), PKCS #1 ("RSA PRIVATE KEY") or
// SEC 1 ("EC PRIVATE KEY"). "EC PARAMETERS" blocks before it are skipped: `openssl ecparam -genkey` writes the
// curve there, which the key names again.
func DecodePrivateKeyPEM(data []byte) (crypto.Signer, error) {
	block, rest := pem.Decode(data)
	for block != nil && block.Type == "EC PARAMETERS" {
		block, rest = pem.Decode(rest)
	}
	if block == nil {
		return nil, errors.New("no PEM private key found")
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, errors.New("data after the PEM private key")
	}
	var key any
	var err error
	switch block.Type {
	case privateKeyPEMType:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("PEM block is %q, not a private key", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("can't parse %s: %w", block.Type, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		return k, nil
	default:
		return nil, fmt.Errorf("private key of type %T is not supported, want ECDSA or RSA", key)
	}
}

// EncodePEM returns the key pair's certificate and private key as PEM.
func (kp *KeyPair) EncodePEM() (certPEM, keyPEM []byte, err error) {
	keyPEM, err = EncodePrivateKeyPEM(kp.Key)
	if err != nil {
		return nil, nil, err
	}
	return EncodeCertificatesPEM(kp.Certificate), keyPEM, nil
}

// DecodeKeyPairPEM parses a PEM certificate and its PEM private key, and checks that they belong together. Only
// the first certificate of certPEM is the key pair's; any others are its chain and are ignored.
func DecodeKeyPairPEM(certPEM, keyPEM []byte) (*KeyPair, error) {
	certs, err := DecodeCertificatesPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("certificate: %w", err)
	}
	key, err := DecodePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("private key: %w", err)
	}
	if !publicKeysEqual(certs[0].PublicKey, key.Public()) {
		return nil, fmt.Errorf("private key does not match certificate %q", certs[0].Subject.CommonName)
	}
	return &KeyPair{Certificate: certs[0], Key: key}, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && eq.Equal(b)
}
