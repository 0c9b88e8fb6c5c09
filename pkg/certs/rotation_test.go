package certs

import (
	"bytes"
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

func testPolicy() *Policy {
	return &Policy{
		CACommonNamePrefix:    "test-ca",
		CAValidity:            365 * 24 * time.Hour,
		Certificate:           servingRequest(),
		RefreshFraction:       0.8,
		TrustPropagationDelay: 5 * time.Minute,
	}
}

func mustReconcile(t *testing.T, s *State, p *Policy, now time.Time) (*State, bool, time.Time) {
	t.Helper()
	next, changed, recheck, err := Reconcile(s, p, now)
	if err != nil {
		t.Fatalf("Reconcile at %v: %v", now, err)
	}
	if !recheck.After(now) {
		t.Fatalf("Reconcile at %v asks to recheck at %v, not later", now, recheck)
	}
	return next, changed, recheck
}

func TestReconcileFirstUseCreatesACAAndACertificateItSigned(t *testing.T) {
	t.Parallel()
	s, changed, recheck := mustReconcile(t, nil, testPolicy(), testNow)
	if !changed {
		t.Error("changed = false on first use")
	}
	if len(s.TrustBundle) != 1 || !bytes.Equal(s.TrustBundle[0].Raw, s.CA.Certificate.Raw) {
		t.Fatalf("trust bundle has %d certificates, want just the CA", len(s.TrustBundle))
	}
	if !strings.HasPrefix(s.CA.Certificate.Subject.CommonName, "test-ca@") {
		t.Errorf("CA common name = %q, want the prefix and its issuing time", s.CA.Certificate.Subject.CommonName)
	}
	if err := Verify(s.Certificate.Certificate, s.TrustBundle, ServingUsage, "webhook.ns.svc", testNow); err != nil {
		t.Errorf("certificate does not verify with the trust bundle: %v", err)
	}
	if want := RenewalTime(s.Certificate.Certificate, 0.8); !recheck.Equal(want) {
		t.Errorf("recheck = %v, want the certificate's renewal time %v", recheck, want)
	}
}

func TestReconcileRegeneratesNothingThatIsStillGood(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	again, changed, _ := mustReconcile(t, s, p, testNow.Add(time.Hour))
	if changed || again.CA != s.CA || again.Certificate != s.Certificate {
		t.Errorf("changed = %v, same CA %v, same certificate %v; want nothing regenerated", changed, again.CA == s.CA, again.Certificate == s.Certificate)
	}

	// What was stored and read back is as good.
	bundle, caKey, cert, key, err := EncodeStatePEM(s)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := DecodeStatePEM(bundle, caKey, cert, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, changed, _ := mustReconcile(t, decoded, p, testNow.Add(time.Hour)); changed {
		t.Error("changed = true after a PEM round trip")
	}

	// The same names in another order are the same certificate.
	reordered := testPolicy()
	reordered.Certificate.DNSNames = []string{"webhook", "webhook.ns.svc"}
	if _, changed, _ := mustReconcile(t, s, reordered, testNow.Add(time.Hour)); changed {
		t.Error("changed = true when only the order of the DNS names differs")
	}
}

func TestReconcileRenewsTheCertificateWithTheSameCA(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, recheck := mustReconcile(t, nil, p, testNow)
	renewed, changed, _ := mustReconcile(t, s, p, recheck)
	if !changed || renewed.Certificate == s.Certificate {
		t.Fatal("certificate not renewed at its renewal time")
	}
	if renewed.CA != s.CA || len(renewed.TrustBundle) != 1 {
		t.Errorf("CA replaced (%v) or trust bundle grew to %d when only the certificate was due", renewed.CA != s.CA, len(renewed.TrustBundle))
	}
	if err := Verify(renewed.Certificate.Certificate, renewed.TrustBundle, ServingUsage, "127.0.0.1", recheck); err != nil {
		t.Errorf("renewed certificate does not verify: %v", err)
	}
}

func TestReconcileReissuesWhenTheNamesChange(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	p.Certificate.IPAddresses = append(p.Certificate.IPAddresses, net.ParseIP("::1"))
	next, changed, _ := mustReconcile(t, s, p, testNow.Add(time.Hour))
	if !changed || next.Certificate == s.Certificate || next.CA != s.CA {
		t.Fatalf("changed = %v; want a new certificate from the same CA", changed)
	}
	if err := Verify(next.Certificate.Certificate, next.TrustBundle, ServingUsage, "::1", testNow.Add(time.Hour)); err != nil {
		t.Errorf("reissued certificate is not valid for the new IP: %v", err)
	}
}

func TestReconcileReplacesAnExpiredCertificateAtOnce(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	later := s.Certificate.Certificate.NotAfter.Add(time.Hour)
	next, changed, _ := mustReconcile(t, s, p, later)
	if !changed || next.Certificate == s.Certificate {
		t.Fatal("expired certificate kept")
	}
	if err := Verify(next.Certificate.Certificate, next.TrustBundle, ServingUsage, "webhook", later); err != nil {
		t.Errorf("new certificate does not verify: %v", err)
	}
}

// TestReconcileCARolloverKeepsEveryServedCertificateTrusted steps through two CA lifetimes the way the webhook
// does (at every recheck time and on a timer) and checks, at every step, that the certificate served is valid, that
// a peer holding any trust bundle it may still hold (published within the propagation delay) accepts it, and that
// the certificate served within the propagation delay is accepted with the bundle now published.
func TestReconcileCARolloverKeepsEveryServedCertificateTrusted(t *testing.T) {
	t.Parallel()
	short := testPolicy()
	short.CAValidity, short.Certificate.Validity, short.RefreshFraction, short.TrustPropagationDelay = 30*time.Minute, 5*time.Minute, 0.2, 2*time.Minute
	late := testPolicy()
	late.CAValidity, late.Certificate.Validity, late.RefreshFraction = 100*24*time.Hour, 30*24*time.Hour, 0.6
	for name, p := range map[string]*Policy{"defaults": testPolicy(), "short-lived, renewed early": short, "renewed late": late} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			type published struct {
				at    time.Time
				state *State
			}
			now := testNow
			s, _, recheck := mustReconcile(t, nil, p, now)
			history := []published{{at: now, state: s}}
			var rollovers, maxBundle int
			for end := testNow.Add(2 * p.CAValidity); now.Before(end); {
				now = earliest(recheck, now.Add(p.CAValidity/100))
				prev := s
				var changed bool
				s, changed, recheck = mustReconcile(t, s, p, now)
				if err := Verify(s.Certificate.Certificate, s.TrustBundle, ServingUsage, "webhook", now); err != nil {
					t.Fatalf("at %v the served certificate is not valid: %v", now, err)
				}
				if !changed {
					continue
				}
				if s.CA != prev.CA {
					rollovers++
				}
				maxBundle = max(maxBundle, len(s.TrustBundle))
				history = append(history, published{at: now, state: s})
				for i, h := range history {
					// Peers may hold any bundle published since the one in effect a propagation delay ago.
					if i+1 < len(history) && !history[i+1].at.After(now.Add(-p.TrustPropagationDelay)) {
						continue
					}
					if err := Verify(s.Certificate.Certificate, h.state.TrustBundle, ServingUsage, "webhook", now); err != nil {
						t.Fatalf("at %v the served certificate is refused with the bundle of %v: %v", now, h.at, err)
					}
					if err := Verify(h.state.Certificate.Certificate, s.TrustBundle, ServingUsage, "webhook", now); err != nil {
						t.Fatalf("at %v the certificate served since %v is refused with the new bundle: %v", now, h.at, err)
					}
				}
			}
			if rollovers < 2 {
				t.Errorf("%d CA rollovers in two CA lifetimes, want at least 2", rollovers)
			}
			if maxBundle < 2 {
				t.Errorf("largest trust bundle had %d CAs, want the old and the new CA while they overlap", maxBundle)
			}
		})
	}
}

func TestReconcileCARolloverSteps(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	oldCA := s.CA
	// Renew the certificate until it is due no earlier than the CA, so that both are due together.
	caDue := RenewalTime(oldCA.Certificate, p.RefreshFraction)
	for RenewalTime(s.Certificate.Certificate, p.RefreshFraction).Before(caDue) {
		s, _, _ = mustReconcile(t, s, p, RenewalTime(s.Certificate.Certificate, p.RefreshFraction))
	}
	oldCert := s.Certificate
	at := RenewalTime(oldCert.Certificate, p.RefreshFraction)

	// 1: the due certificate is reissued by the old CA, which every peer trusts; then a new CA joins the bundle.
	s1, changed, _ := mustReconcile(t, s, p, at)
	if !changed || s1.CA == oldCA || s1.Certificate == oldCert || !IsSignedBy(s1.Certificate.Certificate, oldCA.Certificate) {
		t.Fatalf("step 1: changed=%v newCA=%v newCert=%v; want a new CA and a certificate from the old one", changed, s1.CA != oldCA, s1.Certificate != oldCert)
	}
	if len(s1.TrustBundle) != 2 || !bytes.Equal(s1.TrustBundle[1].Raw, oldCA.Certificate.Raw) {
		t.Fatalf("step 1: trust bundle has %d CAs, want the new CA then the old one", len(s1.TrustBundle))
	}

	// 2: a certificate that must change while the new CA is not trusted everywhere yet waits for it.
	p.Certificate.DNSNames = append(p.Certificate.DNSNames, "new.ns.svc")
	caTrustedAt := s1.CA.Certificate.NotBefore.Add(Backdate + p.TrustPropagationDelay)
	s2, changed, recheck := mustReconcile(t, s1, p, at.Add(time.Minute))
	if changed || s2.Certificate != s1.Certificate {
		t.Fatal("step 2: the certificate was reissued by a CA not every peer trusts yet")
	}
	if !recheck.Equal(caTrustedAt) {
		t.Errorf("step 2: recheck = %v, want when the new CA is trusted everywhere (%v)", recheck, caTrustedAt)
	}

	// 3: then the new CA issues it; the old CA stays while replicas may still serve the old certificate.
	s3, changed, recheck := mustReconcile(t, s2, p, recheck)
	if !changed || s3.Certificate == s2.Certificate || !IsSignedBy(s3.Certificate.Certificate, s3.CA.Certificate) || len(s3.TrustBundle) != 2 {
		t.Fatalf("step 3: changed=%v, bundle of %d; want a certificate from the new CA and both CAs trusted", changed, len(s3.TrustBundle))
	}

	// 4: the old CA leaves the bundle.
	s4, changed, _ := mustReconcile(t, s3, p, recheck)
	if !changed || len(s4.TrustBundle) != 1 || !bytes.Equal(s4.TrustBundle[0].Raw, s3.CA.Certificate.Raw) || s4.Certificate != s3.Certificate {
		t.Fatalf("step 4: changed=%v, bundle of %d; want only the new CA left", changed, len(s4.TrustBundle))
	}
}

func TestPolicyValidationRejectsPoliciesThatCantKeepACertificateServed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		desc    string
		mutate  func(*Policy)
		wantErr string
	}{
		{desc: "refresh fraction 0", mutate: func(p *Policy) { p.RefreshFraction = 0 }, wantErr: "refresh fraction must be greater than 0 and less than 1, got 0"},
		{desc: "refresh fraction 1", mutate: func(p *Policy) { p.RefreshFraction = 1 }, wantErr: "less than 1, got 1"},
		{desc: "refresh fraction NaN", mutate: func(p *Policy) { p.RefreshFraction = math.NaN() }, wantErr: "less than 1, got NaN"},
		{desc: "no CA validity", mutate: func(p *Policy) { p.CAValidity = 0 }, wantErr: "CA validity must be positive"},
		{desc: "no certificate validity", mutate: func(p *Policy) { p.Certificate.Validity = 0 }, wantErr: "certificate validity must be positive"},
		{desc: "no CA name", mutate: func(p *Policy) { p.CACommonNamePrefix = "" }, wantErr: "CA common name prefix must not be empty"},
		{desc: "negative delay", mutate: func(p *Policy) { p.TrustPropagationDelay = -time.Second }, wantErr: "must not be negative"},
		{desc: "bad key algorithm", mutate: func(p *Policy) { p.CAKeyAlgorithm = "ed25519" }, wantErr: `unknown key algorithm "ed25519"`},
		{desc: "CA too short for the certificate", mutate: func(p *Policy) { p.CAValidity = 60 * 24 * time.Hour }, wantErr: "the CA's validity left at renewal"},
		{desc: "CA renewed before it is trusted", mutate: func(p *Policy) {
			p.CAValidity, p.Certificate.Validity, p.RefreshFraction, p.TrustPropagationDelay = 10*time.Minute, 5*time.Minute, 0.2, 2*time.Minute
		}, wantErr: "the CA's validity before renewal (2m0s = CA validity 10m0s × refresh fraction 0.2) must be at least twice the trust propagation delay 2m0s"},
		{desc: "certificate too short for the delay", mutate: func(p *Policy) { p.Certificate.Validity = 10 * time.Minute }, wantErr: "the certificate's validity left at renewal"},
	} {
		p := testPolicy()
		tc.mutate(p)
		if _, _, _, err := Reconcile(nil, p, testNow); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: err = %v, want one containing %q", tc.desc, err, tc.wantErr)
		}
	}
}

func TestDecodeStatePEMRejectsAKeyOutsideTheBundle(t *testing.T) {
	t.Parallel()
	s, _, _ := mustReconcile(t, nil, testPolicy(), testNow)
	bundle, _, cert, key, err := EncodeStatePEM(s)
	if err != nil {
		t.Fatal(err)
	}
	otherKey, err := EncodePrivateKeyPEM(mustCA(t, time.Hour, testNow).Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeStatePEM(bundle, otherKey, cert, key); err == nil || !strings.Contains(err.Error(), "belongs to no certificate of the trust bundle") {
		t.Errorf("err = %v, want the CA key outside the bundle refused", err)
	}
	if _, err := DecodeStatePEM(bundle, key, cert, key); err == nil {
		t.Error("a state whose CA key is the certificate's key was accepted")
	}
}

// TestReconcileKeyAlgorithmChangeRollsTheCAOver: a peer that can't use ECDSA can't check an ECDSA CA's signature
// either, so a new key algorithm replaces the CA too, with the same overlap of trust as a renewal.
func TestReconcileKeyAlgorithmChangeRollsTheCAOver(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	oldBundle := s.TrustBundle
	rsa := testPolicy()
	rsa.CAKeyAlgorithm, rsa.Certificate.KeyAlgorithm = RSA2048, RSA2048

	// 1: a new RSA CA joins the bundle; the ECDSA certificate is served until that CA is trusted everywhere.
	at := testNow.Add(time.Hour)
	s1, changed, recheck := mustReconcile(t, s, rsa, at)
	if !changed || s1.CA == s.CA || KeyAlgorithmOf(s1.CA) != RSA2048 {
		t.Fatalf("step 1: changed=%v newCA=%v CA key %q; want a new RSA-2048 CA", changed, s1.CA != s.CA, KeyAlgorithmOf(s1.CA))
	}
	if s1.Certificate != s.Certificate {
		t.Error("step 1: the certificate was reissued before the new CA is trusted everywhere")
	}
	if len(s1.TrustBundle) != 2 || !bytes.Equal(s1.TrustBundle[1].Raw, s.CA.Certificate.Raw) {
		t.Fatalf("step 1: trust bundle has %d CAs, want the new CA then the old one", len(s1.TrustBundle))
	}
	if err := Verify(s1.Certificate.Certificate, oldBundle, ServingUsage, "webhook", at); err != nil {
		t.Errorf("step 1: a peer holding the old bundle refuses the served certificate: %v", err)
	}
	if caTrustedAt := s1.CA.Certificate.NotBefore.Add(Backdate + p.TrustPropagationDelay); !recheck.Equal(caTrustedAt) {
		t.Errorf("step 1: recheck = %v, want when the new CA is trusted everywhere (%v)", recheck, caTrustedAt)
	}

	// 2: the new CA issues an RSA certificate; the old CA stays while it may still be served.
	s2, changed, recheck := mustReconcile(t, s1, rsa, recheck)
	if !changed || s2.CA != s1.CA || s2.Certificate == s1.Certificate || KeyAlgorithmOf(s2.Certificate) != RSA2048 ||
		!IsSignedBy(s2.Certificate.Certificate, s1.CA.Certificate) || len(s2.TrustBundle) != 2 {
		t.Fatalf("step 2: changed=%v, certificate key %q, bundle of %d; want an RSA certificate from the new CA and both CAs trusted",
			changed, KeyAlgorithmOf(s2.Certificate), len(s2.TrustBundle))
	}

	// 3: the old CA leaves the bundle, and nothing changes after.
	s3, changed, _ := mustReconcile(t, s2, rsa, recheck)
	if !changed || len(s3.TrustBundle) != 1 || s3.CA != s2.CA || s3.Certificate != s2.Certificate {
		t.Fatalf("step 3: changed=%v, bundle of %d; want only the new CA left", changed, len(s3.TrustBundle))
	}
	if _, changed, _ := mustReconcile(t, s3, rsa, recheck.Add(time.Hour)); changed {
		t.Error("changed = true at rest after the rollover")
	}
}

func TestReconcileKeyAlgorithmChangeWithoutACertificateIssuesFromTheTrustedCAFirst(t *testing.T) {
	t.Parallel()
	s, _, _ := mustReconcile(t, nil, testPolicy(), testNow)
	oldBundle := s.TrustBundle
	rsa := testPolicy()
	rsa.CAKeyAlgorithm, rsa.Certificate.KeyAlgorithm = RSA2048, RSA2048

	// The certificate is lost: the old CA, which every peer trusts, issues one to serve while its successor is not.
	at := testNow.Add(time.Hour)
	s1, _, recheck := mustReconcile(t, &State{CA: s.CA, TrustBundle: s.TrustBundle}, rsa, at)
	if s1.Certificate == nil || KeyAlgorithmOf(s1.CA) != RSA2048 {
		t.Fatalf("want a certificate and a new RSA CA")
	}
	if err := Verify(s1.Certificate.Certificate, oldBundle, ServingUsage, "webhook", at); err != nil {
		t.Errorf("a peer holding the old bundle refuses the new certificate: %v", err)
	}
	s2, changed, _ := mustReconcile(t, s1, rsa, recheck)
	if !changed || !IsSignedBy(s2.Certificate.Certificate, s1.CA.Certificate) {
		t.Errorf("changed=%v; want the certificate reissued by the new CA once it is trusted", changed)
	}
}

// A new CA signs once the bundle peers read has held it for the trust propagation delay, however long after its
// NotBefore that bundle was published; a CA the bundle holds without a record counts as published at its NotBefore.
func TestReconcileNewCASignsOnlyOnceItsBundleWasPublishedForTheDelay(t *testing.T) {
	t.Parallel()
	p := testPolicy()
	s, _, _ := mustReconcile(t, nil, p, testNow)
	oldCA := s.CA
	rolled, _, _ := mustReconcile(t, s, p, RenewalTime(oldCA.Certificate, p.RefreshFraction))
	if rolled.CA == oldCA {
		t.Fatal("the CA was not rolled over")
	}
	newCA := rolled.CA.Certificate
	oldFingerprint, newFingerprint := CAFingerprint(oldCA.Certificate), CAFingerprint(newCA)
	// The certificate must change (a new name), which only a CA every peer trusts may do.
	p.Certificate.DNSNames = append(p.Certificate.DNSNames, "new.ns.svc")
	sinceNotBefore := newCA.NotBefore.Add(Backdate + p.TrustPropagationDelay)
	published := sinceNotBefore.Add(time.Hour)

	tests := []struct {
		name        string
		publishedAt map[string]time.Time
		at          time.Time
		wantSigned  bool
		wantRecheck time.Time
	}{
		{name: "not tracked, at NotBefore plus the delay", publishedAt: nil, at: sinceNotBefore, wantSigned: true},
		{name: "not in the published bundle", publishedAt: map[string]time.Time{oldFingerprint: {}}, at: published.Add(24 * time.Hour), wantSigned: false},
		{name: "published later, before the delay passed", publishedAt: map[string]time.Time{oldFingerprint: {}, newFingerprint: published},
			at: published.Add(p.TrustPropagationDelay - time.Second), wantSigned: false, wantRecheck: published.Add(p.TrustPropagationDelay)},
		{name: "published later, once the delay passed", publishedAt: map[string]time.Time{oldFingerprint: {}, newFingerprint: published},
			at: published.Add(p.TrustPropagationDelay), wantSigned: true},
		{name: "in the bundle without a record, at NotBefore plus the delay", publishedAt: map[string]time.Time{oldFingerprint: {}, newFingerprint: {}},
			at: sinceNotBefore, wantSigned: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			current := *rolled
			current.PublishedAt = tc.publishedAt
			next, _, recheck := mustReconcile(t, &current, p, tc.at)
			signed := next.Certificate != rolled.Certificate && IsSignedBy(next.Certificate.Certificate, newCA)
			if signed != tc.wantSigned {
				t.Errorf("the new CA signed = %v, want %v", signed, tc.wantSigned)
			}
			if !signed && next.Certificate != rolled.Certificate {
				t.Error("the certificate was reissued by another CA than the new one")
			}
			if !tc.wantRecheck.IsZero() && !recheck.Equal(tc.wantRecheck) {
				t.Errorf("recheck = %v, want %v", recheck, tc.wantRecheck)
			}
		})
	}
}
