package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// step runs one sync over w and checks its writes to Kubernetes objects; it returns the world after it.
func step(t *testing.T, name string, w world, wantWrites ...string) (world, *fixture) {
	t.Helper()
	f := newFixture(t, w)
	f.syncWriting(name, wantWrites...)
	return f.world(), f
}

// syncWriting runs one sync on f and checks the writes to Kubernetes objects since the fixture was made or last
// caught up.
func (f *fixture) syncWriting(name string, wantWrites ...string) {
	f.t.Helper()
	if err := f.sync(); err != nil {
		f.t.Fatalf("%s: unexpected error: %v", name, err)
	}
	if diff := cmp.Diff(wantWrites, f.kubeWrites(), cmpopts.EquateEmpty()); diff != "" {
		f.t.Fatalf("%s: unexpected writes (-want +got):\n%s", name, diff)
	}
}

func TestSyncScalesDownByDecommissionOneNodeAtATime(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Generation++

	// The last node of the rack is asked to decommission; nothing else changes.
	w, f := step(t, "scale-down requested", w, "update services basic-dc1-a-2")
	if got := f.written("services", "basic-dc1-a-2").(*corev1.Service).Labels["scylla/decommissioned"]; got != "false" {
		t.Fatalf("expected the decommission label \"false\", got %q", got)
	}

	// While the sidecar decommissions the node, the operator waits, however often it syncs.
	w, _ = step(t, "decommissioning", w)
	w, _ = step(t, "still decommissioning", w)

	// The sidecar reports the node decommissioned: the StatefulSet loses it, its Service and data stay for now.
	object[*corev1.Service](t, w, "basic-dc1-a-2").Labels["scylla/decommissioned"] = "true"
	w, f = step(t, "decommissioned", w, "update statefulsets basic-dc1-a")
	if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 2 {
		t.Fatalf("expected 2 replicas, got %d", got)
	}

	// The pod is still terminating: its Service and data are kept.
	w, _ = step(t, "pod terminating", w)

	// The StatefulSet controller removed the pod: the node's data and Service go, data first.
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	settle(sts)
	w = without[*corev1.Pod](w, "basic-dc1-a-2")
	w, f = step(t, "pod gone", w,
		"delete persistentvolumeclaims data-basic-dc1-a-2",
		"delete services basic-dc1-a-2",
	)
	if diff := cmp.Diff([]string{
		"Normal PersistentVolumeClaimDeleted PersistentVolumeClaim data-basic-dc1-a-2 of decommissioned node basic-dc1-a-2 deleted",
		"Normal ServiceDeleted Service scylla/basic-dc1-a-2 deleted because it is no longer wanted",
	}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	// Converged at two nodes: nothing more to do, and the other nodes' data is untouched.
	w, _ = step(t, "converged", w)
	for _, name := range []string{"data-basic-dc1-a-0", "data-basic-dc1-a-1", "data-basic-dc1-b-2"} {
		object[*corev1.PersistentVolumeClaim](t, w, name)
	}
	if got := *w.sdc.Status.Racks[0].Nodes; got != 2 {
		t.Errorf("expected the status to count 2 nodes in rack a, got %d", got)
	}
}

// decommissionedA2 returns the converged world with its nodes after rack a was scaled down to 2 nodes and the
// sidecar reported node 2 decommissioned; the StatefulSet still counts it.
func decommissionedA2(t *testing.T) world {
	t.Helper()
	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Generation++
	w, _ = step(t, "scale-down requested", w, "update services basic-dc1-a-2")
	object[*corev1.Service](t, w, "basic-dc1-a-2").Labels["scylla/decommissioned"] = "true"
	return w
}

func TestSyncDoesNotScaleUpOverADecommissionedNodesData(t *testing.T) {
	t.Parallel()

	// Node 2 of rack a was decommissioned and the StatefulSet lost it; its pod is gone.
	w, _ := step(t, "decommissioned", decommissionedA2(t), "update statefulsets basic-dc1-a")
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	settle(sts)
	w = without[*corev1.Pod](w, "basic-dc1-a-2")
	w.sdc.Spec.Racks[0].Nodes = new(int32(3))
	w.sdc.Generation++

	// The rack asks for 3 nodes again, but node 2's data and Service must go before it comes back.
	w, _ = step(t, "cleanup first", w,
		"delete persistentvolumeclaims data-basic-dc1-a-2",
		"delete services basic-dc1-a-2",
	)

	// The claim lingers while being deleted: still no scale-up.
	claim := newDataClaim(sts, 2)
	claim.DeletionTimestamp = new(testNow)
	claim.Finalizers = []string{"kubernetes.io/pvc-protection"}
	w.objects = append(w.objects, claim)
	w, _ = step(t, "claim terminating", w)

	// Once it is gone, the node comes back with a fresh Service.
	w = without[*corev1.PersistentVolumeClaim](w, "data-basic-dc1-a-2")
	_, f := step(t, "scale-up", w,
		"create services basic-dc1-a-2",
		"update statefulsets basic-dc1-a",
	)
	if got := f.written("services", "basic-dc1-a-2").(*corev1.Service).Labels; got["scylla/decommissioned"] != "" {
		t.Errorf("the new node's Service carries a decommission label: %v", got)
	}
}

func TestSyncDecommissionsOneNodeAtATimePerDatacenter(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Spec.Racks[1].Nodes = new(int32(2))
	w.sdc.Generation++

	w, _ = step(t, "first rack", w, "update services basic-dc1-a-2")
	object[*corev1.Service](t, w, "basic-dc1-a-2").Labels["scylla/decommissioned"] = "true"
	w, _ = step(t, "first node decommissioned", w, "update statefulsets basic-dc1-a")

	// Rack b waits until rack a's node is completely gone and rack a has settled.
	settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-a"))
	w = without[*corev1.Pod](w, "basic-dc1-a-2")
	w, _ = step(t, "cleanup", w, "delete persistentvolumeclaims data-basic-dc1-a-2", "delete services basic-dc1-a-2")
	w = without[*corev1.PersistentVolumeClaim](w, "data-basic-dc1-a-2")
	_, _ = step(t, "second rack", w, "update services basic-dc1-b-2")
}

func TestSyncDoesNotDecommissionWhileANodeIsInMaintenance(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	w.sdc.Spec.Racks[0].Nodes = new(int32(2))
	w.sdc.Generation++
	// Node b-0 is in maintenance: its readiness probe says ready whatever ScyllaDB's state, so it may be down.
	object[*corev1.Service](t, w, "basic-dc1-b-0").Labels["scylla/node-maintenance"] = ""

	w, _ = step(t, "maintenance", w)

	// Once maintenance is over, the decommission starts.
	delete(object[*corev1.Service](t, w, "basic-dc1-b-0").Labels, "scylla/node-maintenance")
	_, _ = step(t, "maintenance over", w, "update services basic-dc1-a-2")
}

func TestSyncKeepsTheServiceOfANodeWhoseDataIsKept(t *testing.T) {
	t.Parallel()

	// Someone scaled rack a's StatefulSet down behind the operator's back: node 2's pod is gone without a
	// decommission, its data and Service, its identity in the ring, are still there.
	w := withNodes(convergedWorld(t))
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-a")
	sts.Spec.Replicas = new(int32(2))
	sts.Generation++
	settle(sts)
	w = without[*corev1.Pod](w, "basic-dc1-a-2")

	// The node comes back with its Service and data.
	w, f := step(t, "node removed behind the operator's back", w, "update statefulsets basic-dc1-a")
	if got := *f.written("statefulsets", "basic-dc1-a").(*appsv1.StatefulSet).Spec.Replicas; got != 3 {
		t.Errorf("expected 3 replicas, got %d", got)
	}
	object[*corev1.Service](t, w, "basic-dc1-a-2")
}

func TestSyncReportsADecommissionLabelNoSidecarActsOn(t *testing.T) {
	t.Parallel()

	// Someone labelled the last node of rack a with a value neither the operator nor the sidecar writes, and asked
	// for a scale-down of rack b: no sidecar will ever report the node decommissioned, so waiting for it would hold
	// every node operation of the datacenter for good without saying why.
	w := withNodes(convergedWorld(t))
	object[*corev1.Service](t, w, "basic-dc1-a-2").Labels["scylla/decommissioned"] = "yes"
	w.sdc.Spec.Racks[1].Nodes = new(int32(2))
	w.sdc.Generation++

	// The first sync records the label in the Service's managed hash; none asks rack b's last node to decommission.
	want := `StatefulSetControllerDegraded: member Service basic-dc1-a-2 has label scylla/decommissioned="yes", ` +
		`which is neither "false" (the operator's decommission request) nor "true" (the sidecar's report that the node is decommissioned): ` +
		`no node of datacenter "dc1" is added, removed or restarted until it is fixed`
	f := syncSpecError(t, w, want)
	if diff := cmp.Diff([]string{"update services basic-dc1-a-2"}, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	// At rest: nothing more is written, nor retried.
	f = newFixture(t, f.world())
	f.syncWriting("at rest")
}

func TestSyncWaitsForTheLastPodOfARemovedRackWithoutReportingASpecError(t *testing.T) {
	t.Parallel()

	// Rack b was scaled to 0 and the operator observed it, so the webhook let the rack be removed; the pod of its
	// last, decommissioned node is still stopping.
	w := withNodes(convergedWorld(t))
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-b")
	sts.Spec.Replicas = new(int32(0))
	sts.Generation++
	settle(sts)
	sts.Status.Replicas = 1
	for _, name := range []string{"basic-dc1-b-1", "basic-dc1-b-2"} {
		w = without[*corev1.Pod](w, name)
		w = without[*corev1.Service](w, name)
		w = without[*corev1.PersistentVolumeClaim](w, "data-"+name)
	}
	object[*corev1.Service](t, w, "basic-dc1-b-0").Labels["scylla/decommissioned"] = "true"
	object[*corev1.Pod](t, w, "basic-dc1-b-0").DeletionTimestamp = new(testNow)
	w.sdc.Spec.Racks = w.sdc.Spec.Racks[:1]
	w.sdc.Generation++

	w, f := step(t, "last pod stopping", w, "update configmaps basic-managed-config")
	f.checkDegraded("")
	f.checkProgressingMessage("last pod stopping", `rack "b": waiting for 1 pods of StatefulSet basic-dc1-b to stop before deleting it`)

	// The pod is gone: the StatefulSet, the node's data and its Service go.
	settle(object[*appsv1.StatefulSet](t, w, "basic-dc1-b"))
	w = without[*corev1.Pod](w, "basic-dc1-b-0")
	_, f = step(t, "pod gone", w,
		"delete persistentvolumeclaims data-basic-dc1-b-0",
		"delete services basic-dc1-b-0",
		"delete statefulsets basic-dc1-b",
	)
	f.checkDegraded("")
}
