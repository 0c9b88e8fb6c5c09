package scylladbdatacenter

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// calculateStatus returns the datacenter's status: per rack (spec racks in order, then removed racks that still have
// a StatefulSet) the node counts and versions of its StatefulSet, the totals, and the conditions: the sub-syncs', the
// availability, and the aggregated Available, Progressing and Degraded. A condition keeps its lastTransitionTime
// while its status holds.
func (c *Controller) calculateStatus(sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []*rackObjects, pods map[string]*corev1.Pod, subSyncConditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBDatacenterStatus, error) {
	generation := sdc.Generation
	status := &scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: &generation,
		UpdatedVersion:     imageVersion(sdc.Spec.ScyllaDB.Image),
		Racks:              []scyllav1alpha1.RackStatus{},
	}

	var totals [5]int32
	for _, r := range racks {
		rs := rackStatus(r, pods)
		status.Racks = append(status.Racks, rs)
		for i, count := range []*int32{rs.Nodes, rs.CurrentNodes, rs.UpdatedNodes, rs.ReadyNodes, rs.AvailableNodes} {
			totals[i] += *count
		}
		if len(status.CurrentVersion) == 0 && rs.CurrentVersion != status.UpdatedVersion && *rs.Nodes != 0 {
			status.CurrentVersion = rs.CurrentVersion
		}
	}
	if len(status.CurrentVersion) == 0 {
		status.CurrentVersion = status.UpdatedVersion
	}
	status.Nodes, status.CurrentNodes, status.UpdatedNodes, status.ReadyNodes, status.AvailableNodes =
		&totals[0], &totals[1], &totals[2], &totals[3], &totals[4]

	conditions := append(append([]metav1.Condition{}, subSyncConditions...), availableCondition(sdc, racks))
	if err := controllerhelpers.SetAggregatedConditions(&conditions, generation,
		controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition); err != nil {
		return nil, fmt.Errorf("can't aggregate conditions: %w", err)
	}
	controllerhelpers.SetTransitionTimes(conditions, sdc.Status.Conditions, c.now())
	status.Conditions = conditions
	return status, nil
}

// rackStatus returns the state of a rack's StatefulSet. A rack without one has zero nodes; that is stale news unless
// nothing of any node of the rack is left either (rackObjects.observed): a rack waiting for its turn to grow.
func rackStatus(r *rackObjects, pods map[string]*corev1.Pod) scyllav1alpha1.RackStatus {
	rs := scyllav1alpha1.RackStatus{Name: r.name}
	sts := r.statefulSet
	if sts == nil {
		zero := func() *int32 { v := int32(0); return &v }
		rs.NodeCounts = scyllav1alpha1.NodeCounts{Nodes: zero(), CurrentNodes: zero(), UpdatedNodes: zero(), ReadyNodes: zero(), AvailableNodes: zero()}
		stale := !r.observed()
		rs.Stale = &stale
		return rs
	}

	replicas := r.currentReplicas()
	s := sts.Status
	rs.NodeCounts = scyllav1alpha1.NodeCounts{
		Nodes:          &replicas,
		CurrentNodes:   &s.CurrentReplicas,
		UpdatedNodes:   &s.UpdatedReplicas,
		ReadyNodes:     &s.ReadyReplicas,
		AvailableNodes: &s.AvailableReplicas,
	}
	stale := s.ObservedGeneration < sts.Generation
	rs.Stale = &stale
	rs.UpdatedVersion = templateVersion(&sts.Spec.Template)
	rs.CurrentVersion = rs.UpdatedVersion
	if len(s.CurrentRevision) != 0 && s.CurrentRevision != s.UpdateRevision {
		rs.CurrentVersion = revisionVersion(sts, s.CurrentRevision, pods)
	}
	return rs
}

// templateVersion is the ScyllaDB version a pod template runs.
func templateVersion(template *corev1.PodTemplateSpec) string {
	for _, container := range template.Spec.Containers {
		if container.Name == naming.ScyllaDBContainerName {
			return imageVersion(container.Image)
		}
	}
	return ""
}

// revisionVersion is the ScyllaDB version of the pods of sts at revision, read from any of them; "" when none runs.
func revisionVersion(sts *appsv1.StatefulSet, revision string, pods map[string]*corev1.Pod) string {
	for _, pod := range pods {
		if _, ok := memberOrdinal(sts.Name, pod.Name); ok && pod.Labels[appsv1.ControllerRevisionHashLabelKey] == revision {
			return templateVersion(&corev1.PodTemplateSpec{Spec: pod.Spec})
		}
	}
	return ""
}

// availableCondition is True when the datacenter runs at least one available node and at most one of the nodes its
// spec asks for is unavailable, which is what its PodDisruptionBudget tolerates.
func availableCondition(sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []*rackObjects) metav1.Condition {
	var desired, available int32
	for _, r := range racks {
		if r.rack == nil {
			continue
		}
		desired += rackNodes(r.rack)
		if r.statefulSet != nil {
			available += min(r.statefulSet.Status.AvailableReplicas, rackNodes(r.rack))
		}
	}
	condition := metav1.Condition{
		Type:               statefulSetControllerAvailableCondition,
		ObservedGeneration: sdc.Generation,
	}
	if available == 0 || available < desired-1 {
		condition.Status = metav1.ConditionFalse
		condition.Reason = nodesUnavailableReason
		condition.Message = fmt.Sprintf("%d of %d nodes are available", available, desired)
		return condition
	}
	condition.Status = metav1.ConditionTrue
	condition.Reason = nodesAvailableReason
	return condition
}

// updateStatus applies status, the part of the datacenter's status the operator owns, unless the datacenter already
// has it. Other programs write the status too (the manager-controller its ScyllaDB Manager conditions): a server-side
// apply under naming.OperatorFieldManager sends only the operator's fields, so theirs are neither dropped nor
// rebuilt from a stale cache, and needs no resourceVersion, so a stale cache can't make it conflict. A condition the
// operator sent before and no longer computes is removed by the apply, as the operator owns it alone.
//
// A change clients wait for (controllerhelpers.UrgentStatusChange) is applied at once; any other waits until the
// datacenter's last status write is controllerhelpers.DefaultStatusBatchPeriod old (statusBatcher), so that the
// changes of a scale-up's many steps merge into a few writes, and the datacenter is synced again then.
//
// Before the first apply, the status fields earlier operator versions wrote with Update are handed to the apply's
// field manager (controllerhelpers.UpgradeStatusManagedFields), so that those the operator no longer sends go too.
// Both read managedFields from the informer cache, which must therefore keep them: controllerhelpers.TrimForInformerCache
// keeps the entries they read.
func (c *Controller) updateStatus(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, status *scyllav1alpha1.ScyllaDBDatacenterStatus) error {
	logger := klog.FromContext(ctx)
	client := c.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(sdc.Namespace)

	var upgradeErr error
	managedFields := sdc.ManagedFields
	patch, upgraded, err := controllerhelpers.UpgradeStatusManagedFields(sdc)
	switch {
	case err != nil:
		upgradeErr = fmt.Errorf("can't compute the status field ownership of ScyllaDBDatacenter %q for field manager %q: %w", klog.KObj(sdc), naming.OperatorFieldManager, err)
	case patch != nil:
		if patched, err := client.Patch(ctx, sdc.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
			// The status is still applied; the next sync retries the hand-over.
			upgradeErr = fmt.Errorf("can't hand the status fields of ScyllaDBDatacenter %q written by earlier operator versions to field manager %q: %w", klog.KObj(sdc), naming.OperatorFieldManager, err)
		} else {
			c.scyllaDBDatacenters.Written(patched)
			managedFields = upgraded
			logger.V(2).Info("Handed status fields written by earlier operator versions to the operator's field manager", "fieldManager", naming.OperatorFieldManager)
		}
	}

	owned := controllerhelpers.AppliedStatusConditionTypes(managedFields, naming.OperatorFieldManager)
	for _, condition := range status.Conditions {
		owned.Insert(condition.Type)
	}
	if semanticallyEqual(ownedStatus(&sdc.Status, owned), ownedStatus(status, owned)) {
		return upgradeErr
	}
	key := cache.MetaObjectToName(sdc).String()
	urgentTypes := append([]string{controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition},
		memberReplacingConditionTypes(sdc.Status.Conditions, status.Conditions)...)
	if !controllerhelpers.UrgentStatusChange(sdc.Status.ObservedGeneration, status.ObservedGeneration, sdc.Status.Conditions, status.Conditions, urgentTypes...) {
		if wait := c.statusBatcher.Wait(key); wait > 0 {
			// Written with whatever else changes meanwhile; the sync then computes it afresh.
			logger.V(4).Info("Batching status change", "wait", wait)
			c.queue.AddAfter(key, wait)
			return upgradeErr
		}
	}

	statusConfiguration, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBDatacenterStatusApplyConfiguration](status)
	if err != nil {
		return errors.Join(upgradeErr, fmt.Errorf("can't apply the status of ScyllaDBDatacenter %q: %w", klog.KObj(sdc), err))
	}
	applyConfiguration := scyllav1alpha1applyconfigurations.ScyllaDBDatacenter(sdc.Name, sdc.Namespace).WithStatus(statusConfiguration)
	applied, err := client.ApplyStatus(ctx, applyConfiguration, metav1.ApplyOptions{FieldManager: naming.OperatorFieldManager, Force: true})
	if err != nil {
		return errors.Join(upgradeErr, fmt.Errorf("can't apply the status of ScyllaDBDatacenter %q: %w", klog.KObj(sdc), err))
	}
	c.scyllaDBDatacenters.Written(applied)
	c.statusBatcher.Wrote(key)
	logger.V(2).Info("Applied status")
	return upgradeErr
}

// memberReplacingConditionTypes lists the rack conditions naming.RackMemberReplacingConditionType of both lists: a
// replacement starting or ending in a rack is a change clients wait for, written at once (a replacement may be over
// before a batched write).
func memberReplacingConditionTypes(lists ...[]metav1.Condition) []string {
	types := sets.New[string]()
	for _, conditions := range lists {
		for _, c := range conditions {
			if strings.HasSuffix(c.Type, "-"+naming.MemberReplacingConditionSuffix) {
				types.Insert(c.Type)
			}
		}
	}
	return sets.List(types)
}

// ownedStatus returns status with only the conditions of the types in owned, sorted by type: the API server keeps the
// conditions of several appliers in an order none of them decides. It is for comparing: only its list of conditions
// is its own, everything else is status's.
func ownedStatus(status *scyllav1alpha1.ScyllaDBDatacenterStatus, owned sets.Set[string]) *scyllav1alpha1.ScyllaDBDatacenterStatus {
	out := *status
	if status.Conditions != nil {
		out.Conditions = make([]metav1.Condition, 0, len(status.Conditions))
		for _, c := range status.Conditions {
			if owned.Has(c.Type) {
				out.Conditions = append(out.Conditions, c)
			}
		}
		slices.SortFunc(out.Conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	}
	return &out
}

// semanticallyEqual is apiequality.Semantic.DeepEqual, answered by reflect.DeepEqual when that finds a and b equal:
// values equal field by field are semantically equal, and the status of a datacenter at rest compares equal at every
// sync. Semantic.DeepEqual boxes every value it visits to look for its custom comparisons, about 270 allocations for
// a status of three racks.
func semanticallyEqual[T any](a, b T) bool {
	return reflect.DeepEqual(a, b) || apiequality.Semantic.DeepEqual(a, b)
}

// invalidSpecStatus returns the status of a ScyllaDBDatacenter whose spec validation.ValidateScyllaDBDatacenter
// refuses: Degraded with the validation error, not Progressing (nothing happens until the spec changes), and
// Available as last computed (what runs is left alone). The node counts stay as they were.
func invalidSpecStatus(sdc *scyllav1alpha1.ScyllaDBDatacenter, validationErr error) *scyllav1alpha1.ScyllaDBDatacenterStatus {
	available := metav1.Condition{
		Type:    statefulSetControllerAvailableCondition,
		Status:  metav1.ConditionFalse,
		Reason:  invalidSpecReason,
		Message: "the spec is not valid",
	}
	if existing := meta.FindStatusCondition(sdc.Status.Conditions, statefulSetControllerAvailableCondition); existing != nil {
		available = *existing
	}
	status := sdc.Status.DeepCopy()
	status.ObservedGeneration = new(sdc.Generation)
	status.Conditions = controllerhelpers.InvalidSpecConditions(specValidationName, sdc.Generation, validationErr, available)
	return status
}
