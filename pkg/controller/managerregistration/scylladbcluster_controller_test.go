package managerregistration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// testSCClusterID, testSCClusterName and testSCHost are what the test ScyllaDBCluster is registered as.
var (
	testSCClusterID   = naming.ScyllaDBManagerClusterID("ScyllaDBCluster", testUID)
	testSCClusterName = naming.ScyllaDBManagerClusterNameForObject(testNamespace, "ScyllaDBCluster", testName)
	testSCHost        = naming.ScyllaDBClusterClientServiceName(testName) + "." + testNamespace + ".svc"
)

// newSC returns a labelled ScyllaDBCluster with the finalizer, rolled out at generation 2.
func newSC() *scyllav1alpha1.ScyllaDBCluster {
	sdc := newSDC()
	return &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: sdc.ObjectMeta,
		Status: scyllav1alpha1.ScyllaDBClusterStatus{
			ObservedGeneration: sdc.Status.ObservedGeneration,
			Conditions:         sdc.Status.Conditions,
		},
	}
}

// newSCAuthTokenSecret returns the agent auth-token Secret the operator writes in the meta cluster for the test
// ScyllaDBCluster.
func newSCAuthTokenSecret(t *testing.T, token string) *corev1.Secret {
	t.Helper()
	secret := newAuthTokenSecret(t, token)
	secret.Name = naming.ScyllaDBClusterAuthTokenSecretName(testName)
	return secret
}

// scFixture is a ScyllaDBClusterController over a fixtureBase.
type scFixture struct {
	*fixtureBase
	controller *ScyllaDBClusterController
}

func newSCFixture(t *testing.T, sc *scyllav1alpha1.ScyllaDBCluster, secrets ...*corev1.Secret) *scFixture {
	t.Helper()

	base := newFixtureBase(t, sc, secrets...)
	c, err := NewScyllaDBClusterController(base.kubeClient, base.scyllaClient, base.managerClient,
		base.scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(), base.kubeInformers.Core().V1().Secrets())
	if err != nil {
		t.Fatal(err)
	}
	useTestRecorderAndClock(c.registrar, base.recorder)

	f := &scFixture{fixtureBase: base, controller: c}
	f.cache(sc)
	for _, s := range secrets {
		f.cache(s)
	}
	return f
}

func (f *scFixture) stored() *scyllav1alpha1.ScyllaDBCluster {
	f.t.Helper()
	obj, err := f.scyllaTracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbclusters"), testNamespace, testName)
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*scyllav1alpha1.ScyllaDBCluster)
}

func (f *scFixture) update(sc *scyllav1alpha1.ScyllaDBCluster) {
	f.t.Helper()
	if err := f.scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbclusters"), sc, sc.Namespace); err != nil {
		f.t.Fatal(err)
	}
	f.cache(f.stored())
}

// recache puts the ScyllaDBCluster as stored into the cache and forgets the actions, events and requests so far.
func (f *scFixture) recache() {
	f.t.Helper()
	f.cache(f.stored())
	f.reset()
}

func (f *scFixture) sync() error {
	f.t.Helper()
	return f.controller.sync(f.t.Context(), testKey)
}

func scOwnedConditions(sc *scyllav1alpha1.ScyllaDBCluster) []metav1.Condition {
	return ownedOf(sc.Status.Conditions)
}

func wantSCCluster(t *testing.T, token string) fakescyllamanager.ClusterState {
	t.Helper()
	required, err := makeManagerCluster(testSCClusterID, testUID, &managerClusterSpec{Name: testSCClusterName, Host: testSCHost, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	return fakescyllamanager.ClusterState{
		ID:                     testSCClusterID,
		Name:                   testSCClusterName,
		Labels:                 required.Labels,
		Host:                   testSCHost,
		AuthToken:              token,
		ForceTLSDisabled:       true,
		ForceNonSSLSessionPort: true,
	}
}

func TestScyllaDBClusterSyncRegistersOnceUnderItsDerivedIDAndWritesNothingOnResync(t *testing.T) {
	t.Parallel()

	f := newSCFixture(t, newSC(), newSCAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + testSCClusterID, "POST /api/v1/clusters"}, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantSCCluster(t, testToken)}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"patch scylladbclusters", "apply scylladbclusters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	stored := f.stored()
	if got := stored.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != testSCClusterID {
		t.Errorf("expected annotation %q, got %q", testSCClusterID, got)
	}
	if diff := cmp.Diff(goodConditions(), scOwnedConditions(stored)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if len(stored.Status.Conditions) != 4 {
		t.Errorf("the operator's conditions were not kept: %v", stored.Status.Conditions)
	}
	want := []string{`Normal ScyllaDBManagerClusterRegistered Registered cluster "scylla/ScyllaDBCluster/basic" (ID ` + testSCClusterID + `) with ScyllaDB Manager`}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + testSCClusterID}, f.managerRequests(false)); diff != "" {
		t.Errorf("expected one read and no ScyllaDB Manager write (-want +got):\n%s", diff)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes, got %v", writes)
	}
}

func TestScyllaDBClusterSyncWaitsForTheRolloutWithoutCallingScyllaDBManager(t *testing.T) {
	t.Parallel()

	const wantMessage = "waiting for the operator to report generation 2 of the ScyllaDBCluster Available"
	tt := []struct {
		name   string
		modify func(sc *scyllav1alpha1.ScyllaDBCluster)
	}{
		{
			name:   "the operator has not observed the current generation",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Status.ObservedGeneration = new(int64(1)) },
		},
		{
			name:   "not every datacenter is available",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Status.Conditions[0].Status = metav1.ConditionFalse },
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sc := newSC()
			tc.modify(sc)
			f := newSCFixture(t, sc, newSCAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if requests := f.managerRequests(false); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
			}
			want := []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForRollout", Message: wantMessage, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
			}
			if diff := cmp.Diff(want, scOwnedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"apply scylladbclusters/status"}, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}

			f.recache()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no writes while still waiting, got %v", writes)
			}
		})
	}
}

func TestScyllaDBClusterSyncWaitsForTheAuthToken(t *testing.T) {
	t.Parallel()

	f := newSCFixture(t, newSC())
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}
	want := []metav1.Condition{
		{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForAuthToken", Message: `waiting for the agent auth-token Secret "` + naming.ScyllaDBClusterAuthTokenSecretName(testName) + `"`, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
		{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
	}
	if diff := cmp.Diff(want, scOwnedConditions(f.stored())); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	f.recache()
	f.cache(newSCAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantSCCluster(t, testToken)}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(goodConditions(), scOwnedConditions(f.stored())); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

func TestScyllaDBClusterSyncDeregistersAndReleases(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name       string
		change     func(sc *scyllav1alpha1.ScyllaDBCluster)
		wantWrites []string
	}{
		{
			name:       "deleted",
			change:     func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.DeletionTimestamp = new(metav1.NewTime(testNow)) },
			wantWrites: []string{"patch scylladbclusters"},
		},
		{
			name:       "unlabelled",
			change:     func(sc *scyllav1alpha1.ScyllaDBCluster) { delete(sc.Labels, naming.RegisterWithScyllaDBManagerLabel) },
			wantWrites: []string{"patch scylladbclusters", "apply scylladbclusters/status", "patch scylladbclusters"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newSCFixture(t, newSC(), newSCAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			f.recache()
			sc := f.stored().DeepCopy()
			tc.change(sc)
			f.update(sc)

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			wantRequests := []string{"GET /api/v1/cluster/" + testSCClusterID, "DELETE /api/v1/cluster/" + testSCClusterID}
			if diff := cmp.Diff(wantRequests, f.managerRequests(false)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			if clusters := f.manager.State().Clusters; len(clusters) != 0 {
				t.Errorf("expected ScyllaDB Manager to hold no cluster, got %+v", clusters)
			}
			if diff := cmp.Diff(tc.wantWrites, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			stored := f.stored()
			if diff := cmp.Diff([]string{"example.com/other"}, stored.Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
			if _, ok := stored.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok && stored.DeletionTimestamp == nil {
				t.Errorf("the cluster ID annotation was kept")
			}
			if conditions := scOwnedConditions(stored); stored.DeletionTimestamp == nil && len(conditions) != 0 {
				t.Errorf("expected no conditions of this controller, got %+v", conditions)
			}
		})
	}
}

func TestScyllaDBClusterHandlersEnqueueTheClusterAnEventConcerns(t *testing.T) {
	t.Parallel()

	sc := newSC()
	secret := newSCAuthTokenSecret(t, testToken)
	newerSecret := secret.DeepCopy()
	newerSecret.ResourceVersion = "6"
	datacenterSecret := newAuthTokenSecret(t, testToken)
	otherNamespace := secret.DeepCopy()
	otherNamespace.Namespace = "elsewhere"

	tt := []struct {
		name     string
		deliver  func(c *ScyllaDBClusterController)
		wantKeys []string
	}{
		{
			name:     "a ScyllaDBCluster enqueues itself",
			deliver:  func(c *ScyllaDBClusterController) { c.objectHandlerFuncs().OnAdd(sc, false) },
			wantKeys: []string{testKey},
		},
		{
			name: "a deleted ScyllaDBCluster, seen as a tombstone, enqueues itself",
			deliver: func(c *ScyllaDBClusterController) {
				c.objectHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: testKey, Obj: sc})
			},
			wantKeys: []string{testKey},
		},
		{
			name:     "a new auth-token Secret enqueues its ScyllaDBCluster",
			deliver:  func(c *ScyllaDBClusterController) { c.secretHandlerFuncs().OnAdd(secret, false) },
			wantKeys: []string{testKey},
		},
		{
			name:     "a changed auth-token Secret enqueues its ScyllaDBCluster",
			deliver:  func(c *ScyllaDBClusterController) { c.secretHandlerFuncs().OnUpdate(secret, newerSecret) },
			wantKeys: []string{testKey},
		},
		{
			name: "a deleted auth-token Secret, seen as a tombstone, enqueues its ScyllaDBCluster",
			deliver: func(c *ScyllaDBClusterController) {
				c.secretHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: testNamespace + "/" + secret.Name, Obj: secret})
			},
			wantKeys: []string{testKey},
		},
		{
			name:     "a resync of an auth-token Secret enqueues nothing",
			deliver:  func(c *ScyllaDBClusterController) { c.secretHandlerFuncs().OnUpdate(secret, secret) },
			wantKeys: nil,
		},
		{
			name:     "a datacenter's auth-token Secret enqueues nothing",
			deliver:  func(c *ScyllaDBClusterController) { c.secretHandlerFuncs().OnAdd(datacenterSecret, false) },
			wantKeys: nil,
		},
		{
			name:     "an auth-token Secret of the same name in another namespace enqueues nothing",
			deliver:  func(c *ScyllaDBClusterController) { c.secretHandlerFuncs().OnAdd(otherNamespace, false) },
			wantKeys: nil,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newSCFixture(t, sc)
			tc.deliver(f.controller)
			if diff := cmp.Diff(tc.wantKeys, drainKeys(f.controller.queue)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScyllaDBClusterUpdatesEnqueueOnlyWhatTheRegistrationDependsOn(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		change      func(sc *scyllav1alpha1.ScyllaDBCluster)
		keepVersion bool
		wantEnqueue bool
	}{
		{name: "a resync enqueues", change: func(*scyllav1alpha1.ScyllaDBCluster) {}, keepVersion: true, wantEnqueue: true},
		{name: "a write that changes nothing the registration reads enqueues nothing", change: func(*scyllav1alpha1.ScyllaDBCluster) {}},
		{name: "a new generation enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Generation++ }, wantEnqueue: true},
		{name: "a changed label enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { delete(sc.Labels, naming.RegisterWithScyllaDBManagerLabel) }, wantEnqueue: true},
		{name: "a changed annotation enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Annotations["note"] = "changed" }, wantEnqueue: true},
		{name: "a changed finalizer enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Finalizers = sc.Finalizers[:1] }, wantEnqueue: true},
		{name: "a deletion timestamp enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.DeletionTimestamp = &metav1.Time{Time: testNow} }, wantEnqueue: true},
		{name: "a new owner reference enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			sc.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: testScyllaClusterUID}}
		}, wantEnqueue: true},
		{name: "a new status.observedGeneration enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Status.ObservedGeneration = new(int64(3)) }, wantEnqueue: true},
		{name: "a changed Available status enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			meta.FindStatusCondition(sc.Status.Conditions, "Available").Status = metav1.ConditionFalse
		}, wantEnqueue: true},
		{name: "a changed Available observedGeneration enqueues", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			meta.FindStatusCondition(sc.Status.Conditions, "Available").ObservedGeneration = 3
		}, wantEnqueue: true},
		{name: "a changed operator condition other than Available enqueues nothing", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			meta.FindStatusCondition(sc.Status.Conditions, "Progressing").Status = metav1.ConditionTrue
		}},
		{name: "this controller's own conditions enqueue nothing", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			sc.Status.Conditions = append(sc.Status.Conditions, makeConditions(sc.Generation, nil, nil)...)
		}},
		{name: "datacenter statuses enqueue nothing", change: func(sc *scyllav1alpha1.ScyllaDBCluster) {
			sc.Status.Datacenters = []scyllav1alpha1.ScyllaDBClusterDatacenterStatus{{Name: "dc1"}}
		}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			oldSC := newSC()
			newSC := oldSC.DeepCopy()
			tc.change(newSC)
			if !tc.keepVersion {
				newSC.ResourceVersion = "11"
			}
			if got := registrationUpdateMatters(oldSC, newSC, scyllaDBClusterObservedGeneration, scyllaDBClusterConditions); got != tc.wantEnqueue {
				t.Errorf("expected registrationUpdateMatters to return %t, got %t", tc.wantEnqueue, got)
			}

			f := newSCFixture(t, oldSC)
			f.controller.objectHandlerFuncs().OnUpdate(oldSC, newSC)
			var wantKeys []string
			if tc.wantEnqueue {
				wantKeys = []string{testKey}
			}
			if diff := cmp.Diff(wantKeys, drainKeys(f.controller.queue)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}
