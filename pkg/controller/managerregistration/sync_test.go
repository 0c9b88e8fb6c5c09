package managerregistration

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// wantCluster is the cluster ScyllaDB Manager holds for the test datacenter once registered with token.
func wantCluster(t *testing.T, id, name, token string) fakescyllamanager.ClusterState {
	t.Helper()
	required, err := makeManagerCluster(id, testUID, &managerClusterSpec{Name: name, Host: testHost, AuthToken: token})
	if err != nil {
		t.Fatal(err)
	}
	return fakescyllamanager.ClusterState{
		ID:                     id,
		Name:                   name,
		Labels:                 required.Labels,
		Host:                   testHost,
		AuthToken:              token,
		ForceTLSDisabled:       true,
		ForceNonSSLSessionPort: true,
	}
}

func TestSyncRegistersARolledOutDatacenterUnderItsDerivedID(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}

	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + testClusterID, "POST /api/v1/clusters"}, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	state := f.manager.State()
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}, state.Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	for _, task := range state.LiveTasks() {
		if task.Type == "repair" {
			t.Errorf("ScyllaDB Manager added repair task %q: the cluster was not registered without repair", task.Name)
		}
	}

	if diff := cmp.Diff([]string{"patch scylladbdatacenters", "apply scylladbdatacenters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantAnnotationPatch := []map[string]any{{"metadata": map[string]any{
		"uid":         string(testUID),
		"annotations": map[string]any{naming.ScyllaDBManagerClusterIDAnnotation: testClusterID},
	}}}
	if diff := cmp.Diff(wantAnnotationPatch, f.patches(types.MergePatchType)); diff != "" {
		t.Errorf("unexpected annotation patch (-want +got):\n%s", diff)
	}
	wantApply := []map[string]any{{
		"apiVersion": "scylla.scylladb.com/v1alpha1",
		"kind":       "ScyllaDBDatacenter",
		"metadata":   map[string]any{"name": testName, "namespace": testNamespace, "uid": string(testUID)},
		"status": map[string]any{"conditions": []any{
			map[string]any{"type": ScyllaDBManagerRegistrationProgressingCondition, "status": "False", "reason": "AsExpected", "message": "", "observedGeneration": float64(2), "lastTransitionTime": "2026-01-02T03:04:05Z"},
			map[string]any{"type": ScyllaDBManagerRegistrationDegradedCondition, "status": "False", "reason": "AsExpected", "message": "", "observedGeneration": float64(2), "lastTransitionTime": "2026-01-02T03:04:05Z"},
		}},
	}}
	if diff := cmp.Diff(wantApply, f.patches(types.ApplyPatchType)); diff != "" {
		t.Errorf("unexpected status apply (-want +got):\n%s", diff)
	}

	stored := f.stored()
	if got := stored.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != testClusterID {
		t.Errorf("expected annotation %q, got %q", testClusterID, got)
	}
	if got := stored.Annotations["note"]; got != "kept" {
		t.Errorf("another annotation was lost: %q", got)
	}
	if diff := cmp.Diff(goodConditions(), ownedConditions(stored)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if len(stored.Status.Conditions) != 4 {
		t.Errorf("the operator's conditions were not kept: %v", stored.Status.Conditions)
	}

	events := f.events()
	want := []string{`Normal ScyllaDBManagerClusterRegistered Registered cluster "scylla/ScyllaDBDatacenter/basic" (ID ` + testClusterID + `) with ScyllaDB Manager`}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	f.assertNoTokenLeak(events, testToken)
}

func TestSyncOfAnUnchangedRegistrationWritesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + testClusterID}, f.managerRequests(false)); diff != "" {
		t.Errorf("expected one read and no ScyllaDB Manager write (-want +got):\n%s", diff)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes, got %v", writes)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("expected no events, got %v", events)
	}
}

func TestSyncDoesNotRepeatItsWritesBeforeTheCacheSeesThem(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch scylladbdatacenters", "apply scylladbdatacenters/status"}, f.writes()); diff != "" {
		t.Fatalf("unexpected writes (-want +got):\n%s", diff)
	}
	f.reset()

	// The annotation patch's event enqueues the datacenter again while the informer still holds it from before both
	// writes.
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected the second sync to compare with what the first one wrote and write nothing, got %v", writes)
	}
}

func TestSyncWaitsForTheRolloutWithoutCallingScyllaDBManager(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		modify      func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		wantMessage string
	}{
		{
			name:        "the operator has not observed the current generation",
			modify:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status.ObservedGeneration = new(int64(1)) },
			wantMessage: "waiting for the operator to report generation 2 of the ScyllaDBDatacenter Available",
		},
		{
			name:        "the operator has never written a status",
			modify:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{} },
			wantMessage: "waiting for the operator to report generation 2 of the ScyllaDBDatacenter Available",
		},
		{
			name:        "Available describes an older generation",
			modify:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status.Conditions[0].ObservedGeneration = 1 },
			wantMessage: "waiting for the operator to report generation 2 of the ScyllaDBDatacenter Available",
		},
		{
			name:        "the datacenter is not available",
			modify:      func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Status.Conditions[0].Status = metav1.ConditionFalse },
			wantMessage: "waiting for the operator to report generation 2 of the ScyllaDBDatacenter Available",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sdc := newSDC()
			tc.modify(sdc)
			f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if requests := f.managerRequests(false); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
			}
			want := []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForRollout", Message: tc.wantMessage, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
			}
			if diff := cmp.Diff(want, ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"apply scylladbdatacenters/status"}, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}

			// Still waiting: the status says so already.
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

func TestSyncWaitsForTheAuthToken(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		secrets     []*corev1.Secret
		wantMessage string
	}{
		{
			name:        "the Secret does not exist",
			wantMessage: `waiting for the agent auth-token Secret "basic-auth-token"`,
		},
		{
			name:        "the Secret sets no token",
			secrets:     []*corev1.Secret{newAuthTokenSecret(t, "")},
			wantMessage: `waiting for an agent auth token in key "auth-token.yaml" of Secret "basic-auth-token"`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), tc.secrets...)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if requests := f.managerRequests(false); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
			}
			want := []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForAuthToken", Message: tc.wantMessage, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
			}
			if diff := cmp.Diff(want, ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}

			// The token arrives: the registration proceeds, and the waiting condition clears keeping nothing stale.
			f.recache()
			f.cache(newAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if got := f.manager.State().Clusters; len(got) != 1 || got[0].AuthToken != testToken {
				t.Errorf("expected the cluster registered with the token, got %+v", got)
			}
			if diff := cmp.Diff(goodConditions(), ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncAddsTheFinalizerOnlyWhenScyllaDBManagerHoldsOrIsAboutToHoldTheCluster(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		// setup makes the fixture's state and returns the datacenter to sync.
		setup          func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter
		wantWrites     []string
		wantFinalizers []string
	}{
		{
			name: "waiting for the rollout",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newCreatedSDC()
				sdc.Annotations = nil
				return sdc
			},
			wantWrites: []string{
				"apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=True/WaitingForRollout ScyllaDBManagerRegistrationDegraded=False/AsExpected",
			},
			wantFinalizers: []string{"example.com/other"},
		},
		{
			name: "waiting for the rollout with a cluster ID an older manager-controller registered",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newCreatedSDC()
				sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
				return sdc
			},
			wantWrites: []string{
				writeFinalizer,
				"apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=True/WaitingForRollout ScyllaDBManagerRegistrationDegraded=False/AsExpected",
			},
			wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer},
		},
		{
			name: "rolled out",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				return newWaitingSDC()
			},
			wantWrites:     registrationWrites,
			wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer},
		},
		{
			name: "registered, with the finalizer removed by hand",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				required, err := makeManagerCluster(testClusterID, testUID, &managerClusterSpec{Name: testClusterName, Host: testHost, AuthToken: testToken})
				if err != nil {
					t.Fatal(err)
				}
				f.registerCluster(*required)
				sdc := newSDC()
				sdc.Finalizers = []string{"example.com/other"}
				sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = testClusterID
				sdc.Status.Conditions = append(sdc.Status.Conditions, goodConditions()...)
				return sdc
			},
			wantWrites:     []string{writeFinalizer},
			wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer},
		},
		{
			// The annotation was copied from the other object: the datacenter registers its own cluster.
			name: "the cluster ID names a cluster of another object",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				id := f.registerCluster(managerclient.Cluster{Name: "other", Host: "10.0.0.9", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"}})
				sdc := newWaitingSDC()
				sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
				return sdc
			},
			wantWrites: []string{
				writeFinalizer,
				writeCreateCluster,
				writeClusterID,
				writeRegistered,
			},
			wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer},
		},
		{
			name: "waiting for the rollout with another object's derived cluster ID",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newCreatedSDC()
				sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", "someone-else")
				return sdc
			},
			// It names nothing of the datacenter's: no finalizer, and the registration replaces the annotation.
			wantWrites: []string{
				"apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=True/WaitingForRollout ScyllaDBManagerRegistrationDegraded=False/AsExpected",
			},
			wantFinalizers: []string{"example.com/other"},
		},
		{
			name: "ScyllaDB Manager fails to answer the read",
			setup: func(t *testing.T, f *fixture) *scyllav1alpha1.ScyllaDBDatacenter {
				if err := f.manager.InjectFailure(fakescyllamanager.EndpointGetCluster, fakescyllamanager.Failure{Status: 503}); err != nil {
					t.Fatal(err)
				}
				return newWaitingSDC()
			},
			wantWrites: []string{
				"apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=False/AsExpected ScyllaDBManagerRegistrationDegraded=True/ScyllaDBManagerError",
			},
			wantFinalizers: []string{"example.com/other"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			f.update(tc.setup(t, f))
			f.reset()

			_ = f.sync()
			if diff := cmp.Diff(tc.wantWrites, f.journal.Take()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, f.stored().Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncRemovesTheConditionsOfAWaitTheLabelsRemovalEnded(t *testing.T) {
	t.Parallel()

	sdc := newCreatedSDC()
	f := newFixture(t, sdc)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{writeWaitingForRollout}, f.journal.Take()); diff != "" {
		t.Fatalf("unexpected writes (-want +got):\n%s", diff)
	}

	unlabelled := f.stored().DeepCopy()
	delete(unlabelled.Labels, naming.RegisterWithScyllaDBManagerLabel)
	f.update(unlabelled)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{writeNoConditions}, f.journal.Take()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if conditions := ownedConditions(f.stored()); len(conditions) != 0 {
		t.Errorf("expected no conditions of this controller, got %+v", conditions)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}

	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.journal.Take(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func TestSyncIgnoresADatacenterNeitherLabelledNorFinalized(t *testing.T) {
	t.Parallel()

	sdc := newSDC()
	delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
	sdc.Finalizers = nil
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func TestSyncOfAGoneDatacenterDoesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC())
	if err := f.controller.sync(t.Context(), testNamespace+"/other"); err != nil {
		t.Fatal(err)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func TestSyncAdoptsTheClusterNamedByTheAnnotation(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name     string
		ownerUID types.UID
	}{
		{name: "registered by an older manager-controller for the ScyllaCluster", ownerUID: testScyllaClusterUID},
		{name: "registered without an owner label"},
		{name: "registered for this datacenter", ownerUID: testUID},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sdc := newTranslatedSDC()
			f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
			previous := managerclient.Cluster{Name: "scylla/basic", Host: "10.0.0.9", AuthToken: "old-token", WithoutRepair: true}
			if len(tc.ownerUID) != 0 {
				previous.Labels = map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(tc.ownerUID), naming.ScyllaDBManagerManagedHashLabel: "old"}
			}
			id := f.registerCluster(previous)
			// The operator copies the ScyllaCluster's status.managerId here.
			sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
			f.update(sdc)

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + id, "PUT /api/v1/cluster/" + id}, f.managerRequests(false)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, id, "scylla/basic", testToken)}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
			// The annotation names the cluster already.
			if diff := cmp.Diff([]string{"apply scylladbdatacenters/status"}, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			want := []string{`Normal ScyllaDBManagerClusterUpdated Updated cluster "scylla/basic" (ID ` + id + `) in ScyllaDB Manager`}
			if diff := cmp.Diff(want, f.events()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncAdoptsAClusterRegisteredUnderItsNameAndAnotherID(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newTranslatedSDC(), newAuthTokenSecret(t, testToken))
	id := f.registerCluster(managerclient.Cluster{Name: "scylla/basic", Host: testHost, AuthToken: "old-token", WithoutRepair: true})

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	wantRequests := []string{
		"GET /api/v1/cluster/" + testClusterID,
		"POST /api/v1/clusters",
		"GET /api/v1/clusters",
		"PUT /api/v1/cluster/" + id,
	}
	if diff := cmp.Diff(wantRequests, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, id, "scylla/basic", testToken)}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if got := f.stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != id {
		t.Errorf("expected the annotation to name the adopted cluster %q, got %q", id, got)
	}
	want := []string{`Normal ScyllaDBManagerClusterAdopted Adopted cluster "scylla/basic" (ID ` + id + `) registered in ScyllaDB Manager before`}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	// From now on it is found by ID.
	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + id}, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func TestSyncLeavesAClusterOfAnotherObjectAlone(t *testing.T) {
	t.Parallel()

	foreignLabels := map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else", naming.ScyllaDBManagerManagedHashLabel: "x"}
	tt := []struct {
		name string
		// register puts the foreign cluster into ScyllaDB Manager and returns its ID.
		register func(f *fixture) string
		// sdc is the datacenter, given the foreign cluster's ID.
		sdc func(id string) *scyllav1alpha1.ScyllaDBDatacenter
	}{
		{
			name: "holding the datacenter's name",
			register: func(f *fixture) string {
				return f.registerCluster(managerclient.Cluster{Name: testClusterName, Host: "10.0.0.9", Labels: foreignLabels})
			},
			sdc: func(string) *scyllav1alpha1.ScyllaDBDatacenter { return newSDC() },
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			id := tc.register(f)
			sdc := tc.sdc(id)
			f.update(sdc)
			before := f.manager.State().Clusters

			// Permanent: reported, not returned for a hot retry.
			if err := f.sync(); err != nil {
				t.Fatalf("expected no error, got %v", err)
			}
			if diff := cmp.Diff(before, f.manager.State().Clusters); diff != "" {
				t.Errorf("the foreign cluster changed (-want +got):\n%s", diff)
			}
			if _, ok := f.stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok && len(sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]) == 0 {
				t.Errorf("the annotation was set to a cluster that is not the datacenter's")
			}
			degraded := ownedConditions(f.stored())[1]
			wantMessage := `ScyllaDB Manager cluster "` + before[0].Name + `" (ID ` + id + `) belongs to another object (scylla-operator.scylladb.com/owner-uid someone-else)`
			if degraded.Status != metav1.ConditionTrue || degraded.Reason != "OwnershipConflict" || degraded.Message != wantMessage {
				t.Errorf("unexpected Degraded condition %+v", degraded)
			}
			if diff := cmp.Diff([]string{"Warning ScyllaDBManagerRegistrationFailed " + wantMessage}, f.events()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}

			// Reported once.
			f.recache()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no writes, got %v", writes)
			}
			if events := f.events(); len(events) != 0 {
				t.Errorf("expected no events, got %v", events)
			}
			if writes := f.managerRequests(true); len(writes) > 1 {
				// Only the create that finds the name taken is a write.
				t.Errorf("unexpected ScyllaDB Manager writes %v", writes)
			}
		})
	}
}

func TestSyncUpdatesTheClusterWhenTheTokenChanges(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()

	secret := newAuthTokenSecret(t, "rotated-token")
	secret.ResourceVersion = "6"
	f.cache(secret)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"PUT /api/v1/cluster/" + testClusterID}, f.managerRequests(true)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, "rotated-token")}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes, got %v", writes)
	}
	events := f.events()
	want := []string{`Normal ScyllaDBManagerClusterUpdated Updated cluster "scylla/ScyllaDBDatacenter/basic" (ID ` + testClusterID + `) in ScyllaDB Manager`}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	f.assertNoTokenLeak(events, "rotated-token")
}

// TestSyncRestoresAClusterEditedInScyllaDBManager: a cluster changed behind the controller's back (sctool cluster
// update keeps the labels, the hash label among them) is restored at the next sync, as --resync-period promises.
func TestSyncRestoresAClusterEditedInScyllaDBManager(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		edit func(c *managerclient.Cluster)
	}{
		{name: "the host", edit: func(c *managerclient.Cluster) { c.Host = "10.0.0.1" }},
		{name: "the auth token", edit: func(c *managerclient.Cluster) { c.AuthToken = "hand-token" }},
		{name: "the name", edit: func(c *managerclient.Cluster) { c.Name = "renamed" }},
		{name: "CQL TLS", edit: func(c *managerclient.Cluster) { c.ForceTLSDisabled = false }},
		{name: "the session port", edit: func(c *managerclient.Cluster) { c.ForceNonSSLSessionPort = false }},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			f.recache()
			cluster, err := f.managerClient.GetCluster(t.Context(), testClusterID)
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(cluster)
			if _, err := f.managerClient.UpdateCluster(t.Context(), cluster); err != nil {
				t.Fatal(err)
			}
			f.manager.ResetRequests()

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"PUT /api/v1/cluster/" + testClusterID}, f.managerRequests(true)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no Kubernetes writes, got %v", writes)
			}
			f.assertNoTokenLeak(f.events(), testToken)

			f.manager.ResetRequests()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if writes := f.managerRequests(true); len(writes) != 0 {
				t.Errorf("expected the restored cluster to need no more writes, got %v", writes)
			}
		})
	}
}

// TestSyncKeepsTheLabelsOthersPutOnTheCluster: an update replaces the whole cluster in ScyllaDB Manager, so it carries
// the labels someone else put on the cluster (with sctool, or a monitoring tool), as it finds them; only the owner
// and hash labels are the controller's.
func TestSyncKeepsTheLabelsOthersPutOnTheCluster(t *testing.T) {
	t.Parallel()

	// The hash label of what an older manager-controller sent is replaced, the other one kept.
	othersLabels := map[string]string{"team": "storage", naming.ScyllaDBManagerManagedHashLabel: "stale"}
	tt := []struct {
		name string
		// prepare registers the cluster labelled by someone else and returns its ID.
		prepare func(t *testing.T, f *fixture) string
		sdc     *scyllav1alpha1.ScyllaDBDatacenter
		// wantName is the cluster's name in ScyllaDB Manager.
		wantName string
	}{
		{
			name: "an update of the token",
			sdc:  newSDC(),
			prepare: func(t *testing.T, f *fixture) string {
				if err := f.sync(); err != nil {
					t.Fatal(err)
				}
				f.recache()
				cluster, err := f.managerClient.GetCluster(t.Context(), testClusterID)
				if err != nil {
					t.Fatal(err)
				}
				cluster.Labels["team"] = "storage"
				if _, err := f.managerClient.UpdateCluster(t.Context(), cluster); err != nil {
					t.Fatal(err)
				}
				f.manager.ResetRequests()
				return testClusterID
			},
			wantName: testClusterName,
		},
		{
			name: "an adoption by name",
			sdc:  newTranslatedSDC(),
			prepare: func(t *testing.T, f *fixture) string {
				return f.registerCluster(managerclient.Cluster{Name: "scylla/basic", Host: testHost, AuthToken: "old-token", WithoutRepair: true, Labels: othersLabels})
			},
			wantName: "scylla/basic",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.sdc, newAuthTokenSecret(t, testToken))
			id := tc.prepare(t, f)
			secret := newAuthTokenSecret(t, "rotated-token")
			secret.ResourceVersion = "6"
			f.cache(secret)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if writes := f.managerRequests(true); len(writes) == 0 || writes[len(writes)-1] != "PUT /api/v1/cluster/"+id {
				t.Errorf("expected the sync to end with an update of cluster %s, got %v", id, writes)
			}
			want := wantCluster(t, id, tc.wantName, "rotated-token")
			want.Labels["team"] = "storage"
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{want}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncRecreatesAClusterScyllaDBManagerLostUnderTheSameID(t *testing.T) {
	t.Parallel()

	const annotatedID = "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
	sdc := newSDC()
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = annotatedID
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}

	if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + annotatedID, "POST /api/v1/clusters"}, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, annotatedID, testClusterName, testToken)}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"apply scylladbdatacenters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

func TestSyncReportsARejectedRegistrationWithoutRetrying(t *testing.T) {
	t.Parallel()

	sdc := newSDC()
	// ScyllaDB Manager refuses names that parse as UUIDs.
	sdc.Annotations[naming.ScyllaDBManagerClusterNameOverrideAnnotation] = "11111111-2222-4333-8444-555555555555"
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatalf("expected a rejected registration not to be retried, got %v", err)
	}

	if clusters := f.manager.State().Clusters; len(clusters) != 0 {
		t.Errorf("expected no clusters, got %+v", clusters)
	}
	stored := f.stored()
	if _, ok := stored.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
		t.Errorf("the annotation was set although ScyllaDB Manager refused the cluster")
	}
	wantMessage := "can't register the cluster in ScyllaDB Manager: ScyllaDB Manager answered 400 to POST /api/v1/clusters: create cluster: invalid cluster: name cannot be an UUID"
	want := []metav1.Condition{
		{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
		{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionTrue, Reason: "ScyllaDBManagerRejected", Message: wantMessage, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
	}
	if diff := cmp.Diff(want, ownedConditions(stored)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	events := f.events()
	if diff := cmp.Diff([]string{"Warning ScyllaDBManagerRegistrationFailed " + wantMessage}, events); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	f.assertNoTokenLeak(events, testToken)

	// A resync meets the same answer; the status and the events say so already.
	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("expected no events, got %v", events)
	}
}

// TestSyncSendsARejectedRegistrationAgainAfterADelay: ScyllaDB Manager answers 400 to causes outside the object that
// heal by themselves (its connectivity check of every live agent, "no live nodes"), and a cluster of another object
// holding the name goes once deleted in ScyllaDB Manager, so such a registration is sent again after a delay rather
// than only at the next resync (12h by default), and not retried hot.
func TestSyncSendsARejectedRegistrationAgainAfterADelay(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		// reason is the Degraded reason of the failed registration.
		reason string
		// fail makes the registration fail; heal makes the cause go away, outside the datacenter.
		fail, heal func(t *testing.T, f *fixture)
	}{
		{
			name:   "a 400 of the connectivity check",
			reason: scyllaDBManagerRejectedReason,
			fail: func(t *testing.T, f *fixture) {
				if err := f.manager.InjectFailure(fakescyllamanager.EndpointCreateCluster, fakescyllamanager.Failure{
					Status: http.StatusBadRequest, Message: "create cluster: connectivity check: 10.0.0.2: agent is not responding",
				}); err != nil {
					t.Fatal(err)
				}
			},
			heal: func(t *testing.T, f *fixture) { f.manager.ClearFailures() },
		},
		{
			name:   "a cluster of another object holding the name",
			reason: ownershipConflictReason,
			fail: func(t *testing.T, f *fixture) {
				f.registerCluster(managerclient.Cluster{Name: testClusterName, Host: "10.0.0.9", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"}})
			},
			heal: func(t *testing.T, f *fixture) {
				for _, c := range f.manager.State().Clusters {
					if err := f.managerClient.DeleteCluster(t.Context(), c.ID); err != nil {
						t.Fatal(err)
					}
				}
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			t.Cleanup(f.controller.queue.ShutDown)
			f.controller.rejectedRetryDelay = time.Millisecond
			tc.fail(t, f)
			if err := f.sync(); err != nil {
				t.Fatalf("expected the failure not to be retried with back-off, got %v", err)
			}
			degraded := meta.FindStatusCondition(f.stored().Status.Conditions, ScyllaDBManagerRegistrationDegradedCondition)
			if degraded == nil || degraded.Reason != tc.reason {
				t.Fatalf("expected Degraded with reason %s, got %+v", tc.reason, degraded)
			}

			deadline := time.Now().Add(10 * time.Second)
			for f.controller.queue.Len() == 0 && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			if f.controller.queue.Len() == 0 {
				t.Fatal("expected the datacenter to be synced again after the delay, but nothing was queued")
			}
			if key, _ := f.controller.queue.Get(); key != testKey {
				t.Fatalf("expected the datacenter to be synced again, got %q", key)
			}
			f.controller.queue.Done(testKey)

			tc.heal(t, f)
			f.recache()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(goodConditions(), ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncReportsAnAnnotationThatIsNotAClusterIDWithoutCallingScyllaDBManager(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name     string
		deleting bool
		// wantProgressing is the reason of the Progressing condition.
		wantProgressing string
		wantFinalizers  []string
	}{
		{name: "registering", wantProgressing: "AsExpected", wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer}},
		{name: "deregistering keeps the finalizer", deleting: true, wantProgressing: "Deregistering", wantFinalizers: []string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sdc := newSDC()
			sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "scylla/basic"
			if tc.deleting {
				sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
			}
			f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
			if err := f.sync(); err != nil {
				t.Fatalf("expected no error for the queue to retry, got %v", err)
			}
			if requests := f.managerRequests(false); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
			}
			stored := f.stored()
			conditions := ownedConditions(stored)
			wantMessage := `annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" holds "scylla/basic", which is not a ScyllaDB Manager cluster ID (a UUID)`
			if conditions[0].Reason != tc.wantProgressing || conditions[1].Status != metav1.ConditionTrue || conditions[1].Reason != "InvalidClusterID" || conditions[1].Message != wantMessage {
				t.Errorf("unexpected conditions %+v", conditions)
			}
			if diff := cmp.Diff(tc.wantFinalizers, stored.Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncRetriesAFailingScyllaDBManagerUntilItAccepts(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		fail        func(f *fixture)
		recover     func(f *fixture)
		wantMessage string
	}{
		{
			name:        "unreachable agents (500)",
			fail:        func(f *fixture) { f.manager.SetAgentsUnreachable(testHost, true) },
			recover:     func(f *fixture) { f.manager.SetAgentsUnreachable(testHost, false) },
			wantMessage: "can't register the cluster in ScyllaDB Manager: ScyllaDB Manager answered 500 to POST /api/v1/clusters",
		},
		{
			name: "ScyllaDB Manager unavailable (503)",
			fail: func(f *fixture) {
				if err := f.manager.InjectFailure(fakescyllamanager.EndpointGetCluster, fakescyllamanager.Failure{Status: 503, Message: "database unavailable"}); err != nil {
					t.Fatal(err)
				}
			},
			recover:     func(f *fixture) { f.manager.ClearFailures() },
			wantMessage: "can't read the cluster in ScyllaDB Manager: ScyllaDB Manager answered 503 to GET /api/v1/cluster/" + testClusterID + ": database unavailable",
		},
		{
			name: "a dropped connection",
			fail: func(f *fixture) {
				if err := f.manager.InjectFailure(fakescyllamanager.EndpointGetCluster, fakescyllamanager.Failure{DropConnection: true}); err != nil {
					t.Fatal(err)
				}
			},
			recover:     func(f *fixture) { f.manager.ClearFailures() },
			wantMessage: "can't read the cluster in ScyllaDB Manager: can't GET /api/v1/cluster/" + testClusterID,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			tc.fail(f)
			if err := f.sync(); err == nil {
				t.Fatal("expected an error for the queue to retry")
			}
			degraded := ownedConditions(f.stored())[1]
			if degraded.Status != metav1.ConditionTrue || degraded.Reason != "ScyllaDBManagerError" || !hasPrefix(degraded.Message, tc.wantMessage) {
				t.Errorf("unexpected Degraded condition %+v", degraded)
			}
			if _, ok := f.stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
				t.Errorf("the annotation was set although the registration failed")
			}
			f.assertNoTokenLeak(f.events(), testToken)

			// Failing the same way again changes nothing in the status.
			f.recache()
			tc.fail(f)
			if err := f.sync(); err == nil {
				t.Fatal("expected an error for the queue to retry")
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no writes while failing the same way, got %v", writes)
			}

			f.recache()
			tc.recover(f)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(goodConditions(), ownedConditions(f.stored())); diff != "" {
				t.Errorf("the Degraded condition did not clear (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncReportsAnUnreachableScyllaDBManager(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	closed := httptest.NewServer(f.manager)
	closed.Close()
	unreachable, err := managerclient.New(managerclient.Options{URL: closed.URL, RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	f.controller.registrar.managerClient = unreachable

	if err := f.sync(); err == nil {
		t.Fatal("expected an error for the queue to retry")
	}
	degraded := ownedConditions(f.stored())[1]
	if degraded.Status != metav1.ConditionTrue || degraded.Reason != "ScyllaDBManagerError" || !hasPrefix(degraded.Message, "can't read the cluster in ScyllaDB Manager: can't GET") {
		t.Errorf("unexpected Degraded condition %+v", degraded)
	}
}

func TestSyncDeregistersADeletedDatacenterAndThenReleasesIt(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		// registered tells whether ScyllaDB Manager holds the datacenter's cluster.
		registered      bool
		wantRequests    []string
		wantEventPrefix string
	}{
		{
			name:            "registered",
			registered:      true,
			wantRequests:    []string{"GET /api/v1/cluster/" + testClusterID, "DELETE /api/v1/cluster/" + testClusterID},
			wantEventPrefix: "Normal ScyllaDBManagerClusterDeregistered",
		},
		{
			name:         "already gone from ScyllaDB Manager",
			wantRequests: []string{"GET /api/v1/cluster/" + testClusterID},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			if tc.registered {
				if err := f.sync(); err != nil {
					t.Fatal(err)
				}
			}
			f.recache()
			sdc := f.stored().DeepCopy()
			sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
			f.update(sdc)

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRequests, f.managerRequests(false)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			if clusters := f.manager.State().Clusters; len(clusters) != 0 {
				t.Errorf("expected ScyllaDB Manager to hold no cluster, got %+v", clusters)
			}
			if diff := cmp.Diff([]string{"patch scylladbdatacenters"}, f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
			events := f.events()
			if len(tc.wantEventPrefix) == 0 && len(events) != 0 || len(tc.wantEventPrefix) != 0 && (len(events) != 1 || !hasPrefix(events[0], tc.wantEventPrefix)) {
				t.Errorf("unexpected events %v", events)
			}
		})
	}
}

func TestSyncKeepsTheFinalizerOfADeletedDatacenterWhileScyllaDBManagerFails(t *testing.T) {
	t.Parallel()

	f := newRegisteredFixture(t, func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.DeletionTimestamp = new(metav1.NewTime(testNow)) })
	if err := f.manager.InjectFailure(fakescyllamanager.EndpointDeleteCluster, fakescyllamanager.Failure{Status: 500, Message: "database unavailable"}); err != nil {
		t.Fatal(err)
	}

	if err := f.sync(); err == nil {
		t.Fatal("expected an error for the queue to retry")
	}
	stored := f.stored()
	if diff := cmp.Diff([]string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer}, stored.Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
	conditions := ownedConditions(stored)
	if conditions[0].Status != metav1.ConditionTrue || conditions[0].Reason != "Deregistering" {
		t.Errorf("unexpected Progressing condition %+v", conditions[0])
	}
	wantMessage := "can't deregister the cluster in ScyllaDB Manager: ScyllaDB Manager answered 500 to DELETE /api/v1/cluster/" + testClusterID + ": database unavailable"
	if conditions[1].Status != metav1.ConditionTrue || conditions[1].Reason != "ScyllaDBManagerError" || conditions[1].Message != wantMessage {
		t.Errorf("unexpected Degraded condition %+v", conditions[1])
	}

	f.recache()
	f.manager.ClearFailures()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if clusters := f.manager.State().Clusters; len(clusters) != 0 {
		t.Errorf("expected ScyllaDB Manager to hold no cluster, got %+v", clusters)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
}

// TestSyncKeepsTheFinalizerOfADeletedDatacenterWhileOnlyOther404sAnswer: a 404 that is not ScyllaDB Manager saying
// that the cluster does not exist (its answer to a --scylladb-manager-url that misses its API, or a proxy's in front
// of it) tells nothing about the cluster. The deleted datacenter keeps its finalizer, and its cluster is deregistered
// once ScyllaDB Manager answers.
func TestSyncKeepsTheFinalizerOfADeletedDatacenterWhileOnlyOther404sAnswer(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		message string
	}{
		{name: "a path ScyllaDB Manager has no endpoint for", message: "find endpoint for path /scylla-manager/api/v1/cluster/" + testClusterID + " - make sure api-url is correct"},
		{name: "a proxy in front of ScyllaDB Manager", message: "404 page not found"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newRegisteredFixture(t, func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.DeletionTimestamp = new(metav1.NewTime(testNow)) })
			if err := f.manager.InjectFailure(fakescyllamanager.EndpointAll, fakescyllamanager.Failure{Status: 404, Message: tc.message}); err != nil {
				t.Fatal(err)
			}

			if err := f.sync(); err == nil {
				t.Fatal("expected an error for the queue to retry")
			}
			if clusters := f.manager.State().Clusters; len(clusters) != 1 {
				t.Errorf("expected ScyllaDB Manager to still hold the cluster, got %+v", clusters)
			}
			stored := f.stored()
			if diff := cmp.Diff([]string{"example.com/other", naming.ScyllaDBManagerClusterFinalizer}, stored.Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
			if degraded := ownedConditions(stored)[1]; degraded.Status != metav1.ConditionTrue || degraded.Reason != "ScyllaDBManagerError" || !strings.Contains(degraded.Message, tc.message) {
				t.Errorf("unexpected Degraded condition %+v", degraded)
			}

			f.recache()
			f.manager.ClearFailures()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			f.expectDeregistered()
		})
	}
}

func TestSyncReleasesADeletedDatacenterWhoseClusterIsAnotherObjects(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	id := f.registerCluster(managerclient.Cluster{Name: "other", Host: "10.0.0.9", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"}})
	sdc := newSDC()
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
	sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
	f.update(sdc)

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.managerRequests(true); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
	}
	if len(f.manager.State().Clusters) != 1 {
		t.Errorf("the other object's cluster was removed")
	}
	if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
	events := f.events()
	if len(events) != 1 || !hasPrefix(events[0], "Warning ScyllaDBManagerClusterNotOwned") {
		t.Errorf("unexpected events %v", events)
	}
}

func TestSyncDeregistersAnUnlabelledDatacenterAndRemovesWhatItAdded(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	sdc := f.stored().DeepCopy()
	delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
	f.update(sdc)

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	wantRequests := []string{"GET /api/v1/cluster/" + testClusterID, "DELETE /api/v1/cluster/" + testClusterID}
	if diff := cmp.Diff(wantRequests, f.managerRequests(false)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	if clusters := f.manager.State().Clusters; len(clusters) != 0 {
		t.Errorf("expected ScyllaDB Manager to hold no cluster, got %+v", clusters)
	}
	wantWrites := []string{"patch scylladbdatacenters", "apply scylladbdatacenters/status", "patch scylladbdatacenters"}
	if diff := cmp.Diff(wantWrites, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	applies := f.patches(types.ApplyPatchType)
	if diff := cmp.Diff(map[string]any{}, applies[0]["status"]); diff != "" {
		t.Errorf("expected an apply that lists no condition (-want +got):\n%s", diff)
	}

	stored := f.stored()
	if _, ok := stored.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
		t.Errorf("the cluster ID annotation was kept")
	}
	if got := stored.Annotations["note"]; got != "kept" {
		t.Errorf("another annotation was lost: %q", got)
	}
	if conditions := ownedConditions(stored); len(conditions) != 0 {
		t.Errorf("expected no conditions of this controller, got %+v", conditions)
	}
	if len(stored.Status.Conditions) != 2 {
		t.Errorf("the operator's conditions were not kept: %+v", stored.Status.Conditions)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, stored.Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}

	// Done: nothing more to do for it.
	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no writes, got %v", writes)
	}
}

func hasPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && s[:len(prefix)] == prefix
}

func TestSyncRefusesADatacenterOfAScyllaDBCluster(t *testing.T) {
	t.Parallel()

	sdc := newSDC()
	sdc.Labels[naming.ParentScyllaDBClusterNameLabel] = "multi"
	sdc.Labels[naming.ParentScyllaDBClusterNamespaceLabel] = "meta"
	sdc.Labels[naming.ParentScyllaDBClusterDatacenterNameLabel] = "dc1"
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if requests := f.managerRequests(false); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager requests, got %v", requests)
	}
	wantMessage := `ScyllaDBDatacenter is datacenter "dc1" of ScyllaDBCluster "meta/multi", which is registered with ScyllaDB Manager as one cluster: ` +
		`label the ScyllaDBCluster with "scylla-operator.scylladb.com/register-with-scylladb-manager" instead of its datacenter`
	want := []metav1.Condition{
		{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
		{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionTrue, Reason: "PartOfScyllaDBCluster", Message: wantMessage, ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
	}
	if diff := cmp.Diff(want, ownedConditions(f.stored())); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Warning ScyllaDBManagerRegistrationFailed " + wantMessage}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	if _, ok := f.stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
		t.Error("expected no cluster ID annotation")
	}

	// Reported once.
	f.recache()
	f.reset()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes, events := f.writes(), f.events(); len(writes) != 0 || len(events) != 0 {
		t.Errorf("expected no writes or events on a resync, got %v, %v", writes, events)
	}
}
