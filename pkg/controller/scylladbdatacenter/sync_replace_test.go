package scylladbdatacenter

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// testHostID is the host ID the sidecar of the node named name records: a UUID derived from the name, so that every
// node has its own.
func testHostID(name string) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(name)).String()
}

// replaceWorld returns the basic datacenter converged, every node running ready with a host ID recorded on its
// member Service, and every pod and claim with a UID.
func replaceWorld(t *testing.T) world {
	t.Helper()
	w := withNodes(convergedWorld(t))
	for _, obj := range w.objects {
		switch o := obj.(type) {
		case *corev1.Pod:
			o.UID = types.UID(o.Name + "-uid")
			setPodReady(o, true)
		case *corev1.Service:
			if o.Labels[naming.ScyllaServiceTypeLabel] == naming.ScyllaServiceTypeMember {
				o.Annotations[naming.HostIDAnnotation] = testHostID(o.Name)
				o.ResourceVersion = "1"
			}
		}
	}
	f := newFixture(t, w)
	f.syncWriting("nodes ready")
	return f.world()
}

func setPodReady(pod *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
}

// recreateNode puts into w what the StatefulSet controller creates for the node name after its pod and claim are
// gone: a new claim and a new pod, not ready yet, with new UIDs.
func recreateNode(t *testing.T, w world, name, generation string) world {
	t.Helper()
	sts := object[*appsv1.StatefulSet](t, w, name[:strings.LastIndex(name, "-")])
	ordinal, err := naming.PodOrdinal(name)
	if err != nil {
		t.Fatal(err)
	}
	pod := newPod(sts, ordinal)
	pod.UID = types.UID(name + "-uid-" + generation)
	setPodReady(pod, false)
	pvc := newDataClaim(sts, ordinal)
	pvc.UID = types.UID(pvc.Name + "-uid-" + generation)
	w.objects = append(w.objects, pod, pvc)
	return w
}

// markReplacing makes the member Service of node in w show its replacement started, recording objects.
func markReplacing(t *testing.T, w world, node string, objects replacedObjects) {
	t.Helper()
	record, err := json.Marshal(objects)
	if err != nil {
		t.Fatal(err)
	}
	svc := object[*corev1.Service](t, w, node)
	svc.Labels[naming.ReplaceLabel] = ""
	svc.Labels[naming.ReplacingNodeHostIDLabel] = testHostID(node)
	svc.Annotations[naming.ReplacingNodeObjectsAnnotation] = string(record)
}

// replacementMarkers returns what a member Service carries of a replacement: the two labels and the record.
func replacementMarkers(svc *corev1.Service) map[string]string {
	markers := map[string]string{}
	for _, key := range []string{naming.ReplaceLabel, naming.ReplacingNodeHostIDLabel} {
		if v, ok := svc.Labels[key]; ok {
			markers[key] = v
		}
	}
	if v, ok := svc.Annotations[naming.ReplacingNodeObjectsAnnotation]; ok {
		markers[naming.ReplacingNodeObjectsAnnotation] = v
	}
	return markers
}

// lastStatus returns the status the fixture last applied.
func (f *fixture) lastStatus() scyllav1alpha1.ScyllaDBDatacenterStatus {
	f.t.Helper()
	return f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status
}

// TestSyncReplacesANodeOnRequest walks a user-requested replacement through every state, each sync by a new
// controller (an operator restart between any two steps), and counts its writes: one patch to start, one delete of
// the claim and one of the pod, one patch to finish; nothing at rest before or after.
func TestSyncReplacesANodeOnRequest(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-1"
	oldHostID, newHostID := testHostID(node), testHostID(node+"-new")

	w := replaceWorld(t)
	w, _ = step(t, "at rest", w)

	object[*corev1.Service](t, w, node).Labels[naming.ReplaceLabel] = ""
	w, f := step(t, "requested", w,
		"patch services "+node,
		"delete persistentvolumeclaims data-"+node,
		"delete pods "+node,
	)
	record, _ := json.Marshal(replacedObjects{PersistentVolumeClaim: types.UID("data-" + node + "-uid"), Pod: types.UID(node + "-uid")})
	wantMarkers := map[string]string{naming.ReplaceLabel: "", naming.ReplacingNodeHostIDLabel: oldHostID, naming.ReplacingNodeObjectsAnnotation: string(record)}
	if diff := cmp.Diff(wantMarkers, replacementMarkers(object[*corev1.Service](t, w, node))); diff != "" {
		t.Fatalf("unexpected markers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal ReplacingNode Replacing node " + node + " (host ID " + oldHostID + "): deleting its data PersistentVolumeClaim and pod"}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	status := f.lastStatus()
	rackCondition := meta.FindStatusCondition(status.Conditions, naming.RackMemberReplacingConditionType("a"))
	if rackCondition == nil || rackCondition.Status != metav1.ConditionTrue || !strings.Contains(rackCondition.Message, node) {
		t.Errorf("expected a True rack condition naming %s, got %+v", node, rackCondition)
	}
	if meta.FindStatusCondition(status.Conditions, naming.RackMemberReplacingConditionType("b")) != nil {
		t.Errorf("rack b has a replacing condition: %+v", status.Conditions)
	}
	if progressing := meta.FindStatusCondition(status.Conditions, "Progressing"); progressing == nil || progressing.Status != metav1.ConditionTrue || !strings.Contains(progressing.Message, node) {
		t.Errorf("expected Progressing True naming %s, got %+v", node, progressing)
	}

	w, f = step(t, "waiting for the pod", w)
	wantMessage := `rack "a": replacing node ` + node + " (host ID " + oldHostID + "): waiting for its StatefulSet to create pod " + node
	if c := meta.FindStatusCondition(f.lastStatus().Conditions, nodeReplacementControllerName+"Progressing"); c == nil || c.Message != wantMessage {
		t.Errorf("expected %sProgressing with message %q, got %+v", nodeReplacementControllerName, wantMessage, c)
	}
	w = recreateNode(t, w, node, "2")
	w, _ = step(t, "new node joining", w)

	// The sidecar records the new host ID before the pod is ready: still replacing.
	object[*corev1.Service](t, w, node).Annotations[naming.HostIDAnnotation] = newHostID
	w, _ = step(t, "new host ID, not ready", w)

	setPodReady(object[*corev1.Pod](t, w, node), true)
	w, f = step(t, "new node ready", w, "patch services "+node)
	if diff := cmp.Diff(map[string]string{}, replacementMarkers(object[*corev1.Service](t, w, node))); diff != "" {
		t.Errorf("markers left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal ReplacedNode Node " + node + " replaced host ID " + oldHostID + "; its new host ID is " + newHostID}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(f.lastStatus().Conditions, naming.RackMemberReplacingConditionType("a")); c != nil {
		t.Errorf("the rack condition is left: %+v", c)
	}
	for _, name := range []string{"data-basic-dc1-a-0", "data-basic-dc1-a-2", "data-basic-dc1-b-1"} {
		object[*corev1.PersistentVolumeClaim](t, w, name)
	}

	step(t, "at rest after", w)
}

// TestSyncResumesAReplacementAfterEachStep restarts the operator after each deletion: the next one deletes what is
// left, and never the new node's claim or pod.
func TestSyncResumesAReplacementAfterEachStep(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-b-2"

	w := replaceWorld(t)
	record := replacedObjects{PersistentVolumeClaim: types.UID("data-" + node + "-uid"), Pod: types.UID(node + "-uid")}
	markReplacing(t, w, node, record)

	t.Run("started, nothing deleted", func(t *testing.T) {
		t.Parallel()
		step(t, "restart", w, "delete persistentvolumeclaims data-"+node, "delete pods "+node)
	})
	t.Run("claim deleted", func(t *testing.T) {
		t.Parallel()
		step(t, "restart", without[*corev1.PersistentVolumeClaim](w, "data-"+node), "delete pods "+node)
	})
	t.Run("claim being deleted", func(t *testing.T) {
		t.Parallel()
		w := replaceWorld(t)
		w.objects = append(w.objects[:0:0], w.objects...)
		for i, obj := range w.objects {
			if pvc, ok := obj.(*corev1.PersistentVolumeClaim); ok && pvc.Name == "data-"+node {
				pvc = pvc.DeepCopy()
				pvc.DeletionTimestamp = &testNow
				pvc.Finalizers = []string{"kubernetes.io/pvc-protection"}
				w.objects[i] = pvc
			}
		}
		markReplacing(t, w, node, record)
		step(t, "restart", w, "delete pods "+node)
	})
	t.Run("both deleted, new ones created", func(t *testing.T) {
		t.Parallel()
		w := without[*corev1.Pod](without[*corev1.PersistentVolumeClaim](w, "data-"+node), node)
		step(t, "restart", recreateNode(t, w, node, "2"))
	})
}

// TestSyncTakesNoReplaceStepTwiceOverAStaleCache syncs again before the informers show the first sync's writes: the
// marker, the claim's and the pod's deletions are not repeated.
func TestSyncTakesNoReplaceStepTwiceOverAStaleCache(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-0"
	w := replaceWorld(t)
	object[*corev1.Service](t, w, node).Labels[naming.ReplaceLabel] = ""
	f := newFixture(t, w)
	want := []string{"patch services " + node, "delete persistentvolumeclaims data-" + node, "delete pods " + node}
	f.syncWriting("requested", want...)
	f.syncWriting("stale cache", want...)
}

// TestSyncWaitsToReplace checks requests that can't start: nothing is written but the status, which says why.
func TestSyncWaitsToReplace(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-1"
	for _, tc := range []struct {
		name         string
		change       func(t *testing.T, w world)
		wantProgress string
	}{
		{
			name: "host ID unknown",
			change: func(t *testing.T, w world) {
				delete(object[*corev1.Service](t, w, node).Annotations, naming.HostIDAnnotation)
			},
			wantProgress: "can't replace node " + node + " yet: its host ID is unknown",
		},
		{
			name: "a node of another rack is not ready",
			change: func(t *testing.T, w world) {
				setPodReady(object[*corev1.Pod](t, w, "basic-dc1-b-0"), false)
			},
			wantProgress: "waiting for node basic-dc1-b-0 to be ready before replacing node " + node,
		},
		{
			name: "a node is decommissioning",
			change: func(t *testing.T, w world) {
				object[*corev1.Service](t, w, "basic-dc1-b-2").Labels[naming.DecommissionedLabel] = naming.DecommissionedLabelFalse
			},
			wantProgress: "waiting for node basic-dc1-b-2 to be decommissioned and removed before replacing node " + node,
		},
		{
			name: "another node is being replaced",
			change: func(t *testing.T, w world) {
				markReplacing(t, w, "basic-dc1-b-0", replacedObjects{})
			},
			wantProgress: "waiting for the replacement of node basic-dc1-b-0 to finish before replacing node " + node,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := replaceWorld(t)
			object[*corev1.Service](t, w, node).Labels[naming.ReplaceLabel] = ""
			tc.change(t, w)
			f := newFixture(t, w)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			for _, write := range f.kubeWrites() {
				if strings.HasSuffix(write, " "+node) || strings.HasSuffix(write, "data-"+node) {
					t.Errorf("unexpected write %q", write)
				}
			}
			progressing := meta.FindStatusCondition(f.lastStatus().Conditions, nodeReplacementControllerName+"Progressing")
			if progressing == nil || progressing.Status != metav1.ConditionTrue || !strings.Contains(progressing.Message, tc.wantProgress) {
				t.Errorf("expected %sProgressing True with %q, got %+v", nodeReplacementControllerName, tc.wantProgress, progressing)
			}
		})
	}
}

// TestSyncRefusesAHostIDThatIsNoUUID: a host ID annotation that is not a UUID is reported and not retried, and
// nothing is deleted.
func TestSyncRefusesAHostIDThatIsNoUUID(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-1"
	w := replaceWorld(t)
	svc := object[*corev1.Service](t, w, node)
	svc.Labels[naming.ReplaceLabel] = ""
	svc.Annotations[naming.HostIDAnnotation] = "not-a-host-id"
	f := syncSpecError(t, w, nodeReplacementControllerName+`Degraded: can't replace node `+node+`: annotation `+naming.HostIDAnnotation+
		` of its member Service: "not-a-host-id" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`)
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("unexpected writes %v", writes)
	}
}

// TestSyncBlocksScalingWhileReplacing: a rack asked to grow or shrink waits while a node of the datacenter is replaced.
func TestSyncBlocksScalingWhileReplacing(t *testing.T) {
	t.Parallel()
	for _, nodes := range []int32{2, 4} {
		w := replaceWorld(t)
		markReplacing(t, w, "basic-dc1-a-0", replacedObjects{})
		w.sdc.Spec.Racks[1].Nodes = new(nodes)
		w.sdc.Generation++
		f := newFixture(t, w)
		f.syncWriting("scaling requested")
		progressing := meta.FindStatusCondition(f.lastStatus().Conditions, "StatefulSetControllerProgressing")
		want := "waiting for the replacement of node basic-dc1-a-0 to finish before scaling"
		if progressing == nil || !strings.Contains(progressing.Message, want) {
			t.Errorf("scaling rack b to %d nodes: expected StatefulSetControllerProgressing with %q, got %+v", nodes, want, progressing)
		}
	}
}

// TestSyncStartsNoRolloutWhileReplacing: a new version while a node is replaced holds every rack's pods, and the
// rollout starts once the replacement is over.
func TestSyncStartsNoRolloutWhileReplacing(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-b-0"
	w := replaceWorld(t)
	markReplacing(t, w, node, replacedObjects{})
	w = newVersionHeldBack(t, w)

	object[*corev1.Service](t, w, node).Annotations[naming.HostIDAnnotation] = testHostID(node + "-new")
	object[*corev1.Pod](t, w, node).UID = "new-uid"
	w, _ = step(t, "replaced", w, "patch services "+node)
	_, f := step(t, "rollout starts", w, "update statefulsets basic-dc1-a")
	checkRollout(t, f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet), 0)
}

// TestSyncStartsNoRolloutWhileAReplacementIsStuck: a replacement whose markers are broken is reported and still holds
// every other node operation back.
func TestSyncStartsNoRolloutWhileAReplacementIsStuck(t *testing.T) {
	t.Parallel()
	const node = "basic-dc1-a-2"
	w := replaceWorld(t)
	markReplacing(t, w, node, replacedObjects{})
	object[*corev1.Service](t, w, node).Labels[naming.ReplacingNodeHostIDLabel] = "not-a-host-id"
	w = newVersionHeldBack(t, w)
	c := meta.FindStatusCondition(w.sdc.Status.Conditions, naming.RackMemberReplacingConditionType("a"))
	if want := `rack "a": replacing node ` + node + " (stuck, see Degraded)"; c == nil || c.Status != metav1.ConditionTrue || c.Message != want {
		t.Errorf("expected rack condition %q, got %+v", want, c)
	}
}
