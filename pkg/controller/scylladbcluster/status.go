package scylladbcluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Reasons of the DatacentersAvailable condition and of an invalid spec.
const (
	datacentersNotAvailableReason = "DatacentersNotAvailable"
	invalidSpecReason             = "InvalidSpec"
	specValidationName            = "SpecValidation"
)

// calculateStatus returns the status the operator owns of sc, given its datacenters and the conditions of the
// sub-syncs: the datacenters' node counts, versions and racks as their ScyllaDBDatacenters report them (stale when
// the remote cluster can't be read, or the ScyllaDBDatacenter's status is not at its generation), their totals, and
// the conditions with their aggregates.
func calculateStatus(sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBClusterStatus, error) {
	status := &scyllav1alpha1.ScyllaDBClusterStatus{ObservedGeneration: new(sc.Generation)}

	conditions = append(slices.Clone(conditions), availableCondition(sc, dcs))
	if err := controllerhelpers.SetAggregatedConditions(&conditions, sc.Generation,
		controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition); err != nil {
		return nil, fmt.Errorf("can't aggregate the conditions of ScyllaDBCluster %q: %w", klog.KObj(sc), err)
	}
	status.Conditions = conditions

	versions := sets.New[string]()
	updatedVersions := sets.New[string]()
	for _, dc := range dcs {
		dcStatus := scyllav1alpha1.ScyllaDBClusterDatacenterStatus{
			Name:                dc.spec.Name,
			RemoteNamespaceName: new(dc.namespace),
			Stale:               new(dc.err != nil || dc.sdc == nil || dc.sdc.Status.ObservedGeneration == nil || *dc.sdc.Status.ObservedGeneration != dc.sdc.Generation),
		}
		if sdc := dc.sdc; sdc != nil {
			dcStatus.NodeCounts = *sdc.Status.NodeCounts.DeepCopy()
			dcStatus.CurrentVersion = nonEmpty(sdc.Status.CurrentVersion)
			dcStatus.UpdatedVersion = nonEmpty(sdc.Status.UpdatedVersion)
			versions.Insert(sdc.Status.CurrentVersion)
			updatedVersions.Insert(sdc.Status.UpdatedVersion)
			for _, r := range sdc.Status.Racks {
				dcStatus.Racks = append(dcStatus.Racks, scyllav1alpha1.ScyllaDBClusterRackStatus{
					Name:           r.Name,
					CurrentVersion: nonEmpty(r.CurrentVersion),
					UpdatedVersion: nonEmpty(r.UpdatedVersion),
					NodeCounts:     *r.NodeCounts.DeepCopy(),
					Stale:          r.Stale,
				})
			}
		} else {
			versions.Insert("")
			updatedVersions.Insert("")
		}
		addNodeCounts(&status.NodeCounts, &dcStatus.NodeCounts)
		status.Datacenters = append(status.Datacenters, dcStatus)
	}
	// A version is the cluster's only when every datacenter runs it.
	if versions.Len() == 1 {
		status.CurrentVersion = nonEmpty(versions.UnsortedList()[0])
	}
	if updatedVersions.Len() == 1 {
		status.UpdatedVersion = nonEmpty(updatedVersions.UnsortedList()[0])
	}
	return status, nil
}

// invalidSpecStatus returns the status of a ScyllaDBCluster whose spec can't be built: Degraded with the validation
// error, not Progressing (nothing happens until the spec changes), not Available.
func invalidSpecStatus(sc *scyllav1alpha1.ScyllaDBCluster, validationErr error) *scyllav1alpha1.ScyllaDBClusterStatus {
	conditions := controllerhelpers.InvalidSpecConditions(specValidationName, sc.Generation, validationErr, metav1.Condition{
		Type:    datacentersAvailableCondition,
		Status:  metav1.ConditionFalse,
		Reason:  invalidSpecReason,
		Message: "the spec is not valid",
	})
	status := sc.Status.DeepCopy()
	status.ObservedGeneration = new(sc.Generation)
	status.Conditions = conditions
	return status
}

// availableCondition is True when every datacenter's ScyllaDBDatacenter is Available at its generation.
func availableCondition(sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter) metav1.Condition {
	var notAvailable []string
	for _, dc := range dcs {
		sdc := dc.sdc
		if sdc == nil {
			notAvailable = append(notAvailable, fmt.Sprintf("datacenter %q: its ScyllaDBDatacenter does not exist yet", dc.spec.Name))
			continue
		}
		c := apimeta.FindStatusCondition(sdc.Status.Conditions, controllerhelpers.AvailableCondition)
		if c == nil || c.Status != metav1.ConditionTrue || c.ObservedGeneration != sdc.Generation {
			notAvailable = append(notAvailable, fmt.Sprintf("datacenter %q: ScyllaDBDatacenter %q is not available", dc.spec.Name, sdc.Name))
		}
	}
	condition := metav1.Condition{
		Type:               datacentersAvailableCondition,
		Status:             metav1.ConditionTrue,
		Reason:             controllerhelpers.AsExpectedReason,
		ObservedGeneration: sc.Generation,
	}
	if len(notAvailable) != 0 {
		condition.Status = metav1.ConditionFalse
		condition.Reason = datacentersNotAvailableReason
		condition.Message = strings.Join(notAvailable, "\n")
	}
	return condition
}

// addNodeCounts adds the counts of dc to total; a count total does not have yet starts at dc's.
func addNodeCounts(total, dc *scyllav1alpha1.NodeCounts) {
	for _, f := range []struct{ total, dc **int32 }{
		{&total.Nodes, &dc.Nodes},
		{&total.CurrentNodes, &dc.CurrentNodes},
		{&total.UpdatedNodes, &dc.UpdatedNodes},
		{&total.ReadyNodes, &dc.ReadyNodes},
		{&total.AvailableNodes, &dc.AvailableNodes},
	} {
		if *f.dc == nil {
			continue
		}
		if *f.total == nil {
			*f.total = new(int32(0))
		}
		**f.total += **f.dc
	}
}

func nonEmpty(s string) *string {
	if len(s) == 0 {
		return nil
	}
	return &s
}

// updateStatus applies status, the part of sc's status the operator owns, unless sc already has it. The
// manager-controller writes its own conditions into the same status: a server-side apply under
// naming.OperatorFieldManager sends only the operator's fields. As for ScyllaDBDatacenters, a change no one waits for
// (controllerhelpers.UrgentStatusChange) waits for controllerhelpers.DefaultStatusBatchPeriod since the last write.
func (c *Controller) updateStatus(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, status *scyllav1alpha1.ScyllaDBClusterStatus) error {
	owned := sets.New[string]()
	for _, condition := range status.Conditions {
		owned.Insert(condition.Type)
	}
	existing := sc.Status.DeepCopy()
	controllerhelpers.SetTransitionTimes(status.Conditions, existing.Conditions, metav1.NewTime(c.clock()))
	if apiequality.Semantic.DeepEqual(ownedStatus(existing, owned), ownedStatus(status, owned)) {
		return nil
	}

	logger := klog.FromContext(ctx)
	key := cache.MetaObjectToName(sc).String()
	if !controllerhelpers.UrgentStatusChange(existing.ObservedGeneration, status.ObservedGeneration, existing.Conditions, status.Conditions,
		controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition) {
		if wait := c.statusBatcher.Wait(key); wait > 0 {
			logger.V(4).Info("Batching status change", "wait", wait)
			c.queue.AddAfter(key, wait)
			return nil
		}
	}

	statusConfiguration, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBClusterStatusApplyConfiguration](status)
	if err != nil {
		return fmt.Errorf("can't apply the status of ScyllaDBCluster %q: %w", klog.KObj(sc), err)
	}
	applyConfiguration := scyllav1alpha1applyconfigurations.ScyllaDBCluster(sc.Name, sc.Namespace).WithStatus(statusConfiguration)
	applied, err := c.scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace).ApplyStatus(ctx, applyConfiguration, metav1.ApplyOptions{FieldManager: naming.OperatorFieldManager, Force: true})
	if err != nil {
		return fmt.Errorf("can't apply the status of ScyllaDBCluster %q: %w", klog.KObj(sc), err)
	}
	c.scyllaDBClusters.Written(applied)
	c.statusBatcher.Wrote(key)
	logger.V(2).Info("Applied status")
	return nil
}

// ownedStatus returns a copy of status with only the conditions of the types in owned, sorted by type.
func ownedStatus(status *scyllav1alpha1.ScyllaDBClusterStatus, owned sets.Set[string]) *scyllav1alpha1.ScyllaDBClusterStatus {
	out := status.DeepCopy()
	out.Conditions = slices.DeleteFunc(out.Conditions, func(c metav1.Condition) bool { return !owned.Has(c.Type) })
	slices.SortFunc(out.Conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
	return out
}
