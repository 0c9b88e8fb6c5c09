package scylladbdatacenter

import (
	"fmt"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitingToRollOutReason is the reason of the progressing condition of a rack whose rolling update is held back.
const waitingToRollOutReason = "WaitingToRollOut"

// partitionOf is the partition of a StatefulSet's rolling update: pods of lower ordinals stay at its current revision.
func partitionOf(sts *appsv1.StatefulSet) int32 {
	if r := sts.Spec.UpdateStrategy.RollingUpdate; r != nil && r.Partition != nil {
		return *r.Partition
	}
	return 0
}

// statefulSetObserved tells whether the StatefulSet controller has acted on sts's latest spec: only then does its
// status say how far a rollout is.
func statefulSetObserved(sts *appsv1.StatefulSet) bool {
	return sts.Status.ObservedGeneration >= sts.Generation
}

// inFlux tells whether some pod of the rack may be down or about to restart: its StatefulSet is missing, not
// observed (by the cache or by its controller), not running every replica ready and available, or rolling pods it
// does not hold back.
func inFlux(r *rackObjects) (bool, string) {
	sts := r.statefulSet
	switch {
	case sts == nil:
		if r.observed() {
			// Nothing of the rack exists yet.
			return false, ""
		}
		return true, fmt.Sprintf("StatefulSet %s to show up", r.statefulSetName)
	case !r.observed() || !statefulSetObserved(sts):
		return true, fmt.Sprintf("StatefulSet %s to be observed", sts.Name)
	}
	replicas := r.currentReplicas()
	s := sts.Status
	if s.Replicas != replicas || s.ReadyReplicas != replicas || s.AvailableReplicas != replicas {
		return true, fmt.Sprintf("every node of StatefulSet %s to be available", sts.Name)
	}
	if partitionOf(sts) == 0 && (s.UpdatedReplicas != replicas || s.CurrentRevision != s.UpdateRevision) {
		return true, fmt.Sprintf("StatefulSet %s to finish its rollout", sts.Name)
	}
	return false, ""
}

// planRollout sets the partition of the rolling update of every required StatefulSet (required[i] is rack i's, nil
// for racks not applied in this sync) so that pods restart in one rack at a time, in spec order: with a replication
// factor up to the number of racks, a node down in each of two racks can take every replica of some token range down.
//
// Each rack with pods is, as its StatefulSet shows it:
//   - pending when its pod template changes now, or its pods are held (partition > 0) and not all at the template;
//   - active when it rolls its pods (partition 0) and they are not all at the template yet;
//   - unknown when its StatefulSet controller has not acted on the last write: it keeps its partition;
//   - done otherwise.
//
// The first active rack goes on rolling; a later one (after kubectl rollout restart, say) is held. The first pending
// rack starts rolling (partition 0) once no rack is active, no node of the datacenter is in maintenance
// (naming.NodeMaintenanceLabel), no other rack is in flux (inFlux) and no other rack's replicas change in this sync
// (a rack scaling up or created now bootstraps nodes). No rack rolls while
// a node operation (nodeOperation: a decommission or the removal of a decommissioned node) is in progress. A held
// rack gets the new template with its pods kept at their current one (partition = replicas), so that a pod
// restarting for another reason comes back as it was. It returns a progressing condition per held rack.
func planRollout(racks []*rackObjects, required []*appsv1.StatefulSet, nodeOperation string) []metav1.Condition {
	const (
		done = iota
		unknown
		active
		pending
	)
	states := make([]int, len(racks))
	for i, r := range racks {
		existing := r.statefulSet
		if required[i] == nil || (existing == nil && r.highestOrdinal() < 0) {
			// Not applied now, or a new rack with no pod to restart.
			continue
		}
		if existing == nil || existing.Annotations[naming.PodTemplateHashAnnotation] != required[i].Annotations[naming.PodTemplateHashAnnotation] {
			states[i] = pending
			continue
		}
		s := existing.Status
		switch {
		case !statefulSetObserved(existing):
			states[i] = unknown
		case s.UpdatedReplicas >= s.Replicas && s.CurrentRevision == s.UpdateRevision:
		case partitionOf(existing) == 0:
			states[i] = active
		default:
			states[i] = pending
		}
	}

	var progressing []metav1.Condition
	hold := func(i int, waitingFor string) {
		sts := required[i]
		setPartition(sts, *sts.Spec.Replicas)
		progressing = append(progressing, rackCondition(racks[i].name, waitingToRollOutReason,
			"holding the pods of StatefulSet %s at their current template, waiting for %s", sts.Name, waitingFor))
	}
	rolling := ""
	for i, r := range racks {
		if states[i] != active {
			continue
		}
		switch {
		case len(nodeOperation) != 0:
			hold(i, nodeOperation)
		case len(rolling) != 0:
			hold(i, fmt.Sprintf("rack %q to finish rolling out", rolling))
		default:
			rolling = r.name
		}
	}
	for i, r := range racks {
		switch states[i] {
		case unknown:
			if partition := partitionOf(r.statefulSet); partition != 0 {
				hold(i, fmt.Sprintf("StatefulSet %s to be observed", r.statefulSetName))
				setPartition(required[i], partition)
			}
			continue
		case pending:
		default:
			continue
		}
		waitingFor := nodeOperation
		if len(waitingFor) == 0 && len(rolling) != 0 {
			waitingFor = fmt.Sprintf("rack %q to finish rolling out", rolling)
		}
		// A node in maintenance reports ready whatever ScyllaDB's state: it may be down while every StatefulSet
		// looks settled.
		for _, other := range racks {
			if name := other.inMaintenance(); len(waitingFor) == 0 && len(name) != 0 {
				waitingFor = fmt.Sprintf("node %s to leave maintenance", name)
			}
		}
		for j, other := range racks {
			if flux, what := inFlux(other); other != r && len(waitingFor) == 0 && flux {
				waitingFor = what
			}
			// The cache shows the StatefulSets before this sync's writes: a rack this sync scales up (or creates)
			// bootstraps nodes, which must not coincide with another rack's pods restarting.
			if other != r && len(waitingFor) == 0 && required[j] != nil && *required[j].Spec.Replicas != other.currentReplicas() {
				waitingFor = fmt.Sprintf("rack %q to scale from %d to %d nodes", other.name, other.currentReplicas(), *required[j].Spec.Replicas)
			}
		}
		if len(waitingFor) != 0 {
			hold(i, waitingFor)
			continue
		}
		rolling = r.name
	}
	return progressing
}

// setPartition sets the partition of sts's rolling update; 0 is the API's default and is left unset.
func setPartition(sts *appsv1.StatefulSet, partition int32) {
	if partition == 0 {
		sts.Spec.UpdateStrategy.RollingUpdate = nil
		return
	}
	sts.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &partition}
}
