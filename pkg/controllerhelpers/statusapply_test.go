package controllerhelpers

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// conditionFields returns the FieldsV1 of a status entry owning the conditions of types.
func conditionFields(types ...string) *metav1.FieldsV1 {
	conditions := map[string]any{}
	for _, t := range types {
		conditions[`k:{"type":"`+t+`"}`] = map[string]any{".": map[string]any{}, "f:status": map[string]any{}}
	}
	raw, err := json.Marshal(map[string]any{"f:status": map[string]any{"f:observedGeneration": map[string]any{}, "f:conditions": conditions}})
	if err != nil {
		panic(err)
	}
	return &metav1.FieldsV1{Raw: raw}
}

func TestAppliedStatusConditionTypes(t *testing.T) {
	t.Parallel()

	apply := func(manager, subresource string, fields *metav1.FieldsV1) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, Subresource: subresource, FieldsType: "FieldsV1", FieldsV1: fields}
	}
	tt := []struct {
		name          string
		managedFields []metav1.ManagedFieldsEntry
		want          []string
	}{
		{
			name:          "no managed fields own nothing",
			managedFields: nil,
		},
		{
			name: "the manager's status apply entry owns its conditions only",
			managedFields: []metav1.ManagedFieldsEntry{
				apply("scylla-operator", "status", conditionFields("Available", "Degraded")),
				apply("scylla-manager-controller", "status", conditionFields("ScyllaDBManagerRegistrationDegraded")),
			},
			want: []string{"Available", "Degraded"},
		},
		{
			name: "updates and main-resource applies own no status condition of the manager's apply",
			managedFields: []metav1.ManagedFieldsEntry{
				{Manager: "scylla-operator", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: conditionFields("Old")},
				apply("scylla-operator", "", conditionFields("Main")),
			},
		},
		{
			name:          "an undecodable entry owns nothing",
			managedFields: []metav1.ManagedFieldsEntry{apply("scylla-operator", "status", &metav1.FieldsV1{Raw: []byte("{")})},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sets.List(AppliedStatusConditionTypes(tc.managedFields, "scylla-operator"))
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected condition types (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUpgradeStatusManagedFields(t *testing.T) {
	t.Parallel()

	update := func(manager, subresource string, fields *metav1.FieldsV1) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Subresource: subresource, FieldsType: "FieldsV1", FieldsV1: fields}
	}
	tt := []struct {
		name          string
		managedFields []metav1.ManagedFieldsEntry
		wantPatch     bool
		wantOwned     []string
	}{
		{
			name: "nothing to hand over without an earlier operator's status update",
			managedFields: []metav1.ManagedFieldsEntry{
				update("kubectl", "status", conditionFields("Foreign")),
				update("scylla-operator-operator", "", conditionFields("MainResource")),
			},
		},
		{
			name: "both earlier operators' status updates are handed over",
			managedFields: []metav1.ManagedFieldsEntry{
				update("scylla-operator", "status", conditionFields("Established")),
				update("scylla-operator-operator", "status", conditionFields("Previous")),
				update("kubectl", "status", conditionFields("Foreign")),
			},
			wantPatch: true,
			wantOwned: []string{"Established", "Previous"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "3", ManagedFields: tc.managedFields}}
			patch, upgraded, err := UpgradeStatusManagedFields(obj)
			if err != nil {
				t.Fatal(err)
			}
			if (patch != nil) != tc.wantPatch {
				t.Fatalf("expected a patch: %v, got %s", tc.wantPatch, patch)
			}
			if !tc.wantPatch {
				return
			}
			if diff := cmp.Diff(tc.wantOwned, sets.List(AppliedStatusConditionTypes(upgraded, "scylla-operator"))); diff != "" {
				t.Errorf("unexpected conditions of the operator's apply entry (-want +got):\n%s", diff)
			}
			for _, e := range upgraded {
				if e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == "status" && e.Manager != "kubectl" {
					t.Errorf("an earlier operator's status update entry is left: %+v", e)
				}
			}
			if len(obj.ManagedFields) != len(tc.managedFields) {
				t.Errorf("the object was changed")
			}
			var ops []map[string]any
			if err := json.Unmarshal(patch, &ops); err != nil {
				t.Fatal(err)
			}
			if ops[1]["path"] != "/metadata/resourceVersion" || ops[1]["value"] != "3" {
				t.Errorf("the patch must carry the resourceVersion it was computed from: %s", patch)
			}
		})
	}
}

func BenchmarkUpgradeStatusManagedFieldsOfAnUpgradedObject(b *testing.B) {
	obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "3", ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "scylla-operator", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: conditionFields("Available", "Progressing", "Degraded", "StatefulSetControllerAvailable", "StatefulSetControllerProgressing", "StatefulSetControllerDegraded")},
		{Manager: "scylla-manager-controller", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Subresource: "status", FieldsType: "FieldsV1",
			FieldsV1: conditionFields("ScyllaDBManagerRegistrationDegraded")},
	}}}
	for b.Loop() {
		if patch, _, err := UpgradeStatusManagedFields(obj); err != nil || patch != nil {
			b.Fatalf("unexpected patch %s or error %v", patch, err)
		}
	}
}

func BenchmarkAppliedStatusConditionTypes(b *testing.B) {
	types := []string{"Available", "Progressing", "Degraded", "StatefulSetControllerAvailable"}
	for _, sub := range []string{"ServiceAccount", "RoleBinding", "ConfigMap", "Secret", "Service", "StatefulSet", "PodDisruptionBudget"} {
		types = append(types, sub+"ControllerProgressing", sub+"ControllerDegraded")
	}
	managedFields := []metav1.ManagedFieldsEntry{{
		Manager: "scylla-operator", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "v1", Subresource: "status",
		FieldsType: "FieldsV1", FieldsV1: conditionFields(types...),
	}}
	for b.Loop() {
		if got := AppliedStatusConditionTypes(managedFields, "scylla-operator"); got.Len() != len(types) {
			b.Fatalf("expected %d types, got %d", len(types), got.Len())
		}
	}
}

func TestConditionApplyConfigurationsSendEveryFieldOfEveryCondition(t *testing.T) {
	t.Parallel()

	conditions := []metav1.Condition{
		{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "Error", Message: "boom", ObservedGeneration: 2,
			LastTransitionTime: metav1.NewTime(time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC))},
		// Empty and zero values are sent too: the apply owns them.
		{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected",
			LastTransitionTime: metav1.NewTime(time.Date(2025, time.January, 2, 0, 0, 0, 0, time.UTC))},
	}
	data, err := json.Marshal(ConditionApplyConfigurations(conditions))
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"type": "Degraded", "status": "True", "reason": "Error", "message": "boom", "observedGeneration": float64(2), "lastTransitionTime": "2025-01-01T00:00:00Z"},
		{"type": "Progressing", "status": "False", "reason": "AsExpected", "message": "", "observedGeneration": float64(0), "lastTransitionTime": "2025-01-02T00:00:00Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected apply configurations (-want +got):\n%s", diff)
	}
}
