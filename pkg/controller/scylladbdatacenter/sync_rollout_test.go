package scylladbdatacenter

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// rollTo makes sts's status say that its controller observed its spec and runs updated of its replicas at a new
// revision, ready of them ready and available.
func rollTo(sts *appsv1.StatefulSet, updated, ready int32) {
	settle(sts)
	sts.Status.UpdateRevision = sts.Name + "-rev2"
	sts.Status.UpdatedReplicas = updated
	sts.Status.CurrentReplicas = sts.Status.Replicas - updated
	sts.Status.ReadyReplicas = ready
	sts.Status.AvailableReplicas = ready
}

func TestSyncRollsOneRackAtATime(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2026.2.1"
	w.sdc.Generation++
	w, f := step(t, "version change", w, "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	checkRollout(t, f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet), 0)
	checkRollout(t, f.written("statefulsets", "basic-dc1-b").(*appsv1.StatefulSet), 3)

	// Neither StatefulSet controller has seen the change yet: nothing moves.
	w, _ = step(t, "not observed yet", w)

	// Rack a restarts its last node; rack b holds all of its pods.
	a, b := object[*appsv1.StatefulSet](t, w, "basic-dc1-a"), object[*appsv1.StatefulSet](t, w, "basic-dc1-b")
	rollTo(a, 1, 2)
	rollTo(b, 0, 3)
	w, _ = step(t, "rack a rolling", w)

	// Rack a is updated but one node is not available yet (minReadySeconds): rack b still waits.
	a = object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	rollTo(a, 3, 3)
	a.Status.AvailableReplicas = 2
	a.Status.CurrentRevision = a.Status.UpdateRevision
	w, _ = step(t, "rack a not available", w)

	// Rack a is done: rack b's turn.
	settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-a"))
	w, f = step(t, "rack a done", w, "update statefulsets basic-dc1-b")
	checkRollout(t, f.written("statefulsets", "basic-dc1-b").(*appsv1.StatefulSet), 0)

	// Rack b rolling, then done: nothing more to do.
	rollTo(object[*appsv1.StatefulSet](t, w, "basic-dc1-b"), 1, 2)
	w, _ = step(t, "rack b rolling", w)
	settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-b"))
	_, _ = step(t, "rolled out", w)
}

func TestSyncStartsNoRolloutWhileANodeIsLeaving(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Generation++
	w, _ = step(t, "scale-down requested", w, "update services basic-dc1-a-2")

	// A new version while node a-2 decommissions: restarting it, or any other node, would break the decommission.
	w = newVersionHeldBack(t, w)

	// The node is decommissioned and removed; then rack a rolls.
	object[*corev1.Service](t, w, "basic-dc1-a-2").Labels["scylla/decommissioned"] = "true"
	w, f := step(t, "decommissioned", w, "update statefulsets basic-dc1-a")
	checkRollout(t, f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet), 2)
	rollTo(object[*appsv1.StatefulSet](t, w, "basic-dc1-a"), 0, 2)
	w = without[*corev1.Pod](w, "basic-dc1-a-2")
	w, _ = step(t, "node removed", w, "delete persistentvolumeclaims data-basic-dc1-a-2", "delete services basic-dc1-a-2")
	w = without[*corev1.PersistentVolumeClaim](w, "data-basic-dc1-a-2")
	_, f = step(t, "rollout starts", w, "update statefulsets basic-dc1-a")
	checkRollout(t, f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet), 0)
}

// newVersionHeldBack changes the version of w's datacenter while a node operation runs: both StatefulSets get the new
// template with every pod held at the current one. It returns the world once both StatefulSet controllers observed it.
func newVersionHeldBack(t *testing.T, w world) world {
	t.Helper()
	w.sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2026.2.1"
	w.sdc.Generation++
	w, f := step(t, "version change", w, "update statefulsets basic-dc1-a", "update statefulsets basic-dc1-b")
	checkRollout(t, f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet), 3)
	checkRollout(t, f.written("statefulsets", "basic-dc1-b").(*appsv1.StatefulSet), 3)
	for _, name := range []string{"basic-dc1-a", "basic-dc1-b"} {
		rollTo(object[*appsv1.StatefulSet](t, w, name), 0, 3)
	}
	return w
}
