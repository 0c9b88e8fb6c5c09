package controllerhelpers

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestInvalidSpecConditionsAreDegradedAndNotProgressing(t *testing.T) {
	t.Parallel()
	available := metav1.Condition{Type: "NodesAvailable", Status: metav1.ConditionTrue, Reason: "AllNodesAvailable"}
	conditions := InvalidSpecConditions("SpecValidation", 3, errors.New("spec.x: Invalid value"), available)
	for _, want := range []struct {
		condType string
		status   metav1.ConditionStatus
		reason   string
	}{
		{"SpecValidationProgressing", metav1.ConditionFalse, AsExpectedReason},
		{"SpecValidationDegraded", metav1.ConditionTrue, InvalidSpecReason},
		{"NodesAvailable", metav1.ConditionTrue, "AllNodesAvailable"},
		{ProgressingCondition, metav1.ConditionFalse, ""},
		{DegradedCondition, metav1.ConditionTrue, ""},
		{AvailableCondition, metav1.ConditionTrue, ""},
	} {
		c := meta.FindStatusCondition(conditions, want.condType)
		switch {
		case c == nil:
			t.Errorf("no %s condition in %+v", want.condType, conditions)
		case c.Status != want.status || (len(want.reason) != 0 && c.Reason != want.reason) || c.ObservedGeneration != 3:
			t.Errorf("want %s %s (reason %q) at generation 3, got %+v", want.condType, want.status, want.reason, c)
		}
	}
	if c := meta.FindStatusCondition(conditions, DegradedCondition); c != nil && c.Message != "SpecValidationDegraded: spec.x: Invalid value" {
		t.Errorf("Degraded does not carry the validation error: %q", c.Message)
	}
}
