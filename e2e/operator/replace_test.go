//go:build e2e

package operator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/util/retry"
)

const (
	// replaceTimeout bounds a whole replacement: the operator's marker, the deletion of the node's claim and pod, and
	// the new pod's ScyllaDB joining in the replaced node's place (a few seconds each here).
	replaceTimeout = 2 * time.Minute

	// orphanWatchWindow is how long a test watches the operator leave an orphaned node alone. With automatic
	// replacement on, the operator marks an orphaned node within a second of learning that its Kubernetes node is gone.
	orphanWatchWindow = 15 * time.Second

	// nodePoolLabel labels and taints the simulated Kubernetes nodes a test creates for its ScyllaDB nodes alone,
	// valued with the test's namespace, so that deleting one of them touches no other test's pods: the nodes carry the
	// labels the examples' placement selects, and only the test's pods tolerate the taint.
	nodePoolLabel = "e2e.scylla-operator.scylladb.com/node-pool"
)

// testUserRequestedReplacement labels a member Service scylla/replace: the node comes back with a new host ID in the
// replaced node's place, the markers go away, and the operator then writes nothing over a resync period.
func testUserRequestedReplacement(t *testing.T, op *operatorProcess) {
	e, sim := newTestEnvWithSimulator(t)
	ctx := t.Context()
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")
	ring := e.waitForRing(sim, sc, "", "the ring of the new cluster")

	rack := sc.Spec.Datacenter.Racks[1].Name
	old := e.nodeIdentity(memberName(sc, rack, 0), &ring)
	mark := e.auditMark()
	e.requestReplacement(ctx, old.name)

	e.waitForReplacement(sim, sc, rack, old)
	e.expectOneDeletionEach(mark, old.name)
	e.expectNoWrites(op, sc, 1)
}

// testOrphanedNodeReplaced deletes the Kubernetes node that held a ScyllaDB node's volume, with automatic cleanup of
// orphaned nodes on: the operator replaces the node onto a live Kubernetes node, and says so in an event.
func testOrphanedNodeReplaced(t *testing.T, _ *operatorProcess) {
	e, sim := newTestEnvWithSimulator(t)
	ctx := t.Context()
	// One Kubernetes node per ScyllaDB node, and one to replace onto.
	sc := e.createOnNodePool(4, true)
	ring := e.waitForRing(sim, sc, "", "the ring of the new cluster")

	rack := sc.Spec.Datacenter.Racks[0].Name
	old := e.nodeIdentity(memberName(sc, rack, 1), &ring)
	mark := e.auditMark()
	e.loseKubernetesNode(ctx, old)

	// The lost node leaves the datacenter Progressing already: the replacement's conditions show only because the
	// operator writes a replacement's start and end at once rather than with its batched status changes.
	e.waitForReplacement(sim, sc, rack, old)
	// The test deleted the lost pod as pod garbage collection would. The operator deletes the pod the StatefulSet
	// recreated on the orphaned claim, unless the claim's deletion let the StatefulSet give that pending pod a new
	// claim first: one pod deletion at most, and the claim exactly once.
	deleted, described := e.operatorDeletions(mark)
	want := map[string]int{"persistentvolumeclaims " + naming.PVCName(old.name): 1}
	if deleted["pods "+old.name] != 0 {
		want["pods "+old.name] = 1
	}
	if diff := cmp.Diff(want, deleted); diff != "" {
		t.Errorf("the operator's deletions differ (-want +got):\n%s\nthe operator's deletions, failed ones too:\n%s", diff, described)
	}
	pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, old.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.NodeName == old.kubernetesNode {
		t.Errorf("the replacing pod %s runs on the deleted Kubernetes node %s", pod.Name, old.kubernetesNode)
	}
	events, err := e.kube.CoreV1().Events(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var messages []string
	found := false
	for _, ev := range events.Items {
		messages = append(messages, fmt.Sprintf("%s %s/%s %s: %s", ev.Type, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Reason, ev.Message))
		found = found || (strings.Contains(ev.Message, old.kubernetesNode) && strings.Contains(ev.Message, old.name))
	}
	if !found {
		t.Errorf("no event names both the orphaned node %s and its deleted Kubernetes node %s; events:\n%s", old.name, old.kubernetesNode, strings.Join(messages, "\n"))
	}
}

// testOrphanedNodeLeftAlone deletes the Kubernetes node that held a ScyllaDB node's volume, with automatic cleanup of
// orphaned nodes off: the operator reports the orphan in a condition and replaces nothing, and the recreated pod waits
// for its volume's node.
func testOrphanedNodeLeftAlone(t *testing.T, _ *operatorProcess) {
	e, _ := newTestEnvWithSimulator(t)
	ctx := t.Context()
	sc := e.createOnNodePool(3, false)

	rack := sc.Spec.Datacenter.Racks[0].Name
	old := e.nodeIdentity(memberName(sc, rack, 1), nil)
	mark := e.auditMark()
	e.loseKubernetesNode(ctx, old)

	e.f.WaitFor(stepTimeout, "the StatefulSet to recreate pod "+old.name+" and the pod to wait for its volume's node", func(ctx context.Context) (bool, error) {
		pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, old.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.UID == old.podUID {
			return false, fmt.Errorf("pod %s is still the lost one", pod.Name)
		}
		if pod.Spec.NodeName != "" {
			return false, framework.StopPolling(fmt.Errorf("pod %s was scheduled onto %s though its volume's node %s is gone", pod.Name, pod.Spec.NodeName, old.kubernetesNode))
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				return true, nil
			}
		}
		return false, fmt.Errorf("pod %s is not reported unschedulable yet", pod.Name)
	})

	// The operator saw the orphan: it says so in a condition of the ScyllaDBDatacenter.
	e.f.WaitFor(stepTimeout, "a ScyllaDBDatacenter condition to name orphaned node "+old.name+" and its deleted Kubernetes node", func(ctx context.Context) (bool, error) {
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var messages []string
		for _, c := range sdc.Status.Conditions {
			if strings.Contains(c.Message, old.name) && strings.Contains(c.Message, old.kubernetesNode) {
				return true, nil
			}
			messages = append(messages, fmt.Sprintf("%s=%s: %s", c.Type, c.Status, c.Message))
		}
		return false, fmt.Errorf("no condition names both; conditions:\n%s", strings.Join(messages, "\n"))
	})
	deadline := time.Now().Add(orphanWatchWindow)
	for time.Now().Before(deadline) {
		if err := e.nodeUntouched(ctx, old); err != nil {
			t.Fatalf("with automatic orphaned node cleanup off: %v", err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(framework.PollInterval):
		}
	}
	events, err := e.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	filters := append(operatorWrites(e.ns), verb("delete"))
	if n := framework.CountRequests(events, filters...).Total(); n != 0 {
		t.Errorf("the operator deleted %d objects of the orphaned node, want none:\n%s", n, describeRequests(events, filters...))
	}
}

// TestOperatorKilledDuringReplacementFinishesIt kills the operator with SIGKILL in the middle of replacements, each
// time right after the API server carried out one of its steps and before the operator got the answer: the marker on
// the member Service, then the deletion of the node's data claim. The replica started next finishes the replacement:
// it deletes whatever of the claim and the pod the killed one had not, leaves the new claim alone, and clears the
// markers; every object is deleted once.
func TestOperatorKilledDuringReplacementFinishesIt(t *testing.T) {
	e, sim := newTestEnvWithSimulator(t)
	ctx := t.Context()
	cp := e.c.ControlPlane
	gate, err := framework.StartAPIServerGate(cp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gate.Close() })
	// replica starts a replica that reaches the API server through the gate, with its own token (to tell the
	// replicas apart in the audit log) and its own Lease (to spare it waiting for a killed replica's Lease to expire).
	replica := func(name string) (*operatorProcess, *framework.ServiceAccountCredential) {
		cred := e.f.ProgramKubeconfig(e.c, framework.OperatorSubcommand, name+"-gated")
		kubeconfig := filepath.Join(cp.Dir, name+"-through-gate.kubeconfig")
		if err := framework.WriteGatedKubeconfig(cred, gate, kubeconfig); err != nil {
			t.Fatal(err)
		}
		// The later --kubeconfig wins.
		return startOperator(t, e.f, e.c, name, operatorOptions{leaseName: e.ns + "-" + name, verbosity: 2, extraArgs: []string{"--kubeconfig=" + kubeconfig}}), cred
	}

	op, cred := replica("operator-replace-kill-1")
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")

	for i, step := range []struct {
		name string
		rack int
		// held matches the request of the replacement whose answer the gate holds while the replica is killed.
		held func(r *http.Request, claimPath, servicePath string) bool
		// killedDeletesClaim says whether the killed replica deleted the data claim before it was killed.
		killedDeletesClaim bool
	}{
		{
			name: "the marker on the member Service",
			rack: 0,
			held: func(r *http.Request, _, servicePath string) bool {
				return r.Method == http.MethodPatch && r.URL.Path == servicePath
			},
		},
		{
			name: "the deletion of the data claim",
			rack: 2,
			held: func(r *http.Request, claimPath, _ string) bool {
				return r.Method == http.MethodDelete && r.URL.Path == claimPath
			},
			killedDeletesClaim: true,
		},
	} {
		ring := e.waitForRing(sim, sc, "", "the ring before the replacement after "+step.name)
		rack := sc.Spec.Datacenter.Racks[step.rack].Name
		old := e.nodeIdentity(memberName(sc, rack, 0), &ring)
		claimPath := fmt.Sprintf("/api/v1/namespaces/%s/persistentvolumeclaims/%s", e.ns, naming.PVCName(old.name))
		servicePath := fmt.Sprintf("/api/v1/namespaces/%s/services/%s", e.ns, old.name)
		hold := gate.Arm(framework.HoldAfterResponse, func(r *http.Request) bool { return step.held(r, claimPath, servicePath) })
		mark := e.auditMark()
		e.requestReplacement(ctx, old.name)

		held, err := hold.Wait(ctx, stepTimeout)
		if err != nil {
			t.Fatalf("the operator did not carry out %s for node %s: %v", step.name, old.name, err)
		}
		svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, old.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := svc.Labels[naming.ReplacingNodeHostIDLabel]; got != old.hostID {
			t.Errorf("after %s (%s), member Service %s has %s=%q, want the replaced host ID %q", step.name, held, old.name, naming.ReplacingNodeHostIDLabel, got, old.hostID)
		}
		op.kill()
		hold.Release()

		killed, killedCred := op, cred
		op, cred = replica(fmt.Sprintf("operator-replace-kill-%d", i+2))
		e.waitForReplacement(sim, sc, rack, old)
		e.expectOneDeletionEach(mark, old.name)

		// The kill fell where it was meant to: the killed replica deleted nothing after the held request.
		claim, pod := "persistentvolumeclaims "+naming.PVCName(old.name), "pods "+old.name
		wantKilled, wantSuccessor := map[string]int{}, map[string]int{pod: 1}
		if step.killedDeletesClaim {
			wantKilled[claim] = 1
		} else {
			wantSuccessor[claim] = 1
		}
		events, err := cp.Audit.EventsSince(mark)
		if err != nil {
			t.Fatal(err)
		}
		deletions := append(operatorWrites(e.ns), verb("delete"), framework.Succeeded())
		for _, r := range []struct {
			name       string
			credential *framework.ServiceAccountCredential
			want       map[string]int
		}{{killed.name, killedCred, wantKilled}, {op.name, cred, wantSuccessor}} {
			if diff := cmp.Diff(r.want, countByObject(events, slices.Concat(deletions, []framework.AuditFilter{framework.Credential(r.credential)})...)); diff != "" {
				t.Errorf("killed after %s: the deletions of replica %s differ (-want +got):\n%s", step.name, r.name, diff)
			}
		}
	}
}

// newTestEnvWithSimulator creates the test's namespace and starts the node simulator for it.
func newTestEnvWithSimulator(t *testing.T) (*testEnv, *nodesim.Simulator) {
	t.Helper()
	f := framework.NewFramework(t)
	c := f.Cluster()
	sim := startNodeSimulator(t, f, c)
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Fatalf("can't create the scylla.scylladb.com client: %v", err)
	}
	return &testEnv{t: t, f: f, c: c, ns: c.Namespace, kube: c.Clients.Kube, scylla: scylla}, sim
}

// replacedNode is what identifies one ScyllaDB node before its replacement.
type replacedNode struct {
	// name is the name of the node's pod and member Service.
	name   string
	hostID string
	podUID types.UID
	// claimUID is the UID of the node's data PersistentVolumeClaim.
	claimUID types.UID
	// kubernetesNode is the Kubernetes node the node's pod runs on and its volume is bound to.
	kubernetesNode string
	// tokens are the node's ring position in the fake ScyllaDB registry.
	tokens []string
}

// nodeIdentity returns the identity of the running node name, once its sidecar recorded its host ID, with its tokens
// in ring if given.
func (e *testEnv) nodeIdentity(name string, ring *fakescylladb.Ring) replacedNode {
	e.t.Helper()
	var n replacedNode
	e.f.WaitFor(stepTimeout, "the host ID of node "+name+" on its member Service", func(ctx context.Context) (bool, error) {
		svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pvc, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, naming.PVCName(name), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		n = replacedNode{name: name, hostID: svc.Annotations[naming.HostIDAnnotation], podUID: pod.UID, claimUID: pvc.UID, kubernetesNode: pod.Spec.NodeName}
		if n.hostID == "" {
			return false, fmt.Errorf("member Service %s has no annotation %s", name, naming.HostIDAnnotation)
		}
		if pvc.Spec.VolumeName == "" || n.kubernetesNode == "" {
			return false, fmt.Errorf("claim %s is bound to %q, pod %s runs on %q", pvc.Name, pvc.Spec.VolumeName, name, n.kubernetesNode)
		}
		pv, err := e.kube.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if nodes := volumeNodes(pv); !slices.Equal(nodes, []string{n.kubernetesNode}) {
			return false, framework.StopPolling(fmt.Errorf("PersistentVolume %s of node %s is bound to Kubernetes nodes %q, want the pod's node %s", pv.Name, name, nodes, n.kubernetesNode))
		}
		return true, nil
	})
	if ring != nil {
		i := slices.IndexFunc(ring.Members, func(m fakescylladb.Member) bool { return m.HostID == n.hostID })
		if i < 0 || len(ring.Members[i].Tokens) == 0 {
			e.t.Fatalf("node %s (host %s) has no tokens in the ring %+v", name, n.hostID, ring)
		}
		n.tokens = ring.Members[i].Tokens
	}
	return n
}

// requestReplacement asks for the replacement of node name the way a user does: label scylla/replace="" on its member
// Service.
func (e *testEnv) requestReplacement(ctx context.Context, name string) {
	e.t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:""}}}`, naming.ReplaceLabel)
	if _, err := e.kube.CoreV1().Services(e.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		e.t.Fatalf("can't label member Service %s %s: %v", name, naming.ReplaceLabel, err)
	}
}

// waitForReplacement waits until node old of rack is replaced: its member Service shows a new host ID and no marker,
// a new pod on a new claim is Ready, the cluster is rolled out with one ring that holds the new host ID and not the old
// one, and the new host holds the replaced host's tokens. On the way, the member Service must have carried the replaced
// host ID as its marker, and the ScyllaCluster's rack (MemberReplacing) and the ScyllaDBDatacenter
// (naming.RackMemberReplacingConditionType) must have reported the replacement; the new node's ScyllaDB must have been
// started with the replace option for old's host ID.
func (e *testEnv) waitForReplacement(sim *nodesim.Simulator, sc *scyllav1.ScyllaCluster, rack string, old replacedNode) {
	e.t.Helper()
	sawMarker, sawCondition, sawDatacenterCondition := false, false, false
	datacenterCondition := naming.RackMemberReplacingConditionType(rack)
	var newHostID string
	e.f.WaitFor(replaceTimeout, "node "+old.name+" to be replaced", func(ctx context.Context) (bool, error) {
		current, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, sc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		sawCondition = sawCondition || rackConditionTrue(current, rack, scyllav1.RackConditionTypeMemberReplacing)
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		sawDatacenterCondition = sawDatacenterCondition || meta.IsStatusConditionTrue(sdc.Status.Conditions, datacenterCondition)
		svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, old.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		marker, marked := svc.Labels[naming.ReplacingNodeHostIDLabel]
		switch {
		case marked && marker != old.hostID:
			return false, framework.StopPolling(fmt.Errorf("member Service %s has %s=%q, want the replaced host ID %q", old.name, naming.ReplacingNodeHostIDLabel, marker, old.hostID))
		case marked:
			sawMarker = true
			return false, fmt.Errorf("member Service %s is marked replacing %s", old.name, marker)
		}
		if _, ok := svc.Labels[naming.ReplaceLabel]; ok {
			return false, fmt.Errorf("member Service %s still has %s", old.name, naming.ReplaceLabel)
		}
		newHostID = svc.Annotations[naming.HostIDAnnotation]
		if newHostID == old.hostID {
			return false, fmt.Errorf("member Service %s still records the replaced host ID %s", old.name, old.hostID)
		}
		pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, old.name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pod.UID == old.podUID || !podReady(pod) {
			return false, fmt.Errorf("pod %s: new %v, ready %v", pod.Name, pod.UID != old.podUID, podReady(pod))
		}
		pvc, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, naming.PVCName(old.name), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if pvc.UID == old.claimUID {
			return false, fmt.Errorf("claim %s is still the replaced node's", pvc.Name)
		}
		if newHostID == "" {
			return false, fmt.Errorf("member Service %s records no host ID yet", old.name)
		}
		return true, nil
	})
	if !sawMarker {
		e.t.Errorf("member Service %s never carried %s=%s during the replacement", old.name, naming.ReplacingNodeHostIDLabel, old.hostID)
	}
	if !sawCondition {
		e.t.Errorf("rack %s of the ScyllaCluster never reported %s during the replacement", rack, scyllav1.RackConditionTypeMemberReplacing)
	}
	if !sawDatacenterCondition {
		e.t.Errorf("the ScyllaDBDatacenter never reported %s=True during the replacement", datacenterCondition)
	}

	sc = e.waitForRollout(sc.Name, "the ScyllaCluster to be rolled out after the replacement of "+old.name)
	if rackConditionTrue(sc, rack, scyllav1.RackConditionTypeMemberReplacing) {
		e.t.Errorf("rack %s still reports %s after the replacement: %+v", rack, scyllav1.RackConditionTypeMemberReplacing, sc.Status.Racks[rack].Conditions)
	}
	if sdc := e.scyllaDBDatacenter(e.t.Context(), sc); meta.IsStatusConditionTrue(sdc.Status.Conditions, datacenterCondition) {
		e.t.Errorf("the ScyllaDBDatacenter still reports %s=True after the replacement", datacenterCondition)
	}
	ring := e.waitForRing(sim, sc, old.hostID, "one ring with the replacing node "+newHostID+" in place of "+old.hostID)
	if i := slices.IndexFunc(ring.Members, func(m fakescylladb.Member) bool { return m.HostID == newHostID }); i >= 0 {
		m := ring.Members[i]
		if m.ReplaceHostID != old.hostID || !slices.Equal(m.Tokens, old.tokens) {
			e.t.Errorf("the replacing host %s replaced %q with tokens %q, want %s's place %q", newHostID, m.ReplaceHostID, m.Tokens, old.hostID, old.tokens)
		}
	}

	records, err := sim.Records(e.ns, old.name)
	if err != nil {
		e.t.Fatal(err)
	}
	// The last start that replaced old is the one that joined: earlier ones may have been refused and retried.
	joined := -1
	for i, r := range records {
		if r.ReplaceHostID == old.hostID {
			joined = i
		}
	}
	switch {
	case joined < 0:
		var starts []string
		for _, r := range records {
			starts = append(starts, fmt.Sprintf("host %q replacing %q (error %q): %q", r.HostID, r.ReplaceHostID, r.Error, r.Args))
		}
		e.t.Errorf("no start of ScyllaDB in the new pod %s replaced %s; starts:\n%s", old.name, old.hostID, strings.Join(starts, "\n"))
	case replaceOption(records[joined].Args) != old.hostID:
		e.t.Errorf("ScyllaDB of pod %s replaced %s without --replace-node-first-boot=%s from the sidecar: %q", old.name, old.hostID, old.hostID, records[joined].Args)
	case records[joined].Error != "" || records[joined].HostID != newHostID:
		e.t.Errorf("ScyllaDB of pod %s replacing %s started as host %q (error %q), but its member Service records %q", old.name, old.hostID,
			records[joined].HostID, records[joined].Error, newHostID)
	}
}

// rackConditionTrue tells whether rack of sc reports condition type as True.
func rackConditionTrue(sc *scyllav1.ScyllaCluster, rack string, condType scyllav1.RackConditionType) bool {
	return slices.ContainsFunc(sc.Status.Racks[rack].Conditions, func(c scyllav1.RackCondition) bool {
		return c.Type == condType && c.Status == corev1.ConditionTrue
	})
}

// waitForRing waits until the fake ScyllaDB registry (GET /v1/rings) holds one ring, whose members are Up and Normal
// and are exactly the host IDs the cluster's member Services record, without gone (unless empty).
func (e *testEnv) waitForRing(sim *nodesim.Simulator, sc *scyllav1.ScyllaCluster, gone, what string) fakescylladb.Ring {
	e.t.Helper()
	registry, err := fakescylladb.NewRegistryClient(sim.RegistryURL())
	if err != nil {
		e.t.Fatal(err)
	}
	var ring fakescylladb.Ring
	e.f.WaitFor(stepTimeout, what, func(ctx context.Context) (bool, error) {
		rings, err := registry.Rings(ctx)
		if err != nil {
			return false, err
		}
		if len(rings) != 1 {
			return false, fmt.Errorf("the registry holds %d rings, want one: %+v", len(rings), rings)
		}
		services, err := e.memberServices(ctx, sc.Name)
		if err != nil {
			return false, err
		}
		want := sets.New[string]()
		for _, svc := range services {
			want.Insert(svc.Annotations[naming.HostIDAnnotation])
		}
		got := sets.New[string]()
		var problems []string
		for _, m := range rings[0].Members {
			got.Insert(m.HostID)
			if m.Status != fakescylladb.StatusUp || m.State != fakescylladb.StateNormal {
				problems = append(problems, fmt.Sprintf("host %s is %s/%s, want Up/Normal", m.HostID, m.Status, m.State))
			}
		}
		if diff := cmp.Diff(sets.List(want), sets.List(got)); diff != "" {
			problems = append(problems, "the ring's host IDs differ from the member Services' (-want +got):\n"+diff)
		}
		if gone != "" && got.Has(gone) {
			problems = append(problems, "the replaced host "+gone+" is still in the ring")
		}
		if len(problems) != 0 {
			return false, errors.New(strings.Join(problems, "\n"))
		}
		ring = rings[0]
		return true, nil
	})
	return ring
}

// auditMark returns the current end of the audit log.
func (e *testEnv) auditMark() framework.AuditMark {
	e.t.Helper()
	mark, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		e.t.Fatal(err)
	}
	return mark
}

// expectOneDeletionEach checks that, since mark, the operator deleted node name's data claim and pod once each and
// nothing else: a replacement that restarted midway neither skips nor repeats a deletion.
func (e *testEnv) expectOneDeletionEach(mark framework.AuditMark, name string) {
	e.t.Helper()
	got, described := e.operatorDeletions(mark)
	want := map[string]int{"persistentvolumeclaims " + naming.PVCName(name): 1, "pods " + name: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		e.t.Errorf("the operator's deletions differ (-want +got):\n%s\nthe operator's deletions, failed ones too:\n%s", diff, described)
	}
}

// operatorDeletions counts the successful deletions of the operator in the namespace since mark by "<resource>
// <name>", and lists all its deletion requests, failed ones too.
func (e *testEnv) operatorDeletions(mark framework.AuditMark) (map[string]int, string) {
	e.t.Helper()
	events, err := e.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		e.t.Fatal(err)
	}
	deletions := append(operatorWrites(e.ns), verb("delete"))
	return countByObject(events, append(deletions, framework.Succeeded())...), describeRequests(events, deletions...)
}

// createOnNodePool creates a ScyllaCluster of one rack of three nodes, with automaticOrphanedNodeCleanup as given,
// on kubernetesNodes simulated Kubernetes nodes of the test's own (nodePoolLabel, deleted when the test ends),
// one ScyllaDB node per Kubernetes node, and waits for its rollout.
func (e *testEnv) createOnNodePool(kubernetesNodes int, automaticCleanup bool) *scyllav1.ScyllaCluster {
	e.t.Helper()
	sc := e.newScyllaCluster(1, 3)
	sc.Spec.AutomaticOrphanedNodeCleanup = automaticCleanup
	name := sc.Name
	specs := make([]framework.NodeSpec, 0, kubernetesNodes)
	for i := range kubernetesNodes {
		specs = append(specs, framework.NodeSpec{
			Name: fmt.Sprintf("%s-%d", e.ns, i), Region: "us-east-1", Zone: "us-east-1a",
			Labels: map[string]string{nodePoolLabel: e.ns},
			Taints: []corev1.Taint{{Key: nodePoolLabel, Value: e.ns, Effect: corev1.TaintEffectNoSchedule}},
		})
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if automaticCleanup {
			// Else the operator would start replacing the nodes left on the deleted Kubernetes nodes.
			if err := e.turnOffOrphanReplacement(ctx, name); err != nil {
				e.t.Logf("can't turn off the replacement of orphaned nodes before deleting the test's Kubernetes nodes: %v", err)
			}
		}
		for _, spec := range specs {
			if err := e.kube.CoreV1().Nodes().Delete(ctx, spec.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				e.t.Errorf("can't delete Node %s: %v", spec.Name, err)
			}
		}
	})
	if err := framework.AddNodes(e.t.Context(), e.c.ControlPlane, e.kube, specs, stepTimeout); err != nil {
		e.t.Fatalf("can't add the test's Kubernetes nodes: %v", err)
	}

	podLabels := metav1.SetAsLabelSelector(naming.NodePodLabels(naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)))
	for i := range sc.Spec.Datacenter.Racks {
		rack := &sc.Spec.Datacenter.Racks[i]
		if rack.Placement == nil {
			rack.Placement = &scyllav1.PlacementSpec{}
		}
		rack.Placement.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: nodePoolLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{e.ns},
			}}}},
		}}
		rack.Placement.PodAntiAffinity = &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: corev1.LabelHostname, LabelSelector: podLabels,
		}}}
		rack.Placement.Tolerations = append(rack.Placement.Tolerations, corev1.Toleration{
			Key: nodePoolLabel, Operator: corev1.TolerationOpEqual, Value: e.ns, Effect: corev1.TaintEffectNoSchedule,
		})
	}
	sc = e.createScyllaCluster(sc)
	sc = e.waitForRollout(sc.Name, "the ScyllaCluster on the test's own Kubernetes nodes to roll out")
	if sdc := e.scyllaDBDatacenter(e.t.Context(), sc); deref(sdc.Spec.DisableAutomaticOrphanedNodeReplacement) == automaticCleanup {
		e.t.Fatalf("ScyllaDBDatacenter %s has disableAutomaticOrphanedNodeReplacement %v for automaticOrphanedNodeCleanup %v",
			sdc.Name, sdc.Spec.DisableAutomaticOrphanedNodeReplacement, automaticCleanup)
	}
	return sc
}

// turnOffOrphanReplacement sets automaticOrphanedNodeCleanup false on the ScyllaCluster called name, if it exists, and
// waits until its ScyllaDBDatacenter has it.
func (e *testEnv) turnOffOrphanReplacement(ctx context.Context, name string) error {
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.AutomaticOrphanedNodeCleanup = false
		_, err = e.scylla.ScyllaV1().ScyllaClusters(e.ns).Update(ctx, sc, metav1.UpdateOptions{})
		return err
	})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return framework.WaitFor(ctx, stepTimeout, func(ctx context.Context) (bool, error) {
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return deref(sdc.Spec.DisableAutomaticOrphanedNodeReplacement), nil
	})
}

// loseKubernetesNode deletes the Kubernetes node of node n, as when a machine with local disks is gone for good, and
// then n's pod as pod garbage collection would (at once, without the 40 s it waits): nothing runs the pod any more, and
// its ScyllaDB stops.
func (e *testEnv) loseKubernetesNode(ctx context.Context, n replacedNode) {
	e.t.Helper()
	if err := e.kube.CoreV1().Nodes().Delete(ctx, n.kubernetesNode, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("can't delete Node %s: %v", n.kubernetesNode, err)
	}
	zero := int64(0)
	err := e.kube.CoreV1().Pods(e.ns).Delete(ctx, n.name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: metav1.NewUIDPreconditions(string(n.podUID))})
	// The operator may have deleted and the StatefulSet recreated the pod already.
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		e.t.Fatalf("can't delete pod %s of the deleted Node %s: %v", n.name, n.kubernetesNode, err)
	}
}

// nodeUntouched says how the operator started replacing node n, or returns nil: no replacement label or marker on its
// member Service, the same data claim, and the member Service still recording n's host ID.
func (e *testEnv) nodeUntouched(ctx context.Context, n replacedNode) error {
	svc, err := e.kube.CoreV1().Services(e.ns).Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	for _, label := range []string{naming.ReplaceLabel, naming.ReplacingNodeHostIDLabel} {
		if v, ok := svc.Labels[label]; ok {
			return fmt.Errorf("member Service %s got label %s=%q", n.name, label, v)
		}
	}
	if got := svc.Annotations[naming.HostIDAnnotation]; got != n.hostID {
		return fmt.Errorf("member Service %s records host ID %q, want %q", n.name, got, n.hostID)
	}
	pvc, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, naming.PVCName(n.name), metav1.GetOptions{})
	if err != nil {
		return err
	}
	if pvc.UID != n.claimUID || pvc.DeletionTimestamp != nil {
		return fmt.Errorf("claim %s was deleted or replaced", pvc.Name)
	}
	return nil
}
