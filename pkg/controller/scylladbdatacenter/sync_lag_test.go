package scylladbdatacenter

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// catchUp puts what the API server holds now into f's caches, except the objects skip rejects, and forgets the
// actions so far: the next sync on f sees the caches partly caught up with the previous one's writes.
func (f *fixture) catchUp(skip func(obj runtime.Object) bool) {
	f.t.Helper()
	for _, obj := range f.world().objects {
		if skip == nil || !skip(obj) {
			f.cache(obj)
		}
	}
	f.kubeClient.ClearActions()
	f.scyllaClient.ClearActions()
}

func isStatefulSet(obj runtime.Object) bool {
	_, ok := obj.(*appsv1.StatefulSet)
	return ok
}

func TestSyncKeepsMemberServicesWhileTheCacheLacksTheNewStatefulSet(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	// Service events requeue the datacenter before the StatefulSet informer has seen the StatefulSets.
	f.catchUp(isStatefulSet)
	f.syncWriting("StatefulSets not in the cache yet")
}

func TestSyncKeepsANewNodesServiceWhileTheCacheLacksTheScaleUp(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(4))
	w.sdc.Generation++
	f := newFixture(t, w)
	f.syncWriting("scale-up", "create services basic-dc1-a-3", "update statefulsets basic-dc1-a")
	// The new node's Service is in the cache, the StatefulSet's new replica count is not.
	f.catchUp(isStatefulSet)
	f.syncWriting("StatefulSet behind in the cache")
}

func TestSyncRecreatesAMissingStatefulSetWithTheNodesThatExist(t *testing.T) {
	t.Parallel()

	t.Run("orphaned pods during a decommission", func(t *testing.T) {
		t.Parallel()
		// kubectl delete --cascade=orphan, or resourceapply recreating it: the pods keep running.
		w := without[*appsv1.StatefulSet](decommissionedA2(t), "basic-dc1-a")
		// The decommissioned node's label becomes the operator's: it is the only record of the decommission.
		w, f := step(t, "StatefulSet gone", w, "update services basic-dc1-a-2", "create statefulsets basic-dc1-a")
		if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 3 {
			t.Fatalf("the StatefulSet was recreated with %d replicas, not the 3 nodes that run", got)
		}

		// Once the recreated StatefulSet is seen, the decommissioned node is removed.
		settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-a"))
		_, f = step(t, "StatefulSet back", w, "update statefulsets basic-dc1-a")
		if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 2 {
			t.Errorf("expected 2 replicas, got %d", got)
		}
	})

	t.Run("a cascading delete that kept the data", func(t *testing.T) {
		t.Parallel()
		w := convergedWorld(t)
		for ordinal := range int32(3) {
			w.objects = append(w.objects, newDataClaim(object[*appsv1.StatefulSet](t, w, "basic-dc1-a"), ordinal))
		}
		w = without[*appsv1.StatefulSet](w, "basic-dc1-a")
		_, f := step(t, "StatefulSet and pods gone", w, "create statefulsets basic-dc1-a")
		if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 3 {
			t.Errorf("the StatefulSet was recreated with %d replicas, not 3", got)
		}
	})
}

func TestSyncNeverAsksTwoNodesToLeaveWhileTheCacheLags(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Generation++
	f := newFixture(t, w)
	f.syncWriting("scale-down requested", "update services basic-dc1-a-2")

	// The user changes their mind: rack a back to 3, rack b down to 2. The cache has the new spec but not yet the
	// decommission request on node a-2, which its sidecar is already acting on.
	f.catchUp(func(obj runtime.Object) bool {
		_, ok := obj.(*corev1.Service)
		return ok
	})
	sdc := f.world().sdc
	sdc.Spec.Racks[0].Nodes = new(int32(3))
	sdc.Spec.Racks[1].Nodes = new(int32(2))
	sdc.Generation++
	f.cache(sdc)
	f.syncWriting("decommission request not in the cache yet")
}
