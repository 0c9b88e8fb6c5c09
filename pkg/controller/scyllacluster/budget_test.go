package scyllacluster

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"
)

// TestWriteBudgetOfANewScyllaCluster syncs a ScyllaCluster with a backup and a repair as its ScyllaDBDatacenter comes
// up (reported as the ScyllaDBDatacenter controller batches it, timed as on the local control plane) and the
// manager-controller registers it, on one clock, and pins every write: the ScyllaDBDatacenter alone first, then the
// two tasks, then one status update per status the datacenter reports, each at once, where the ScyllaCluster's own
// batching made five updates lagging the datacenter by up to a batch period. The ScyllaDB Manager IDs, the
// ScyllaCluster's own news, wait for the next write.
func TestWriteBudgetOfANewScyllaCluster(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	sc.Spec.Backups = []scyllav1.BackupTaskSpec{{TaskSpec: scyllav1.TaskSpec{Name: "daily"}, Location: []string{"s3:backups"}}}
	sc.Spec.Repairs = []scyllav1.RepairTaskSpec{{TaskSpec: scyllav1.TaskSpec{Name: "nightly"}}}
	f := newSyncFixture(t, sc)
	clock := testNow.Time
	f.controller.clock = func() time.Time { return clock }
	f.controller.statusBatcher = controllerhelpers.NewStatusBatcherWithClock(controllerhelpers.DefaultStatusBatchPeriod, func() time.Time { return clock })
	const statusUpdate = "update scyllaclusters/status basic"
	total := 0

	step := func(name string, after time.Duration, change func(), want []string) {
		t.Helper()
		clock = clock.Add(after)
		if change != nil {
			change()
		}
		f.catchUpCaches(t)
		if err := f.sync(t, sc); err != nil {
			t.Fatalf("%s: unexpected error: %v", name, err)
		}
		got := f.takeWrites()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", name, diff)
		}
		total += len(got)
	}
	// reportStatus makes the ScyllaDBDatacenter report nodes, of which ready and available, with its Available and
	// Progressing conditions.
	reportStatus := func(nodes, ready, available int32, availableCond, progressing metav1.ConditionStatus) func() {
		return func() {
			sdc := f.getScyllaDBDatacenter(t)
			sdc.Status = newScyllaDBDatacenterWithStatus(sdc.Generation).Status
			sdc.Status.Nodes, sdc.Status.ReadyNodes, sdc.Status.AvailableNodes = &nodes, &ready, &available
			meta.SetStatusCondition(&sdc.Status.Conditions, metav1.Condition{Type: "Available", Status: availableCond, Reason: "Reason", ObservedGeneration: sdc.Generation})
			meta.SetStatusCondition(&sdc.Status.Conditions, metav1.Condition{Type: "Progressing", Status: progressing, Reason: "Reason", ObservedGeneration: sdc.Generation})
			f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
		}
	}
	scheduled := func(taskName, status string) func() {
		return func() {
			task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), taskName, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation] = status
			f.update(t, task, "scylladbmanagertasks", scyllav1alpha1.SchemeGroupVersion)
		}
	}

	// The datacenter is what makes pods: nothing else competes with its create.
	step("creation", 0, nil, []string{"create scylladbdatacenters basic"})
	// The sync its add event brings creates the tasks; the status waits for the datacenter's first.
	step("datacenter added", 100*time.Millisecond, nil, []string{
		"create scylladbmanagertasks " + naming.ScyllaDBManagerTaskName("basic", "Backup", "daily"),
		"create scylladbmanagertasks " + naming.ScyllaDBManagerTaskName("basic", "Repair", "nightly"),
	})
	step("tasks added", 100*time.Millisecond, nil, nil)
	step("datacenter's first status", time.Second, reportStatus(1, 0, 0, metav1.ConditionFalse, metav1.ConditionTrue), []string{statusUpdate})
	// The datacenter's controller batched these counts already, for a period that began as it wrote the first status,
	// just before the mirror above: the mirror does not wait for a second period.
	step("datacenter's batched counts", 5*time.Second-100*time.Millisecond, reportStatus(3, 3, 0, metav1.ConditionFalse, metav1.ConditionTrue), []string{statusUpdate})
	step("datacenter Available", 5*time.Second, reportStatus(3, 3, 2, metav1.ConditionTrue, metav1.ConditionTrue), []string{statusUpdate})
	step("registered with ScyllaDB Manager", 100*time.Millisecond, func() {
		sdc := f.getScyllaDBDatacenter(t)
		sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "manager-cluster-id"
		f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	}, nil)
	step("tasks scheduled", 200*time.Millisecond, func() {
		scheduled(naming.ScyllaDBManagerTaskName("basic", "Backup", "daily"), `{"name":"daily","id":"backup-id","location":["s3:backups"]}`)()
		scheduled(naming.ScyllaDBManagerTaskName("basic", "Repair", "nightly"), `{"name":"nightly","id":"repair-id"}`)()
	}, nil)
	// Every node available: Progressing turns False at once, and the write carries the registration too.
	step("datacenter rolled out", 3600*time.Millisecond, reportStatus(3, 3, 3, metav1.ConditionTrue, metav1.ConditionFalse), []string{statusUpdate})
	status := f.getScyllaCluster(t, sc).Status
	if status.ManagerID == nil || *status.ManagerID != "manager-cluster-id" || status.Backups[0].ID == nil || status.Repairs[0].ID == nil {
		t.Errorf("expected the last write to carry the ScyllaDB Manager IDs, got managerId %v, backups %+v, repairs %+v", status.ManagerID, status.Backups, status.Repairs)
	}
	step("at rest", 10*time.Second, nil, nil)

	if total != 7 {
		t.Errorf("expected 7 writes in all (3 creates, 4 status updates), got %d", total)
	}
}

// TestSyncNeverWritesTheStatusItHas checks that a sync after a status update the informer does not show yet reads
// that update back and writes nothing: no repeated write, and no conflict from an update built on the older copy.
func TestSyncNeverWritesTheStatusItHas(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.ResourceVersion = "1"
	f := newSyncFixture(t, sc)
	// The fake API server keeps resource versions as given; count them as the real one does.
	f.scyllaClient.PrependReactor("update", "scyllaclusters", func(action clienttesting.Action) (bool, runtime.Object, error) {
		obj := action.(clienttesting.UpdateAction).GetObject().(*scyllav1.ScyllaCluster)
		rv, err := strconv.Atoi(obj.ResourceVersion)
		if err != nil {
			return true, nil, err
		}
		obj.ResourceVersion = strconv.Itoa(rv + 1)
		return false, nil, nil
	})
	f.syncUntilFirstScyllaDBDatacenterStatus(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Fatalf("expected the sync after the ScyllaDBDatacenter's first status to write the status (-want +got):\n%s", diff)
	}
	// The informer catches up with the ScyllaDBDatacenter and tasks, not yet with the ScyllaCluster's new status.
	cached := f.factory.Scylla().V1().ScyllaClusters().Informer().GetIndexer()
	stale, _, err := cached.Get(sc)
	if err != nil {
		t.Fatal(err)
	}
	f.catchUpCaches(t)
	if err := cached.Update(stale); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("a sync whose status is the last one written wrote %q", writes)
	}
}

// deadlineQueue records when the keys a controller adds with a delay are due, on a test clock; the rest goes to the
// real queue.
type deadlineQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	now       func() time.Time
	deadlines []time.Time
}

func (q *deadlineQueue) AddAfter(_ string, d time.Duration) {
	q.deadlines = append(q.deadlines, q.now().Add(d))
}

// TestOwnChangesWaitForTheDatacentersNextBatchedStatus checks that a change of the ScyllaCluster's own (here its
// registration with ScyllaDB Manager) made just after a write is not written just before the datacenter's next batched
// status, which comes a batch period after the previous one, but with it: one write, not two a moment apart.
func TestOwnChangesWaitForTheDatacentersNextBatchedStatus(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	clock := testNow.Time
	f.controller.clock = func() time.Time { return clock }
	f.controller.statusBatcher = controllerhelpers.NewStatusBatcherWithClock(controllerhelpers.DefaultStatusBatchPeriod, func() time.Time { return clock })
	queue := &deadlineQueue{TypedRateLimitingInterface: f.controller.queue, now: func() time.Time { return clock }}
	f.controller.queue = queue

	// The datacenter's first status is mirrored at once, 100ms after the datacenter's controller wrote it.
	f.syncCreated(t, sc)
	mirrored := clock
	datacenterWrote := mirrored.Add(-100 * time.Millisecond)

	clock = mirrored.Add(100 * time.Millisecond)
	sdc := f.getScyllaDBDatacenter(t)
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "manager-cluster-id"
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected the registration to wait for the batch, got %q", writes)
	}
	if len(queue.deadlines) != 1 {
		t.Fatalf("expected the sync to be queued again once, got %d", len(queue.deadlines))
	}

	// The datacenter's next batched status is due a period after its last, and mirrored 100ms later: before the
	// registration's batch is over.
	nextMirror := datacenterWrote.Add(controllerhelpers.DefaultStatusBatchPeriod).Add(100 * time.Millisecond)
	if !queue.deadlines[0].After(nextMirror) {
		t.Fatalf("the registration is due at %v, before the datacenter's next status is mirrored at %v", queue.deadlines[0].Sub(mirrored), nextMirror.Sub(mirrored))
	}
	clock = nextMirror
	sdc = f.getScyllaDBDatacenter(t)
	sdc.Status.Conditions[1].Message = "creating rack b"
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes of the datacenter's next status (-want +got):\n%s", diff)
	}
	if id := f.getScyllaCluster(t, sc).Status.ManagerID; id == nil || *id != "manager-cluster-id" {
		t.Errorf("expected the write to carry the registration, got managerId %v", id)
	}

	// The registration's batch is over: nothing is left to write.
	clock = queue.deadlines[0]
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected nothing left to write when the batch is over, got %q", writes)
	}
}
