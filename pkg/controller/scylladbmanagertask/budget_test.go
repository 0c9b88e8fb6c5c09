package scylladbmanagertask

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The writes of a task's scheduling, as the journal describes them.
const (
	writeAwaitingRegistration = "apply scylladbmanagertasks/status: Available=False/TaskNotScheduled Progressing=True/AwaitingRegistration Degraded=False/AsExpected"
	writeFinalizerAndRecord   = "patch scylladbmanagertasks: finalizers=[scylladb-manager-task] +scylladb-manager-task-cluster-id"
	writeCreateTask           = "ScyllaDB Manager CreateTask"
	writeStatusAnnotation     = "patch scylladbmanagertasks: +scylladb-manager-task-status"
	writeScheduled            = "apply scylladbmanagertasks/status: Available=True/TaskScheduled Progressing=False/AsExpected Degraded=False/AsExpected [errorCount lastRunStatus nextActivation successCount taskID]"
	writeDeleteTask           = "ScyllaDB Manager DeleteTask"
	writeNoFinalizer          = "patch scylladbmanagertasks: finalizers=[]"
)

// schedulingWrites is what scheduling a task in a registered cluster writes, in order: one patch with the finalizer
// and the cluster record right before ScyllaDB Manager's create, the create, the status annotation describing what
// ScyllaDB Manager made of it, and the status saying so.
var schedulingWrites = []string{writeFinalizerAndRecord, writeCreateTask, writeStatusAnnotation, writeScheduled}

// newCreatedTask returns a backup task as the ScyllaCluster controller creates it: no finalizer, no status.
func newCreatedTask(name string) *scyllav1alpha1.ScyllaDBManagerTask {
	task := newBackupTask(name)
	task.Finalizers = nil
	return task
}

// newUnregisteredDatacenter returns the test datacenter labelled for registration but not registered yet.
func newUnregisteredDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	dc := newRegisteredDatacenter()
	dc.Annotations = nil
	return dc
}

// TestTaskWriteBudget drives a ScyllaCluster's backup task from its creation, next to its datacenter's, to its
// scheduling through every step the manager-controller sees, and pins every write of each sync, ScyllaDB Manager's
// included: one status write per observable change (waiting for the registration, scheduled), one metadata patch
// before ScyllaDB Manager's create and one after it, and nothing once scheduled.
func TestTaskWriteBudget(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newUnregisteredDatacenter(), newCreatedTask("daily"))
	steps := []struct {
		name string
		// change is what others did since the previous sync.
		change func(f *fixture)
		// stale leaves the cache as it was before the previous sync's writes, as when their events enqueue the task
		// before the informer has them.
		stale bool
		want  []string
	}{
		{
			name: "created: waits for its datacenter's registration",
			want: []string{writeAwaitingRegistration},
		},
		{
			name: "the datacenter changes, still unregistered",
			change: func(f *fixture) {
				dc := newUnregisteredDatacenter()
				dc.ResourceVersion = "2"
				dc.Generation = 2
				f.put(t, dc, "scylladbdatacenters")
			},
		},
		{
			name:   "the datacenter is registered",
			change: func(f *fixture) { f.put(t, newRegisteredDatacenter(), "scylladbdatacenters") },
			want:   schedulingWrites,
		},
		{
			name:  "the events of its own writes, before the informer has them",
			stale: true,
		},
		{
			name: "the informer caught up",
		},
		{
			name:   "the status refresh, with a fresh task list",
			change: func(f *fixture) { f.expireMemo() },
		},
	}
	total := 0
	for _, s := range steps {
		if s.change != nil {
			s.change(f)
		}
		if s.stale {
			f.syncBeforeTheCacheCatchesUp(t, "daily")
		} else {
			f.mustSync(t, "daily")
		}
		got := f.journal.Take()
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", s.name, diff)
		}
		total += len(got)
	}

	// The irreducible ones: two status writes (waiting, scheduled), the finalizer (with the record) before ScyllaDB
	// Manager's create and the status annotation after it, which no patch can share.
	if total != 5 {
		t.Errorf("expected 4 Kubernetes writes and 1 ScyllaDB Manager write in all, got %d", total)
	}
	task := f.task(t, "daily")
	if id := f.onlyTask(t).ID; task.Status.TaskID == nil || *task.Status.TaskID != id {
		t.Errorf("expected status.taskID %q, got %v", id, task.Status.TaskID)
	}
}

// newWaitingTask returns a task created without a finalizer whose previous sync reported it waiting for the
// registration of its datacenter, which now is registered: where a first scheduling starts.
func newWaitingTask(name string) *scyllav1alpha1.ScyllaDBManagerTask {
	task := newCreatedTask(name)
	task.Status.ObservedGeneration = new(task.Generation)
	task.Status.Conditions = []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionFalse, Reason: taskNotScheduledReason, Message: "waiting", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(testStart)},
		{Type: "Progressing", Status: metav1.ConditionTrue, Reason: awaitingRegistrationReason, Message: "waiting", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(testStart)},
		{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(testStart)},
	}
	return task
}

// crashAfter runs one sync of the task named name as a process that dies after n writes, checks that exactly the
// first n of full were made, and starts the process again: the task list memo is gone.
func crashAfter(t *testing.T, f *fixture, name string, n int, full []string) {
	t.Helper()
	f.journal.ExpectCrashAfter(t, n, full, func() error { return f.sync(t, name) })
	f.expireMemo()
}

// TestSchedulingKilledBetweenAnyTwoWritesLeaksAndLosesNothing kills the process of a first scheduling after each of
// its writes. Restarted, the next sync writes exactly the writes that had not been made, and ScyllaDB Manager ends up
// with the one task; deleted instead, the ScyllaDBManagerTask takes its task out of ScyllaDB Manager, if it got
// there, before it goes.
func TestSchedulingKilledBetweenAnyTwoWritesLeaksAndLosesNothing(t *testing.T) {
	t.Parallel()

	for n := range len(schedulingWrites) + 1 {
		t.Run(fmt.Sprintf("restarted after %d writes", n), func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newWaitingTask("daily"))
			crashAfter(t, f, "daily", n, schedulingWrites)

			f.mustSync(t, "daily")
			if diff := cmp.Diff(schedulingWrites[n:], f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected writes after the restart (-want +got):\n%s", diff)
			}
			id := f.onlyTask(t).ID
			task := f.task(t, "daily")
			if task.Status.TaskID == nil || *task.Status.TaskID != id {
				t.Errorf("expected status.taskID %q, got %v", id, task.Status.TaskID)
			}
			if recorded := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; recorded != testClusterID {
				t.Errorf("expected the task to record cluster %q, got %q", testClusterID, recorded)
			}
			want := []string{"Available=True/TaskScheduled", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}
			if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})

		t.Run(fmt.Sprintf("deleted after %d writes", n), func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newWaitingTask("daily"))
			crashAfter(t, f, "daily", n, schedulingWrites)

			task := f.task(t, "daily")
			task.DeletionTimestamp = new(metav1.NewTime(testStart))
			f.put(t, task, "scylladbmanagertasks")
			f.mustSync(t, "daily")
			var want []string
			switch {
			case n >= 2:
				want = []string{writeDeleteTask, writeNoFinalizer}
			case n == 1:
				// The finalizer went on, the task never got to ScyllaDB Manager.
				want = []string{writeNoFinalizer}
			}
			if diff := cmp.Diff(want, f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected writes of the deletion (-want +got):\n%s", diff)
			}
			if tasks := f.ourTasks(); len(tasks) != 0 {
				t.Errorf("the deletion left tasks in ScyllaDB Manager: %+v", tasks)
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 0 {
				t.Errorf("expected no finalizer, got %q", got)
			}
		})
	}
}

// TestMoveKilledBetweenAnyTwoWritesResumesWithTheRest kills the process of a move to another cluster after each of
// its writes: the task leaves the old cluster first, the new cluster is recorded before the create there, and the
// restarted sync writes exactly what the killed one did not, leaving the task in the new cluster only.
func TestMoveKilledBetweenAnyTwoWritesResumesWithTheRest(t *testing.T) {
	t.Parallel()

	full := []string{writeDeleteTask, "patch scylladbmanagertasks: +scylladb-manager-task-cluster-id", writeCreateTask, writeStatusAnnotation, writeScheduled}
	for n := range len(full) + 1 {
		t.Run(fmt.Sprintf("restarted after %d writes", n), func(t *testing.T) {
			t.Parallel()

			f := newMoveFixture(t)
			f.journal.Take()
			f.expireMemo()
			crashAfter(t, f, "daily", n, full)

			f.mustSync(t, "daily")
			if diff := cmp.Diff(full[n:], f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected writes after the restart (-want +got):\n%s", diff)
			}
			if tasks := f.tasksIn(testClusterID); len(tasks) != 0 {
				t.Errorf("expected the old cluster to hold no task, got %+v", tasks)
			}
			moved := f.tasksIn(otherClusterID)
			if len(moved) != 1 {
				t.Fatalf("expected the new cluster to hold the task, got %+v", moved)
			}
			task := f.task(t, "daily")
			if task.Status.TaskID == nil || *task.Status.TaskID != moved[0].ID {
				t.Errorf("expected status.taskID %q, got %v", moved[0].ID, task.Status.TaskID)
			}
		})
	}
}
