package scylladbdatacenter

import (
	"bytes"
	"crypto/x509"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var certTestNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func certTestDatacenter(mutate func(sdc *scyllav1alpha1.ScyllaDBDatacenter)) *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", Namespace: "ns", UID: "uid-1"},
	}
	if mutate != nil {
		mutate(sdc)
	}
	return sdc
}

func memberService(name, clusterIP string, ingress ...corev1.LoadBalancerIngress) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{naming.ScyllaServiceTypeLabel: naming.ScyllaServiceTypeMember}},
		Spec:       corev1.ServiceSpec{ClusterIPs: []string{clusterIP}},
		Status:     corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: ingress}},
	}
}

func ipStrings(ips []net.IP) []string {
	var out []string
	for _, ip := range ips {
		out = append(out, ip.String())
	}
	return out
}

func TestServingNamesCoverEveryAddressTheExposeOptionsGiveClients(t *testing.T) {
	t.Parallel()
	services := map[string]*corev1.Service{
		"basic-client": {ObjectMeta: metav1.ObjectMeta{Name: "basic-client"}, Spec: corev1.ServiceSpec{ClusterIPs: []string{"10.0.0.1"}}},
		"basic-dc-a-0": memberService("basic-dc-a-0", "10.0.0.10", corev1.LoadBalancerIngress{IP: "203.0.113.10"}, corev1.LoadBalancerIngress{Hostname: "lb0.example.com"}),
		"basic-dc-a-1": memberService("basic-dc-a-1", "10.0.0.11"),
	}
	pods := map[string]*corev1.Pod{
		"basic-dc-a-0": {Status: corev1.PodStatus{PodIP: "192.168.0.10", PodIPs: []corev1.PodIP{{IP: "192.168.0.10"}, {IP: "fd00::10"}}}},
		"basic-dc-a-1": {Status: corev1.PodStatus{PodIP: "192.168.0.11"}},
	}
	serviceDNS := []string{
		"basic-client", "basic-client.ns", "basic-client.ns.svc",
		"basic-dc-a-0", "basic-dc-a-0.ns", "basic-dc-a-0.ns.svc",
		"basic-dc-a-1", "basic-dc-a-1.ns", "basic-dc-a-1.ns.svc",
	}
	broadcast := func(t scyllav1alpha1.BroadcastAddressType) func(*scyllav1alpha1.ScyllaDBDatacenter) {
		return func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
			sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
				NodeService:      &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
				BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{Clients: &scyllav1alpha1.BroadcastOptions{Type: t}},
			}
		}
	}
	tests := []struct {
		name    string
		mutate  func(*scyllav1alpha1.ScyllaDBDatacenter)
		wantDNS []string
		wantIPs []string
	}{
		{
			name:    "default expose options: member Service cluster IPs",
			wantDNS: serviceDNS,
			wantIPs: []string{"10.0.0.1", "10.0.0.10", "10.0.0.11"},
		},
		{
			name:    "PodIP broadcast: every pod IP of both families",
			mutate:  broadcast(scyllav1alpha1.BroadcastAddressTypePodIP),
			wantDNS: serviceDNS,
			wantIPs: []string{"10.0.0.1", "192.168.0.10", "192.168.0.11", "fd00::10"},
		},
		{
			name:    "load balancer broadcast: ingress IPs and host names",
			mutate:  broadcast(scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP),
			wantDNS: append(slices.Clone(serviceDNS), "lb0.example.com"),
			wantIPs: []string{"10.0.0.1", "203.0.113.10"},
		},
		{
			name:    "the established operator's load balancer alias",
			mutate:  broadcast(scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngress),
			wantDNS: append(slices.Clone(serviceDNS), "lb0.example.com"),
			wantIPs: []string{"10.0.0.1", "203.0.113.10"},
		},
		{
			name: "dnsDomains and every name below them",
			mutate: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.DNSDomains = []string{"cql.example.com.", "db.example.org"}
			},
			wantDNS: append([]string{"*.cql.example.com", "*.db.example.org"}, append(serviceDNS[:3:3], append([]string{"basic-dc-a-0", "basic-dc-a-0.ns", "basic-dc-a-0.ns.svc", "basic-dc-a-1", "basic-dc-a-1.ns", "basic-dc-a-1.ns.svc"}, "cql.example.com", "db.example.org")...)...),
			wantIPs: []string{"10.0.0.1", "10.0.0.10", "10.0.0.11"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(tt.mutate)
			names, err := makeServingNames(sdc, effectiveRacks(sdc), services, pods)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantDNS, names.dnsNames); diff != "" {
				t.Errorf("DNS names differ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantIPs, ipStrings(names.ipAddresses)); diff != "" {
				t.Errorf("IP addresses differ (-want +got):\n%s", diff)
			}
		})
	}
}

// certStore is what the API server holds of the certificate objects between syncs.
type certStore struct {
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

func newCertStore() *certStore {
	return &certStore{secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
}

func (s *certStore) put(objects certificateObjects) {
	for _, o := range objects.secrets {
		s.secrets[o.Name] = o
	}
	for _, o := range objects.configMaps {
		s.configMaps[o.Name] = o
	}
}

func testCertOptions() CertificateOptions {
	o := DefaultCertificateOptions()
	o.CAValidity = 100 * 24 * time.Hour
	o.CertificateValidity = 10 * 24 * time.Hour
	return o
}

func servingSet(t *testing.T, sdc *scyllav1alpha1.ScyllaDBDatacenter, names servingNames) *certificateSet {
	t.Helper()
	sets, err := makeCertificateSets(sdc, testCertOptions(), names)
	if err != nil {
		t.Fatal(err)
	}
	return sets[0]
}

func reconcileInto(t *testing.T, store *certStore, sdc *scyllav1alpha1.ScyllaDBDatacenter, set *certificateSet, now time.Time) (*certs.State, bool) {
	t.Helper()
	objects, state, changed, _, err := reconcileCertificateSet(sdc, set, store.secrets, store.configMaps, now)
	if err != nil {
		t.Fatal(err)
	}
	store.put(objects)
	return state, changed
}

func bundleOf(t *testing.T, store *certStore, name string) []*x509.Certificate {
	t.Helper()
	bundle, err := certs.DecodeCertificatesPEM([]byte(store.configMaps[name].Data[naming.CABundleKey]))
	if err != nil {
		t.Fatal(err)
	}
	return bundle
}

var testNames = servingNames{dnsNames: []string{"basic-client.ns.svc"}, ipAddresses: []net.IP{net.ParseIP("10.0.0.10")}}

func TestServingCertificateChainsToThePublishedBundleForEveryName(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	state, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	served, err := certs.DecodeCertificatesPEM(store.secrets["basic-local-serving-certs"].Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	if store.secrets["basic-local-serving-certs"].Type != corev1.SecretTypeTLS || store.secrets["basic-local-serving-ca"].Type != corev1.SecretTypeTLS {
		t.Errorf("certificate Secrets must be of type %s", corev1.SecretTypeTLS)
	}
	for _, name := range []string{"basic-client.ns.svc", "10.0.0.10"} {
		if err := certs.Verify(served[0], bundleOf(t, store, "basic-local-serving-ca"), certs.ServingUsage, name, certTestNow); err != nil {
			t.Errorf("served certificate does not verify for %q: %v", name, err)
		}
	}
	if err := certs.Verify(served[0], bundleOf(t, store, "basic-local-serving-ca"), certs.ServingUsage, "other.ns.svc", certTestNow); err == nil {
		t.Errorf("served certificate verifies for a name it was not issued for")
	}
	if got := certs.KeyAlgorithmOf(state.Certificate); got != certs.ECDSAP256 {
		t.Errorf("key algorithm is %q, want %q", got, certs.ECDSAP256)
	}
}

func TestAdminClientCertificateChainsToTheClientCA(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	sets, err := makeCertificateSets(sdc, testCertOptions(), testNames)
	if err != nil {
		t.Fatal(err)
	}
	store := newCertStore()
	state, _ := reconcileInto(t, store, sdc, sets[1], certTestNow)
	if err := certs.Verify(state.Certificate.Certificate, bundleOf(t, store, "basic-local-client-ca"), certs.ClientUsage, "", certTestNow); err != nil {
		t.Errorf("admin certificate does not verify as a client: %v", err)
	}
	if err := certs.Verify(state.Certificate.Certificate, bundleOf(t, store, "basic-local-client-ca"), certs.ServingUsage, "", certTestNow); err == nil {
		t.Errorf("admin certificate verifies as a serving certificate")
	}
	if state.Certificate.Certificate.Subject.CommonName != "admin" {
		t.Errorf("admin certificate's common name is %q", state.Certificate.Certificate.Subject.CommonName)
	}
}

func TestCertificateRotationDecisions(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	newNames := servingNames{dnsNames: testNames.dnsNames, ipAddresses: []net.IP{net.ParseIP("10.0.0.10"), net.ParseIP("203.0.113.7")}}
	tests := []struct {
		name             string
		names            servingNames
		at               time.Time
		wantCertReissued bool
		wantCAReplaced   bool
		// wantOldCATrusted: the replaced CA stays in the bundle.
		wantOldCATrusted bool
	}{
		{name: "nothing changed: nothing is generated", names: testNames, at: certTestNow.Add(time.Hour)},
		{name: "a new address renews the certificate with the same CA", names: newNames, at: certTestNow.Add(time.Hour), wantCertReissued: true},
		{name: "before the refresh fraction of its validity: kept", names: testNames, at: certTestNow.Add(7 * 24 * time.Hour)},
		{name: "past the refresh fraction of its validity: renewed", names: testNames, at: certTestNow.Add(8*24*time.Hour + time.Minute), wantCertReissued: true},
		{name: "expired: renewed", names: testNames, at: certTestNow.Add(11 * 24 * time.Hour), wantCertReissued: true},
		{
			name: "CA due for rollover: a new CA, the served certificate kept until the new CA is trusted everywhere",
			// 80 days into a 100-day CA.
			names: testNames, at: certTestNow.Add(80*24*time.Hour + time.Minute),
			wantCAReplaced: true, wantOldCATrusted: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := newCertStore()
			first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
			before := map[string][]byte{}
			for name, s := range store.secrets {
				before[name] = bytes.Clone(s.Data[corev1.TLSCertKey])
			}
			if tt.wantCAReplaced {
				// Keep the certificate current up to the rollover, as syncs would.
				first, _ = reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), tt.at.Add(-2*24*time.Hour))
				before["basic-local-serving-certs"] = bytes.Clone(store.secrets["basic-local-serving-certs"].Data[corev1.TLSCertKey])
			}
			next, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, tt.names), tt.at)

			certReissued := !bytes.Equal(before["basic-local-serving-certs"], store.secrets["basic-local-serving-certs"].Data[corev1.TLSCertKey])
			caReplaced := !bytes.Equal(before["basic-local-serving-ca"], store.secrets["basic-local-serving-ca"].Data[corev1.TLSCertKey])
			if certReissued != tt.wantCertReissued || caReplaced != tt.wantCAReplaced {
				t.Errorf("certificate reissued %v, CA replaced %v; want %v, %v", certReissued, caReplaced, tt.wantCertReissued, tt.wantCAReplaced)
			}
			if changed != (tt.wantCertReissued || tt.wantCAReplaced) {
				t.Errorf("changed is %v", changed)
			}
			bundle := bundleOf(t, store, "basic-local-serving-ca")
			oldTrusted := false
			for _, c := range bundle {
				oldTrusted = oldTrusted || (tt.wantCAReplaced && c.Equal(first.CA.Certificate))
			}
			if oldTrusted != tt.wantOldCATrusted {
				t.Errorf("old CA in the bundle: %v, want %v", oldTrusted, tt.wantOldCATrusted)
			}
			if err := certs.Verify(next.Certificate.Certificate, bundle, certs.ServingUsage, "basic-client.ns.svc", tt.at); err != nil {
				t.Errorf("the served certificate does not verify against the published bundle: %v", err)
			}
		})
	}
}

func TestCARolloverKeepsTheOldCAUntilEveryServedCertificateIsReissued(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	delay := testCertOptions().TrustPropagationDelay
	rollover := certTestNow.Add(80*24*time.Hour + time.Minute)
	reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), rollover.Add(-2*24*time.Hour))
	old, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), rollover)

	steps := []struct {
		at            time.Time
		wantSignedBy  string
		wantBundleLen int
	}{
		{at: rollover.Add(delay / 2), wantSignedBy: "old", wantBundleLen: 2},
		// The certificate the old CA signed stays until its own renewal, 8 days after it was issued.
		{at: rollover.Add(delay + time.Second), wantSignedBy: "old", wantBundleLen: 2},
		{at: rollover.Add(6*24*time.Hour + time.Minute), wantSignedBy: "new", wantBundleLen: 2},
		{at: rollover.Add(6*24*time.Hour + 2*delay), wantSignedBy: "new", wantBundleLen: 1},
	}
	var oldCA *x509.Certificate
	for _, c := range bundleOf(t, store, "basic-local-serving-ca") {
		if !c.Equal(old.CA.Certificate) {
			oldCA = c
		}
	}
	if oldCA == nil {
		t.Fatal("the replaced CA is not in the bundle")
	}
	for i, step := range steps {
		state, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), step.at)
		signedBy := "new"
		if certs.IsSignedBy(state.Certificate.Certificate, oldCA) {
			signedBy = "old"
		}
		bundle := bundleOf(t, store, "basic-local-serving-ca")
		if signedBy != step.wantSignedBy || len(bundle) != step.wantBundleLen {
			t.Errorf("step %d: served certificate signed by the %s CA, bundle of %d; want %s, %d", i, signedBy, len(bundle), step.wantSignedBy, step.wantBundleLen)
		}
		if err := certs.Verify(state.Certificate.Certificate, bundle, certs.ServingUsage, "basic-client.ns.svc", step.at); err != nil {
			t.Errorf("step %d: the served certificate does not verify against the published bundle: %v", i, err)
		}
	}
}

func TestLostCertificateSecretKeepsTheTrustedCA(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	delete(store.secrets, "basic-local-serving-certs")
	next, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow.Add(time.Minute))
	if !changed || !next.CA.Certificate.Equal(first.CA.Certificate) {
		t.Errorf("want a new certificate from the same CA; changed %v, same CA %v", changed, next.CA.Certificate.Equal(first.CA.Certificate))
	}
}

// A CA Secret deleted or emptied by a user takes the CA's key with it: a new CA is unavoidable, but the old CA stays
// in the bundle and the certificate it signed stays served (until it is due, as after a CA renewal), so that clients
// holding the old bundle never see a certificate they don't trust.
func TestLostCASecretKeepsTheOldCertificateServedUntilTheNewCAIsTrusted(t *testing.T) {
	t.Parallel()
	for name, lose := range map[string]func(store *certStore){
		"deleted": func(store *certStore) { delete(store.secrets, "basic-local-serving-ca") },
		"emptied": func(store *certStore) {
			store.secrets["basic-local-serving-ca"].Data = map[string][]byte{corev1.TLSCertKey: nil, corev1.TLSPrivateKeyKey: nil}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(nil)
			store := newCertStore()
			delay := testCertOptions().TrustPropagationDelay
			first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
			oldBundle := bundleOf(t, store, "basic-local-serving-ca")
			lose(store)

			at := certTestNow.Add(time.Hour)
			next, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), at)
			if !changed || next.CA.Certificate.Equal(first.CA.Certificate) {
				t.Fatalf("changed %v, same CA %v; want a new CA", changed, next.CA.Certificate.Equal(first.CA.Certificate))
			}
			if !next.Certificate.Certificate.Equal(first.Certificate.Certificate) {
				t.Error("the certificate was reissued by a CA no client trusts yet")
			}
			bundle := bundleOf(t, store, "basic-local-serving-ca")
			if len(bundle) != 2 || !bundle[1].Equal(first.CA.Certificate) {
				t.Errorf("bundle of %d CAs, want the new CA then the old one", len(bundle))
			}
			for desc, roots := range map[string][]*x509.Certificate{"old": oldBundle, "new": bundle} {
				if err := certs.Verify(next.Certificate.Certificate, roots, certs.ServingUsage, "basic-client.ns.svc", at); err != nil {
					t.Errorf("the served certificate does not verify against the %s bundle: %v", desc, err)
				}
			}

			// As after a renewal of the CA, the old certificate is then kept until it is due, and the new CA renews it.
			if _, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), at.Add(certs.Backdate+delay+time.Second)); changed {
				t.Error("changed once the new CA is trusted, want the old certificate kept until it is due")
			}
			due := certs.RenewalTime(first.Certificate.Certificate, testCertOptions().RefreshFraction)
			renewed, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), due)
			if !changed || !certs.IsSignedBy(renewed.Certificate.Certificate, next.CA.Certificate) {
				t.Errorf("changed %v; want the due certificate renewed by the new CA", changed)
			}
			if err := certs.Verify(renewed.Certificate.Certificate, bundle, certs.ServingUsage, "basic-client.ns.svc", due); err != nil {
				t.Errorf("the renewed certificate does not verify against the bundle clients hold: %v", err)
			}
		})
	}
}

func TestAlternatorServingCertificateAddsTheExtraNames(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
			Type: scyllav1alpha1.TLSCertificateTypeOperatorManaged,
			OperatorManagedOptions: &scyllav1alpha1.OperatorManagedTLSCertificateOptions{
				AdditionalDNSNames:    []string{"dynamo.example.com"},
				AdditionalIPAddresses: []string{"198.51.100.1"},
			},
		}}
	})
	sets, err := makeCertificateSets(sdc, testCertOptions(), testNames)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 3 || sets[2].certName != "basic-alternator-local-serving-certs" || sets[2].caName != "basic-alternator-local-serving-ca" {
		t.Fatalf("want the Alternator set third, got %d sets", len(sets))
	}
	req := sets[2].policy.Certificate
	if diff := cmp.Diff([]string{"basic-client.ns.svc", "dynamo.example.com"}, req.DNSNames); diff != "" {
		t.Errorf("DNS names differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"10.0.0.10", "198.51.100.1"}, ipStrings(req.IPAddresses)); diff != "" {
		t.Errorf("IP addresses differ (-want +got):\n%s", diff)
	}
}

func TestCertificateSetsRejectBadAlternatorSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cert    *scyllav1alpha1.TLSCertificate
		wantErr string
	}{
		{
			name: "an extra IP that is not an address",
			cert: &scyllav1alpha1.TLSCertificate{Type: scyllav1alpha1.TLSCertificateTypeOperatorManaged, OperatorManagedOptions: &scyllav1alpha1.OperatorManagedTLSCertificateOptions{
				AdditionalIPAddresses: []string{"10.0.0.300"}}},
			wantErr: `spec.scyllaDB.alternatorOptions.servingCertificate.operatorManagedOptions.additionalIPAddresses[0]: "10.0.0.300" is not an IP address`,
		},
		{
			name: "an empty extra DNS name",
			cert: &scyllav1alpha1.TLSCertificate{Type: scyllav1alpha1.TLSCertificateTypeOperatorManaged, OperatorManagedOptions: &scyllav1alpha1.OperatorManagedTLSCertificateOptions{
				AdditionalDNSNames: []string{""}}},
			wantErr: "spec.scyllaDB.alternatorOptions.servingCertificate.operatorManagedOptions.additionalDNSNames[0] must not be empty",
		},
		{
			name:    "an unknown type",
			cert:    &scyllav1alpha1.TLSCertificate{Type: "SelfMade"},
			wantErr: `spec.scyllaDB.alternatorOptions.servingCertificate.type "SelfMade" is not one of OperatorManaged, UserManaged`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: tt.cert}
			})
			_, err := makeCertificateSets(sdc, testCertOptions(), testNames)
			var se *specError
			if err == nil || err.Error() != tt.wantErr || !errors.As(err, &se) {
				t.Errorf("error is %v, want the spec error %q", err, tt.wantErr)
			}
		})
	}
}

func TestUserManagedAlternatorSecretIsChecked(t *testing.T) {
	t.Parallel()
	ca, err := certs.NewSelfSignedCA("user-ca", 48*time.Hour, certs.ECDSAP256, certTestNow)
	if err != nil {
		t.Fatal(err)
	}
	kp, err := ca.Sign(certs.CertificateRequest{DNSNames: []string{"dynamo.example.com"}, Usage: certs.ServingUsage, Validity: 24 * time.Hour}, certTestNow)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := kp.EncodePEM()
	if err != nil {
		t.Fatal(err)
	}
	_, otherKeyPEM, err := ca.EncodePEM()
	if err != nil {
		t.Fatal(err)
	}
	secret := func(typ corev1.SecretType, crt, key []byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "mine"}, Type: typ, Data: map[string][]byte{corev1.TLSCertKey: crt, corev1.TLSPrivateKeyKey: key}}
	}
	tests := []struct {
		name    string
		secret  *corev1.Secret
		at      time.Time
		wantErr string
	}{
		{name: "a valid certificate", secret: secret(corev1.SecretTypeTLS, certPEM, keyPEM), at: certTestNow},
		{name: "an Opaque Secret", secret: secret(corev1.SecretTypeOpaque, certPEM, keyPEM), at: certTestNow,
			wantErr: `the Alternator serving certificate Secret "mine" is of type "Opaque", want "kubernetes.io/tls"`},
		{name: "a key of another certificate", secret: secret(corev1.SecretTypeTLS, certPEM, otherKeyPEM), at: certTestNow,
			wantErr: `the Alternator serving certificate Secret "mine" is invalid: private key does not match certificate ""`},
		{name: "no certificate", secret: secret(corev1.SecretTypeTLS, nil, keyPEM), at: certTestNow,
			wantErr: `the Alternator serving certificate Secret "mine" is invalid: certificate: no PEM certificate found`},
		{name: "an expired certificate", secret: secret(corev1.SecretTypeTLS, certPEM, keyPEM), at: certTestNow.Add(25 * time.Hour),
			wantErr: `the certificate of the Alternator serving certificate Secret "mine" expired at 2026-03-02T12:00:00Z`},
		{name: "a certificate not valid yet", secret: secret(corev1.SecretTypeTLS, certPEM, keyPEM), at: certTestNow.Add(-time.Hour),
			wantErr: `the certificate of the Alternator serving certificate Secret "mine" is not valid before 2026-03-01T11:59:00Z`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := validateUserManagedServingSecret(tt.secret, tt.at)
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tt.wantErr {
				t.Errorf("error is %q, want %q", got, tt.wantErr)
			}
		})
	}
}

func TestAdminCQLConnectionConfigIsReadyForCqlsh(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	ca, err := certs.NewSelfSignedCA("client-ca", 48*time.Hour, certs.ECDSAP256, certTestNow)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := ca.Sign(certs.CertificateRequest{CommonName: "admin", Usage: certs.ClientUsage, Validity: time.Hour}, certTestNow)
	if err != nil {
		t.Fatal(err)
	}
	bundle := certs.EncodeCertificatesPEM(ca.Certificate)
	certPEM, keyPEM, err := admin.EncodePEM()
	if err != nil {
		t.Fatal(err)
	}
	secret, err := makeAdminCQLConnectionConfig(sdc, bundle, certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if secret.Name != "basic-local-cql-connection-configs-admin" {
		t.Errorf("name is %q", secret.Name)
	}
	cqlshrc := string(secret.Data["cqlshrc"])
	for _, want := range []string{
		"hostname = basic-client.ns.svc\n", "port = 9142\n", "ssl = true\n", "validate = true\n",
		"certfile = " + naming.CQLConnectionConfigDir + "/ca.crt\n",
		"usercert = " + naming.CQLConnectionConfigDir + "/tls.crt\n",
		"userkey = " + naming.CQLConnectionConfigDir + "/tls.key\n",
	} {
		if !strings.Contains(cqlshrc, want) {
			t.Errorf("cqlshrc lacks %q:\n%s", want, cqlshrc)
		}
	}
	if _, err := certs.DecodeKeyPairPEM(secret.Data["tls.crt"], secret.Data["tls.key"]); err != nil {
		t.Errorf("the admin key pair is unreadable: %v", err)
	}
	if !bytes.Equal(secret.Data["ca.crt"], bundle) {
		t.Errorf("ca.crt is not the serving trust bundle")
	}
	for _, tc := range []struct {
		name                    string
		bundle, certPEM, keyPEM []byte
	}{
		{name: "no trust bundle", certPEM: certPEM, keyPEM: keyPEM},
		{name: "no admin certificate", bundle: bundle, keyPEM: keyPEM},
		{name: "no admin key", bundle: bundle, certPEM: certPEM},
	} {
		if _, err := makeAdminCQLConnectionConfig(sdc, tc.bundle, tc.certPEM, tc.keyPEM); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestCertificateOptionsRejectUnsafeRotation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mutate func(*CertificateOptions)
	}{
		{name: "refresh fraction of 1", mutate: func(o *CertificateOptions) { o.RefreshFraction = 1 }},
		{name: "zero certificate validity", mutate: func(o *CertificateOptions) { o.CertificateValidity = 0 }},
		{name: "a CA that can't outlive its last certificate", mutate: func(o *CertificateOptions) { o.CAValidity = o.CertificateValidity }},
		{name: "an unknown key algorithm", mutate: func(o *CertificateOptions) { o.KeyAlgorithm = "DSA" }},
		{name: "certificates renewed faster than the kubelet propagates them", mutate: func(o *CertificateOptions) { o.CertificateValidity = 10 * time.Minute }},
	}
	if err := DefaultCertificateOptions().Validate(); err != nil {
		t.Fatalf("the defaults are rejected: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := DefaultCertificateOptions()
			tt.mutate(&o)
			if err := o.Validate(); err == nil {
				t.Errorf("options %+v are accepted", o)
			}
		})
	}
}

func TestPodsMountTheTLSFilesTheSidecarIsGiven(t *testing.T) {
	t.Parallel()
	userManaged := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
			Type: scyllav1alpha1.TLSCertificateTypeUserManaged, UserManagedOptions: &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "mine"},
		}}
	}
	operatorManaged := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
	}
	cqlArgs := []string{
		"--cql-tls-certificate-file=" + naming.ScyllaDBServingCertsDir + "/tls.crt",
		"--cql-tls-key-file=" + naming.ScyllaDBServingCertsDir + "/tls.key",
		"--cql-tls-client-ca-file=" + naming.ScyllaDBClientCADir + "/ca-bundle.crt",
	}
	alternatorArgs := []string{
		"--alternator-tls-certificate-file=" + naming.AlternatorServingCertsDir + "/tls.crt",
		"--alternator-tls-key-file=" + naming.AlternatorServingCertsDir + "/tls.key",
	}
	tests := []struct {
		name          string
		mutate        func(*scyllav1alpha1.ScyllaDBDatacenter)
		automaticTLS  bool
		wantSources   []string
		wantArgs      []string
		wantSpecError string
	}{
		{name: "automatic TLS off: nothing"},
		{name: "automatic TLS: serving certificate and client CA", automaticTLS: true,
			wantSources: []string{"secret basic-local-serving-certs", "configmap basic-local-client-ca"}, wantArgs: cqlArgs},
		{name: "Alternator with the operator's certificate", mutate: operatorManaged, automaticTLS: true,
			wantSources: []string{"secret basic-local-serving-certs", "configmap basic-local-client-ca", "secret basic-alternator-local-serving-certs"},
			wantArgs:    append(slices.Clone(cqlArgs), alternatorArgs...)},
		{name: "Alternator with the user's certificate, automatic TLS off", mutate: userManaged,
			wantSources: []string{"secret mine"}, wantArgs: alternatorArgs},
		{name: "Alternator with the user's certificate, automatic TLS on", mutate: userManaged, automaticTLS: true,
			wantSources: []string{"secret basic-local-serving-certs", "configmap basic-local-client-ca", "secret mine"},
			wantArgs:    append(slices.Clone(cqlArgs), alternatorArgs...)},
		{name: "Alternator with the operator's certificate, automatic TLS off: no HTTPS", mutate: operatorManaged},
		{name: "a user volume in the way", automaticTLS: true, mutate: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
			sdc.Spec.Racks = []scyllav1alpha1.RackSpec{{Name: "a"}}
		}, wantSpecError: `rack "a": volume name "scylladb-serving-certs" is reserved by the operator`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(tt.mutate)
			rack := &scyllav1alpha1.RackSpec{Name: "a"}
			volumes := []corev1.Volume{{Name: "data"}}
			if len(tt.wantSpecError) != 0 {
				volumes = append(volumes, corev1.Volume{Name: naming.ScyllaDBServingCertsVolumeName})
			}
			alternator, err := makeAlternatorSettings(sdc, tt.automaticTLS)
			if err != nil {
				t.Fatal(err)
			}
			gotVolumes, mounts, args, err := addTLSToPod(sdc, rack, tt.automaticTLS, alternator, volumes, nil, []string{"--rack=a"})
			if len(tt.wantSpecError) != 0 {
				var se *specError
				if err == nil || err.Error() != tt.wantSpecError || !errors.As(err, &se) {
					t.Fatalf("error is %v, want the spec error %q", err, tt.wantSpecError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var sources []string
			for _, v := range gotVolumes[len(volumes):] {
				switch {
				case v.Secret != nil:
					sources = append(sources, "secret "+v.Secret.SecretName)
				case v.ConfigMap != nil:
					sources = append(sources, "configmap "+v.ConfigMap.Name)
				}
				i := slices.IndexFunc(mounts, func(m corev1.VolumeMount) bool { return m.Name == v.Name })
				if i < 0 || !mounts[i].ReadOnly || len(mounts[i].SubPath) != 0 {
					t.Errorf("volume %q is not mounted read-only without subPath: %+v", v.Name, mounts)
				}
			}
			if diff := cmp.Diff(tt.wantSources, sources); diff != "" {
				t.Errorf("TLS volumes differ (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantArgs, args[1:], cmpEmptyIsNil); diff != "" {
				t.Errorf("sidecar TLS arguments differ (-want +got):\n%s", diff)
			}
		})
	}
}

var cmpEmptyIsNil = cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })

// A new CA whose Secret was written without its bundle (the bundle write failed, or the operator restarted in
// between) signs only once the bundle clients read has held it for the trust propagation delay, however long after
// the CA's notBefore that bundle was published: until then, clients holding the published bundle would reject what it
// signed.
func TestNewCASignsOnlyOnceItsBundleWasPublishedForTheDelay(t *testing.T) {
	t.Parallel()
	delay := testCertOptions().TrustPropagationDelay
	tests := []struct {
		name string
		// publishAfter is how long after the CA Secret's write the bundle is written.
		publishAfter time.Duration
	}{
		{name: "the bundle write failed once, retried after an outage", publishAfter: 2 * time.Hour},
		{name: "a restart between the Secret and the bundle write", publishAfter: delay / 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(nil)
			store := newCertStore()
			rollover := certTestNow.Add(80*24*time.Hour + time.Minute)
			reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
			reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), rollover.Add(-2*24*time.Hour))
			oldBundle := bundleOf(t, store, "basic-local-serving-ca")

			// The rollover's Secrets are written, its bundle is not.
			objects, rolled, changed, _, err := reconcileCertificateSet(sdc, servingSet(t, sdc, testNames), store.secrets, store.configMaps, rollover)
			if err != nil {
				t.Fatal(err)
			}
			if !changed || rolled.CA.Certificate.Equal(oldBundle[0]) {
				t.Fatal("the CA was not rolled over")
			}
			store.put(certificateObjects{secrets: objects.secrets})
			newCA := rolled.CA.Certificate

			// A new address makes the certificate due for reissuing, which only a CA every client trusts may do.
			moreNames := servingNames{dnsNames: append(slices.Clone(testNames.dnsNames), "more.ns.svc"), ipAddresses: testNames.ipAddresses}
			published := rollover.Add(tc.publishAfter)
			steps := []struct {
				at         time.Time
				wantNewCA  bool
				wantBundle int
			}{
				{at: published, wantNewCA: false, wantBundle: 2},
				{at: published.Add(delay - time.Second), wantNewCA: false, wantBundle: 2},
				{at: published.Add(delay + time.Second), wantNewCA: true, wantBundle: 2},
			}
			for i, step := range steps {
				state, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, moreNames), step.at)
				signedByNewCA := certs.IsSignedBy(state.Certificate.Certificate, newCA)
				// The unpublished CA is published as it is, never generated again (a ConfigMap cache lagging behind
				// the Secrets' looks the same).
				if !state.CA.Certificate.Equal(newCA) {
					t.Fatalf("step %d: the CA was generated again", i)
				}
				bundle := bundleOf(t, store, "basic-local-serving-ca")
				if signedByNewCA != step.wantNewCA || len(bundle) != step.wantBundle {
					t.Errorf("step %d: signed by the new CA %v, bundle of %d; want %v, %d", i, signedByNewCA, len(bundle), step.wantNewCA, step.wantBundle)
				}
				// Every client holds at least the bundle published before this step.
				roots := oldBundle
				if i > 0 {
					roots = bundle
				}
				if err := certs.Verify(state.Certificate.Certificate, roots, certs.ServingUsage, "basic-client.ns.svc", step.at); err != nil {
					t.Errorf("step %d: the served certificate does not verify against the bundle clients hold: %v", i, err)
				}
			}
		})
	}
}

// Bundles written by an earlier version hold no publication records: their CAs count as published at their
// notBefore, so an upgrade neither writes the bundle nor delays a renewal.
func TestBundleWithoutPublicationRecordsIsKeptAndItsCASignsAsBefore(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	for _, cm := range store.configMaps {
		cm.Annotations = nil
	}

	objects, _, changed, _, err := reconcileCertificateSet(sdc, servingSet(t, sdc, testNames), store.secrets, store.configMaps, certTestNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if changed || !objects.holdDataOf(store.secrets, store.configMaps) {
		t.Errorf("changed %v, holds the existing data %v; want the bundle of the earlier version kept as it is", changed, objects.holdDataOf(store.secrets, store.configMaps))
	}

	due := certs.RenewalTime(first.Certificate.Certificate, testCertOptions().RefreshFraction)
	renewed, changed := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), due)
	if !changed || renewed.Certificate == first.Certificate || !certs.IsSignedBy(renewed.Certificate.Certificate, first.CA.Certificate) {
		t.Errorf("changed %v; want the due certificate renewed at once by the unrecorded CA", changed)
	}
	if a := store.configMaps["basic-local-serving-ca"].Annotations; len(a) != 0 {
		t.Errorf("the bundle got annotations %v, want none while it holds no new CA", a)
	}
}

// The bundle records the publication of its CA in the write that creates it, and a later sync at rest computes the
// very objects the API server holds: nothing is written again.
func TestPublicationRecordsAreWrittenWithTheBundleAndKeptAtRest(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	records, err := decodeCABundlePublication(store.configMaps["basic-local-serving-ca"])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]time.Time{certs.CAFingerprint(first.CA.Certificate): certTestNow}, records); diff != "" {
		t.Errorf("publication records (-want +got):\n%s", diff)
	}
	objects, _, changed, _, err := reconcileCertificateSet(sdc, servingSet(t, sdc, testNames), store.secrets, store.configMaps, certTestNow.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if changed || !objects.holdDataOf(store.secrets, store.configMaps) {
		t.Errorf("changed %v, holds the existing data %v; want nothing to write at rest", changed, objects.holdDataOf(store.secrets, store.configMaps))
	}
}

// An unreadable publication record is replaced, in the bundle's next write, by a record of now: the bundle's CAs then
// wait as if just published, never less.
func TestUnreadablePublicationRecordIsRewrittenAsPublishedNow(t *testing.T) {
	t.Parallel()
	sdc := certTestDatacenter(nil)
	store := newCertStore()
	first, _ := reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), certTestNow)
	store.configMaps["basic-local-serving-ca"].Annotations = map[string]string{naming.CABundlePublishedAnnotation: "not json"}
	if _, err := decodeCABundlePublication(store.configMaps["basic-local-serving-ca"]); err == nil || !strings.Contains(err.Error(), naming.CABundlePublishedAnnotation) {
		t.Errorf("decoding error %v, want one naming the annotation", err)
	}
	at := certTestNow.Add(time.Hour)
	reconcileInto(t, store, sdc, servingSet(t, sdc, testNames), at)
	records, err := decodeCABundlePublication(store.configMaps["basic-local-serving-ca"])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]time.Time{certs.CAFingerprint(first.CA.Certificate): at}, records); diff != "" {
		t.Errorf("publication records (-want +got):\n%s", diff)
	}
}

// A client reaching the datacenter through its CQL Ingresses checks the serving certificate against the host it asked
// for: "cql.<domain>" for any node, "<hostID>.cql.<domain>" for one node. A wildcard covers a single label, so the
// second needs its own.
func TestServingNamesCoverTheCQLIngressHosts(t *testing.T) {
	t.Parallel()

	hostID := "8d5ed9f4-7764-4dbd-bad8-43fddce94b7c"
	for _, tc := range []struct {
		name       string
		cqlIngress bool
		wantValid  map[string]bool
	}{
		{
			name:       "with CQL ingress",
			cqlIngress: true,
			wantValid: map[string]bool{
				"cql.db.example.com": true, hostID + ".cql.db.example.com": true,
				"cql.db.example.org": true, hostID + ".cql.db.example.org": true,
				// Not one of the Ingresses' hosts.
				"a." + hostID + ".cql.db.example.com": false,
			},
		},
		{
			name: "without CQL ingress, only names directly below the domains",
			wantValid: map[string]bool{
				"cql.db.example.com": true, hostID + ".cql.db.example.com": false,
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc := certTestDatacenter(func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.DNSDomains = []string{"db.example.com", "db.example.org."}
				if tc.cqlIngress {
					sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{CQL: &scyllav1alpha1.CQLExposeOptions{Ingress: &scyllav1alpha1.IngressOptions{}}}
				}
			})
			names, err := makeServingNames(sdc, effectiveRacks(sdc), map[string]*corev1.Service{}, map[string]*corev1.Pod{})
			if err != nil {
				t.Fatal(err)
			}
			cert := &x509.Certificate{DNSNames: names.dnsNames}
			for host, want := range tc.wantValid {
				if err := cert.VerifyHostname(host); (err == nil) != want {
					t.Errorf("host %s: valid %v, want %v (names %q)", host, err == nil, want, names.dnsNames)
				}
			}
		})
	}
}
