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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
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
		dcStatus := datacenterStatus(sc, dc)
		versions.Insert(ptr.Deref(dcStatus.CurrentVersion, ""))
		updatedVersions.Insert(ptr.Deref(dcStatus.UpdatedVersion, ""))
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

// datacenterStatus returns the status of dc: what its ScyllaDBDatacenter reports, or, while nothing can be read of it
// (remoteDatacenter.unknown), what sc's status said of it before, if anything, stale unless its caches are only
// loading: what the caches do not hold is unknown, not absent.
func datacenterStatus(sc *scyllav1alpha1.ScyllaDBCluster, dc *remoteDatacenter) scyllav1alpha1.ScyllaDBClusterDatacenterStatus {
	if dc.unknown() {
		if previous := previousDatacenterStatus(sc, dc.spec.Name); previous != nil {
			dcStatus := *previous.DeepCopy()
			dcStatus.RemoteNamespaceName = new(dc.namespace)
			if !dc.loading() {
				// Not a moment's wait: what it said may be long out of date.
				dcStatus.Stale = new(true)
			}
			return dcStatus
		}
	}
	dcStatus := scyllav1alpha1.ScyllaDBClusterDatacenterStatus{
		Name:                dc.spec.Name,
		RemoteNamespaceName: new(dc.namespace),
		Stale:               new(dc.err != nil || dc.sdc == nil || dc.sdc.Status.ObservedGeneration == nil || *dc.sdc.Status.ObservedGeneration != dc.sdc.Generation),
	}
	sdc := dc.sdc
	if sdc == nil {
		return dcStatus
	}
	dcStatus.NodeCounts = *sdc.Status.NodeCounts.DeepCopy()
	dcStatus.CurrentVersion = nonEmpty(sdc.Status.CurrentVersion)
	dcStatus.UpdatedVersion = nonEmpty(sdc.Status.UpdatedVersion)
	for _, r := range sdc.Status.Racks {
		dcStatus.Racks = append(dcStatus.Racks, scyllav1alpha1.ScyllaDBClusterRackStatus{
			Name:           r.Name,
			CurrentVersion: nonEmpty(r.CurrentVersion),
			UpdatedVersion: nonEmpty(r.UpdatedVersion),
			NodeCounts:     *r.NodeCounts.DeepCopy(),
			Stale:          r.Stale,
		})
	}
	return dcStatus
}

// previousDatacenterStatus returns the status sc has of the datacenter name, nil when it has none.
func previousDatacenterStatus(sc *scyllav1alpha1.ScyllaDBCluster, name string) *scyllav1alpha1.ScyllaDBClusterDatacenterStatus {
	for i := range sc.Status.Datacenters {
		if sc.Status.Datacenters[i].Name == name {
			return &sc.Status.Datacenters[i]
		}
	}
	return nil
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

// availableCondition is True when every datacenter's ScyllaDBDatacenter is Available at its generation. Of a
// datacenter nothing can be read of (remoteDatacenter.unknown), it says what sc's status said before
// (previouslyNotAvailable).
func availableCondition(sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter) metav1.Condition {
	var notAvailable []string
	for _, dc := range dcs {
		if dc.unknown() {
			if line, ok := previouslyNotAvailable(sc, dc.spec.Name); ok {
				if len(line) != 0 {
					notAvailable = append(notAvailable, line)
				}
				continue
			}
			if dc.loading() {
				notAvailable = append(notAvailable, fmt.Sprintf("datacenter %q: not known yet, the caches of its remote cluster are loading", dc.spec.Name))
			} else {
				notAvailable = append(notAvailable, fmt.Sprintf("datacenter %q: not known, its remote cluster can't be read", dc.spec.Name))
			}
			continue
		}
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

// previouslyNotAvailable returns what sc's DatacentersAvailable condition said of the datacenter name, with ok: its
// line when it was not available, "" when it was. ok is false when sc's status said nothing of it: it has no such
// condition, or one not built from its datacenters (an invalid spec), or no status of the datacenter.
func previouslyNotAvailable(sc *scyllav1alpha1.ScyllaDBCluster, name string) (line string, ok bool) {
	previous := apimeta.FindStatusCondition(sc.Status.Conditions, datacentersAvailableCondition)
	if previous == nil || previousDatacenterStatus(sc, name) == nil {
		return "", false
	}
	switch {
	case previous.Status == metav1.ConditionTrue && previous.Reason == controllerhelpers.AsExpectedReason:
		return "", true
	case previous.Status == metav1.ConditionFalse && previous.Reason == datacentersNotAvailableReason:
		prefix := fmt.Sprintf("datacenter %q: ", name)
		for _, l := range strings.Split(previous.Message, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l, true
			}
		}
		return "", true
	default:
		return "", false
	}
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
	controllerhelpers.SetTransitionTimes(status.Conditions, sc.Status.Conditions, metav1.NewTime(c.clock()))
	_, err := c.statusApplier().ApplyStatus(ctx, sc, status)
	return err
}

// clusterStatusApplier applies the status fields of a ScyllaDBCluster the controller owns.
type clusterStatusApplier = controllerhelpers.StatusApplier[*scyllav1alpha1.ScyllaDBCluster, scyllav1alpha1.ScyllaDBClusterStatus, scyllav1alpha1applyconfigurations.ScyllaDBClusterStatusApplyConfiguration]

// statusApplier returns the applier of the status the operator owns: every field of the status it computes, and the
// conditions of the types that status holds.
func (c *Controller) statusApplier() *clusterStatusApplier {
	return &clusterStatusApplier{
		Kind:         "ScyllaDBCluster",
		FieldManager: naming.OperatorFieldManager,
		Status:       func(sc *scyllav1alpha1.ScyllaDBCluster) *scyllav1alpha1.ScyllaDBClusterStatus { return &sc.Status },
		Conditions:   func(status *scyllav1alpha1.ScyllaDBClusterStatus) *[]metav1.Condition { return &status.Conditions },
		Apply: func(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, status *scyllav1alpha1applyconfigurations.ScyllaDBClusterStatusApplyConfiguration, opts metav1.ApplyOptions) (*scyllav1alpha1.ScyllaDBCluster, error) {
			// The UID makes the apply fail rather than land on another ScyllaDBCluster recreated under the same name.
			return c.scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace).ApplyStatus(ctx, scyllav1alpha1applyconfigurations.ScyllaDBCluster(sc.Name, sc.Namespace).WithUID(sc.UID).WithStatus(status), opts)
		},
		Written: c.scyllaDBClusters.Written,
		Batcher: c.statusBatcher,
		Queue:   c.queue,
		Urgent: func(existing, status *scyllav1alpha1.ScyllaDBClusterStatus) bool {
			return controllerhelpers.UrgentStatusChange(existing.ObservedGeneration, status.ObservedGeneration, existing.Conditions, status.Conditions,
				controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition)
		},
	}
}
