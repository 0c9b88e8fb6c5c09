package scylladbdatacenter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// replaceRacks returns racks "a" and "b" of three settled nodes each, every node with a ready pod, a data claim and a
// host ID, as planReplacements sees them.
func replaceRacks() []*rackObjects {
	racks := []*rackObjects{
		testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
		testRack("b", new(int32(3)), settledStatefulSet("basic-dc1-b", 3), 3, ""),
	}
	for _, r := range racks {
		for ordinal, svc := range r.services {
			svc.Annotations = map[string]string{naming.HostIDAnnotation: testHostID(svc.Name)}
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: svc.Name, UID: types.UID(svc.Name + "-uid")}}
			setPodReady(pod, true)
			r.pods[ordinal] = pod
			r.pvcs[ordinal] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: naming.PVCName(svc.Name), UID: types.UID(naming.PVCName(svc.Name) + "-uid")}}
		}
	}
	return racks
}

// replaceSummary is what a test checks of a replacementPlan: each replacement as "<node> <step>", and the messages
// of its conditions and errors.
func replaceSummary(p replacementPlan) []string {
	steps := map[replaceStep]string{replaceStepWait: "wait", replaceStepStart: "start", replaceStepDeleteClaim: "delete claim",
		replaceStepDeletePod: "delete pod", replaceStepFinish: "finish"}
	var out []string
	for _, r := range p.replacements {
		summary := r.node.service.Name + " " + steps[r.decision.step]
		if r.decision.step == replaceStepWait {
			summary += ": " + r.decision.reason + ": " + r.decision.message
		}
		out = append(out, summary)
	}
	for _, o := range p.orphanRequests {
		out = append(out, o.node.service.Name+" orphan")
	}
	for _, c := range p.progressing {
		out = append(out, c.Reason+": "+strings.TrimPrefix(c.Message, `rack "a": `))
	}
	for _, err := range p.errs {
		out = append(out, "error: "+err.Error())
	}
	return out
}

func TestPlanReplacements(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-1"
	hostID := testHostID(node)
	request := func(racks []*rackObjects) { racks[0].services[1].Labels[naming.ReplaceLabel] = "" }
	started := func(record string) func(racks []*rackObjects) {
		return func(racks []*rackObjects) {
			svc := racks[0].services[1]
			svc.Labels[naming.ReplaceLabel] = ""
			svc.Labels[naming.ReplacingNodeHostIDLabel] = hostID
			svc.Annotations[naming.ReplacingNodeObjectsAnnotation] = record
		}
	}
	const record = `{"persistentVolumeClaim":"data-basic-dc1-a-1-uid","pod":"basic-dc1-a-1-uid"}`
	recreated := func(racks []*rackObjects) {
		started(record)(racks)
		delete(racks[0].pvcs, 1)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: node, UID: "new-uid"}}
		setPodReady(pod, false)
		racks[0].pods[1] = pod
	}
	for _, tc := range []struct {
		name      string
		change    func(racks []*rackObjects)
		plans     func(plans []rackPlan)
		orphans   map[string]orphan
		disabled  bool
		deleted   []types.UID
		want      []string
		wantStart *replacedObjects
	}{
		{name: "at rest nothing happens", change: func([]*rackObjects) {}},
		{
			name:      "a request starts, recording the claim and pod",
			change:    request,
			want:      []string{node + " start"},
			wantStart: &replacedObjects{PersistentVolumeClaim: "data-basic-dc1-a-1-uid", Pod: "basic-dc1-a-1-uid"},
		},
		{
			name: "a request for a node without pod or claim starts with nothing to delete",
			change: func(racks []*rackObjects) {
				request(racks)
				delete(racks[0].pods, 1)
				delete(racks[0].pvcs, 1)
			},
			want:      []string{node + " start"},
			wantStart: &replacedObjects{},
		},
		{
			name: "a request without a host ID waits, deleting nothing",
			change: func(racks []*rackObjects) {
				request(racks)
				delete(racks[0].services[1].Annotations, naming.HostIDAnnotation)
			},
			want: []string{"WaitingForHostID: can't replace node " + node + " yet: its host ID is unknown (member Service annotation " +
				naming.HostIDAnnotation + " is not set); nothing is deleted until its sidecar records it"},
		},
		{
			name: "a request with a host ID that is not a UUID is an error",
			change: func(racks []*rackObjects) {
				request(racks)
				racks[0].services[1].Annotations[naming.HostIDAnnotation] = "00000000-0000-0000-0000-000000000000"
			},
			want: []string{"error: can't replace node " + node + ": annotation " + naming.HostIDAnnotation + ` of its member Service: "00000000-0000-0000-0000-000000000000" is the nil UUID, which is no node's host ID`},
		},
		{
			name:   "a request waits for a decommission",
			change: request,
			plans:  func(plans []rackPlan) { plans[1].nodeOperation = "node basic-dc1-b-2 to be decommissioned and removed" },
			want:   []string{`WaitingToReplaceNode: waiting for node basic-dc1-b-2 to be decommissioned and removed before replacing node ` + node + ` in datacenter "dc1"`},
		},
		{
			name:   "a request waits for a scale step",
			change: request,
			plans:  func(plans []rackPlan) { plans[1].replicas = 4 },
			want:   []string{`WaitingToReplaceNode: waiting for rack "b" to scale from 3 to 4 nodes before replacing node ` + node + ` in datacenter "dc1"`},
		},
		{
			name:   "a request waits for another node to be ready",
			change: func(racks []*rackObjects) { request(racks); setPodReady(racks[1].pods[0], false) },
			want:   []string{`WaitingToReplaceNode: waiting for node basic-dc1-b-0 to be ready before replacing node ` + node + ` in datacenter "dc1"`},
		},
		{
			name: "a request waits for another node to leave maintenance",
			change: func(racks []*rackObjects) {
				request(racks)
				racks[1].services[2].Labels[naming.NodeMaintenanceLabel] = ""
			},
			want: []string{`WaitingToReplaceNode: waiting for node basic-dc1-b-2 to leave maintenance before replacing node ` + node + ` in datacenter "dc1"`},
		},
		{
			name: "a request waits for a rollout while the node runs",
			change: func(racks []*rackObjects) {
				request(racks)
				racks[1].statefulSet.Status.UpdateRevision = "next"
			},
			want: []string{`WaitingToReplaceNode: waiting for the rollout of StatefulSet basic-dc1-b to finish before replacing node ` + node + ` in datacenter "dc1"`},
		},
		{
			name: "a request for a node that is down does not wait for a rollout it holds up",
			change: func(racks []*rackObjects) {
				request(racks)
				setPodReady(racks[0].pods[1], false)
				racks[0].statefulSet.Status.UpdateRevision = "next"
			},
			want:      []string{node + " start"},
			wantStart: &replacedObjects{PersistentVolumeClaim: "data-basic-dc1-a-1-uid", Pod: "basic-dc1-a-1-uid"},
		},
		{
			name: "a request for a node being decommissioned is not carried out",
			change: func(racks []*rackObjects) {
				request(racks)
				racks[0].services[1].Labels[naming.DecommissionedLabel] = "false"
			},
			want: []string{"ReplacementNotPossible: not replacing node " + node + ": it is being decommissioned"},
		},
		{
			name:   "a request for a node of a removed rack is not carried out",
			change: func(racks []*rackObjects) { request(racks); racks[0].rack = nil },
			want:   []string{`ReplacementNotPossible: not replacing node ` + node + `: its rack "a" was removed from the spec`},
		},
		{
			name: "two requests: the first starts, the second waits",
			change: func(racks []*rackObjects) {
				request(racks)
				racks[1].services[0].Labels[naming.ReplaceLabel] = ""
			},
			want:      []string{node + " start", `WaitingToReplaceNode: rack "b": waiting for the replacement of node ` + node + ` to finish before replacing node basic-dc1-b-0`},
			wantStart: &replacedObjects{PersistentVolumeClaim: "data-basic-dc1-a-1-uid", Pod: "basic-dc1-a-1-uid"},
		},
		{
			name: "a request waits for a replacement stuck on broken markers",
			change: func(racks []*rackObjects) {
				started(record)(racks)
				racks[0].services[1].Annotations[naming.ReplacingNodeObjectsAnnotation] = "{"
				racks[1].services[0].Labels[naming.ReplaceLabel] = ""
			},
			want: []string{
				`WaitingToReplaceNode: rack "b": waiting for the replacement of node ` + node + ` to finish before replacing node basic-dc1-b-0`,
				"error: can't go on replacing node " + node + ": annotation " + naming.ReplacingNodeObjectsAnnotation + " of its member Service is not the record the operator writes: unexpected end of JSON input",
			},
		},
		{name: "started: the claim goes first", change: started(record), want: []string{node + " delete claim"}},
		{name: "claim deleted, not yet in the cache: the pod goes", change: started(record), deleted: []types.UID{"data-basic-dc1-a-1-uid"}, want: []string{node + " delete pod"}},
		{
			name:    "both deleted, not yet in the cache: waiting",
			change:  started(record),
			deleted: []types.UID{"data-basic-dc1-a-1-uid", "basic-dc1-a-1-uid"},
			want:    []string{node + " wait: ReplacingNode: replacing node " + node + " (host ID " + hostID + "): waiting for pod " + node + " to be deleted"},
		},
		{
			name:   "new pod, old host ID: waiting",
			change: recreated,
			want:   []string{node + " wait: ReplacingNode: replacing node " + node + " (host ID " + hostID + "): waiting for the new node to join and record its host ID"},
		},
		{
			name: "new host ID, pod not ready: waiting",
			change: func(racks []*rackObjects) {
				recreated(racks)
				racks[0].services[1].Annotations[naming.HostIDAnnotation] = testHostID("new")
			},
			want: []string{node + " wait: ReplacingNode: replacing node " + node + " (host ID " + hostID + "): waiting for the new node (host ID " + testHostID("new") + ") to be ready"},
		},
		{
			name: "new host ID, pod ready: finished",
			change: func(racks []*rackObjects) {
				recreated(racks)
				racks[0].services[1].Annotations[naming.HostIDAnnotation] = testHostID("new")
				setPodReady(racks[0].pods[1], true)
			},
			want: []string{node + " finish"},
		},
		{
			name: "a replacement label that is not a host ID is an error",
			change: func(racks []*rackObjects) {
				started(record)(racks)
				racks[0].services[1].Labels[naming.ReplacingNodeHostIDLabel] = "x"
			},
			want: []string{"error: can't go on replacing node " + node + ": label " + naming.ReplacingNodeHostIDLabel + ` of its member Service: "x" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		},
		{
			name:   "a record the operator did not write is an error",
			change: started("{"),
			want:   []string{"error: can't go on replacing node " + node + ": annotation " + naming.ReplacingNodeObjectsAnnotation + " of its member Service is not the record the operator writes: unexpected end of JSON input"},
		},
		{
			name:    "an orphaned node is requested",
			change:  func([]*rackObjects) {},
			orphans: map[string]orphan{node: {volume: "pv-1", kubeNode: "k1"}},
			want:    []string{node + " orphan", "OrphanedNode: node " + node + " is orphaned: its data PersistentVolume pv-1 can only be used on Kubernetes node k1, which no longer exists; requesting its replacement"},
		},
		{
			name:     "an orphaned node is an error when automatic replacement is disabled",
			change:   func([]*rackObjects) {},
			orphans:  map[string]orphan{node: {volume: "pv-1", kubeNode: "k1"}},
			disabled: true,
			want: []string{"error: node " + node + " is orphaned: its data PersistentVolume pv-1 can only be used on Kubernetes node k1, which no longer exists; " +
				"automatic replacement is disabled (spec.disableAutomaticOrphanedNodeReplacement), label member Service " + node + " with scylla/replace to replace it"},
		},
		{
			name:      "an orphaned node already requested is not requested again",
			change:    request,
			orphans:   map[string]orphan{node: {volume: "pv-1", kubeNode: "k1"}},
			want:      []string{node + " start"},
			wantStart: &replacedObjects{PersistentVolumeClaim: "data-basic-dc1-a-1-uid", Pod: "basic-dc1-a-1-uid"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			racks := replaceRacks()
			tc.change(racks)
			plans := planScale("dc1", true, racks, replacementInProgress(racks))
			if tc.plans != nil {
				tc.plans(plans)
			}
			deleted := func(uid types.UID) bool {
				for _, d := range tc.deleted {
					if d == uid {
						return true
					}
				}
				return false
			}
			plan := planReplacements("dc1", racks, plans, tc.orphans, tc.disabled, deleted)
			if diff := cmp.Diff(tc.want, replaceSummary(plan)); diff != "" {
				t.Errorf("unexpected plan (-want +got):\n%s", diff)
			}
			if tc.wantStart != nil {
				got := plan.replacements[0].decision
				if diff := cmp.Diff(*tc.wantStart, got.objects); diff != "" || got.hostID != hostID {
					t.Errorf("unexpected start: host ID %q, objects (-want +got):\n%s", got.hostID, diff)
				}
			}
		})
	}
}

func TestPlanScaleWaitsForAReplacement(t *testing.T) {
	t.Parallel()
	for _, desired := range []int32{2, 4} {
		racks := replaceRacks()
		racks[1].rack.Nodes = new(desired)
		plans := planScale("dc1", true, racks, "the replacement of node basic-dc1-a-0")
		if plans[1].replicas != 3 || len(plans[1].decommissioned) != 0 {
			t.Errorf("rack b asked for %d nodes: expected it kept at 3 without decommission, got %d replicas, %v", desired, plans[1].replicas, plans[1].decommissioned)
		}
		want := []metav1.Condition{rackCondition("b", waitingForOtherOperationReason,
			"waiting for the replacement of node basic-dc1-a-0 to finish before scaling from 3 to %d nodes", desired)}
		if diff := cmp.Diff(want, plans[1].progressing); diff != "" {
			t.Errorf("unexpected conditions (-want +got):\n%s", diff)
		}
	}
}

func TestMemberNodesAreListedInRackOrderThenByOrdinal(t *testing.T) {
	t.Parallel()

	services := func(ordinals ...int32) map[int32]*corev1.Service {
		m := map[int32]*corev1.Service{}
		for _, o := range ordinals {
			m[o] = &corev1.Service{}
		}
		return m
	}
	racks := []*rackObjects{
		{name: "b", services: services(10, 2, 1)},
		{name: "empty"},
		{name: "a", services: services(3, 0)},
	}
	var got []string
	for _, n := range memberNodes(racks) {
		got = append(got, fmt.Sprintf("%s/%d", n.rack.name, n.ordinal))
	}
	if diff := cmp.Diff([]string{"b/1", "b/2", "b/10", "a/0", "a/3"}, got); diff != "" {
		t.Errorf("unexpected nodes (-want +got):\n%s", diff)
	}
}
