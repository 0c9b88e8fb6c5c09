package scylladbdatacenter

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	scyllascheme "github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	metav1applyconfigurations "k8s.io/client-go/applyconfigurations/meta/v1"
	clienttesting "k8s.io/client-go/testing"
)

// Conditions the manager-controller writes into the datacenter's status under its own field manager.
var managerControllerConditions = []metav1.Condition{
	{Type: "ScyllaDBManagerRegistrationProgressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
	{Type: "ScyllaDBManagerRegistrationDegraded", Status: metav1.ConditionTrue, Reason: "ScyllaDBManagerError", Message: "connection refused", ObservedGeneration: 2, LastTransitionTime: testNow},
}

// newAPIServer returns the API server's field management of ScyllaDBDatacenters.
func newAPIServer(t *testing.T) *apiserverfields.Server {
	t.Helper()
	s, err := apiserverfields.NewServer(scyllascheme.Scheme, scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// applyManagerControllerConditions returns live after the manager-controller applied its conditions to its status.
func applyManagerControllerConditions(t *testing.T, s *apiserverfields.Server, live runtime.Object) runtime.Object {
	t.Helper()
	sdc := live.(*scyllav1alpha1.ScyllaDBDatacenter)
	status := scyllav1alpha1applyconfigurations.ScyllaDBDatacenterStatus()
	for _, c := range managerControllerConditions {
		status.Conditions = append(status.Conditions, *mustApplyConfiguration(t, c))
	}
	patch, err := json.Marshal(scyllav1alpha1applyconfigurations.ScyllaDBDatacenter(sdc.Name, sdc.Namespace).WithStatus(status))
	if err != nil {
		t.Fatal(err)
	}
	live, err = s.Apply(live, patch, "status", naming.ManagerControllerFieldManager, true)
	if err != nil {
		t.Fatal(err)
	}
	return live
}

func mustApplyConfiguration(t *testing.T, c metav1.Condition) *metav1applyconfigurations.ConditionApplyConfiguration {
	t.Helper()
	ac, err := controllerhelpers.ApplyConfigurationFrom[metav1applyconfigurations.ConditionApplyConfiguration](c)
	if err != nil {
		t.Fatal(err)
	}
	return ac
}

// replayScyllaDBDatacenterWrites returns live after the writes of f's controller to the datacenter, as the API server
// records them.
func (f *fixture) replayScyllaDBDatacenterWrites(s *apiserverfields.Server, live runtime.Object) runtime.Object {
	f.t.Helper()
	for _, action := range f.scyllaClient.Actions() {
		switch action.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		var err error
		// The operator's user agent names the field manager of writes that set none.
		if live, err = s.Replay(live, action, naming.OperatorStatusUpdateManager); err != nil {
			f.t.Fatalf("can't replay %s %s: %v", action.GetVerb(), action.GetResource().Resource, err)
		}
	}
	return live
}

// steadyWorld returns a datacenter whose nodes all run, with the status that describes them as the API server holds
// it: created by the ScyllaCluster controller, its status applied by the operator. The sync of steadyWorld writes
// nothing.
func steadyWorld(t *testing.T, s *apiserverfields.Server) world {
	t.Helper()
	w := withNodes(convergedWorld(t))
	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w = f.world()

	sdc := w.sdc.DeepCopy()
	sdc.ManagedFields = nil
	sdc.ResourceVersion = "7"
	created := sdc.DeepCopy()
	created.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{}
	live, err := s.Create(created, naming.OperatorStatusUpdateManager)
	if err != nil {
		t.Fatal(err)
	}
	status, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBDatacenterStatusApplyConfiguration](&sdc.Status)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(scyllav1alpha1applyconfigurations.ScyllaDBDatacenter(sdc.Name, sdc.Namespace).WithStatus(status))
	if err != nil {
		t.Fatal(err)
	}
	if live, err = s.Apply(live, patch, "status", naming.OperatorFieldManager, true); err != nil {
		t.Fatal(err)
	}
	w.sdc = live.(*scyllav1alpha1.ScyllaDBDatacenter)
	return w
}

// conditionTypes returns the types of conditions, sorted.
func conditionTypes(conditions []metav1.Condition) []string {
	var out []string
	for _, c := range conditions {
		out = append(out, c.Type)
	}
	slices.Sort(out)
	return out
}

// operatorConditionTypes are the types of the conditions the operator computes, sorted.
var operatorConditionTypes = []string{
	"Available", "ConfigMapControllerDegraded", "ConfigMapControllerProgressing", "Degraded",
	"NodeReplacementControllerDegraded", "NodeReplacementControllerProgressing",
	"PodDisruptionBudgetControllerDegraded", "PodDisruptionBudgetControllerProgressing", "Progressing",
	"RoleBindingControllerDegraded", "RoleBindingControllerProgressing", "SecretControllerDegraded",
	"SecretControllerProgressing", "ServiceAccountControllerDegraded", "ServiceAccountControllerProgressing",
	"ServiceControllerDegraded", "ServiceControllerProgressing", "StatefulSetControllerAvailable",
	"StatefulSetControllerDegraded", "StatefulSetControllerProgressing",
}

func TestStatusApplySendsOnlyTheOperatorsFieldsZerosIncluded(t *testing.T) {
	t.Parallel()

	sdc := newBasicSDC()
	sdc.Status.Conditions = slices.Clone(managerControllerConditions)
	f := newFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}

	var apply clienttesting.PatchActionImpl
	for _, action := range f.scyllaClient.Actions() {
		if a, ok := action.(clienttesting.PatchActionImpl); ok {
			apply = a
		}
	}
	if apply.PatchType != types.ApplyPatchType || apply.GetSubresource() != "status" {
		t.Fatalf("expected an apply of the status, got %s %s/%s", apply.PatchType, apply.GetResource().Resource, apply.GetSubresource())
	}
	if got := apply.PatchOptions.FieldManager; got != "scylla-operator" {
		t.Errorf("expected field manager %q, got %q", "scylla-operator", got)
	}
	if apply.PatchOptions.Force == nil || !*apply.PatchOptions.Force {
		t.Errorf("the apply must force: the operator owns these fields whoever wrote them last")
	}

	var patch map[string]any
	if err := json.Unmarshal(apply.Patch, &patch); err != nil {
		t.Fatal(err)
	}
	// No resourceVersion: a stale cache can't make the apply conflict.
	wantMetadata := map[string]any{"name": "basic", "namespace": testNamespace}
	if diff := cmp.Diff(wantMetadata, patch["metadata"]); diff != "" {
		t.Errorf("unexpected metadata (-want +got):\n%s", diff)
	}
	if _, ok := patch["spec"]; ok {
		t.Errorf("the status apply sends a spec")
	}
	status := patch["status"].(map[string]any)
	// No node runs yet: every count but nodes is 0 and is sent, as the typed status has it.
	for _, count := range []string{"currentNodes", "updatedNodes", "readyNodes", "availableNodes"} {
		if got, ok := status[count]; !ok || got != float64(0) {
			t.Errorf("expected status.%s 0 to be sent, got %v", count, got)
		}
		for _, rack := range status["racks"].([]any) {
			if got, ok := rack.(map[string]any)[count]; !ok || got != float64(0) {
				t.Errorf("expected rack status %s 0 to be sent, got %v", count, got)
			}
		}
	}

	written := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter)
	if diff := cmp.Diff(operatorConditionTypes, conditionTypes(written.Status.Conditions)); diff != "" {
		t.Errorf("the apply must carry the operator's conditions only (-want +got):\n%s", diff)
	}
}

func TestApplyConfigurationKeepsEveryFieldOfTheStatus(t *testing.T) {
	t.Parallel()

	zero := int32(0)
	status := &scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(int64(0)),
		Conditions:         []metav1.Condition{{Type: "Available", Status: metav1.ConditionFalse, Reason: "NodesUnavailable", LastTransitionTime: testNow}},
		UpdatedVersion:     "2026.2.0",
		NodeCounts:         scyllav1alpha1.NodeCounts{Nodes: &zero, CurrentNodes: &zero, UpdatedNodes: &zero, ReadyNodes: &zero, AvailableNodes: &zero},
		Racks: []scyllav1alpha1.RackStatus{{
			Name:       "a",
			NodeCounts: scyllav1alpha1.NodeCounts{Nodes: &zero, CurrentNodes: &zero, UpdatedNodes: &zero, ReadyNodes: &zero, AvailableNodes: &zero},
			Stale:      new(false),
		}},
	}
	ac, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBDatacenterStatusApplyConfiguration](status)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(ac)
	if err != nil {
		t.Fatal(err)
	}
	var wantFields, gotFields map[string]any
	if err := json.Unmarshal(want, &wantFields); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &gotFields); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantFields, gotFields); diff != "" {
		t.Errorf("the apply configuration differs from the status (-want +got):\n%s", diff)
	}
}

func TestStatusApplyKeepsOtherProgramsConditions(t *testing.T) {
	t.Parallel()

	s := newAPIServer(t)
	w := steadyWorld(t, s)
	live := applyManagerControllerConditions(t, s, w.sdc)

	// Steady state: the manager-controller's conditions are not the operator's business, so nothing is written.
	w.sdc = live.(*scyllav1alpha1.ScyllaDBDatacenter)
	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Fatalf("foreign conditions made the operator write (-want +got):\n%s", diff)
	}

	// Two nodes go down: the operator's conditions change, the manager-controller's stay as they are.
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	sts.Status.AvailableReplicas = 1
	sts.Status.ReadyReplicas = 1
	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply scylladbdatacenters/status basic"}, f.writes()); diff != "" {
		t.Fatalf("unexpected writes (-want +got):\n%s", diff)
	}
	got := f.replayScyllaDBDatacenterWrites(s, live).(*scyllav1alpha1.ScyllaDBDatacenter)
	for _, want := range managerControllerConditions {
		if c := findCondition(got.Status.Conditions, want.Type); c == nil || !apiequality.Semantic.DeepEqual(*c, want) {
			t.Errorf("the manager-controller's condition %s changed: want %+v, got %+v", want.Type, want, c)
		}
	}
	if c := findCondition(got.Status.Conditions, "StatefulSetControllerAvailable"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("the operator's condition was not applied: %+v", c)
	}
	if diff := cmp.Diff(counts(6, 6, 6, 4, 4), got.Status.NodeCounts); diff != "" {
		t.Errorf("unexpected counts (-want +got):\n%s", diff)
	}

	// What the API server holds now makes the next sync write nothing.
	w.sdc = got
	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("the next sync wrote (-want +got):\n%s", diff)
	}
}

func TestStatusWrittenByEarlierOperatorsIsHandedToTheApplyOnce(t *testing.T) {
	t.Parallel()

	for _, legacyManager := range naming.LegacyOperatorStatusUpdateManagers() {
		t.Run(legacyManager, func(t *testing.T) {
			t.Parallel()

			s := newAPIServer(t)
			w := steadyWorld(t, s)
			// An earlier operator wrote the status with Update, with a condition type this one no longer has.
			sdc := w.sdc.DeepCopy()
			sdc.ManagedFields = nil
			sdc.Status.Conditions = append(sdc.Status.Conditions, metav1.Condition{
				Type: "JobControllerProgressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow,
			})
			created := sdc.DeepCopy()
			created.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{}
			live, err := s.Create(created, legacyManager)
			if err != nil {
				t.Fatal(err)
			}
			if live, err = s.Update(live, sdc, "status", legacyManager); err != nil {
				t.Fatal(err)
			}
			live = applyManagerControllerConditions(t, s, live)
			if _, ok := apiserverfields.ManagedFieldsEntry(live.(metav1.Object), legacyManager, metav1.ManagedFieldsOperationUpdate, "status"); !ok {
				t.Fatalf("the setup has no status Update entry of %s: %+v", legacyManager, live.(metav1.Object).GetManagedFields())
			}

			// Applying alone would leave the old condition to the old entry.
			w.sdc = live.(*scyllav1alpha1.ScyllaDBDatacenter)
			f := newFixture(t, w)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"patch scylladbdatacenters basic", "apply scylladbdatacenters/status basic"}, f.writes()); diff != "" {
				t.Fatalf("unexpected writes (-want +got):\n%s", diff)
			}
			got := f.replayScyllaDBDatacenterWrites(s, live).(*scyllav1alpha1.ScyllaDBDatacenter)

			want := append(slices.Clone(operatorConditionTypes), "ScyllaDBManagerRegistrationDegraded", "ScyllaDBManagerRegistrationProgressing")
			slices.Sort(want)
			if diff := cmp.Diff(want, conditionTypes(got.Status.Conditions)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if _, ok := apiserverfields.ManagedFieldsEntry(got, legacyManager, metav1.ManagedFieldsOperationUpdate, "status"); ok {
				t.Errorf("the status Update entry of %s is still there: %+v", legacyManager, got.ManagedFields)
			}
			if _, ok := apiserverfields.ManagedFieldsEntry(got, naming.OperatorFieldManager, metav1.ManagedFieldsOperationApply, "status"); !ok {
				t.Errorf("no status apply entry of the operator: %+v", got.ManagedFields)
			}

			// Once handed over, nothing is written again.
			w.sdc = got
			f = newFixture(t, w)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
				t.Errorf("the sync after the hand-over wrote (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStatusIsAppliedWhenTheHandOverFails(t *testing.T) {
	t.Parallel()

	s := newAPIServer(t)
	w := steadyWorld(t, s)
	sdc := w.sdc.DeepCopy()
	sdc.ManagedFields = nil
	created := sdc.DeepCopy()
	created.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{}
	live, err := s.Create(created, naming.OperatorStatusUpdateManager)
	if err != nil {
		t.Fatal(err)
	}
	if live, err = s.Update(live, sdc, "status", naming.OperatorStatusUpdateManager); err != nil {
		t.Fatal(err)
	}
	w.sdc = live.(*scyllav1alpha1.ScyllaDBDatacenter)
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	sts.Status.AvailableReplicas = 1
	sts.Status.ReadyReplicas = 1

	f := newFixture(t, w)
	// The cache is behind: the hand-over's resourceVersion is stale.
	f.scyllaClient.PrependReactor("patch", "scylladbdatacenters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.(clienttesting.PatchAction).GetPatchType() != types.JSONPatchType {
			return false, nil, nil
		}
		return true, nil, apierrors.NewConflict(scyllav1alpha1.Resource("scylladbdatacenters"), "basic", errors.New("the object has been modified"))
	})
	err = f.sync()
	if err == nil || !strings.Contains(err.Error(), `can't hand the status fields of ScyllaDBDatacenter "scylla/basic" written by earlier operator versions to field manager "scylla-operator"`) {
		t.Fatalf("expected the failed hand-over to be retried, got %v", err)
	}
	if diff := cmp.Diff([]string{"patch scylladbdatacenters basic", "apply scylladbdatacenters/status basic"}, f.writes()); diff != "" {
		t.Errorf("the status must be applied anyway (-want +got):\n%s", diff)
	}
}
