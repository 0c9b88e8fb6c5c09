package scylladbmanagertask

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

func TestSyncMovesTheTaskWhenTheReferenceLeadsToAnotherCluster(t *testing.T) {
	t.Parallel()

	f := newMoveFixture(t)
	oldID := f.onlyTask(t).ID
	f.events()

	f.expireMemo()
	f.mustSync(t, "daily")

	want := []string{
		string(fakescyllamanager.EndpointDeleteTask) + " " + testClusterID,
		string(fakescyllamanager.EndpointCreateTask) + " " + otherClusterID,
	}
	if diff := cmp.Diff(want, clusterWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if tasks := f.tasksIn(testClusterID); len(tasks) != 0 {
		t.Errorf("expected the old cluster to hold no task, got %+v", tasks)
	}
	moved := f.tasksIn(otherClusterID)
	if len(moved) != 1 || moved[0].Name != "daily" || moved[0].Labels[naming.ScyllaDBManagerOwnerUIDLabel] != "daily-uid" {
		t.Fatalf("expected the new cluster to hold the task, got %+v", moved)
	}
	if diff := cmp.Diff(createWrites, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}

	task := f.task(t, "daily")
	if recorded := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; recorded != otherClusterID {
		t.Errorf("expected the task to record cluster %q, got %q", otherClusterID, recorded)
	}
	if task.Status.TaskID == nil || *task.Status.TaskID != moved[0].ID || moved[0].ID == oldID {
		t.Errorf("expected status.taskID to be the new task %q (not %q), got %v", moved[0].ID, oldID, task.Status.TaskID)
	}
	if annotation := task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]; !strings.Contains(annotation, `"id":"`+moved[0].ID+`"`) {
		t.Errorf("expected the status annotation to describe the new task %q, got %s", moved[0].ID, annotation)
	}
	events := f.events()
	if len(events) != 2 || !strings.HasPrefix(events[0], "Normal "+taskDeletedReason) || !strings.HasPrefix(events[1], "Normal "+taskCreatedReason) {
		t.Errorf("expected a Deleted and a Created event, got %q", events)
	}

	// At rest the moved task costs one read of its new cluster and no writes.
	settle(t, f, "daily")
	f.expireMemo()
	f.mustSync(t, "daily")
	requests := f.managerRequests()
	if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n != 1 || len(requests) != 1 || !strings.Contains(requests[0].Path, otherClusterID) {
		t.Errorf("expected exactly one task list read of the new cluster, got %+v", requests)
	}
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes at rest, got %q", writes)
	}
	if got := f.tasksIn(otherClusterID); len(got) != 1 || got[0].ID != moved[0].ID {
		t.Errorf("the moved task changed: %+v", got)
	}
}

func TestSyncKeepsATaskThatCanNotLeaveItsOldCluster(t *testing.T) {
	t.Parallel()

	f := newMoveFixture(t)
	if err := f.manager.InjectFailure(fakescyllamanager.EndpointDeleteTask, fakescyllamanager.Failure{Status: http.StatusInternalServerError, Times: 1}); err != nil {
		t.Fatal(err)
	}

	f.expireMemo()
	if err := f.sync(t, "daily"); err == nil {
		t.Fatal("expected the failed delete to be retried")
	}

	// Nothing is created in the new cluster, and the record still leads to the task.
	if got := f.tasksIn(otherClusterID); len(got) != 0 {
		t.Errorf("expected the new cluster to hold no task, got %+v", got)
	}
	if recorded := f.task(t, "daily").Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; recorded != testClusterID {
		t.Errorf("expected the record to stay %q, got %q", testClusterID, recorded)
	}
	want := []string{"Available=Unknown/ScyllaDBManagerStateUnknown", "Degraded=True/ScyllaDBManagerError", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(f.task(t, "daily"))); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	f.mustSync(t, "daily")
	if got := f.tasksIn(testClusterID); len(got) != 0 {
		t.Errorf("expected the old cluster to hold no task, got %+v", got)
	}
	if got := f.tasksIn(otherClusterID); len(got) != 1 {
		t.Errorf("expected the new cluster to hold the task, got %+v", got)
	}
}

func TestSyncFinishesAMoveInterruptedByACrash(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		// crash leaves ScyllaDB Manager and the object as a sync killed in the middle of the move would.
		crash func(t *testing.T, f *fixture)
		want  []string
	}{
		{
			// The old task is deleted and the new one created, but not yet recorded: the record still names the
			// old cluster; the owner-uid label finds the new task.
			name: "between ScyllaDB Manager's create and the record",
			crash: func(t *testing.T, f *fixture) {
				task := f.task(t, "daily")
				desired, err := makeDesiredTask(task, nil, f.clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.managerClient.CreateTask(t.Context(), otherClusterID, &desired.update); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{string(fakescyllamanager.EndpointDeleteTask) + " " + testClusterID},
		},
		{
			// The old task is deleted and the new cluster recorded, but nothing created yet.
			name: "between the record and ScyllaDB Manager's create",
			crash: func(t *testing.T, f *fixture) {
				if err := f.managerClient.DeleteTask(t.Context(), testClusterID, "backup", f.onlyTask(t).ID); err != nil {
					t.Fatal(err)
				}
				task := f.task(t, "daily")
				task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation] = otherClusterID
				f.put(t, task, "scylladbmanagertasks")
			},
			want: []string{string(fakescyllamanager.EndpointCreateTask) + " " + otherClusterID},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newMoveFixture(t)
			tc.crash(t, f)
			f.expireMemo()
			f.managerRequests()

			f.mustSync(t, "daily")

			if diff := cmp.Diff(tc.want, clusterWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if got := f.tasksIn(testClusterID); len(got) != 0 {
				t.Errorf("expected the old cluster to hold no task, got %+v", got)
			}
			moved := f.tasksIn(otherClusterID)
			if len(moved) != 1 {
				t.Fatalf("expected the new cluster to hold one task, got %+v", moved)
			}
			task := f.task(t, "daily")
			if recorded := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; recorded != otherClusterID {
				t.Errorf("expected the task to record cluster %q, got %q", otherClusterID, recorded)
			}
			if task.Status.TaskID == nil || *task.Status.TaskID != moved[0].ID {
				t.Errorf("expected status.taskID %q, got %v", moved[0].ID, task.Status.TaskID)
			}
			settle(t, f, "daily")
		})
	}
}

func TestSyncDeletesAMovedTaskOnDeletion(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		// syncedMove tells whether a sync moved the task before the object was deleted.
		syncedMove bool
		want       []string
	}{
		{
			name:       "after the move",
			syncedMove: true,
			want:       []string{string(fakescyllamanager.EndpointDeleteTask) + " " + otherClusterID},
		},
		{
			name:       "before the move was synced",
			syncedMove: false,
			want:       []string{string(fakescyllamanager.EndpointDeleteTask) + " " + testClusterID},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newMoveFixture(t)
			if tc.syncedMove {
				f.mustSync(t, "daily")
			}
			f.deleteAndSync(t, "daily")

			if diff := cmp.Diff(tc.want, clusterWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			for _, clusterID := range []string{testClusterID, otherClusterID} {
				if got := f.tasksIn(clusterID); len(got) != 0 {
					t.Errorf("expected cluster %q to hold no task, got %+v", clusterID, got)
				}
			}
			if diff := cmp.Diff([]string{"patch scylladbmanagertasks " + jsonPatch}, f.kubeWrites()); diff != "" {
				t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 0 {
				t.Errorf("expected the finalizer to be removed, got %q", got)
			}
		})
	}
}
