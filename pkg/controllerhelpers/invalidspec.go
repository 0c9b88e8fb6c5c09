package controllerhelpers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// InvalidSpecReason is the reason of the Degraded condition of an object whose spec is invalid: nothing is built
// from it until it changes.
const InvalidSpecReason = "InvalidSpec"

// InvalidSpecConditions returns the conditions of an object at generation whose spec validation refused with err:
// <name>Progressing False (nothing happens until the spec changes), <name>Degraded True with reason InvalidSpec and
// err's message, available (the child of the aggregated Available the caller keeps or sets), and the aggregated
// Available, Progressing and Degraded.
func InvalidSpecConditions(name string, generation int64, err error, available metav1.Condition) []metav1.Condition {
	progressing, degraded, _ := SubSyncConditions(name, generation, nil, err)
	degraded.Reason = InvalidSpecReason
	available.ObservedGeneration = generation
	conditions := []metav1.Condition{progressing, degraded, available}
	// The aggregation can't fail: every aggregated type has a child.
	_ = SetAggregatedConditions(&conditions, generation, AvailableCondition, ProgressingCondition, DegradedCondition)
	return conditions
}
