package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestSyncAdoptsOrphansQuietly(t *testing.T) {
	t.Parallel()

	// The datacenter was deleted with --cascade=orphan and created again: its objects carry its labels but no
	// controller.
	w := withNodes(convergedWorld(t))
	for _, obj := range []metav1.Object{
		object[*appsv1.StatefulSet](t, w, "basic-dc1-a"),
		object[*corev1.Service](t, w, "basic-client"),
		object[*policyv1.PodDisruptionBudget](t, w, "basic"),
	} {
		obj.SetOwnerReferences(nil)
		// Adoption patches are guarded by both; the fake API server sets neither.
		obj.SetUID(types.UID(obj.GetName() + "-uid"))
		obj.SetResourceVersion("1")
	}

	w, f := step(t, "adoption", w,
		"patch statefulsets basic-dc1-a",
		"patch services basic-client",
		"patch poddisruptionbudgets basic",
	)
	if events := f.events(); len(events) != 0 {
		t.Errorf("adopting recorded events: %q", events)
	}
	f.checkDegraded("")

	// Once the cache has the adopted objects, nothing is left to do.
	_, f = step(t, "adopted", w)
	if diff := cmp.Diff([]string(nil), f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
}
