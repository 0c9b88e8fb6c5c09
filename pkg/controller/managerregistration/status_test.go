package managerregistration

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMakeConditions(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		waiting *progress
		failure *progress
		want    []metav1.Condition
	}{
		{
			name: "registered",
			want: []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 3},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 3},
			},
		},
		{
			name:    "waiting",
			waiting: &progress{reason: "WaitingForRollout", message: "m"},
			want: []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: "WaitingForRollout", Message: "m", ObservedGeneration: 3},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 3},
			},
		},
		{
			name:    "failing",
			failure: &progress{reason: "ScyllaDBManagerError", message: "m"},
			want: []metav1.Condition{
				{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 3},
				{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionTrue, Reason: "ScyllaDBManagerError", Message: "m", ObservedGeneration: 3},
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, makeConditions(3, tc.waiting, tc.failure)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConditionsUpToDateComparesEverythingButTheTransitionTime(t *testing.T) {
	t.Parallel()

	operators := metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 2}
	desired := makeConditions(2, nil, nil)
	existing := append([]metav1.Condition{operators}, desired...)
	controllerhelpers.SetTransitionTimes(existing, nil, metav1.NewTime(testNow))

	modified := func(modify func(c *metav1.Condition)) []metav1.Condition {
		out := append([]metav1.Condition{}, existing...)
		modify(&out[2])
		return out
	}

	tt := []struct {
		name     string
		existing []metav1.Condition
		desired  []metav1.Condition
		want     bool
	}{
		{name: "equal but for the transition time and other writers' conditions", existing: existing, desired: desired, want: true},
		{name: "another status", existing: modified(func(c *metav1.Condition) { c.Status = metav1.ConditionTrue }), desired: desired},
		{name: "another reason", existing: modified(func(c *metav1.Condition) { c.Reason = "Other" }), desired: desired},
		{name: "another message", existing: modified(func(c *metav1.Condition) { c.Message = "other" }), desired: desired},
		{name: "another generation", existing: modified(func(c *metav1.Condition) { c.ObservedGeneration = 1 }), desired: desired},
		{name: "missing", existing: existing[:2], desired: desired},
		{name: "present but to be removed", existing: existing, desired: nil},
		{name: "absent and to be removed", existing: existing[:1], desired: nil, want: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := conditionsUpToDate(tc.existing, tc.desired); got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}
