package certs

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func mustCA(t *testing.T, validity time.Duration, now time.Time) *KeyPair {
	t.Helper()
	ca, err := NewSelfSignedCA("test-ca", validity, ECDSAP256, now)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

func servingRequest() CertificateRequest {
	return CertificateRequest{
		CommonName:  "webhook",
		DNSNames:    []string{"webhook.ns.svc", "webhook"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		Usage:       ServingUsage,
		Validity:    30 * 24 * time.Hour,
	}
}

func TestSelfSignedCAIsARestrictedCA(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, 365*24*time.Hour, testNow)
	c := ca.Certificate
	if !c.IsCA || !c.BasicConstraintsValid || c.MaxPathLen != 0 || !c.MaxPathLenZero {
		t.Errorf("IsCA=%v BasicConstraintsValid=%v MaxPathLen=%d MaxPathLenZero=%v, want a CA with path length 0", c.IsCA, c.BasicConstraintsValid, c.MaxPathLen, c.MaxPathLenZero)
	}
	if c.KeyUsage != x509.KeyUsageCertSign|x509.KeyUsageCRLSign {
		t.Errorf("KeyUsage = %v, want CertSign|CRLSign", c.KeyUsage)
	}
	if !IsSignedBy(c, c) {
		t.Error("CA is not self-signed")
	}
	if got, want := c.NotAfter, testNow.Add(365*24*time.Hour); !got.Equal(want) {
		t.Errorf("NotAfter = %v, want %v", got, want)
	}
	if got, want := c.NotBefore, testNow.Add(-Backdate); !got.Equal(want) {
		t.Errorf("NotBefore = %v, want %v (backdated)", got, want)
	}
	if KeyAlgorithmOf(ca) != ECDSAP256 {
		t.Errorf("key algorithm = %q, want %q by default", KeyAlgorithmOf(ca), ECDSAP256)
	}
}

func TestServingCertificateVerifiesForItsNamesOnly(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, 365*24*time.Hour, testNow)
	kp, err := ca.Sign(servingRequest(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	c := kp.Certificate
	if c.IsCA || c.KeyUsage != x509.KeyUsageDigitalSignature {
		t.Errorf("IsCA=%v KeyUsage=%v, want a leaf with DigitalSignature", c.IsCA, c.KeyUsage)
	}
	roots := []*x509.Certificate{ca.Certificate}
	for _, name := range []string{"webhook", "webhook.ns.svc", "127.0.0.1"} {
		if err := Verify(c, roots, ServingUsage, name, testNow); err != nil {
			t.Errorf("Verify(%q) = %v, want success", name, err)
		}
	}
	for _, tc := range []struct {
		desc  string
		name  string
		usage Usage
		at    time.Time
		roots []*x509.Certificate
	}{
		{desc: "a name not in its SANs", name: "other.ns.svc", usage: ServingUsage, at: testNow, roots: roots},
		{desc: "an IP not in its SANs", name: "10.0.0.1", usage: ServingUsage, at: testNow, roots: roots},
		{desc: "client authentication", name: "webhook", usage: ClientUsage, at: testNow, roots: roots},
		{desc: "after it expired", name: "webhook", usage: ServingUsage, at: testNow.Add(31 * 24 * time.Hour), roots: roots},
		{desc: "with another CA", name: "webhook", usage: ServingUsage, at: testNow, roots: []*x509.Certificate{mustCA(t, time.Hour, testNow).Certificate}},
	} {
		if err := Verify(c, tc.roots, tc.usage, tc.name, tc.at); err == nil {
			t.Errorf("Verify for %s succeeded, want an error", tc.desc)
		}
	}
}

func TestClientCertificateVerifiesForClientAuthOnly(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, 365*24*time.Hour, testNow)
	kp, err := ca.Sign(CertificateRequest{CommonName: "scylla-manager", Usage: ClientUsage, Validity: time.Hour, KeyAlgorithm: RSA2048}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	roots := []*x509.Certificate{ca.Certificate}
	if err := Verify(kp.Certificate, roots, ClientUsage, "", testNow); err != nil {
		t.Errorf("Verify as a client = %v, want success", err)
	}
	if err := Verify(kp.Certificate, roots, ServingUsage, "", testNow); err == nil {
		t.Error("Verify as a server succeeded, want an error")
	}
	if _, ok := kp.Key.(*rsa.PrivateKey); !ok || KeyAlgorithmOf(kp) != RSA2048 {
		t.Errorf("key is %T (%q), want RSA-2048", kp.Key, KeyAlgorithmOf(kp))
	}
	if kp.Certificate.KeyUsage != x509.KeyUsageDigitalSignature|x509.KeyUsageKeyEncipherment {
		t.Errorf("KeyUsage = %v, want DigitalSignature|KeyEncipherment for RSA", kp.Certificate.KeyUsage)
	}
}

func TestIssuedCertificateDoesNotOutliveItsCA(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, 10*24*time.Hour, testNow)
	kp, err := ca.Sign(servingRequest(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	if !kp.Certificate.NotAfter.Equal(ca.Certificate.NotAfter) {
		t.Errorf("NotAfter = %v, want the CA's %v", kp.Certificate.NotAfter, ca.Certificate.NotAfter)
	}
	if _, err := ca.Sign(servingRequest(), testNow.Add(11*24*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("signing with an expired CA: err = %v, want an error saying it expired", err)
	}
}

func TestBadRequestsAreRefused(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, time.Hour, testNow)
	leaf, err := ca.Sign(servingRequest(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc    string
		sign    func() error
		wantErr string
	}{
		{desc: "zero CA validity", sign: func() error { _, err := NewSelfSignedCA("x", 0, "", testNow); return err }, wantErr: "CA validity must be positive"},
		{desc: "CA without a name", sign: func() error { _, err := NewSelfSignedCA("", time.Hour, "", testNow); return err }, wantErr: "common name must not be empty"},
		{desc: "unknown key algorithm", sign: func() error { _, err := NewSelfSignedCA("x", time.Hour, "DSA", testNow); return err }, wantErr: `unknown key algorithm "DSA"`},
		{desc: "unknown usage", sign: func() error {
			r := servingRequest()
			r.Usage = "Signing"
			_, err := ca.Sign(r, testNow)
			return err
		}, wantErr: `unknown certificate usage "Signing"`},
		{desc: "negative validity", sign: func() error {
			r := servingRequest()
			r.Validity = -time.Second
			_, err := ca.Sign(r, testNow)
			return err
		}, wantErr: "validity must be positive"},
		{desc: "no name at all", sign: func() error {
			_, err := ca.Sign(CertificateRequest{Usage: ServingUsage, Validity: time.Hour}, testNow)
			return err
		}, wantErr: "needs a common name"},
		{desc: "signing with a leaf", sign: func() error { _, err := leaf.Sign(servingRequest(), testNow); return err }, wantErr: "is not a CA"},
	} {
		err := tc.sign()
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want one containing %q", tc.desc, err, tc.wantErr)
		}
	}
}

func TestPEMRoundTrip(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, time.Hour, testNow)
	for _, alg := range []KeyAlgorithm{ECDSAP256, RSA2048} {
		r := servingRequest()
		r.KeyAlgorithm = alg
		kp, err := ca.Sign(r, testNow)
		if err != nil {
			t.Fatal(err)
		}
		certPEM, keyPEM, err := kp.EncodePEM()
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeKeyPairPEM(certPEM, keyPEM)
		if err != nil {
			t.Fatalf("%s: %v", alg, err)
		}
		if !bytes.Equal(got.Certificate.Raw, kp.Certificate.Raw) || KeyAlgorithmOf(got) != alg {
			t.Errorf("%s: decoded key pair differs from the encoded one", alg)
		}
	}
	bundle := EncodeCertificatesPEM(ca.Certificate, mustCA(t, time.Hour, testNow).Certificate)
	certs, err := DecodeCertificatesPEM(bundle)
	if err != nil || len(certs) != 2 || !bytes.Equal(certs[0].Raw, ca.Certificate.Raw) {
		t.Errorf("DecodeCertificatesPEM of a two-CA bundle = %d certificates, %v; want both in order", len(certs), err)
	}
}

func TestPEMDecodingRejectsBadInput(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, time.Hour, testNow)
	other := mustCA(t, time.Hour, testNow)
	certPEM, keyPEM, err := ca.EncodePEM()
	if err != nil {
		t.Fatal(err)
	}
	_, otherKeyPEM, err := other.EncodePEM()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		desc     string
		cert     []byte
		key      []byte
		wantErrs string
	}{
		{desc: "empty certificate", cert: nil, key: keyPEM, wantErrs: "no PEM certificate found"},
		{desc: "garbage after the certificate", cert: append(append([]byte{}, certPEM...), "junk"...), key: keyPEM, wantErrs: "is not PEM"},
		{desc: "a key where the certificate goes", cert: keyPEM, key: keyPEM, wantErrs: `is "PRIVATE KEY", want "CERTIFICATE"`},
		{desc: "a certificate where the key goes", cert: certPEM, key: certPEM, wantErrs: "not a private key"},
		{desc: "no key", cert: certPEM, key: []byte("nothing"), wantErrs: "no PEM private key found"},
		{desc: "another certificate's key", cert: certPEM, key: otherKeyPEM, wantErrs: "does not match certificate"},
	} {
		if _, err := DecodeKeyPairPEM(tc.cert, tc.key); err == nil || !strings.Contains(err.Error(), tc.wantErrs) {
			t.Errorf("%s: err = %v, want one containing %q", tc.desc, err, tc.wantErrs)
		}
	}
}

func TestNeedsRenewal(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, 100*time.Hour, testNow)
	c := ca.Certificate // issued at testNow, valid from testNow-1m (backdated) to testNow+100h
	for _, tc := range []struct {
		desc     string
		at       time.Time
		fraction float64
		want     bool
	}{
		{desc: "just issued", at: testNow, fraction: 0.8, want: false},
		{desc: "just before the fraction of the validity from its issuing", at: testNow.Add(80*time.Hour - time.Second), fraction: 0.8, want: false},
		{desc: "at the fraction", at: testNow.Add(80 * time.Hour), fraction: 0.8, want: true},
		{desc: "expired", at: c.NotAfter.Add(time.Second), fraction: 0.8, want: true},
		{desc: "a smaller fraction renews earlier", at: testNow.Add(50 * time.Hour), fraction: 0.5, want: true},
	} {
		if got := NeedsRenewal(c, tc.at, tc.fraction); got != tc.want {
			t.Errorf("%s: NeedsRenewal = %v, want %v", tc.desc, got, tc.want)
		}
	}

	// The backdating does not shorten a short-lived certificate: five minutes at 0.2 renew after one minute.
	short, err := ca.Sign(CertificateRequest{CommonName: "x", Usage: ServingUsage, Validity: 5 * time.Minute}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := RenewalTime(short.Certificate, 0.2), testNow.Add(time.Minute); !got.Equal(want) {
		t.Errorf("RenewalTime of a 5m certificate at 0.2 = %v, want %v", got, want)
	}
}

// `openssl ecparam -genkey` writes the curve's parameters before the key, and OpenSSL, GnuTLS and Go's
// tls.X509KeyPair all read such a file: so must a user's certificate Secret check.
func TestPEMDecodingAcceptsTheECParametersOpenSSLWritesBeforeAKey(t *testing.T) {
	t.Parallel()
	ca := mustCA(t, time.Hour, testNow)
	kp, err := ca.Sign(servingRequest(), testNow)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(kp.Key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	// The DER of the prime256v1 OID.
	params := pem.EncodeToMemory(&pem.Block{Type: "EC PARAMETERS", Bytes: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}})
	keyPEM := append(params, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})...)
	got, err := DecodeKeyPairPEM(EncodeCertificatesPEM(kp.Certificate), keyPEM)
	if err != nil {
		t.Fatalf("DecodeKeyPairPEM: %v", err)
	}
	if !bytes.Equal(got.Certificate.Raw, kp.Certificate.Raw) || KeyAlgorithmOf(got) != ECDSAP256 {
		t.Error("decoded key pair differs from the encoded one")
	}
	if _, err := DecodePrivateKeyPEM(params); err == nil || !strings.Contains(err.Error(), "no PEM private key found") {
		t.Errorf("EC parameters alone: err = %v, want no private key found", err)
	}
}
