package managerregistration

import (
	"context"
	"fmt"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1apply "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// ownedConditionTypes are the condition types this controller writes, and the only ones.
var ownedConditionTypes = []string{
	ScyllaDBManagerRegistrationProgressingCondition,
	ScyllaDBManagerRegistrationDegradedCondition,
}

// makeConditions returns this controller's conditions for an object of generation: Progressing True with waiting's
// reason and message when it is set, Degraded True with failure's when it is set, each in its good state (False,
// AsExpected) otherwise. lastTransitionTime is left for updateConditions.
func makeConditions(generation int64, waiting, failure *progress) []metav1.Condition {
	condition := func(condType string, p *progress) metav1.Condition {
		c := metav1.Condition{
			Type:               condType,
			Status:             metav1.ConditionFalse,
			Reason:             controllerhelpers.AsExpectedReason,
			ObservedGeneration: generation,
		}
		if p != nil {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, p.reason, p.message
		}
		return c
	}
	return []metav1.Condition{
		condition(ScyllaDBManagerRegistrationProgressingCondition, waiting),
		condition(ScyllaDBManagerRegistrationDegradedCondition, failure),
	}
}

// conditionsUpToDate tells whether existing, an object's conditions, already say what desired says: for every owned
// condition type, the condition of desired, compared by everything but lastTransitionTime, or none when desired has
// none of that type.
func conditionsUpToDate(existing, desired []metav1.Condition) bool {
	for _, condType := range ownedConditionTypes {
		e, d := meta.FindStatusCondition(existing, condType), meta.FindStatusCondition(desired, condType)
		switch {
		case e == nil && d == nil:
		case e == nil || d == nil:
			return false
		case e.Status != d.Status || e.Reason != d.Reason || e.Message != d.Message || e.ObservedGeneration != d.ObservedGeneration:
			return false
		}
	}
	return true
}

// updateConditions makes desired this controller's conditions of obj, removing those of its types desired lacks. It
// writes only when the cached object says otherwise, and returns the object as written, or obj when nothing was.
func (r *registrar[T]) updateConditions(ctx context.Context, obj T, desired []metav1.Condition) (T, error) {
	existing := r.kind.conditions(obj)
	if conditionsUpToDate(existing, desired) {
		return obj, nil
	}
	desired = slices.Clone(desired)
	controllerhelpers.SetTransitionTimes(desired, existing, r.now())
	updated, err := r.kind.applyConditions(ctx, obj, desired)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("can't apply the status conditions of %s %q: %w", r.kind.kind, klog.KObj(obj), err)
	}
	klog.FromContext(ctx).V(2).Info("Applied status conditions", "conditions", len(desired), "resourceVersion", updated.GetResourceVersion())
	return updated, nil
}

// applyScyllaDBDatacenterConditions makes conditions the status conditions the manager-controller owns on sdc, with
// server-side apply on the status subresource. The apply carries only these conditions: the conditions list is a map
// keyed by type, so the operator's conditions, applied under its own field manager, are left alone, and the
// manager-controller's conditions it no longer lists are removed. The UID makes the apply fail rather than land on
// another object recreated under the same name.
func applyScyllaDBDatacenterConditions(ctx context.Context, client scyllaclientset.Interface, sdc *scyllav1alpha1.ScyllaDBDatacenter, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
	status := scyllav1alpha1apply.ScyllaDBDatacenterStatus().WithConditions(controllerhelpers.ConditionApplyConfigurations(conditions)...)
	apply := scyllav1alpha1apply.ScyllaDBDatacenter(sdc.Name, sdc.Namespace).
		WithUID(sdc.UID).
		WithStatus(status)
	return client.ScyllaV1alpha1().ScyllaDBDatacenters(sdc.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{
		FieldManager: naming.ManagerControllerFieldManager,
		Force:        true,
	})
}
