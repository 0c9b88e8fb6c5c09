package scylladbdatacenter

import (
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"maps"
	"net"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/heap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// newTLSFixture is newFixture with automatic TLS on.
func newTLSFixture(t testing.TB, w world) *fixture {
	t.Helper()
	f := newFixture(t, w)
	if err := f.controller.SetCertificateOptions(testCertOptions()); err != nil {
		t.Fatal(err)
	}
	return f
}

// certWrites are the writes to the TLS Secrets and ConfigMaps among f's writes.
func certWrites(f *fixture) []string {
	return slices.DeleteFunc(f.kubeWrites(), func(w string) bool {
		return !strings.Contains(w, "-local-") || strings.Contains(w, "statefulsets")
	})
}

var tlsCreates = []string{
	"create secrets basic-local-serving-ca",
	"create secrets basic-local-serving-certs",
	"create secrets basic-local-client-ca",
	"create secrets basic-local-user-admin",
	"create secrets basic-local-cql-connection-configs-admin",
	"create configmaps basic-local-serving-ca",
	"create configmaps basic-local-client-ca",
}

func TestCertificateSyncCreatesEveryTLSObjectThenWritesNothing(t *testing.T) {
	t.Parallel()
	f := newTLSFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tlsCreates, certWrites(f)); diff != "" {
		t.Errorf("TLS writes of the first sync differ (-want +got):\n%s", diff)
	}
	if !slices.Contains(f.writes(), "create statefulsets basic-dc1-a") {
		t.Errorf("the StatefulSets were not created once the TLS objects were: %q", f.writes())
	}
	sts := f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet)
	if !slices.ContainsFunc(sts.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Secret != nil && v.Secret.SecretName == "basic-local-serving-certs"
	}) {
		t.Errorf("the pods do not mount the serving certificate: %+v", sts.Spec.Template.Spec.Volumes)
	}

	for _, later := range []time.Duration{0, 24 * time.Hour} {
		next := newTLSFixture(t, f.world())
		next.controller.now = func() metav1.Time { return metav1.NewTime(testNow.Add(later)) }
		if err := next.sync(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string(nil), next.writes()); diff != "" {
			t.Errorf("a sync %v later wrote (-want +got):\n%s", later, diff)
		}
	}
}

func TestCertificateSyncRenewsOnlyTheServingCertificateWhenAnAddressAppears(t *testing.T) {
	t.Parallel()
	f := newTLSFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w := f.world()
	svc := object[*corev1.Service](t, w, "basic-dc1-a-0")
	svc.Spec.ClusterIPs = []string{"10.96.0.42"}

	next := newTLSFixture(t, w)
	if err := next.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update secrets basic-local-serving-certs"}, certWrites(next)); diff != "" {
		t.Errorf("TLS writes differ (-want +got):\n%s", diff)
	}
	served := next.written("secrets", "basic-local-serving-certs").(*corev1.Secret)
	cert, err := certs.DecodeCertificatesPEM(served.Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ipStrings(cert[0].IPAddresses), "10.96.0.42") {
		t.Errorf("the renewed certificate lacks the new address: %v", cert[0].IPAddresses)
	}
}

func TestFirstCertificateNamesTheClusterIPsOfServicesCreatedInTheSameSync(t *testing.T) {
	t.Parallel()
	f := newTLSFixture(t, world{sdc: newBasicSDC()})
	// The API server allocates a ClusterIP when it creates a Service; the create response carries it.
	allocated := 0
	f.kubeClient.PrependReactor("create", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
		svc := action.(clienttesting.CreateAction).GetObject().(*corev1.Service)
		allocated++
		svc.Spec.ClusterIPs = []string{fmt.Sprintf("10.96.0.%d", allocated)}
		svc.Spec.ClusterIP = svc.Spec.ClusterIPs[0]
		return false, nil, nil
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	served := f.written("secrets", "basic-local-serving-certs").(*corev1.Secret)
	cert, err := certs.DecodeCertificatesPEM(served.Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := 1; i <= allocated; i++ {
		want = append(want, fmt.Sprintf("10.96.0.%d", i))
	}
	if allocated == 0 || !cmp.Equal(want, ipStrings(cert[0].IPAddresses)) {
		t.Errorf("the first certificate names %v, expected the %d ClusterIPs allocated in the same sync %v", cert[0].IPAddresses, allocated, want)
	}

	// Once the cache shows those Services, the certificate covers them already: nothing is reissued.
	next := newTLSFixture(t, f.world())
	if err := next.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), certWrites(next)); diff != "" {
		t.Errorf("TLS writes of the next sync (-want +got):\n%s", diff)
	}
}

func TestCertificateSyncReportsAMissingUserManagedAlternatorSecret(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
		Type:               scyllav1alpha1.TLSCertificateTypeUserManaged,
		UserManagedOptions: &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "my-alternator-tls"},
	}}
	f := newTLSFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatalf("a spec error must not be retried, got %v", err)
	}
	status := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status
	var found bool
	for _, c := range status.Conditions {
		if c.Type == certificateControllerName+"Degraded" && c.Status == metav1.ConditionTrue &&
			strings.Contains(c.Message, `the Alternator serving certificate Secret "my-alternator-tls" does not exist`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no %sDegraded condition names the missing Secret: %+v", certificateControllerName, status.Conditions)
	}
	if slices.ContainsFunc(certWrites(f), func(w string) bool { return strings.Contains(w, "alternator") }) {
		t.Errorf("operator-managed Alternator certificates were written for a UserManaged certificate: %q", certWrites(f))
	}
}

func TestTurningTLSOffPrunesTheTLSObjects(t *testing.T) {
	t.Parallel()
	f := newTLSFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	off := newFixture(t, f.world())
	if err := off.sync(); err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, w := range certWrites(off) {
		if strings.HasPrefix(w, "delete ") {
			deleted = append(deleted, w)
		}
	}
	if len(deleted) != len(tlsCreates) {
		t.Errorf("deleted %q, want every TLS object deleted", deleted)
	}
}

// basicMemberServices are the member Services of newBasicSDC's six nodes, each with a cluster IP.
func basicMemberServices() map[string]*corev1.Service {
	services := map[string]*corev1.Service{}
	for i, name := range []string{"basic-dc1-a-0", "basic-dc1-a-1", "basic-dc1-a-2", "basic-dc1-b-0", "basic-dc1-b-1", "basic-dc1-b-2"} {
		services[name] = memberService(name, fmt.Sprintf("10.96.0.%d", i+1))
	}
	return services
}

// basicCertificateSets are the certificate sets of newBasicSDC with its member Services (basicMemberServices), as
// every sync builds them.
func basicCertificateSets(tb testing.TB, sdc *scyllav1alpha1.ScyllaDBDatacenter) []*certificateSet {
	names, err := makeServingNames(sdc, effectiveRacks(sdc), basicMemberServices(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	sets, err := makeCertificateSets(sdc, testCertOptions(), names)
	if err != nil {
		tb.Fatal(err)
	}
	return sets
}

// BenchmarkNoOpCertificateReconcile measures what the certificate sub-sync computes for a datacenter of 6 nodes whose
// certificates are all current, before applying objects that compare equal: the names to cover, then every set's
// decision and objects. It is what every sync of a steady cluster pays for automatic TLS; no key is generated.
func BenchmarkNoOpCertificateReconcile(b *testing.B) {
	sdc := newBasicSDC()
	store := newCertStore()
	for _, set := range basicCertificateSets(b, sdc) {
		objects, _, _, _, err := reconcileCertificateSet(sdc, set, store.secrets, store.configMaps, certTestNow)
		if err != nil {
			b.Fatal(err)
		}
		store.put(objects)
	}
	for b.Loop() {
		for _, set := range basicCertificateSets(b, sdc) {
			_, _, changed, _, err := reconcileCertificateSet(sdc, set, store.secrets, store.configMaps, certTestNow.Add(time.Hour))
			if err != nil || changed {
				b.Fatalf("a no-op reconcile changed %v: %v", changed, err)
			}
		}
	}
}

// BenchmarkNoOpCertificateReconcileRemembered is BenchmarkNoOpCertificateReconcile through the controller's memory of
// its last decisions (certificateDecisions), as syncs run it.
func BenchmarkNoOpCertificateReconcileRemembered(b *testing.B) {
	sdc := newBasicSDC()
	decisions := newCertificateDecisions()
	store := newCertStore()
	reconcileAll := func(now time.Time) bool {
		anyChanged := false
		for _, set := range basicCertificateSets(b, sdc) {
			decision, err := decisions.reconcile(sdc, set, store.secrets, store.configMaps, now)
			if err != nil {
				b.Fatal(err)
			}
			store.put(decision.objects)
			anyChanged = anyChanged || decision.changed
		}
		return anyChanged
	}
	reconcileAll(certTestNow)
	reconcileAll(certTestNow)
	for b.Loop() {
		if reconcileAll(certTestNow.Add(time.Hour)) {
			b.Fatal("a no-op reconcile changed something")
		}
	}
}

// BenchmarkCertificateGeneration measures the same with nothing stored yet: every CA and certificate generated.
func BenchmarkCertificateGeneration(b *testing.B) {
	sdc := newBasicSDC()
	sets, err := makeCertificateSets(sdc, testCertOptions(), testNames)
	if err != nil {
		b.Fatal(err)
	}
	empty := newCertStore()
	for b.Loop() {
		for _, set := range sets {
			if _, _, _, _, err := reconcileCertificateSet(sdc, set, empty.secrets, empty.configMaps, certTestNow); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func TestAnInvalidAlternatorNameDoesNotHoldBackCQLTLS(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
		Type:                   scyllav1alpha1.TLSCertificateTypeOperatorManaged,
		OperatorManagedOptions: &scyllav1alpha1.OperatorManagedTLSCertificateOptions{AdditionalIPAddresses: []string{"not-an-ip"}},
	}}
	f := newTLSFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatalf("a spec error must not be retried, got %v", err)
	}
	if diff := cmp.Diff(tlsCreates, certWrites(f)); diff != "" {
		t.Errorf("TLS writes differ (-want +got):\n%s", diff)
	}
	if !slices.Contains(f.writes(), "create statefulsets basic-dc1-a") {
		t.Errorf("the StatefulSets wait for the Alternator certificate: %q", f.writes())
	}
	status := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status
	if !slices.ContainsFunc(status.Conditions, func(c metav1.Condition) bool {
		return c.Type == certificateControllerName+"Degraded" && c.Status == metav1.ConditionTrue && strings.Contains(c.Message, `"not-an-ip" is not an IP address`)
	}) {
		t.Errorf("no %sDegraded condition names the bad address: %+v", certificateControllerName, status.Conditions)
	}
}

// Alternator without plain HTTP, with automatic TLS on: the operator issues its certificate, the sidecar is given it,
// the Services expose HTTPS alone, nothing is reported, and a second sync writes nothing.
func TestAlternatorServesHTTPSAloneWithAutomaticTLS(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
	f := newTLSFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(tlsCreates), "create secrets basic-alternator-local-serving-ca", "create secrets basic-alternator-local-serving-certs",
		"create configmaps basic-alternator-local-serving-ca")
	if diff := cmp.Diff(sortedStrings(want), sortedStrings(certWrites(f))); diff != "" {
		t.Errorf("TLS writes differ (-want +got):\n%s", diff)
	}
	for _, name := range []string{"basic-client", "basic-dc1-a-0"} {
		var alternator []string
		for _, p := range f.written("services", name).(*corev1.Service).Spec.Ports {
			if strings.HasPrefix(p.Name, "alternator") {
				alternator = append(alternator, fmt.Sprintf("%s/%d", p.Name, p.Port))
			}
		}
		if diff := cmp.Diff([]string{"alternator-tls/8043"}, alternator); diff != "" {
			t.Errorf("Service %s exposes other Alternator ports (-want +got):\n%s", name, diff)
		}
	}
	sts := f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet)
	if args := strings.Join(scyllaContainer(sts).Command, " "); !strings.Contains(args, "--alternator-tls-certificate-file=") {
		t.Errorf("the sidecar is not given the Alternator certificate: %s", args)
	}
	status := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status
	for _, c := range status.Conditions {
		if strings.HasSuffix(c.Type, "Degraded") && c.Status == metav1.ConditionTrue {
			t.Errorf("degraded: %+v", c)
		}
	}

	next := newTLSFixture(t, f.world())
	if err := next.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), next.writes()); diff != "" {
		t.Errorf("the second sync wrote (-want +got):\n%s", diff)
	}
}

// A UserManaged certificate without a Secret name, with automatic TLS on and no plain HTTP, is reported by the
// certificate sub-sync only.
func TestAlternatorWithoutItsSecretNameIsReportedOnce(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
		Type: scyllav1alpha1.TLSCertificateTypeUserManaged,
	}}
	f := newTLSFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatalf("a spec error must not be retried, got %v", err)
	}
	want := []string{certificateControllerName + "Degraded: spec.scyllaDB.alternatorOptions.servingCertificate.userManagedOptions.secretName is required for type UserManaged"}
	if diff := cmp.Diff(want, degradedSubSyncs(f)); diff != "" {
		t.Errorf("degraded conditions differ (-want +got):\n%s", diff)
	}
}

// degradedSubSyncs are the "<type>: <message>" of the sub-syncs' Degraded conditions that are true in the status f wrote.
func degradedSubSyncs(f *fixture) []string {
	status := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status
	var degraded []string
	for _, c := range status.Conditions {
		if strings.HasSuffix(c.Type, "ControllerDegraded") && c.Status == metav1.ConditionTrue {
			degraded = append(degraded, c.Type+": "+c.Message)
		}
	}
	return degraded
}

func sortedStrings(s []string) []string {
	return slices.Sorted(slices.Values(s))
}

// With automatic TLS off, a UserManaged Alternator certificate is still served over HTTPS, and its Secret is still
// checked: a missing or unfit one is reported in CertificateControllerDegraded.
func TestUserManagedAlternatorCertificateIsCheckedWithoutAutomaticTLS(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		objects []runtime.Object
		want    string
	}{
		{name: "a missing Secret", want: `the Alternator serving certificate Secret "mine" does not exist`},
		{name: "an Opaque Secret",
			objects: []runtime.Object{&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "mine"}, Type: corev1.SecretTypeOpaque}},
			want:    `the Alternator serving certificate Secret "mine" is of type "Opaque", want "kubernetes.io/tls"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sdc := newBasicSDC()
			sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
				Type:               scyllav1alpha1.TLSCertificateTypeUserManaged,
				UserManagedOptions: &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "mine"},
			}}
			f := newFixture(t, world{sdc: sdc, objects: tt.objects})
			if err := f.sync(); err != nil {
				t.Fatalf("a spec error must not be retried, got %v", err)
			}
			if diff := cmp.Diff([]string{certificateControllerName + "Degraded: " + tt.want}, degradedSubSyncs(f)); diff != "" {
				t.Errorf("degraded conditions differ (-want +got):\n%s", diff)
			}
			if writes := certWrites(f); len(writes) != 0 {
				t.Errorf("certificates were written with automatic TLS off: %q", writes)
			}
			sts := f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet)
			if !slices.ContainsFunc(sts.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool {
				return v.Secret != nil && v.Secret.SecretName == "mine"
			}) {
				t.Errorf("the pods do not mount the user's certificate: %+v", sts.Spec.Template.Spec.Volumes)
			}
			if !slices.ContainsFunc(f.written("services", "basic-client").(*corev1.Service).Spec.Ports, func(p corev1.ServicePort) bool {
				return p.Name == "alternator-tls" && p.Port == 8043
			}) {
				t.Errorf("the client Service does not expose Alternator HTTPS")
			}
		})
	}
}

// BenchmarkCertificateDecisionsRetainedBytes reports the heap the controller's memory of its certificate decisions
// (certificateDecisions) keeps per datacenter once every set of 100 datacenters with current certificates has been
// decided: what the operator holds at rest for automatic TLS beyond the informer caches' Secrets and ConfigMaps.
func BenchmarkCertificateDecisionsRetainedBytes(b *testing.B) {
	const datacenters = 100
	type datacenter struct {
		sdc   *scyllav1alpha1.ScyllaDBDatacenter
		sets  []*certificateSet
		store *certStore
	}
	dcs := make([]datacenter, 0, datacenters)
	for i := range datacenters {
		sdc := newBasicSDC()
		sdc.Name = fmt.Sprintf("dc-%03d", i)
		sdc.UID = types.UID(fmt.Sprintf("uid-%03d", i))
		dc := datacenter{sdc: sdc, sets: basicCertificateSets(b, sdc), store: newCertStore()}
		for _, set := range dc.sets {
			objects, _, _, _, err := reconcileCertificateSet(sdc, set, dc.store.secrets, dc.store.configMaps, certTestNow)
			if err != nil {
				b.Fatal(err)
			}
			dc.store.put(objects)
		}
		dcs = append(dcs, dc)
	}
	var retained uint64
	for b.Loop() {
		before := heap.Live()
		decisions := newCertificateDecisions()
		for _, dc := range dcs {
			for _, set := range dc.sets {
				if decision, err := decisions.reconcile(dc.sdc, set, dc.store.secrets, dc.store.configMaps, certTestNow.Add(time.Hour)); err != nil || decision.changed {
					b.Fatalf("a no-op reconcile changed %v: %v", decision.changed, err)
				}
			}
		}
		retained = heap.Live() - before
		goruntime.KeepAlive(decisions)
	}
	b.ReportMetric(float64(retained)/datacenters, "retained-B/dc")
}

func TestRememberedCertificateDecisionsAreTheComputedOnes(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	current := newCertStore()
	sets := basicCertificateSets(t, sdc)
	for _, set := range sets {
		objects, _, _, _, err := reconcileCertificateSet(sdc, set, current.secrets, current.configMaps, certTestNow)
		if err != nil {
			t.Fatal(err)
		}
		current.put(objects)
	}
	// A trust bundle that does not decode is replaced by the CA alone: the objects differ from the existing ones
	// with no key generated.
	unreadableBundle := newCertStore()
	unreadableBundle.put(certificateObjects{secrets: slices.Collect(maps.Values(current.secrets)), configMaps: slices.Collect(maps.Values(current.configMaps))})
	bad := current.configMaps[sets[0].caName].DeepCopy()
	bad.Data[naming.CABundleKey] = "not PEM"
	unreadableBundle.configMaps[bad.Name] = bad

	for _, tc := range []struct {
		name  string
		store *certStore
	}{
		{name: "current objects", store: current},
		{name: "unreadable trust bundle", store: unreadableBundle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			decisions := newCertificateDecisions()
			for _, set := range sets {
				want, state, _, recheck, err := reconcileCertificateSet(sdc, set, tc.store.secrets, tc.store.configMaps, certTestNow.Add(time.Hour))
				if err != nil {
					t.Fatal(err)
				}
				for i := range 3 {
					got, err := decisions.reconcile(sdc, set, tc.store.secrets, tc.store.configMaps, certTestNow.Add(time.Hour))
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got.objects, cmp.AllowUnexported(certificateObjects{})); diff != "" {
						t.Errorf("%s, reconcile %d: objects differ from the computed ones (-want +got):\n%s", set.certName, i, diff)
					}
					if !got.recheck.Equal(recheck) || !got.notAfter.Equal(state.Certificate.Certificate.NotAfter) || !got.caNotAfter.Equal(state.CA.Certificate.NotAfter) {
						t.Errorf("%s, reconcile %d: recheck %v, expiry %v, CA expiry %v differ from the computed %v, %v, %v", set.certName, i,
							got.recheck, got.notAfter, got.caNotAfter, recheck, state.Certificate.Certificate.NotAfter, state.CA.Certificate.NotAfter)
					}
				}
			}
		})
	}
}

// storedCertificateSet returns newBasicSDC, its first certificate set and a store holding the set's objects as
// issued at certTestNow.
func storedCertificateSet(tb testing.TB) (*scyllav1alpha1.ScyllaDBDatacenter, *certificateSet, *certStore) {
	tb.Helper()
	sdc := newBasicSDC()
	set := basicCertificateSets(tb, sdc)[0]
	store := newCertStore()
	objects, _, _, _, err := reconcileCertificateSet(sdc, set, store.secrets, store.configMaps, certTestNow)
	if err != nil {
		tb.Fatal(err)
	}
	store.put(objects)
	return sdc, set, store
}

// The memory of certificate decisions answers only for the inputs it was computed from: a change of any of them
// changes the fingerprint, and the set is reconciled again.
func TestCertificateSetFingerprintCoversEveryInput(t *testing.T) {
	t.Parallel()

	type inputs struct {
		sdc   *scyllav1alpha1.ScyllaDBDatacenter
		set   *certificateSet
		store *certStore
	}
	base := func(t *testing.T) inputs {
		sdc, set, store := storedCertificateSet(t)
		return inputs{sdc: sdc, set: set, store: store}
	}
	secret := func(in inputs, name string) *corev1.Secret {
		s := in.store.secrets[name].DeepCopy()
		in.store.secrets[name] = s
		return s
	}

	tt := []struct {
		name   string
		mutate func(in inputs)
	}{
		{name: "the datacenter's UID", mutate: func(in inputs) { in.sdc.UID = "other" }},
		{name: "the datacenter's name", mutate: func(in inputs) { in.sdc.Name = "other" }},
		{name: "the CA's validity", mutate: func(in inputs) { in.set.policy.CAValidity += time.Second }},
		{name: "the refresh fraction", mutate: func(in inputs) { in.set.policy.RefreshFraction = 0.7 }},
		{name: "the trust propagation delay", mutate: func(in inputs) { in.set.policy.TrustPropagationDelay += time.Second }},
		{name: "the certificate's validity", mutate: func(in inputs) { in.set.policy.Certificate.Validity += time.Second }},
		{name: "the key algorithm", mutate: func(in inputs) { in.set.policy.Certificate.KeyAlgorithm = certs.RSA2048 }},
		{name: "a DNS name more", mutate: func(in inputs) {
			in.set.policy.Certificate.DNSNames = append(slices.Clone(in.set.policy.Certificate.DNSNames), "more")
		}},
		{name: "two DNS names joined into one", mutate: func(in inputs) {
			names := slices.Clone(in.set.policy.Certificate.DNSNames)
			in.set.policy.Certificate.DNSNames = append([]string{names[0] + names[1]}, names[2:]...)
		}},
		{name: "an IP address changed", mutate: func(in inputs) {
			ips := slices.Clone(in.set.policy.Certificate.IPAddresses)
			ips[0] = net.ParseIP("10.96.0.200")
			in.set.policy.Certificate.IPAddresses = ips
		}},
		{name: "the CA's certificate", mutate: func(in inputs) {
			s := secret(in, in.set.caName)
			s.Data[corev1.TLSCertKey] = append(slices.Clone(s.Data[corev1.TLSCertKey]), '\n')
		}},
		{name: "the certificate's key", mutate: func(in inputs) {
			s := secret(in, in.set.certName)
			s.Data[corev1.TLSPrivateKeyKey] = append(slices.Clone(s.Data[corev1.TLSPrivateKeyKey]), '\n')
		}},
		{name: "the certificate's Secret type", mutate: func(in inputs) { secret(in, in.set.certName).Type = corev1.SecretTypeOpaque }},
		{name: "the certificate's Secret missing", mutate: func(in inputs) { delete(in.store.secrets, in.set.certName) }},
		{name: "the trust bundle", mutate: func(in inputs) {
			cm := in.store.configMaps[in.set.caName].DeepCopy()
			cm.Data[naming.CABundleKey] += "\n"
			in.store.configMaps[in.set.caName] = cm
		}},
		{name: "the trust bundle missing", mutate: func(in inputs) { delete(in.store.configMaps, in.set.caName) }},
		{name: "the bundle's publication records", mutate: func(in inputs) {
			cm := in.store.configMaps[in.set.caName].DeepCopy()
			cm.Annotations[naming.CABundlePublishedAnnotation] += " "
			in.store.configMaps[in.set.caName] = cm
		}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := base(t)
			before := certificateSetFingerprint(in.sdc, in.set, in.store.secrets, in.store.configMaps)
			if again := certificateSetFingerprint(in.sdc, in.set, in.store.secrets, in.store.configMaps); again != before {
				t.Fatal("the fingerprint of unchanged inputs changed")
			}
			policy := *in.set.policy
			in.set = &certificateSet{caName: in.set.caName, certName: in.set.certName, policy: &policy}
			tc.mutate(in)
			if after := certificateSetFingerprint(in.sdc, in.set, in.store.secrets, in.store.configMaps); after == before {
				t.Errorf("changing %s left the fingerprint as it was", tc.name)
			}
		})
	}
}

// A certificate set whose objects the caches hold as Apply last found them is not applied again; an object changed
// since, which the API server gives a new resourceVersion, is.
func TestCertificateObjectsAtRestAreAppliedAgainOnlyOnceChanged(t *testing.T) {
	t.Parallel()

	first := newTLSFixture(t, world{sdc: newBasicSDC()})
	if err := first.sync(); err != nil {
		t.Fatal(err)
	}
	w := withServerFields(first.world())
	f := newTLSFixture(t, w)
	for i := range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		if writes := certWrites(f); len(writes) != 0 {
			t.Fatalf("sync %d wrote certificate objects: %q", i, writes)
		}
	}

	checkAppliedAgainOnlyOnceChanged(t, f, object[*corev1.Secret](t, w, "basic-local-serving-ca"), certWrites, "update secrets basic-local-serving-ca")
}

func TestAppliedVersionsAreRememberedOnlyForTheRememberedDecision(t *testing.T) {
	t.Parallel()

	sdc, set, store := storedCertificateSet(t)
	decisions := newCertificateDecisions()
	decision, err := decisions.reconcile(sdc, set, store.secrets, store.configMaps, certTestNow)
	if err != nil {
		t.Fatal(err)
	}
	versions := certificateObjectVersions{{uid: "ca", resourceVersion: "1"}, {uid: "cert", resourceVersion: "1"}, {uid: "bundle", resourceVersion: "1"}}

	decisions.rememberApplied(sdc, set, [sha256.Size]byte{1}, versions)
	if got, _ := decisions.reconcile(sdc, set, store.secrets, store.configMaps, certTestNow); got.applied != (certificateObjectVersions{}) {
		t.Errorf("versions applied for another decision were remembered: %v", got.applied)
	}
	decisions.rememberApplied(sdc, set, decision.fingerprint, versions)
	if got, _ := decisions.reconcile(sdc, set, store.secrets, store.configMaps, certTestNow); got.applied != versions {
		t.Errorf("the remembered decision has applied versions %v, want %v", got.applied, versions)
	}
	if got, _ := decisions.reconcile(sdc, set, store.secrets, store.configMaps, certTestNow.Add(testCertOptions().CertificateValidity)); got.applied != (certificateObjectVersions{}) {
		t.Errorf("a decision made anew at the recheck time kept the applied versions %v", got.applied)
	}

	if !versions.known() {
		t.Error("versions with UIDs and resourceVersions are not known")
	}
	for i := range versions {
		for _, unknown := range []cachedObjectVersion{{}, {uid: "uid"}, {resourceVersion: "1"}} {
			partial := versions
			partial[i] = unknown
			if partial.known() {
				t.Errorf("versions %v are known", partial)
			}
		}
	}
}

// A CA rollover whose bundle write fails: the new CA is in its Secret but not in the bundle clients read, and it signs
// nothing until the retried write has published it for the trust propagation delay, however long the outage was.
func TestCARolloverWhoseBundleWriteFailsSignsOnlyOnceTheBundleWasPublished(t *testing.T) {
	t.Parallel()
	delay := testCertOptions().TrustPropagationDelay
	f := newTLSFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	syncAt := func(w world, at time.Time, failBundleWrite bool) (*fixture, error) {
		next := newTLSFixture(t, w)
		next.controller.now = func() metav1.Time { return metav1.NewTime(at) }
		if failBundleWrite {
			next.kubeClient.PrependReactor("update", "configmaps", func(action clienttesting.Action) (bool, runtime.Object, error) {
				if objectName(action.(clienttesting.UpdateAction).GetObject()) == "basic-local-serving-ca" {
					return true, nil, fmt.Errorf("the API server is unavailable")
				}
				return false, nil, nil
			})
		}
		return next, next.sync()
	}
	servedCA := func(t *testing.T, w world) (*x509.Certificate, []*x509.Certificate) {
		t.Helper()
		cert, err := certs.DecodeCertificatesPEM(object[*corev1.Secret](t, w, "basic-local-serving-certs").Data[corev1.TLSCertKey])
		if err != nil {
			t.Fatal(err)
		}
		bundle, err := certs.DecodeCertificatesPEM([]byte(object[*corev1.ConfigMap](t, w, "basic-local-serving-ca").Data[naming.CABundleKey]))
		if err != nil {
			t.Fatal(err)
		}
		return cert[0], bundle
	}

	rollover := testNow.Add(80*24*time.Hour + time.Minute)
	failed, err := syncAt(f.world(), rollover, true)
	if err == nil {
		t.Fatal("the sync whose bundle write failed returned no error")
	}
	w := failed.world()
	caCert, err := certs.DecodeCertificatesPEM(object[*corev1.Secret](t, w, "basic-local-serving-ca").Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	newCA := caCert[0]
	if _, bundle := servedCA(t, w); slices.ContainsFunc(bundle, newCA.Equal) {
		t.Fatal("the rollover's new CA is in the bundle although its write failed")
	}

	// After the outage, an address appears: the serving certificate must be reissued, by a CA every client trusts.
	published := rollover.Add(2 * time.Hour)
	object[*corev1.Service](t, w, "basic-dc1-a-0").Spec.ClusterIPs = []string{"10.96.0.42"}
	retried, err := syncAt(w, published, false)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update configmaps basic-local-serving-ca"}, certWrites(retried)); diff != "" {
		t.Errorf("TLS writes of the retried sync differ (-want +got):\n%s", diff)
	}
	w = retried.world()
	if cert, bundle := servedCA(t, w); certs.IsSignedBy(cert, newCA) || !slices.ContainsFunc(bundle, newCA.Equal) {
		t.Fatalf("signed by the new CA %v, new CA in the bundle %v; want the bundle published first", certs.IsSignedBy(cert, newCA), slices.ContainsFunc(bundle, newCA.Equal))
	}

	early, err := syncAt(w, published.Add(delay-time.Second), false)
	if err != nil {
		t.Fatal(err)
	}
	if writes := certWrites(early); len(writes) != 0 {
		t.Errorf("a sync before the new CA's bundle was published for the delay wrote %q", writes)
	}
	signing, err := syncAt(early.world(), published.Add(delay+time.Second), false)
	if err != nil {
		t.Fatal(err)
	}
	if cert, _ := servedCA(t, signing.world()); !certs.IsSignedBy(cert, newCA) {
		t.Error("the new CA did not sign once its bundle was published for the delay")
	}
}
