package scylladbdatacenter

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// newSequentialSDC returns newBasicSDC with a third rack "c" and without parallel node operations, as for a ScyllaDB
// that can't bootstrap several nodes at once.
func newSequentialSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := newBasicSDC()
	sdc.Spec.EnableParallelNodeOperations = nil
	sdc.Spec.Racks = append(sdc.Spec.Racks, scyllav1alpha1.RackSpec{Name: "c"})
	return sdc
}

// replicas returns the replicas of every StatefulSet of w, by name.
func replicas(w world) map[string]int32 {
	out := map[string]int32{}
	for _, obj := range w.objects {
		if sts, ok := obj.(*appsv1.StatefulSet); ok {
			out[sts.Name] = *sts.Spec.Replicas
		}
	}
	return out
}

// checkReplicas fails the test unless the StatefulSets of w have the replicas want.
func checkReplicas(t *testing.T, name string, w world, want map[string]int32) {
	t.Helper()
	if diff := cmp.Diff(want, replicas(w)); diff != "" {
		t.Fatalf("%s: unexpected StatefulSet replicas (-want +got):\n%s", name, diff)
	}
}

// checkProgressingMessage fails the test unless the last status f wrote is Progressing with a message containing
// want.
func (f *fixture) checkProgressingMessage(name, want string) {
	f.t.Helper()
	status := f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status
	c := meta.FindStatusCondition(status.Conditions, "Progressing")
	if c == nil || c.Status != "True" || !strings.Contains(c.Message, want) {
		f.t.Errorf("%s: expected Progressing True with a message containing %q, got %+v", name, want, c)
	}
}

func TestSyncScalesUpOneRackAtATimeWithoutParallelNodeOperations(t *testing.T) {
	t.Parallel()

	// Creation: only the first rack gets its StatefulSet; the others wait for its nodes to join, and get theirs when
	// they grow.
	f := newFixture(t, world{sdc: newSequentialSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w := f.world()
	checkReplicas(t, "creation", w, map[string]int32{"basic-dc1-a": 3})
	f.checkProgressingMessage("creation", `rack "b": waiting for rack "a" to finish scaling up before scaling up from 0 to 3 nodes`)

	// While rack a's nodes join, no other rack grows, however often the operator syncs.
	a := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	settle(a)
	a.Status.ReadyReplicas = 1
	a.Status.AvailableReplicas = 1
	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w = f.world()
	checkReplicas(t, "rack a joining", w, map[string]int32{"basic-dc1-a": 3})
	f.checkProgressingMessage("rack a joining", `rack "b": waiting for every node of datacenter "dc1" to be ready before scaling up from 0 to 3 nodes`)

	// Rack a has settled: rack b grows, rack c still waits.
	f = newFixture(t, withNodes(w))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w = f.world()
	checkReplicas(t, "rack a settled", w, map[string]int32{"basic-dc1-a": 3, "basic-dc1-b": 3})
	f.checkProgressingMessage("rack a settled", `rack "c": waiting for rack "b" to finish scaling up before scaling up from 0 to 3 nodes`)

	// Rack b has settled: rack c grows last.
	settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-b"))
	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	checkReplicas(t, "rack b settled", f.world(), map[string]int32{"basic-dc1-a": 3, "basic-dc1-b": 3, "basic-dc1-c": 3})
}

func TestSyncScalesUpEveryRackAtOnceWithParallelNodeOperations(t *testing.T) {
	t.Parallel()

	sdc := newSequentialSDC()
	sdc.Spec.EnableParallelNodeOperations = new(true)
	f := newFixture(t, world{sdc: sdc})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	checkReplicas(t, "creation", f.world(), map[string]int32{"basic-dc1-a": 3, "basic-dc1-b": 3, "basic-dc1-c": 3})
}

// TestSyncScalesUpTheNextRackOnItsPredecessorsReadyPods checks the sync reads the rack's pods, not only its
// StatefulSet's status, to tell that a rack's nodes joined: the StatefulSet controller reports a pod's readiness late
// when it is busy, and the next rack must not wait for that.
func TestSyncScalesUpTheNextRackOnItsPredecessorsReadyPods(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newSequentialSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	w := f.world()
	a := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	settle(a)
	a.Status.ReadyReplicas, a.Status.AvailableReplicas = 0, 0
	for ordinal := range *a.Spec.Replicas {
		pod := newPod(a, ordinal)
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		w.objects = append(w.objects, pod, newDataClaim(a, ordinal))
	}

	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	checkReplicas(t, "rack a's pods ready", f.world(), map[string]int32{"basic-dc1-a": 3, "basic-dc1-b": 3})

	// The same with one pod not ready: rack b waits.
	w.objects = slices.Clone(w.objects)
	for i, obj := range w.objects {
		if pod, ok := obj.(*corev1.Pod); ok && pod.Name == "basic-dc1-a-2" {
			notReady := pod.DeepCopy()
			notReady.Status.Conditions[0].Status = corev1.ConditionFalse
			w.objects[i] = notReady
		}
	}
	f = newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	checkReplicas(t, "a pod of rack a not ready", f.world(), map[string]int32{"basic-dc1-a": 3})
}

// TestSyncKeepsTheServiceOfANodeAboutToBeAddedWhileItsStatefulSetCannotBeWritten checks that the member Service a
// scale-up creates ahead of the StatefulSet write is kept when that write fails: it never served a node, and deleting
// it would only have the next sync create it again, a write loop for as long as the StatefulSet can't be written.
func TestSyncKeepsTheServiceOfANodeAboutToBeAddedWhileItsStatefulSetCannotBeWritten(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(4))
	w.sdc.Generation++
	failingStatefulSetUpdates := func(f *fixture) {
		f.kubeClient.PrependReactor("update", "statefulsets", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewServiceUnavailable("etcd is down")
		})
	}

	for i, name := range []string{"scale-up requested", "retry", "retry again"} {
		f := newFixture(t, w)
		failingStatefulSetUpdates(f)
		err := f.sync()
		want := []string{"update statefulsets basic-dc1-a"}
		if i == 0 {
			want = append([]string{"create services basic-dc1-a-3"}, want...)
		}
		if diff := cmp.Diff(want, f.kubeWrites()); diff != "" {
			t.Fatalf("%s: unexpected writes (-want +got):\n%s", name, diff)
		}
		if err == nil {
			t.Fatalf("%s: expected the StatefulSet write to fail", name)
		}
		w = f.world()
	}

	// Once the API server takes the write, the rack grows with the Service created first.
	w, f := step(t, "StatefulSet written", w, "update statefulsets basic-dc1-a")
	if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 4 {
		t.Errorf("expected 4 replicas, got %d", got)
	}
	object[*corev1.Service](t, w, "basic-dc1-a-3")
}
