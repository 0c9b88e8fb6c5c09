package apiserverfields

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllascheme "github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

func newTestServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(scyllascheme.Scheme, scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	return &scyllav1alpha1.ScyllaDBDatacenter{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scylla.scylladb.com/v1alpha1", Kind: "ScyllaDBDatacenter"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "basic", ResourceVersion: "1"},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName: "basic",
			Racks:       []scyllav1alpha1.RackSpec{{Name: "a"}},
		},
	}
}

func conditionTypes(obj k8sruntime.Object) []string {
	var types []string
	for _, c := range obj.(*scyllav1alpha1.ScyllaDBDatacenter).Status.Conditions {
		types = append(types, c.Type+"="+string(c.Status))
	}
	return types
}

func statusApply(conditions ...string) []byte {
	patch := `{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBDatacenter","metadata":{"name":"basic","namespace":"scylla"},"status":{"conditions":[`
	for i, c := range conditions {
		if i != 0 {
			patch += ","
		}
		patch += `{"type":"` + c + `","status":"True","reason":"R","message":"","lastTransitionTime":"2026-01-02T03:04:05Z"}`
	}
	return []byte(patch + `]}}`)
}

func TestConditionsOfTwoAppliersMergeByType(t *testing.T) {
	t.Parallel()

	s := newTestServer(t)
	var live k8sruntime.Object = newSDC()
	var err error
	for _, step := range []struct {
		manager    string
		conditions []string
	}{
		{"operator", []string{"Available", "Degraded"}},
		{"manager-controller", []string{"RegistrationDegraded"}},
		// The operator stops sending Degraded: it goes; the manager-controller's condition stays.
		{"operator", []string{"Available"}},
	} {
		if live, err = s.Apply(live, statusApply(step.conditions...), "status", step.manager, true); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{"Available=True", "RegistrationDegraded=True"}, conditionTypes(live)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if spec := live.(*scyllav1alpha1.ScyllaDBDatacenter).Spec; spec.ClusterName != "basic" {
		t.Errorf("a status apply changed the spec: %+v", spec)
	}
	for _, manager := range []string{"operator", "manager-controller"} {
		if _, ok := ManagedFieldsEntry(live.(metav1.Object), manager, metav1.ManagedFieldsOperationApply, "status"); !ok {
			t.Errorf("no status apply entry for %s: %+v", manager, live.(metav1.Object).GetManagedFields())
		}
	}
}

func TestFieldsOfAnUpdateManagerSurviveAnApplyThatOmitsThem(t *testing.T) {
	t.Parallel()

	s := newTestServer(t)
	sdc := newSDC()
	sdc.Status.Conditions = []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())},
		{Type: "Obsolete", Status: metav1.ConditionTrue, Reason: "R", LastTransitionTime: metav1.Date(2026, 1, 2, 3, 4, 5, 0, metav1.Now().Location())},
	}
	live, err := s.Update(newSDC(), sdc, "status", "old-operator")
	if err != nil {
		t.Fatal(err)
	}
	if live, err = s.Apply(live, statusApply("Available"), "status", "operator", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Available=True", "Obsolete=True"}, conditionTypes(live)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}
