package scylladbdatacenter

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Reasons of the conditions node replacement reports.
const (
	replacingNodeReason          = "ReplacingNode"
	waitingToReplaceNodeReason   = "WaitingToReplaceNode"
	waitingForHostIDReason       = "WaitingForHostID"
	replacementNotPossibleReason = "ReplacementNotPossible"
	orphanedNodeReason           = "OrphanedNode"
)

// replacedObjects are the objects a replacement deletes, by UID, as naming.ReplacingNodeObjectsAnnotation records
// them when it starts: the node's data claim and pod of that moment. Their successors, which the StatefulSet
// controller creates with other UIDs, are never deleted.
type replacedObjects struct {
	PersistentVolumeClaim types.UID `json:"persistentVolumeClaim,omitempty"`
	Pod                   types.UID `json:"pod,omitempty"`
}

// memberNode is what exists of one node of a rack: its member Service, and its pod and data claim when they exist.
type memberNode struct {
	rack    *rackObjects
	ordinal int32
	service *corev1.Service
	pod     *corev1.Pod
	pvc     *corev1.PersistentVolumeClaim
}

// replaceStep is what a replacement does next.
type replaceStep int

const (
	// replaceStepWait waits for something the message names.
	replaceStepWait replaceStep = iota
	// replaceStepStart records the replaced host ID and the objects to delete on the member Service.
	replaceStepStart
	// replaceStepDeleteClaim deletes the node's recorded data claim.
	replaceStepDeleteClaim
	// replaceStepDeletePod deletes the node's recorded pod.
	replaceStepDeletePod
	// replaceStepFinish removes the replacement's labels and record from the member Service: the new node runs.
	replaceStepFinish
)

// replaceDecision is the next step of the replacement of one node.
type replaceDecision struct {
	step replaceStep
	// hostID is the host ID being replaced.
	hostID string
	// objects are the objects the replacement deletes: to record (replaceStepStart) or recorded.
	objects replacedObjects
	// newHostID is the host ID of the node that replaced hostID (replaceStepFinish).
	newHostID string
	// reason and message describe a replaceStepWait.
	reason, message string
}

// nodeReplacement is a replacement to run, or a request to wait, in a sync.
type nodeReplacement struct {
	node     memberNode
	decision replaceDecision
	// finished is set once the sync finished the replacement (replaceStepFinish).
	finished bool
}

// orphan says why a node is orphaned: its data claim is bound to PersistentVolume volume, which can only be used on
// Kubernetes node kubeNode, and that node no longer exists.
type orphan struct {
	volume   string
	kubeNode string
}

// replacementPlan is what node replacement does in a sync.
type replacementPlan struct {
	// replacements are the replacements that run, and the one that starts in this sync, if any.
	replacements []nodeReplacement
	// orphanRequests are the orphaned nodes whose replacement the operator requests in this sync (naming.ReplaceLabel).
	orphanRequests []orphanRequest
	// progressing are the waiting requests and the orphans found; syncReplacements adds the replacements.
	progressing []metav1.Condition
	// errs are the problems only a person can solve (specError).
	errs []error
	// stuck are the nodes whose replacement started but can't go on: their markers are broken (errs says how).
	stuck []memberNode
}

// orphanRequest is the replacement of an orphaned node the operator requests.
type orphanRequest struct {
	node   memberNode
	orphan orphan
}

// nodeOperation describes the first replacement the plan runs, "" when it runs none: no other node operation may run
// meanwhile (planScale, planRollout).
func (p *replacementPlan) nodeOperation() string {
	if len(p.replacements) == 0 {
		return ""
	}
	return replaceOperation(p.replacements[0].node.service.Name)
}

func replaceOperation(serviceName string) string {
	return fmt.Sprintf("the replacement of node %s", serviceName)
}

// rackConditions returns a True condition of type naming.RackMemberReplacingConditionType per rack with a node
// being replaced (its member Service has naming.ReplacingNodeHostIDLabel, stuck or not, and the sync did not just
// finish it), naming the nodes.
func (p *replacementPlan) rackConditions(generation int64) []metav1.Condition {
	byRack := map[string][]string{}
	for _, r := range p.replacements {
		if r.finished {
			continue
		}
		byRack[r.node.rack.name] = append(byRack[r.node.rack.name], fmt.Sprintf("node %s (host ID %s)", r.node.service.Name, r.decision.hostID))
	}
	for _, n := range p.stuck {
		byRack[n.rack.name] = append(byRack[n.rack.name], fmt.Sprintf("node %s (stuck, see Degraded)", n.service.Name))
	}
	var conditions []metav1.Condition
	for _, rack := range slices.Sorted(maps.Keys(byRack)) {
		message := fmt.Sprintf("rack %q: replacing ", rack)
		for i, node := range byRack[rack] {
			if i != 0 {
				message += ", "
			}
			message += node
		}
		conditions = append(conditions, metav1.Condition{
			Type:               naming.RackMemberReplacingConditionType(rack),
			Status:             metav1.ConditionTrue,
			Reason:             replacingNodeReason,
			Message:            message,
			ObservedGeneration: generation,
		})
	}
	return conditions
}

// replacementInProgress describes the first replacement that runs in the datacenter (a member Service with
// naming.ReplacingNodeHostIDLabel), "" when none does.
func replacementInProgress(racks []*rackObjects) string {
	for _, n := range memberNodes(racks) {
		if _, ok := n.service.Labels[naming.ReplacingNodeHostIDLabel]; ok {
			return replaceOperation(n.service.Name)
		}
	}
	return ""
}

// memberNodes lists the nodes of every rack that have a member Service, in rack order and then by ordinal.
func memberNodes(racks []*rackObjects) []memberNode {
	count := 0
	for _, r := range racks {
		count += len(r.services)
	}
	nodes := make([]memberNode, 0, count)
	// One buffer sorts the ordinals of every rack: every sync lists the nodes several times.
	ordinals := make([]int32, 0, count)
	for _, r := range racks {
		ordinals = slices.AppendSeq(ordinals[:0], maps.Keys(r.services))
		slices.Sort(ordinals)
		for _, ordinal := range ordinals {
			nodes = append(nodes, memberNode{rack: r, ordinal: ordinal, service: r.services[ordinal], pod: r.pods[ordinal], pvc: r.pvcs[ordinal]})
		}
	}
	return nodes
}

// planReplacements decides what node replacement does in the datacenter dcName, whose racks get plans (planScale)
// in this sync. A node is replaced when its member Service carries naming.ReplaceLabel, put there by a person or by
// the operator for an orphaned node (orphans, by member Service name) unless orphanReplacementDisabled. A
// replacement:
//  1. starts when no other node operation runs in the datacenter (otherNodeOperation) and no other replacement does:
//     it labels the member Service with naming.ReplacingNodeHostIDLabel, the node's host ID as the sidecar recorded it
//     (naming.HostIDAnnotation), and records the UIDs of the node's data claim and pod in
//     naming.ReplacingNodeObjectsAnnotation, in one write;
//  2. deletes the recorded data claim, then the recorded pod, each once (deleted tells the deletions the caches may
//     not show yet); the StatefulSet controller creates a new claim and pod, and the new node's sidecar starts ScyllaDB
//     to replace the recorded host ID;
//  3. finishes when the new pod is ready and the member Service shows a host ID other than the replaced one: both
//     labels and the record are removed in one write.
//
// Every step reads only the objects, so a replacement resumes where it stopped after a restart. Requests that can't
// start wait, with a progressing condition saying why.
func planReplacements(dcName string, racks []*rackObjects, plans []rackPlan, orphans map[string]orphan, orphanReplacementDisabled bool, deleted func(types.UID) bool) replacementPlan {
	var plan replacementPlan
	nodes := memberNodes(racks)
	var requests []memberNode
	for _, n := range nodes {
		_, replacing := n.service.Labels[naming.ReplacingNodeHostIDLabel]
		_, requested := n.service.Labels[naming.ReplaceLabel]
		switch {
		case replacing:
			decision, err := replaceProgress(n, deleted)
			if err != nil {
				plan.errs = append(plan.errs, err)
				plan.stuck = append(plan.stuck, n)
				continue
			}
			plan.replacements = append(plan.replacements, nodeReplacement{node: n, decision: decision})
		case requested:
			requests = append(requests, n)
		default:
			o, ok := orphans[n.service.Name]
			if !ok {
				continue
			}
			if orphanReplacementDisabled {
				plan.errs = append(plan.errs, newSpecError("node %s is orphaned: its data PersistentVolume %s can only be used on Kubernetes node %s, which no longer exists; "+
					"automatic replacement is disabled (spec.disableAutomaticOrphanedNodeReplacement), label member Service %s with %s to replace it",
					n.service.Name, o.volume, o.kubeNode, n.service.Name, naming.ReplaceLabel))
				continue
			}
			plan.orphanRequests = append(plan.orphanRequests, orphanRequest{node: n, orphan: o})
			plan.progressing = append(plan.progressing, rackCondition(n.rack.name, orphanedNodeReason,
				"node %s is orphaned: its data PersistentVolume %s can only be used on Kubernetes node %s, which no longer exists; requesting its replacement",
				n.service.Name, o.volume, o.kubeNode))
		}
	}
	// A replacement whose markers are broken runs too: it is stuck, not over.
	running := replacementInProgress(racks)
	for _, n := range requests {
		decision, err := replaceStart(n)
		switch {
		case err != nil:
			plan.errs = append(plan.errs, err)
			continue
		case decision.step == replaceStepWait:
		case len(running) != 0:
			decision = replaceDecision{step: replaceStepWait, reason: waitingToReplaceNodeReason,
				message: fmt.Sprintf("waiting for %s to finish before replacing node %s", running, n.service.Name)}
		default:
			if other := otherNodeOperation(racks, plans, n); len(other) != 0 {
				decision = replaceDecision{step: replaceStepWait, reason: waitingToReplaceNodeReason,
					message: fmt.Sprintf("waiting for %s before replacing node %s in datacenter %q", other, n.service.Name, dcName)}
			}
		}
		if decision.step == replaceStepWait {
			plan.progressing = append(plan.progressing, rackCondition(n.rack.name, decision.reason, "%s", decision.message))
			continue
		}
		plan.replacements = append(plan.replacements, nodeReplacement{node: n, decision: decision})
		running = replaceOperation(n.service.Name)
	}
	return plan
}

// replaceStart decides whether the replacement of n, which naming.ReplaceLabel asks for, can start as far as n
// itself goes: n must be a node its rack keeps, not one being decommissioned or removed, and its host ID must be
// known. It returns replaceStepStart with what to record, or replaceStepWait.
func replaceStart(n memberNode) (replaceDecision, error) {
	name := n.service.Name
	wait := func(reason, format string, args ...any) (replaceDecision, error) {
		return replaceDecision{step: replaceStepWait, reason: reason, message: fmt.Sprintf(format, args...)}, nil
	}
	switch {
	case n.rack.rack == nil:
		return wait(replacementNotPossibleReason, "not replacing node %s: its rack %q was removed from the spec", name, n.rack.name)
	case n.ordinal >= n.rack.currentReplicas():
		return wait(replacementNotPossibleReason, "not replacing node %s: it is being removed from its rack", name)
	}
	if _, ok := n.service.Labels[naming.DecommissionedLabel]; ok {
		return wait(replacementNotPossibleReason, "not replacing node %s: it is being decommissioned", name)
	}
	recorded, ok := n.service.Annotations[naming.HostIDAnnotation]
	if !ok || len(recorded) == 0 {
		return wait(waitingForHostIDReason, "can't replace node %s yet: its host ID is unknown (member Service annotation %s is not set); nothing is deleted until its sidecar records it",
			name, naming.HostIDAnnotation)
	}
	hostID, err := sidecar.ParseHostID(recorded)
	if err != nil {
		return replaceDecision{}, newSpecError("can't replace node %s: annotation %s of its member Service: %v", name, naming.HostIDAnnotation, err)
	}
	decision := replaceDecision{step: replaceStepStart, hostID: hostID}
	if n.pvc != nil && n.pvc.DeletionTimestamp == nil {
		decision.objects.PersistentVolumeClaim = n.pvc.UID
	}
	if n.pod != nil && n.pod.DeletionTimestamp == nil {
		decision.objects.Pod = n.pod.UID
	}
	return decision, nil
}

// replaceProgress decides the next step of the replacement of n, which has started (naming.ReplacingNodeHostIDLabel):
// delete the recorded data claim, then the recorded pod, unless they are gone or going (or deleted says they were
// deleted already), then wait for the new node, and finish once it is ready with a new host ID.
func replaceProgress(n memberNode, deleted func(types.UID) bool) (replaceDecision, error) {
	name := n.service.Name
	hostID, err := sidecar.ParseHostID(n.service.Labels[naming.ReplacingNodeHostIDLabel])
	if err != nil {
		return replaceDecision{}, newSpecError("can't go on replacing node %s: label %s of its member Service: %v", name, naming.ReplacingNodeHostIDLabel, err)
	}
	var objects replacedObjects
	if value, ok := n.service.Annotations[naming.ReplacingNodeObjectsAnnotation]; ok {
		if err := json.Unmarshal([]byte(value), &objects); err != nil {
			return replaceDecision{}, newSpecError("can't go on replacing node %s: annotation %s of its member Service is not the record the operator writes: %v",
				name, naming.ReplacingNodeObjectsAnnotation, err)
		}
	}
	decision := replaceDecision{hostID: hostID, objects: objects}
	pending := func(uid types.UID, obj metav1.Object) bool {
		return len(uid) != 0 && obj != nil && obj.GetUID() == uid && obj.GetDeletionTimestamp() == nil && !deleted(uid)
	}
	wait := func(format string, args ...any) (replaceDecision, error) {
		decision.step, decision.reason = replaceStepWait, replacingNodeReason
		decision.message = fmt.Sprintf("replacing node %s (host ID %s): ", name, hostID) + fmt.Sprintf(format, args...)
		return decision, nil
	}

	switch {
	case n.pvc != nil && pending(objects.PersistentVolumeClaim, n.pvc):
		decision.step = replaceStepDeleteClaim
		return decision, nil
	case n.pod != nil && pending(objects.Pod, n.pod):
		decision.step = replaceStepDeletePod
		return decision, nil
	case n.pod == nil:
		return wait("waiting for its StatefulSet to create pod %s", name)
	case n.pod.UID == objects.Pod || n.pod.DeletionTimestamp != nil:
		return wait("waiting for pod %s to be deleted", name)
	}
	newHostID := n.service.Annotations[naming.HostIDAnnotation]
	switch {
	case len(newHostID) == 0 || newHostID == hostID:
		return wait("waiting for the new node to join and record its host ID")
	case !controllerhelpers.IsPodReady(n.pod):
		return wait("waiting for the new node (host ID %s) to be ready", newHostID)
	}
	decision.step, decision.newHostID = replaceStepFinish, newHostID
	return decision, nil
}

// otherNodeOperation describes the node operation that keeps the replacement of target from starting, "" when there
// is none: a decommission or a removal (rackPlan.nodeOperation), a rack scaling (its plan changes its replicas, or
// its StatefulSet is not observed), a node other than target in maintenance, not ready or being removed (ScyllaDB
// replaces a node only while every other one is up: a joining or restarting node is one), or a rolling update in
// progress while target still runs ready (a target that is down holds the rollout up anyway).
func otherNodeOperation(racks []*rackObjects, plans []rackPlan, target memberNode) string {
	targetReady := target.pod != nil && target.pod.DeletionTimestamp == nil && controllerhelpers.IsPodReady(target.pod)
	for i, r := range racks {
		if len(plans[i].nodeOperation) != 0 {
			return plans[i].nodeOperation
		}
		current := r.currentReplicas()
		switch {
		case !r.observed() || (r.statefulSet != nil && !statefulSetObserved(r.statefulSet)):
			return fmt.Sprintf("StatefulSet %s to be observed", r.statefulSetName)
		case plans[i].replicas != current:
			return fmt.Sprintf("rack %q to scale from %d to %d nodes", r.name, current, plans[i].replicas)
		}
		for _, ordinal := range slices.Sorted(maps.Keys(r.services)) {
			svc := r.services[ordinal]
			if _, ok := svc.Labels[naming.NodeMaintenanceLabel]; ok && svc.Name != target.service.Name {
				return fmt.Sprintf("node %s to leave maintenance", svc.Name)
			}
		}
		for ordinal := range current {
			name := naming.PodName(r.statefulSetName, ordinal)
			if r == target.rack && ordinal == target.ordinal {
				continue
			}
			if pod := r.pods[ordinal]; pod == nil || pod.DeletionTimestamp != nil || !controllerhelpers.IsPodReady(pod) {
				return fmt.Sprintf("node %s to be ready", name)
			}
		}
		for _, ordinal := range slices.Sorted(maps.Keys(r.pods)) {
			if ordinal >= current {
				return fmt.Sprintf("pod %s to be removed", r.pods[ordinal].Name)
			}
		}
		if sts := r.statefulSet; targetReady && sts != nil && partitionOf(sts) == 0 &&
			(sts.Status.CurrentRevision != sts.Status.UpdateRevision || sts.Status.UpdatedReplicas < sts.Status.Replicas) {
			return fmt.Sprintf("the rollout of StatefulSet %s to finish", sts.Name)
		}
	}
	return ""
}

// marshalReplacedObjects is the value of naming.ReplacingNodeObjectsAnnotation for objects.
func marshalReplacedObjects(objects replacedObjects) (string, error) {
	data, err := json.Marshal(objects)
	if err != nil {
		return "", fmt.Errorf("can't encode the objects a replacement deletes: %w", err)
	}
	return string(data), nil
}
