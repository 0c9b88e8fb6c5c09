package managerregistration

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

const (
	testNamespace = "scylla"
	testName      = "basic"
	testKey       = testNamespace + "/" + testName
	testUID       = types.UID("7f1c1b56-3c0b-4a8e-9d7e-2f4b5a6c7d8e")
	testToken     = "test-auth-token-do-not-leak"
	// testScyllaClusterUID is the UID of the ScyllaCluster that datacenters of newTranslatedSDC are translated from.
	testScyllaClusterUID = types.UID("0a5e6b1c-9d2f-4e3a-8b7c-6d5e4f3a2b1c")
)

// testNow is the clock of condition transitions in the tests.
var testNow = time.Date(2026, time.January, 2, 3, 4, 5, 0, time.UTC)

// testClusterID is the ID derived for the test datacenter.
var testClusterID = naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", testUID)

// testClusterName and testHost are what the test datacenter is registered as.
const (
	testClusterName = "scylla/ScyllaDBDatacenter/basic"
	testHost        = "basic-client.scylla.svc"
)

// newSDC returns a labelled ScyllaDBDatacenter with the finalizer, rolled out at generation 2: the operator reports
// it Available for its current generation.
func newSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            testName,
			UID:             testUID,
			Generation:      2,
			ResourceVersion: "10",
			Labels:          map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true", "team": "storage"},
			Annotations:     map[string]string{"note": "kept"},
			Finalizers:      []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer},
		},
		Status: scyllav1alpha1.ScyllaDBDatacenterStatus{
			ObservedGeneration: new(int64(2)),
			Conditions: []metav1.Condition{
				{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour))},
				{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow.Add(-time.Hour))},
			},
		},
	}
}

// newTranslatedSDC returns newSDC as the operator translates it from a ScyllaCluster: controlled by the ScyllaCluster
// and registered under the ScyllaCluster's name.
func newTranslatedSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := newSDC()
	sdc.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "scylla.scylladb.com/v1",
		Kind:       "ScyllaCluster",
		Name:       testName,
		UID:        testScyllaClusterUID,
		Controller: new(true),
	}}
	sdc.Annotations[naming.ScyllaDBManagerClusterNameOverrideAnnotation] = naming.ScyllaDBManagerClusterName(testNamespace, testName)
	return sdc
}

// newAuthTokenSecret returns the agent auth-token Secret the operator writes for the test datacenter.
func newAuthTokenSecret(t *testing.T, token string) *corev1.Secret {
	t.Helper()
	data, err := scyllaagent.MakeAuthTokenConfig(token)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            naming.AgentAuthTokenSecretName(testName),
			ResourceVersion: "5",
			Labels:          map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
		},
		Data: map[string][]byte{naming.ScyllaDBManagerAgentAuthTokenKey: data},
	}
}

// fixtureBase is what the fixtures of every kind's controller share: fake clientsets whose informer caches hold the
// given objects, as sample-controller's tests build them, and the real ScyllaDB Manager client talking to an
// in-process fake ScyllaDB Manager.
type fixtureBase struct {
	t               *testing.T
	kubeClient      *kubefake.Clientset
	scyllaClient    *scyllafake.Clientset
	scyllaTracker   clienttesting.ObjectTracker
	kubeInformers   kubeinformers.SharedInformerFactory
	scyllaInformers scyllainformers.SharedInformerFactory
	recorder        *record.FakeRecorder
	manager         *fakescyllamanager.Server
	managerClient   *managerclient.Client
	// journal lists the writes to both clientsets and to ScyllaDB Manager in order.
	journal *fakeclient.Journal
}

// fixture is a ScyllaDBDatacenterController over a fixtureBase.
type fixture struct {
	*fixtureBase
	controller *ScyllaDBDatacenterController
}

func newFixture(t *testing.T, sdc *scyllav1alpha1.ScyllaDBDatacenter, secrets ...*corev1.Secret) *fixture {
	t.Helper()

	base := newFixtureBase(t, sdc, secrets...)
	c, err := NewScyllaDBDatacenterController(
		base.kubeClient,
		base.scyllaClient,
		base.managerClient,
		base.scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		base.kubeInformers.Core().V1().Secrets(),
	)
	if err != nil {
		t.Fatal(err)
	}
	useTestRecorderAndClock(c.registrar, base.recorder)

	f := &fixture{fixtureBase: base, controller: c}
	f.cache(sdc)
	for _, s := range secrets {
		f.cache(s)
	}
	return f
}

// useTestRecorderAndClock makes r record events into recorder and take testNow as the time.
func useTestRecorderAndClock[T kubeinterfaces.ObjectInterface](r *registrar[T], recorder *record.FakeRecorder) {
	r.recorder = recorder
	r.clock = func() time.Time { return testNow }
}

// newFixtureBase returns the clients, informers and fake ScyllaDB Manager of a fixture whose API servers hold obj and
// secrets. The caller builds its controller on them and caches the objects.
func newFixtureBase(t *testing.T, obj runtime.Object, secrets ...*corev1.Secret) *fixtureBase {
	t.Helper()

	manager, err := fakescyllamanager.NewServer(fakescyllamanager.Options{Clock: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	journal := fakeclient.NewJournal(func() []string { return managerWrites(manager.Requests()) })
	server := httptest.NewServer(journal.Handler(manager))
	t.Cleanup(server.Close)
	managerClient, err := managerclient.New(managerclient.Options{URL: server.URL, RequestTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	kubeObjects := make([]runtime.Object, 0, len(secrets))
	for _, s := range secrets {
		kubeObjects = append(kubeObjects, s)
	}
	kubeClient := kubefake.NewClientset(kubeObjects...)
	// Server-side apply with the CRDs' list types: conditions merge by type, as they do in the API server.
	scyllaClient, scyllaTracker, err := apiserverfields.NewScyllaClientset(obj)
	if err != nil {
		t.Fatal(err)
	}
	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	scyllaInformers := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)
	kubeClient.PrependReactor("*", "*", journal.Reactor)
	scyllaClient.PrependReactor("*", "*", journal.Reactor)

	return &fixtureBase{
		t:               t,
		kubeClient:      kubeClient,
		scyllaClient:    scyllaClient,
		scyllaTracker:   scyllaTracker,
		kubeInformers:   kubeInformers,
		scyllaInformers: scyllaInformers,
		recorder:        record.NewFakeRecorder(100),
		manager:         manager,
		managerClient:   managerClient,
		journal:         journal,
	}
}

// managerWrites describes the writes among requests as "ScyllaDB Manager <endpoint>", for the journal.
func managerWrites(requests []fakescyllamanager.Request) []string {
	var writes []string
	for _, r := range requests {
		if r.IsWrite() {
			writes = append(writes, "ScyllaDB Manager "+string(r.Endpoint))
		}
	}
	return writes
}

// cache puts objects into the informer caches, replacing the objects of the same name: what the controller sees of
// the API server on its next sync.
func (f *fixtureBase) cache(objects ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objects {
		var err error
		switch obj.(type) {
		case *scyllav1alpha1.ScyllaDBDatacenter:
			err = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters().Informer().GetIndexer().Update(obj)
		case *scyllav1alpha1.ScyllaDBCluster:
			err = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetIndexer().Update(obj)
		case *corev1.Secret:
			err = f.kubeInformers.Core().V1().Secrets().Informer().GetIndexer().Update(obj)
		default:
			f.t.Fatalf("the fixture can't hold a %T", obj)
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// update stores sdc in the API server and in the cache, as a change by someone else would end up.
func (f *fixture) update(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
	f.t.Helper()
	if err := f.scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), sdc, sdc.Namespace); err != nil {
		f.t.Fatal(err)
	}
	f.cache(f.stored())
}

// stored returns the datacenter as the API server holds it.
func (f *fixture) stored() *scyllav1alpha1.ScyllaDBDatacenter {
	f.t.Helper()
	obj, err := f.scyllaTracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), testNamespace, testName)
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*scyllav1alpha1.ScyllaDBDatacenter)
}

// recache puts the datacenter as the API server holds it into the cache, as its watch event would, and forgets the
// actions and ScyllaDB Manager requests so far.
func (f *fixture) recache() {
	f.t.Helper()
	f.cache(f.stored())
	f.reset()
}

// reset forgets the actions, events, journal and ScyllaDB Manager requests so far.
func (f *fixtureBase) reset() {
	f.scyllaClient.ClearActions()
	f.kubeClient.ClearActions()
	f.manager.ResetRequests()
	f.journal.Take()
	f.events()
}

// sync runs one sync of the test datacenter and returns its error.
func (f *fixture) sync() error {
	f.t.Helper()
	return f.controller.sync(f.t.Context(), testKey)
}

// writes returns the write actions of both clients as "<verb> <resource>[/<subresource>]", apply patches as "apply".
func (f *fixtureBase) writes() []string {
	return fakeclient.Writes(append(f.kubeClient.Actions(), f.scyllaClient.Actions()...))
}

// patches returns the bodies of the patches sent of patchType, in order, decoded.
func (f *fixtureBase) patches(patchType types.PatchType) []map[string]any {
	f.t.Helper()
	var out []map[string]any
	for _, action := range f.scyllaClient.Actions() {
		patch, ok := action.(clienttesting.PatchAction)
		if !ok || patch.GetPatchType() != patchType {
			continue
		}
		var body map[string]any
		if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

// managerRequests returns the requests ScyllaDB Manager got, as "<method> <path>", writes only when writesOnly.
func (f *fixtureBase) managerRequests(writesOnly bool) []string {
	var out []string
	for _, r := range f.manager.Requests() {
		if writesOnly && !r.IsWrite() {
			continue
		}
		out = append(out, r.Method+" "+r.Path)
	}
	return out
}

// events returns the events recorded since the last call.
func (f *fixtureBase) events() []string {
	return fakeclient.Events(f.recorder)
}

// ownedConditions returns this controller's conditions of sdc.
func ownedConditions(sdc *scyllav1alpha1.ScyllaDBDatacenter) []metav1.Condition {
	return ownedOf(sdc.Status.Conditions)
}

// ownedOf returns this controller's conditions among conditions.
func ownedOf(conditions []metav1.Condition) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range conditions {
		if slices.Contains(ownedConditionTypes, c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// registerCluster registers a cluster in the fake ScyllaDB Manager behind the controller's back, as an older
// manager-controller or a user would have, and returns its ID.
func (f *fixtureBase) registerCluster(cluster managerclient.Cluster) string {
	f.t.Helper()
	id, err := f.managerClient.CreateCluster(f.t.Context(), &cluster)
	if err != nil {
		f.t.Fatal(err)
	}
	f.manager.ResetRequests()
	return id
}

// assertNoTokenLeak fails when any event or condition of the datacenter carries the auth token.
func (f *fixture) assertNoTokenLeak(events []string, token string) {
	f.t.Helper()
	for _, e := range events {
		if strings.Contains(e, token) {
			f.t.Errorf("event carries the auth token: %q", e)
		}
	}
	for _, c := range f.stored().Status.Conditions {
		if strings.Contains(c.Message, token) {
			f.t.Errorf("condition %s carries the auth token: %q", c.Type, c.Message)
		}
	}
}

// goodConditions are this controller's conditions of a registered datacenter of generation 2 since testNow.
func goodConditions() []metav1.Condition {
	return []metav1.Condition{
		{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
		{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
	}
}

// expectDeregistered fails the test unless ScyllaDB Manager holds no cluster and the datacenter kept only the other
// controller's finalizer.
func (f *fixture) expectDeregistered() {
	f.t.Helper()
	if clusters := f.manager.State().Clusters; len(clusters) != 0 {
		f.t.Errorf("expected ScyllaDB Manager to hold no cluster, got %+v", clusters)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
		f.t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
}

// newRegisteredFixture returns a fixture whose datacenter a sync registered, then changed by change, as by someone
// else.
func newRegisteredFixture(t *testing.T, change func(sdc *scyllav1alpha1.ScyllaDBDatacenter)) *fixture {
	t.Helper()
	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	sdc := f.stored().DeepCopy()
	change(sdc)
	f.update(sdc)
	return f
}
