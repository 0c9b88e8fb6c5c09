package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"
)

// RenewalTime returns when refreshFraction of cert's validity has passed. Validity counts from the issuing time,
// NotBefore + Backdate, so that the backdating doesn't shorten a short-lived certificate's life; for a certificate
// another issuer did not backdate, renewal comes at most Backdate late.
func RenewalTime(cert *x509.Certificate, refreshFraction float64) time.Time {
	issued := cert.NotBefore.Add(Backdate)
	if !issued.Before(cert.NotAfter) {
		issued = cert.NotBefore
	}
	return issued.Add(time.Duration(float64(cert.NotAfter.Sub(issued)) * refreshFraction))
}

// NeedsRenewal reports whether refreshFraction of cert's validity has passed at now, or the certificate expired.
func NeedsRenewal(cert *x509.Certificate, now time.Time, refreshFraction float64) bool {
	return !now.Before(RenewalTime(cert, refreshFraction)) || !now.Before(cert.NotAfter)
}

// State is what Reconcile keeps current: a CA, the CAs a peer must trust and a certificate issued by one of them.
type State struct {
	// CA signs new certificates.
	CA *KeyPair
	// TrustBundle holds CA's certificate first, then the CAs it replaced that a served certificate may still be
	// signed by. Peers must trust all of them.
	TrustBundle []*x509.Certificate
	// Certificate is the issued certificate.
	Certificate *KeyPair
	// PublishedAt says, by CAFingerprint, since when the trust bundle peers read holds each CA: a CA may sign only
	// once that is TrustPropagationDelay ago. A zero time stands for a CA the bundle holds without a record of when
	// it was published (a bundle written before records were kept): it counts as published at its NotBefore. A CA
	// missing from a non-nil PublishedAt is not published yet and signs nothing while a usable certificate is left.
	// Nil when the caller does not track publication: every CA counts as published at its NotBefore. Reconcile
	// carries it over unchanged; recording the publication of a new CA is the caller's.
	PublishedAt map[string]time.Time
}

// CAFingerprint returns the key of ca in State.PublishedAt: the hex SHA-256 of its DER encoding.
func CAFingerprint(ca *x509.Certificate) string {
	sum := sha256.Sum256(ca.Raw)
	return hex.EncodeToString(sum[:])
}

// notTrustedYet is the trust time of a CA the published bundle does not hold: later than any recheck.
var notTrustedYet = time.Date(9999, time.January, 1, 0, 0, 0, 0, time.UTC)

// Policy says what Reconcile keeps: how long the CA and the certificate are valid, when they are renewed, and what
// the certificate is for.
type Policy struct {
	// CACommonNamePrefix starts every generated CA's common name; the CA's issuing time follows after an "@", so
	// that CAs in a trust bundle are told apart.
	CACommonNamePrefix string
	CAValidity         time.Duration
	CAKeyAlgorithm     KeyAlgorithm

	// Certificate describes the issued certificate, its validity included.
	Certificate CertificateRequest

	// RefreshFraction of a certificate's (and the CA's) validity passes before it is renewed, e.g. 0.8.
	RefreshFraction float64

	// TrustPropagationDelay is how long a changed trust bundle takes to reach every peer (for a webhook: the API
	// servers). A new CA signs nothing until it has been in the bundle that long, unless no valid certificate is
	// left; a replaced CA stays in the bundle until the certificate it signed has been replaced for that long.
	TrustPropagationDelay time.Duration
}

// Validate rejects a policy that can't keep a valid certificate served at all times.
func (p *Policy) Validate() error {
	var errs []error
	if len(p.CACommonNamePrefix) == 0 {
		errs = append(errs, errors.New("CA common name prefix must not be empty"))
	}
	// Written so that NaN (which --tls-refresh-fraction parses) fails too.
	if !(p.RefreshFraction > 0 && p.RefreshFraction < 1) {
		errs = append(errs, fmt.Errorf("refresh fraction must be greater than 0 and less than 1, got %v", p.RefreshFraction))
	}
	if p.CAValidity <= 0 {
		errs = append(errs, fmt.Errorf("CA validity must be positive, got %v", p.CAValidity))
	}
	if p.Certificate.Validity <= 0 {
		errs = append(errs, fmt.Errorf("certificate validity must be positive, got %v", p.Certificate.Validity))
	}
	if p.TrustPropagationDelay < 0 {
		errs = append(errs, fmt.Errorf("trust propagation delay must not be negative, got %v", p.TrustPropagationDelay))
	}
	errs = append(errs, ValidateKeyAlgorithm(p.CAKeyAlgorithm), ValidateKeyAlgorithm(p.Certificate.KeyAlgorithm))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	// A CA due for rollover must outlive every certificate it signed just before, plus the time its successor
	// waits to be trusted everywhere.
	caRemaining := time.Duration(float64(p.CAValidity) * (1 - p.RefreshFraction))
	if need := p.Certificate.Validity + p.TrustPropagationDelay; caRemaining < need {
		return fmt.Errorf("the CA's validity left at renewal (%v = CA validity %v × (1 - refresh fraction %v)) must be at least the certificate validity %v plus the trust propagation delay %v",
			caRemaining, p.CAValidity, p.RefreshFraction, p.Certificate.Validity, p.TrustPropagationDelay)
	}
	// A new CA must be trusted everywhere, and sign, before it is replaced in turn.
	if caInterval := time.Duration(float64(p.CAValidity) * p.RefreshFraction); caInterval < 2*p.TrustPropagationDelay {
		return fmt.Errorf("the CA's validity before renewal (%v = CA validity %v × refresh fraction %v) must be at least twice the trust propagation delay %v",
			caInterval, p.CAValidity, p.RefreshFraction, p.TrustPropagationDelay)
	}
	// A certificate due for renewal must outlive the wait for a new CA to be trusted.
	if certRemaining := time.Duration(float64(p.Certificate.Validity) * (1 - p.RefreshFraction)); certRemaining < 2*p.TrustPropagationDelay {
		return fmt.Errorf("the certificate's validity left at renewal (%v) must be at least twice the trust propagation delay %v", certRemaining, p.TrustPropagationDelay)
	}
	return nil
}

// Reconcile returns the state that policy wants at now, starting from current (nil or partly empty on first use),
// whether it differs from current, and when Reconcile must run again at the latest. Nothing still good is
// regenerated:
//   - the certificate is reissued when it is due for renewal, expired, no longer signed by a trusted CA of the
//     policy's CA key algorithm, or no longer matches policy.Certificate, always by a CA that has been published
//     (State.PublishedAt) for the trust propagation delay: the current CA if it has, even when it is itself due (it
//     is replaced right after); otherwise the reissue waits for the new CA while the old certificate is still valid;
//   - the CA is replaced when it is due for renewal or its key is not of policy.CAKeyAlgorithm; the replaced CA
//     stays in the trust bundle (a CA of another algorithm signs nothing more);
//   - a replaced CA leaves the trust bundle once no certificate it signed has been served for the trust
//     propagation delay, or once it expired.
func Reconcile(current *State, policy *Policy, now time.Time) (*State, bool, time.Time, error) {
	if err := policy.Validate(); err != nil {
		return nil, false, time.Time{}, err
	}
	if current == nil {
		current = &State{}
	}
	next := &State{CA: current.CA, Certificate: current.Certificate, PublishedAt: current.PublishedAt}
	var previousCAs []*x509.Certificate
	for _, c := range current.TrustBundle {
		if now.Before(c.NotAfter) && (next.CA == nil || !bytes.Equal(c.Raw, next.CA.Certificate.Raw)) {
			previousCAs = append(previousCAs, c)
		}
	}

	// A CA is trusted everywhere once the bundle peers read has held it for the trust propagation delay: the
	// Secret holding a new CA may be written before that bundle (a failed write, a restart in between).
	trustedAt := func(ca *KeyPair) time.Time {
		published := ca.Certificate.NotBefore.Add(Backdate)
		if current.PublishedAt != nil {
			at, ok := current.PublishedAt[CAFingerprint(ca.Certificate)]
			if !ok {
				return notTrustedYet
			}
			if at.After(published) {
				published = at
			}
		}
		return published.Add(policy.TrustPropagationDelay)
	}
	bundle := func() []*x509.Certificate {
		return append([]*x509.Certificate{next.CA.Certificate}, previousCAs...)
	}
	issue := func() error {
		issued, err := next.CA.Sign(policy.Certificate, now)
		if err != nil {
			return fmt.Errorf("can't issue a certificate: %w", err)
		}
		next.Certificate = issued
		return nil
	}

	// A CA of another key algorithm than the policy's is replaced like a due one: a peer that can't use the old
	// algorithm can't check its signatures either, so it issues nothing more.
	caAlgorithmMatches := func(ca *KeyPair) bool {
		return KeyAlgorithmOf(ca) == normalizeAlgorithm(policy.CAKeyAlgorithm)
	}

	// A certificate that needs reissuing is issued by a CA every peer trusts already, before that CA is replaced. A CA
	// of another algorithm does so only when no usable certificate is left to serve until its successor is trusted.
	if ca := next.CA; ca != nil && (caAlgorithmMatches(ca) || !certificateIsUsable(next.Certificate, bundle(), now)) &&
		!now.Before(trustedAt(ca)) && now.Before(ca.Certificate.NotAfter) &&
		!certificateIsCurrent(next.Certificate, policy, bundle(), now) {
		if err := issue(); err != nil {
			return nil, false, time.Time{}, err
		}
	}

	if next.CA == nil || NeedsRenewal(next.CA.Certificate, now, policy.RefreshFraction) || !caAlgorithmMatches(next.CA) {
		if next.CA != nil && now.Before(next.CA.Certificate.NotAfter) {
			previousCAs = append([]*x509.Certificate{next.CA.Certificate}, previousCAs...)
		}
		ca, err := NewSelfSignedCA(policy.CACommonNamePrefix+"@"+strconv.FormatInt(now.Unix(), 10), policy.CAValidity, policy.CAKeyAlgorithm, now)
		if err != nil {
			return nil, false, time.Time{}, fmt.Errorf("can't generate a CA: %w", err)
		}
		next.CA = ca
	}
	recheck := RenewalTime(next.CA.Certificate, policy.RefreshFraction)

	if cert := next.Certificate; !certificateIsCurrent(cert, policy, bundle(), now) {
		if caTrustedAt := trustedAt(next.CA); certificateIsUsable(cert, previousCAs, now) && now.Before(caTrustedAt) {
			// The old certificate is served until the new CA is trusted everywhere.
			recheck = earliest(recheck, caTrustedAt)
		} else if err := issue(); err != nil {
			return nil, false, time.Time{}, err
		}
	}
	if next.Certificate != current.Certificate || certificateIsCurrent(next.Certificate, policy, bundle(), now) {
		recheck = earliest(recheck, RenewalTime(next.Certificate.Certificate, policy.RefreshFraction))
	}

	// Replicas may serve the replaced certificate until they see the new one; keep its CA trusted meanwhile.
	certServedEverywhereAt := next.Certificate.Certificate.NotBefore.Add(Backdate + policy.TrustPropagationDelay)
	next.TrustBundle = []*x509.Certificate{next.CA.Certificate}
	for _, c := range previousCAs {
		if IsSignedBy(next.Certificate.Certificate, c) || now.Before(certServedEverywhereAt) {
			next.TrustBundle = append(next.TrustBundle, c)
			recheck = earliest(recheck, c.NotAfter)
		}
	}
	if len(next.TrustBundle) > 1 && now.Before(certServedEverywhereAt) {
		recheck = earliest(recheck, certServedEverywhereAt)
	}

	changed := current.CA != next.CA || current.Certificate != next.Certificate ||
		!slices.EqualFunc(current.TrustBundle, next.TrustBundle, func(a, b *x509.Certificate) bool { return bytes.Equal(a.Raw, b.Raw) })
	return next, changed, recheck, nil
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// certificateIsUsable reports whether cert may still be served: valid at now and signed by one of cas.
func certificateIsUsable(cert *KeyPair, cas []*x509.Certificate, now time.Time) bool {
	if cert == nil || now.Before(cert.Certificate.NotBefore) || !now.Before(cert.Certificate.NotAfter) {
		return false
	}
	return slices.ContainsFunc(cas, func(ca *x509.Certificate) bool { return IsSignedBy(cert.Certificate, ca) })
}

// certificateIsCurrent reports whether cert needs nothing: usable, signed by a CA of the policy's key algorithm, not
// due for renewal and as policy describes it.
func certificateIsCurrent(cert *KeyPair, policy *Policy, trusted []*x509.Certificate, now time.Time) bool {
	wantCA := normalizeAlgorithm(policy.CAKeyAlgorithm)
	signers := slices.DeleteFunc(slices.Clone(trusted), func(ca *x509.Certificate) bool { return publicKeyAlgorithm(ca.PublicKey) != wantCA })
	return certificateIsUsable(cert, signers, now) &&
		!NeedsRenewal(cert.Certificate, now, policy.RefreshFraction) &&
		Matches(cert, policy.Certificate)
}

// Matches reports whether kp is the certificate req describes: the same common name, DNS names, IP addresses (in
// any order), usage and key algorithm.
func Matches(kp *KeyPair, req CertificateRequest) bool {
	c := kp.Certificate
	wantUsage := x509.ExtKeyUsageServerAuth
	if req.Usage == ClientUsage {
		wantUsage = x509.ExtKeyUsageClientAuth
	}
	return c.Subject.CommonName == req.CommonName &&
		sameStrings(c.DNSNames, req.DNSNames) &&
		sameIPs(c.IPAddresses, req.IPAddresses) &&
		slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{wantUsage}) &&
		KeyAlgorithmOf(kp) == normalizeAlgorithm(req.KeyAlgorithm)
}

// KeyAlgorithmOf returns the algorithm of kp's key, or "" for one GenerateKey doesn't make.
func KeyAlgorithmOf(kp *KeyPair) KeyAlgorithm {
	return publicKeyAlgorithm(kp.Key.Public())
}

// publicKeyAlgorithm returns the algorithm of pub, or "" for one GenerateKey doesn't make.
func publicKeyAlgorithm(pub crypto.PublicKey) KeyAlgorithm {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k.Curve == elliptic.P256() {
			return ECDSAP256
		}
	case *rsa.PublicKey:
		switch k.N.BitLen() {
		case 2048:
			return RSA2048
		case 4096:
			return RSA4096
		}
	}
	return ""
}

func normalizeAlgorithm(alg KeyAlgorithm) KeyAlgorithm {
	if len(alg) == 0 {
		return ECDSAP256
	}
	return alg
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

func sameIPs(a, b []net.IP) bool {
	str := func(ips []net.IP) []string {
		out := make([]string, 0, len(ips))
		for _, ip := range ips {
			out = append(out, ip.String())
		}
		return out
	}
	return sameStrings(str(a), str(b))
}

// EncodeStatePEM returns s as PEM: the trust bundle, the CA's private key, the certificate and its private key.
func EncodeStatePEM(s *State) (trustBundlePEM, caKeyPEM, certPEM, keyPEM []byte, err error) {
	caKeyPEM, err = EncodePrivateKeyPEM(s.CA.Key)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	certPEM, keyPEM, err = s.Certificate.EncodePEM()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return EncodeCertificatesPEM(s.TrustBundle...), caKeyPEM, certPEM, keyPEM, nil
}

// DecodeStatePEM parses what EncodeStatePEM returns. The CA is the trust bundle's certificate that caKeyPEM's key
// belongs to; it comes first in the returned trust bundle.
func DecodeStatePEM(trustBundlePEM, caKeyPEM, certPEM, keyPEM []byte) (*State, error) {
	bundle, err := DecodeCertificatesPEM(trustBundlePEM)
	if err != nil {
		return nil, fmt.Errorf("trust bundle: %w", err)
	}
	caKey, err := DecodePrivateKeyPEM(caKeyPEM)
	if err != nil {
		return nil, fmt.Errorf("CA private key: %w", err)
	}
	i := slices.IndexFunc(bundle, func(c *x509.Certificate) bool { return publicKeysEqual(c.PublicKey, caKey.Public()) })
	if i < 0 {
		return nil, errors.New("the CA private key belongs to no certificate of the trust bundle")
	}
	if !bundle[i].IsCA {
		return nil, fmt.Errorf("certificate %q of the trust bundle is not a CA", bundle[i].Subject.CommonName)
	}
	cert, err := DecodeKeyPairPEM(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	ordered := append([]*x509.Certificate{bundle[i]}, slices.Delete(slices.Clone(bundle), i, i+1)...)
	return &State{CA: &KeyPair{Certificate: bundle[i], Key: caKey}, TrustBundle: ordered, Certificate: cert}, nil
}
