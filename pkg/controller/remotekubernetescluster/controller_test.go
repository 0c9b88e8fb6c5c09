package remotekubernetescluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/cache"
)

func TestScyllaDBClusterEventsEnqueueTheRemoteKubernetesClustersTheyConcern(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), nil)
	handlers := f.controller.scyllaDBClusterHandlerFuncs()

	sc := newScyllaDBCluster("scylla", "basic", "dc2", "dc3", "dc2")
	handlers.OnAdd(sc, false)
	if diff := cmp.Diff([]string{"dc2", "dc3"}, f.queue.takeAdded()); diff != "" {
		t.Errorf("add: unexpected keys (-want +got):\n%s", diff)
	}

	// A status write or a resync changes no reference.
	updated := sc.DeepCopy()
	updated.ResourceVersion = "2"
	updated.Status.ObservedGeneration = new(int64(1))
	handlers.OnUpdate(sc, updated)
	if added := f.queue.takeAdded(); len(added) != 0 {
		t.Errorf("update without a reference change enqueued %v", added)
	}

	// dc3 is no longer used and dc4 is: both are told.
	moved := newScyllaDBCluster("scylla", "basic", "dc2", "dc4")
	handlers.OnUpdate(sc, moved)
	if diff := cmp.Diff([]string{"dc3", "dc4"}, f.queue.takeAdded()); diff != "" {
		t.Errorf("update: unexpected keys (-want +got):\n%s", diff)
	}

	handlers.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic", Obj: moved})
	if diff := cmp.Diff([]string{"dc2", "dc4"}, f.queue.takeAdded()); diff != "" {
		t.Errorf("delete: unexpected keys (-want +got):\n%s", diff)
	}
}
