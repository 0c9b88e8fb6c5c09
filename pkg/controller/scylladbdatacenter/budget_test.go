package scylladbdatacenter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// budgetRun syncs a datacenter through the steps of its life, keeping the status batching and the clock of a running
// operator across them, and counts the writes.
type budgetRun struct {
	t       *testing.T
	clock   time.Time
	batcher *controllerhelpers.StatusBatcher
	w       world
	total   int
}

func newBudgetRun(t *testing.T, sdc *scyllav1alpha1.ScyllaDBDatacenter) *budgetRun {
	r := &budgetRun{t: t, clock: testNow.Time, w: world{sdc: sdc}}
	r.batcher = controllerhelpers.NewStatusBatcherWithClock(controllerhelpers.DefaultStatusBatchPeriod, func() time.Time { return r.clock })
	return r
}

// step lets after pass, applies change (what the StatefulSet controller and the kubelet did meanwhile) to the world,
// syncs once and checks that the sync wrote exactly want.
func (r *budgetRun) step(name string, after time.Duration, change func(w world) world, want []string) *fixture {
	r.t.Helper()
	r.clock = r.clock.Add(after)
	if change != nil {
		r.w = change(r.w)
	}
	f := newFixture(r.t, r.w)
	f.controller.statusBatcher = r.batcher
	f.controller.now = func() metav1.Time { return metav1.NewTime(r.clock) }
	if err := f.sync(); err != nil {
		r.t.Fatalf("%s: unexpected error: %v", name, err)
	}
	got := f.writes()
	if diff := cmp.Diff(want, got); diff != "" {
		r.t.Errorf("%s: unexpected writes (-want +got):\n%s", name, diff)
	}
	r.total += len(got)
	r.w = f.world()
	return f
}

// statefulSet returns a function that changes the status of the StatefulSet name in a world as the StatefulSet
// controller reports a step of it: observed its spec, created its pod (with its data claim), the pod turned ready,
// the pod stayed ready for minReadySeconds.
func statefulSetStep(t *testing.T, name, step string) func(w world) world {
	return func(w world) world {
		sts := object[*appsv1.StatefulSet](t, w, name)
		s := &sts.Status
		switch step {
		case "observed":
			s.ObservedGeneration = sts.Generation
			s.CurrentRevision, s.UpdateRevision = sts.Name+"-rev1", sts.Name+"-rev1"
		case "pod created":
			s.Replicas, s.CurrentReplicas, s.UpdatedReplicas = 1, 1, 1
			w.objects = append(w.objects, newPod(sts, 0), newDataClaim(sts, 0))
		case "ready":
			s.ReadyReplicas = 1
		case "available":
			s.AvailableReplicas = 1
		default:
			t.Fatalf("unknown step %q", step)
		}
		return w
	}
}

func steps(changes ...func(w world) world) func(w world) world {
	return func(w world) world {
		for _, change := range changes {
			w = change(w)
		}
		return w
	}
}

// TestWriteBudgetOfANewDatacenter drives a datacenter of three racks of one node, without parallel node operations,
// from creation to every node available, through each step the StatefulSet controller reports, timed as on the local
// control plane with kwok (a pod is ready a second after it is created, available minReadySeconds later), and pins
// every write: twelve objects (the StatefulSets and member Services of racks b and c as they grow, at their size),
// and four status writes, where a status write per StatefulSet status change would make fourteen.
func TestWriteBudgetOfANewDatacenter(t *testing.T) {
	t.Parallel()

	sdc := newSequentialSDC()
	sdc.Spec.RackTemplate.Nodes = new(int32(1))
	r := newBudgetRun(t, sdc)
	sts := func(rack, step string) func(w world) world { return statefulSetStep(t, "basic-dc1-"+rack, step) }
	const status = "apply scylladbdatacenters/status basic"

	r.step("creation", 0, nil, []string{
		"create serviceaccounts basic-member",
		"create rolebindings basic-member",
		"create configmaps basic-managed-config",
		"create secrets basic-auth-token",
		"create services basic-client",
		"create services basic-dc1-a-0",
		// Racks b and c get theirs when they grow.
		"create statefulsets basic-dc1-a",
		"create poddisruptionbudgets basic",
		// The first status goes at once.
		status,
	})
	r.step("rack a's StatefulSet observed", 50*time.Millisecond, sts("a", "observed"), nil)
	r.step("rack a's pod created", 50*time.Millisecond, sts("a", "pod created"), nil)
	r.step("rack a's node ready", time.Second, sts("a", "ready"), []string{
		"create services basic-dc1-b-0",
		"create statefulsets basic-dc1-b",
	})
	r.step("rack b's StatefulSet observed", 50*time.Millisecond, sts("b", "observed"), nil)
	r.step("rack b's pod created", 50*time.Millisecond, sts("b", "pod created"), nil)
	r.step("rack b's node ready", time.Second, sts("b", "ready"), []string{
		"create services basic-dc1-c-0",
		"create statefulsets basic-dc1-c",
	})
	r.step("rack c's StatefulSet observed", 50*time.Millisecond, sts("c", "observed"), nil)
	r.step("rack c's pod created", 50*time.Millisecond, sts("c", "pod created"), nil)
	r.step("rack c's node ready", time.Second, sts("c", "ready"), nil)
	// The batch period since the first status write is over: the sync the batching queued writes every change since.
	f := r.step("status batch period over", 5*time.Second-(3*time.Second+300*time.Millisecond), nil, []string{status})
	written := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter)
	if ready := written.Status.ReadyNodes; ready == nil || *ready != 3 {
		t.Errorf("expected the batched status to count 3 ready nodes, got %v", ready)
	}
	r.step("rack a's node available", time.Second+50*time.Millisecond, sts("a", "available"), nil)
	// Two of three nodes available is what the PodDisruptionBudget allows for: Available turns True, at once.
	f = r.step("rack b's node available", time.Second, sts("b", "available"), []string{status})
	checkCondition(t, f, "Available", metav1.ConditionTrue)
	// Every node available: Progressing turns False, at once.
	f = r.step("rack c's node available", time.Second, sts("c", "available"), []string{status})
	checkCondition(t, f, "Progressing", metav1.ConditionFalse)
	r.step("at rest", 10*time.Second, nil, nil)

	if r.total != 16 {
		t.Errorf("expected 16 writes in all, got %d", r.total)
	}
}

func checkCondition(t *testing.T, f *fixture, condType string, want metav1.ConditionStatus) {
	t.Helper()
	written := f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter)
	if c := meta.FindStatusCondition(written.Status.Conditions, condType); c == nil || c.Status != want {
		t.Errorf("expected %s %s, got %+v", condType, want, c)
	}
}

// TestSyncNeverWritesTheStatusItHas checks that a sync whose status is the datacenter's writes nothing: when the
// informer shows it, and when the informer is still behind the status the previous sync wrote (the controller then
// reads its own write back), however the batching stands.
func TestSyncNeverWritesTheStatusItHas(t *testing.T) {
	t.Parallel()

	w := convergedWorld(t)
	for _, period := range []time.Duration{0, controllerhelpers.DefaultStatusBatchPeriod} {
		f := newFixture(t, w)
		f.controller.statusBatcher = controllerhelpers.NewStatusBatcher(period)
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		if writes := f.writes(); len(writes) != 0 {
			t.Errorf("period %v: a sync of a datacenter with its status wrote %q", period, writes)
		}
	}

	// The informer still holds the datacenter without the status its first sync applied.
	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.scyllaClient.ClearActions()
	f.kubeClient.ClearActions()
	for _, obj := range f.world().objects {
		// Everything else is as the first sync left it.
		f.cache(obj.(runtime.Object))
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("a sync after a status write the informer does not show yet wrote %q", writes)
	}
}
