package controllerhelpers

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"
)

// SubSyncFunc is one part of a controller's sync, for example applying the StatefulSets of a ScyllaDBDatacenter.
// It returns one condition (of any type) per thing it is still waiting for, each with a reason and a message, and
// the error that stopped it, if any.
type SubSyncFunc func(ctx context.Context) (progressingConditions []metav1.Condition, err error)

// SubSync is a named SubSyncFunc. Name prefixes its conditions: "StatefulSetController" gives
// StatefulSetControllerProgressing and StatefulSetControllerDegraded.
type SubSync struct {
	Name string
	Sync SubSyncFunc
}

// RunSubSyncs runs every sub-sync in order, each even when an earlier one failed (they are independent parts of
// the desired state), and returns the <Name>Progressing and <Name>Degraded conditions of each (SubSyncConditions)
// and all their errors aggregated.
func RunSubSyncs(ctx context.Context, generation int64, subSyncs ...SubSync) ([]metav1.Condition, error) {
	for _, subSync := range subSyncs {
		if subSync.Sync == nil {
			return nil, fmt.Errorf("can't run sub-sync %q: it has no Sync function", subSync.Name)
		}
	}

	logger := klog.FromContext(ctx)
	conditions := make([]metav1.Condition, 0, 2*len(subSyncs))
	var errs []error

	for _, subSync := range subSyncs {
		start := time.Now()
		progressing, err := subSync.Sync(ctx)
		logger.V(4).Info("Finished sub-sync", "subSync", subSync.Name, "duration", time.Since(start), "progressing", len(progressing), "failed", err != nil)

		progressingCondition, degradedCondition, conditionsErr := SubSyncConditions(subSync.Name, generation, progressing, err)
		if conditionsErr != nil {
			return nil, conditionsErr
		}
		conditions = append(conditions, progressingCondition, degradedCondition)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", subSync.Name, err))
		}
	}

	return conditions, utilerrors.NewAggregate(errs)
}

// SubSyncConditions turns a sub-sync's result into its two conditions, both with observedGeneration set to
// generation:
//   - <name>Progressing is True when progressingConditions is not empty, with their reasons (comma separated) and
//     messages (one per line), and False with reason AsExpected otherwise;
//   - <name>Degraded is True with reason Error and the error as message when err is not nil, and False with reason
//     AsExpected otherwise.
//
// It returns an error when name does not make valid condition types or a progressing condition has a reason the
// API server would reject: that is a bug in the controller, which must not turn into a status update that fails
// forever.
func SubSyncConditions(name string, generation int64, progressingConditions []metav1.Condition, err error) (progressing, degraded metav1.Condition, _ error) {
	if len(name) == 0 {
		return metav1.Condition{}, metav1.Condition{}, fmt.Errorf("can't make sub-sync conditions: the sub-sync has no name")
	}
	if errs := validation.IsQualifiedName(name + ProgressingCondition); len(errs) != 0 {
		return metav1.Condition{}, metav1.Condition{}, fmt.Errorf("can't make the conditions of sub-sync %q: invalid condition type: %s", name, strings.Join(errs, "; "))
	}
	for _, c := range progressingConditions {
		if !conditionReasonPattern.MatchString(c.Reason) {
			return metav1.Condition{}, metav1.Condition{}, fmt.Errorf("can't make the conditions of sub-sync %q: progressing condition %q has invalid reason %q", name, c.Type, c.Reason)
		}
	}

	progressing = metav1.Condition{
		Type:               name + ProgressingCondition,
		Status:             metav1.ConditionFalse,
		Reason:             AsExpectedReason,
		ObservedGeneration: generation,
	}
	if len(progressingConditions) != 0 {
		progressing.Status = metav1.ConditionTrue
		progressing.Reason, progressing.Message = joinConditions(progressingConditions, false)
	}

	degraded = metav1.Condition{
		Type:               name + DegradedCondition,
		Status:             metav1.ConditionFalse,
		Reason:             AsExpectedReason,
		ObservedGeneration: generation,
	}
	if err != nil {
		degraded.Status = metav1.ConditionTrue
		degraded.Reason = ErrorReason
		degraded.Message = truncateMessage(err.Error())
	}

	return progressing, degraded, nil
}
