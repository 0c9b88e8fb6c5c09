package scylladbdatacenter

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reasons of the progressing conditions the scaling plan reports.
const (
	decommissionRequestedReason         = "DecommissionRequested"
	waitingForDecommissionReason        = "WaitingForDecommission"
	removingDecommissionedReason        = "RemovingDecommissionedNode"
	waitingForNodeRemovalReason         = "WaitingForNodeRemoval"
	waitingForOtherOperationReason      = "WaitingForOtherNodeOperation"
	waitingForRolloutToScaleReason      = "WaitingForRolloutBeforeScalingDown"
	waitingForNodeMaintenanceReason     = "WaitingForNodeMaintenance"
	waitingForStatefulSetObservedReason = "WaitingForStatefulSetObserved"
	waitingForNodesToJoinReason         = "WaitingForNodesToJoin"
)

// rackObjects are what exists of one rack, from the informer caches: the rack's StatefulSet and, by ordinal, its
// member Services, pods and data PersistentVolumeClaims. rack is nil for a rack removed from the spec whose
// StatefulSet is still there.
type rackObjects struct {
	name            string
	rack            *scyllav1alpha1.RackSpec
	statefulSetName string
	statefulSet     *appsv1.StatefulSet
	services        map[int32]*corev1.Service
	pods            map[int32]*corev1.Pod
	pvcs            map[int32]*corev1.PersistentVolumeClaim
	// pendingReplicas is the replica count last written to the StatefulSet, when the cache does not show that write
	// yet (expectations).
	pendingReplicas *int32
	// pendingDecommissions are the names of member Services a decommission request was written to that the cache
	// does not show yet; services has them with the request.
	pendingDecommissions map[string]bool
}

// observed tells whether the cache shows the rack's StatefulSet as the operator last wrote it, or the rack has
// nothing at all yet. Only then does the StatefulSet's replica count say which nodes exist: a StatefulSet missing
// from the cache (not seen yet, or deleted while its pods and data stay) or behind the last write says nothing about
// them, and no node may be added or removed on its word.
func (r *rackObjects) observed() bool {
	if r.pendingReplicas != nil {
		return false
	}
	return r.statefulSet != nil || r.highestOrdinal() < 0
}

// highestOrdinal is the highest ordinal of the rack's pods, member Services and data claims not being deleted, -1
// when there is none.
func (r *rackObjects) highestOrdinal() int32 {
	highest := int32(-1)
	for ordinal := range r.pods {
		highest = max(highest, ordinal)
	}
	for ordinal := range r.services {
		highest = max(highest, ordinal)
	}
	for ordinal, pvc := range r.pvcs {
		if pvc.DeletionTimestamp == nil {
			highest = max(highest, ordinal)
		}
	}
	return highest
}

// currentReplicas is the number of nodes of the rack: the replica count of its StatefulSet when observed, else the
// most any source tells (the cached StatefulSet, the last write, the highest ordinal anything is left of, plus one),
// so that nothing of a node that may exist is removed.
func (r *rackObjects) currentReplicas() int32 {
	var replicas int32
	if r.statefulSet != nil && r.statefulSet.Spec.Replicas != nil {
		replicas = *r.statefulSet.Spec.Replicas
	}
	if r.observed() {
		return replicas
	}
	if r.pendingReplicas != nil {
		replicas = max(replicas, *r.pendingReplicas)
	}
	return max(replicas, r.highestOrdinal()+1)
}

// decommissionState is the naming.DecommissionedLabel value on the member Service of the rack's last node, "" when
// it has none.
func (r *rackObjects) decommissionState() string {
	replicas := r.currentReplicas()
	if replicas == 0 {
		return ""
	}
	svc, ok := r.services[replicas-1]
	if !ok {
		return ""
	}
	return svc.Labels[naming.DecommissionedLabel]
}

// nodeGone tells whether the node of a member Service its StatefulSet no longer counts has left for good, so that the
// Service may be deleted: the node was decommissioned, or its data claim pvc (nil: none) is gone or going. A node
// removed any other way still owns its data and its place in the ring, and its Service is its identity there: both
// must wait for it to come back.
func nodeGone(svc *corev1.Service, pvc *corev1.PersistentVolumeClaim) bool {
	return svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue || pvc == nil || pvc.DeletionTimestamp != nil
}

// neverServed tells whether the member Service of ordinal never served a node: the node has no pod and no data
// claim, was never asked to decommission, and no sidecar recorded its address or host ID. A scale-up creates the
// Services of its new nodes before it raises the StatefulSet's replicas; when that write fails or waits, they are
// left like this, and are the new nodes' to take.
func (r *rackObjects) neverServed(ordinal int32) bool {
	svc, ok := r.services[ordinal]
	if !ok || r.pods[ordinal] != nil || r.pvcs[ordinal] != nil {
		return false
	}
	_, decommission := svc.Labels[naming.DecommissionedLabel]
	_, hostID := svc.Annotations[naming.HostIDAnnotation]
	_, address := svc.Annotations[naming.BroadcastAddressAnnotation]
	return !decommission && !hostID && !address
}

// pendingRemovals lists, sorted, the names of what is left of nodes above the StatefulSet's replicas that are gone
// for good (nodeGone): member Services not yet removed and data claims still being deleted. A node may only be added
// again once they are gone, so that it never gets the Service or data of a decommissioned node. A node removed
// without decommission keeps its Service and data, and comes back with them. A Service that never served a node
// (neverServed) is no removal to wait for: deleting it ahead of the scale-up that created it would only have that
// scale-up create it again.
func (r *rackObjects) pendingRemovals() []string {
	replicas := r.currentReplicas()
	var pending []string
	for ordinal, svc := range r.services {
		if ordinal >= replicas && nodeGone(svc, r.pvcs[ordinal]) && !r.neverServed(ordinal) {
			pending = append(pending, "Service "+svc.Name)
		}
	}
	for ordinal, pvc := range r.pvcs {
		if ordinal >= replicas && pvc.DeletionTimestamp != nil {
			pending = append(pending, "PersistentVolumeClaim "+pvc.Name)
		}
	}
	slices.Sort(pending)
	return pending
}

// rackPlan is what a rack's StatefulSet and member Services should be now.
type rackPlan struct {
	// replicas is the StatefulSet's replica count to apply.
	replicas int32
	// decommissioned holds the naming.DecommissionedLabel value of member Services of ordinals below replicas that
	// carry one.
	decommissioned map[int32]string
	// nodeOperation describes the decommission or removal of a node of the rack in progress, "" when there is none:
	// no pod may be restarted meanwhile (planRollout).
	nodeOperation string
	progressing   []metav1.Condition
	// err is a problem with the rack's objects only a person can solve (specError), nil when there is none.
	err error
}

// nodeOperation describes the node operation the plan of r, whose node ordinal current-1 is its last, is part of.
func (r *rackObjects) nodeOperation(plan *rackPlan) string {
	last := naming.MemberServiceName(r.statefulSetName, r.currentReplicas()-1)
	switch {
	case len(r.decommissionState()) != 0 || plan.decommissioned[r.currentReplicas()-1] == naming.DecommissionedLabelFalse:
		return fmt.Sprintf("node %s to be decommissioned and removed", last)
	case len(r.pendingRemovals()) != 0:
		return fmt.Sprintf("the removal of %s", strings.Join(r.pendingRemovals(), ", "))
	}
	return ""
}

// rackCondition is a progressing condition about a rack; its message names the rack, since aggregation keeps only
// messages.
func rackCondition(rack, reason, format string, args ...any) metav1.Condition {
	return metav1.Condition{
		Type:    fmt.Sprintf("rack %q", rack),
		Status:  metav1.ConditionTrue,
		Reason:  reason,
		Message: fmt.Sprintf("rack %q: ", rack) + fmt.Sprintf(format, args...),
	}
}

// inMaintenance returns the name of a member Service of the rack whose node is in maintenance, "" when none is. A
// node in maintenance reports ready whatever ScyllaDB's state, so it may be down while its StatefulSet looks settled.
func (r *rackObjects) inMaintenance() string {
	for _, ordinal := range slices.Sorted(maps.Keys(r.services)) {
		if _, ok := r.services[ordinal].Labels[naming.NodeMaintenanceLabel]; ok {
			return r.services[ordinal].Name
		}
	}
	return ""
}

// statefulSetSettled tells whether a StatefulSet is ready (statefulSetReady) and every replica is also available
// (ready for minReadySeconds): only then may a node be decommissioned, since ScyllaDB can't decommission while another
// node is down.
func statefulSetSettled(sts *appsv1.StatefulSet) bool {
	return statefulSetReady(sts) && sts.Status.AvailableReplicas == sts.Status.Replicas
}

// ready tells whether the rack's StatefulSet runs every replica ready at its update revision: as its status says
// (statefulSetReady) or, when that status lags behind, as its pods say (podsReady). The StatefulSet controller writes
// a pod's readiness into the StatefulSet's status only when it gets to it, seconds after the kubelet when it is busy,
// and a rack waiting for it holds back the next one's bootstrap that long.
func (r *rackObjects) ready() bool {
	return statefulSetReady(r.statefulSet) || podsReady(r.statefulSet, r.pods)
}

// podsReady tells whether sts has observed its spec and its pods, by ordinal, are exactly one per replica, none being
// deleted, each Ready and of the StatefulSet's update revision: what statefulSetReady reads from the StatefulSet's
// status, read from the pods.
func podsReady(sts *appsv1.StatefulSet, pods map[int32]*corev1.Pod) bool {
	if sts == nil || sts.Status.ObservedGeneration < sts.Generation || len(sts.Status.UpdateRevision) == 0 {
		return false
	}
	replicas := specReplicas(sts)
	if int32(len(pods)) != replicas {
		return false
	}
	for ordinal := range replicas {
		pod := pods[ordinal]
		if pod == nil || pod.DeletionTimestamp != nil || !controllerhelpers.IsPodReady(pod) ||
			pod.Labels[appsv1.ControllerRevisionHashLabelKey] != sts.Status.UpdateRevision {
			return false
		}
	}
	return true
}

// specReplicas returns the replicas sts asks for: its spec's, or 1, the API's default, when unset.
func specReplicas(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

// statefulSetReady tells whether a StatefulSet has observed its spec and runs every replica ready at the updated
// revision. A ready node is up in the ring (the sidecar's readiness), so another may join: unlike a decommission, a
// bootstrap does not wait for minReadySeconds.
func statefulSetReady(sts *appsv1.StatefulSet) bool {
	if sts == nil {
		return false
	}
	replicas := specReplicas(sts)
	s := sts.Status
	return s.ObservedGeneration >= sts.Generation &&
		s.Replicas == replicas && s.ReadyReplicas == replicas && s.UpdatedReplicas == replicas &&
		s.CurrentRevision == s.UpdateRevision
}

// parallelNodeOperations tells whether ScyllaDB of sdc may run several node operations, such as bootstraps, at once;
// off unless spec.enableParallelNodeOperations says so.
func parallelNodeOperations(sdc *scyllav1alpha1.ScyllaDBDatacenter) bool {
	return sdc.Spec.EnableParallelNodeOperations != nil && *sdc.Spec.EnableParallelNodeOperations
}

// planScale decides, for every rack (in spec order, removed racks after), the StatefulSet's replicas and which
// member Services carry naming.DecommissionedLabel. It adds nodes by raising replicas, and removes them one at a time
// per datacenter: label the last node's member Service "false", wait for the sidecar to decommission the node and set
// "true", lower replicas by one, and (in the Service sync) delete the Service and the node's data claim once the pod
// is gone. Every step reads only the objects, so the procedure resumes wherever it stopped after a restart.
//
// A node operation never starts while another one runs in the datacenter: no scaling at all while replacing, which
// describes a node replacement in progress (replacementInProgress), and no new decommission while a node is
// decommissioning, a removed node is being cleaned up, a node is in maintenance (naming.NodeMaintenanceLabel) or any
// StatefulSet is not settled, and no scale-up while a node is decommissioning. A rack whose StatefulSet is not
// observed (rackObjects.observed) keeps the nodes it has until it is, and counts as not settled. A rack whose removed
// nodes are not cleaned up yet does not scale up.
//
// Unless parallelNodeOperations (spec.enableParallelNodeOperations) allows ScyllaDB to bootstrap several nodes at
// once, racks scale up one at a time, in spec order: a rack grows only while every StatefulSet of the datacenter is
// ready (statefulSetReady) and no rack before it grows in the same plan. Within the growing rack, the StatefulSet's OrderedReady
// policy starts the new pods one by one.
func planScale(dcName string, parallelNodeOperations bool, racks []*rackObjects, replacing string) []rackPlan {
	decommissioning := false
	settled := true
	// nodesReady tells whether every node of the datacenter runs ready: every StatefulSet is ready, racks without
	// a StatefulSet or nodes aside.
	nodesReady := true
	maintenance := ""
	for _, r := range racks {
		if name := r.inMaintenance(); len(name) != 0 && len(maintenance) == 0 {
			maintenance = name
		}
		if r.decommissionState() != "" || len(r.pendingRemovals()) != 0 {
			decommissioning = true
		}
		desired := int32(0)
		if r.rack != nil {
			desired = rackNodes(r.rack)
		}
		// A rack that is not there yet and has no nodes is no node that could be down, but one about to get nodes is
		// not settled for a scale-down.
		if r.statefulSet == nil && r.observed() {
			if desired != 0 {
				settled = false
			}
			continue
		}
		if !r.observed() || !statefulSetSettled(r.statefulSet) {
			settled = false
		}
		if !r.observed() || !r.ready() {
			nodesReady = false
		}
	}

	// growing is the rack this plan scales up, "" when none does; only used without parallel node operations.
	growing := ""
	plans := make([]rackPlan, len(racks))
	for i, r := range racks {
		current := r.currentReplicas()
		plan := rackPlan{replicas: current, decommissioned: map[int32]string{}}
		for ordinal, svc := range r.services {
			if v, ok := svc.Labels[naming.DecommissionedLabel]; ok && ordinal < current {
				plan.decommissioned[ordinal] = v
			}
		}

		if r.rack == nil {
			// A removed rack is left as it is; the StatefulSet sync reports it when it still has nodes.
			plan.nodeOperation = r.nodeOperation(&plan)
			plans[i] = plan
			continue
		}
		desired := rackNodes(r.rack)
		last := naming.MemberServiceName(r.statefulSetName, current-1)

		switch state := r.decommissionState(); {
		case !r.observed():
			// Keep what was last written, or every node something is left of, until the StatefulSet shows up.
			if r.pendingReplicas != nil {
				plan.replicas = *r.pendingReplicas
			}
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForStatefulSetObservedReason,
				"waiting for StatefulSet %s to show %d nodes before changing any", r.statefulSetName, plan.replicas))

		case state == naming.DecommissionedLabelTrue:
			plan.replicas = current - 1
			delete(plan.decommissioned, current-1)
			plan.progressing = append(plan.progressing, rackCondition(r.name, removingDecommissionedReason,
				"node %s is decommissioned; removing it", last))

		case state != naming.DecommissionedLabelFalse && len(state) != 0:
			// No sidecar acts on it, and nothing tells what was meant: the node stays, and so does every other node.
			plan.err = newSpecError("member Service %s has label %s=%q, which is neither %q (the operator's decommission request) nor %q "+
				"(the sidecar's report that the node is decommissioned): no node of datacenter %q is added, removed or restarted until it is fixed",
				last, naming.DecommissionedLabel, state, naming.DecommissionedLabelFalse, naming.DecommissionedLabelTrue, dcName)

		case len(state) != 0:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForDecommissionReason,
				"waiting for node %s to be decommissioned", last))

		case len(r.pendingRemovals()) != 0:
			if desired > current {
				plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForNodeRemovalReason,
					"waiting for %s of removed nodes to be deleted before scaling up", strings.Join(r.pendingRemovals(), ", ")))
			}

		case desired > current && decommissioning:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForOtherOperationReason,
				"waiting for a decommission in datacenter %q to finish before scaling up from %d to %d nodes", dcName, current, desired))

		case desired != current && len(replacing) != 0:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForOtherOperationReason,
				"waiting for %s to finish before scaling from %d to %d nodes", replacing, current, desired))

		case desired > current && !parallelNodeOperations && len(growing) != 0:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForNodesToJoinReason,
				"waiting for rack %q to finish scaling up before scaling up from %d to %d nodes", growing, current, desired))

		case desired > current && !parallelNodeOperations && !nodesReady:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForNodesToJoinReason,
				"waiting for every node of datacenter %q to be ready before scaling up from %d to %d nodes", dcName, current, desired))

		case desired > current:
			// The StatefulSet's rollout conditions tell how far the new nodes are.
			plan.replicas = desired
			growing = r.name

		case desired < current && decommissioning:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForOtherOperationReason,
				"waiting for another node of datacenter %q to be removed before scaling down from %d to %d nodes", dcName, current, desired))

		case desired < current && len(maintenance) != 0:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForNodeMaintenanceReason,
				"waiting for node %s to leave maintenance before scaling down from %d to %d nodes", maintenance, current, desired))

		case desired < current && !settled:
			plan.progressing = append(plan.progressing, rackCondition(r.name, waitingForRolloutToScaleReason,
				"waiting for every node of datacenter %q to be ready and updated before scaling down from %d to %d nodes", dcName, current, desired))

		case desired < current:
			plan.decommissioned[current-1] = naming.DecommissionedLabelFalse
			decommissioning = true
			plan.progressing = append(plan.progressing, rackCondition(r.name, decommissionRequestedReason,
				"scaling down from %d to %d nodes: decommissioning node %s", current, desired, last))
		}
		plan.nodeOperation = r.nodeOperation(&plan)
		plans[i] = plan
	}
	return plans
}
