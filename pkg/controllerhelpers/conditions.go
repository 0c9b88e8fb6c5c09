package controllerhelpers

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Top-level condition types every workload status carries, aggregated from the conditions with these suffixes.
const (
	AvailableCondition   = "Available"
	ProgressingCondition = "Progressing"
	DegradedCondition    = "Degraded"
)

// Condition reasons set by this package.
const (
	// AsExpectedReason is the reason of a condition in its good state.
	AsExpectedReason = "AsExpected"
	// ErrorReason is the reason of a <Sub>Degraded condition whose sub-sync failed.
	ErrorReason = "Error"
	// NotObservedReason is the reason of a Progressing condition when some condition describes an older generation.
	NotObservedReason = "NotObserved"
)

// maxConditionMessageLength is the API server's limit on metav1.Condition.message.
const maxConditionMessageLength = 32768

// conditionReasonPattern is the API server's validation of metav1.Condition.reason.
var conditionReasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// AggregateCondition computes the top-level condition condType (AvailableCondition, ProgressingCondition or
// DegradedCondition) from every other condition whose type ends with condType, for example
// StatefulSetControllerProgressing and ServiceControllerProgressing into Progressing. For Available a child in
// status False counts against, for Progressing and Degraded a child in status True:
//   - if any child counts against, the result does too, with their reasons (comma separated) and their messages
//     (one "<type>: <message>" line each);
//   - else, for Progressing only, a child whose observedGeneration is older than generation makes the result True
//     with reason NotObserved: the rollout is not done before every part saw the current spec;
//   - else if any child is Unknown, so is the result;
//   - else the result is in its good state with reason AsExpected.
//
// The result has observedGeneration set to generation and no lastTransitionTime: meta.SetStatusCondition fills it
// in when the status changes. Aggregating without any child is an error: it would claim a state nothing reported.
func AggregateCondition(conditions []metav1.Condition, condType string, generation int64) (metav1.Condition, error) {
	var against metav1.ConditionStatus
	switch condType {
	case AvailableCondition:
		against = metav1.ConditionFalse
	case ProgressingCondition, DegradedCondition:
		against = metav1.ConditionTrue
	default:
		return metav1.Condition{}, fmt.Errorf("can't aggregate conditions of type %q: only %s, %s and %s are aggregated", condType, AvailableCondition, ProgressingCondition, DegradedCondition)
	}
	good := metav1.ConditionTrue
	if against == metav1.ConditionTrue {
		good = metav1.ConditionFalse
	}

	var children, counting, notObserved, unknown []metav1.Condition
	for _, c := range conditions {
		if c.Type == condType || !strings.HasSuffix(c.Type, condType) {
			continue
		}
		children = append(children, c)
		switch {
		case c.Status == against:
			counting = append(counting, c)
		case condType == ProgressingCondition && c.ObservedGeneration < generation:
			notObserved = append(notObserved, c)
		case c.Status != good:
			// Also when the child describes an older generation: for Available and Degraded, what it said then is
			// all there is to go by, and an unknown state is not a good one.
			unknown = append(unknown, c)
		}
	}
	if len(children) == 0 {
		return metav1.Condition{}, fmt.Errorf("can't aggregate conditions of type %q: there are no conditions with that suffix", condType)
	}

	result := metav1.Condition{Type: condType, ObservedGeneration: generation}
	switch {
	case len(counting) != 0:
		result.Status = against
		result.Reason, result.Message = joinConditions(counting, true)
	case condType == ProgressingCondition && len(notObserved) != 0:
		result.Status = metav1.ConditionTrue
		result.Reason = NotObservedReason
		lines := make([]string, 0, len(notObserved))
		for _, c := range notObserved {
			lines = append(lines, fmt.Sprintf("%s: observed generation %d, not %d yet", c.Type, c.ObservedGeneration, generation))
		}
		result.Message = truncateMessage(strings.Join(lines, "\n"))
	case len(unknown) != 0:
		result.Status = metav1.ConditionUnknown
		result.Reason, result.Message = joinConditions(unknown, true)
	default:
		result.Status = good
		result.Reason = AsExpectedReason
	}
	return result, nil
}

// SetAggregatedConditions aggregates each of condTypes (AggregateCondition) and sets the result in conditions with
// meta.SetStatusCondition, which keeps lastTransitionTime while a status holds. Most workloads pass
// AvailableCondition, ProgressingCondition and DegradedCondition; kinds without availability leave the first out.
func SetAggregatedConditions(conditions *[]metav1.Condition, generation int64, condTypes ...string) error {
	aggregated := make([]metav1.Condition, 0, len(condTypes))
	for _, condType := range condTypes {
		c, err := AggregateCondition(*conditions, condType, generation)
		if err != nil {
			return err
		}
		aggregated = append(aggregated, c)
	}
	// Set only once all are computed, so that an aggregate never feeds into another.
	for _, c := range aggregated {
		meta.SetStatusCondition(conditions, c)
	}
	return nil
}

// joinConditions returns the distinct reasons of conditions joined by commas and their messages, one per line,
// each prefixed with its condition's type when withTypes is set.
func joinConditions(conditions []metav1.Condition, withTypes bool) (string, string) {
	var reasons []string
	lines := make([]string, 0, len(conditions))
	for _, c := range conditions {
		if !slices.Contains(reasons, c.Reason) {
			reasons = append(reasons, c.Reason)
		}
		if withTypes {
			lines = append(lines, fmt.Sprintf("%s: %s", c.Type, c.Message))
		} else if len(c.Message) != 0 {
			lines = append(lines, c.Message)
		}
	}
	return strings.Join(reasons, ","), truncateMessage(strings.Join(lines, "\n"))
}

// truncateMessage keeps message within the API server's limit, marking the cut.
func truncateMessage(message string) string {
	const marker = "... (truncated)"
	if len(message) <= maxConditionMessageLength {
		return message
	}
	cut := maxConditionMessageLength - len(marker)
	// Do not split a UTF-8 sequence.
	for cut > 0 && message[cut]&0xC0 == 0x80 {
		cut--
	}
	return message[:cut] + marker
}

// SetTransitionTimes sets the lastTransitionTime of each of conditions, in place: existing's, the conditions the
// object has, while a condition's status holds, and now when it changes or the object had none of that type.
func SetTransitionTimes(conditions, existing []metav1.Condition, now metav1.Time) {
	for i := range conditions {
		conditions[i].LastTransitionTime = now
		if e := meta.FindStatusCondition(existing, conditions[i].Type); e != nil && e.Status == conditions[i].Status && !e.LastTransitionTime.IsZero() {
			conditions[i].LastTransitionTime = e.LastTransitionTime
		}
	}
}
