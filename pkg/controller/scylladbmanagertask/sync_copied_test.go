package scylladbmanagertask

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	"k8s.io/apimachinery/pkg/types"
)

// createLegacyTask creates, in the test cluster, the task "daily" as the established operator's manager-controller
// left it for another object (no labels), and returns its ID.
func createLegacyTask(t *testing.T, f *fixture) string {
	t.Helper()
	properties, err := managerclient.BackupProperties{Location: []string{"s3:backups"}}.Raw()
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.managerClient.CreateTask(t.Context(), testClusterID, &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
		Schedule: &managerclient.Schedule{Cron: "0 1 * * *"}, Properties: properties,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.managerRequests()
	return id
}

// newCopiedTask returns the task "copy", made from another object's manifest: it records the test cluster as the one
// its task lives in, and copy changes what else came along.
func newCopiedTask(copy func(task *scyllav1alpha1.ScyllaDBManagerTask)) *scyllav1alpha1.ScyllaDBManagerTask {
	task := newBackupTask("copy")
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskClusterIDAnnotation: testClusterID}
	copy(task)
	return task
}

var copiedTaskCases = []struct {
	name string
	// copy sets what came along with the record, given the other object's task ID.
	copy func(task *scyllav1alpha1.ScyllaDBManagerTask, id string)
}{
	{
		// The operator names a ScyllaCluster's tasks in ScyllaDB Manager with this annotation.
		name: "the name override",
		copy: func(task *scyllav1alpha1.ScyllaDBManagerTask, _ string) {
			task.Annotations[naming.ScyllaDBManagerTaskNameOverrideAnnotation] = "daily"
		},
	},
	{
		// As a restore that brings the status back leaves it.
		name: "the status' task ID",
		copy: func(task *scyllav1alpha1.ScyllaDBManagerTask, id string) {
			task.Status.TaskID = &id
		},
	},
}

func TestSyncDeletionLeavesATaskItCanNotProveIsItsOwn(t *testing.T) {
	t.Parallel()

	for _, tc := range copiedTaskCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			// The copy references a datacenter that is gone: only the copied record leads anywhere.
			f := newFixture(t)
			id := createLegacyTask(t, f)
			before := f.tasksIn(testClusterID)
			f.put(t, newCopiedTask(func(task *scyllav1alpha1.ScyllaDBManagerTask) { tc.copy(task, id) }), "scylladbmanagertasks")

			f.deleteAndSync(t, "copy")

			if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
				t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
			}
			if diff := cmp.Diff(before, f.tasksIn(testClusterID)); diff != "" {
				t.Errorf("the other object's task changed (-want +got):\n%s", diff)
			}
			if got := f.task(t, "copy").Finalizers; len(got) != 0 {
				t.Errorf("expected the finalizer to be removed, got %q", got)
			}
			events := f.events()
			if len(events) != 1 || !strings.HasPrefix(events[0], "Warning ScyllaDBManagerTaskNotOwned Left backup task \"daily\" ("+id+")") {
				t.Errorf("expected a warning naming the task left alone, got %q", events)
			}
		})
	}
}

func TestSyncOfACopiedTaskMovesNothingOutOfTheRecordedCluster(t *testing.T) {
	t.Parallel()

	for _, tc := range copiedTaskCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t)
			id := createLegacyTask(t, f)
			before := f.tasksIn(testClusterID)
			f.registerOtherCluster(t)
			task := newCopiedTask(func(task *scyllav1alpha1.ScyllaDBManagerTask) { tc.copy(task, id) })
			task.Spec.ScyllaDBClusterRef.Name = otherDCName
			f.put(t, task, "scylladbmanagertasks")
			f.managerRequests()

			f.mustSync(t, "copy")

			// Its own task is created in the cluster it references; the other object's stays as it was.
			want := []string{string(fakescyllamanager.EndpointCreateTask) + " " + otherClusterID}
			if diff := cmp.Diff(want, clusterWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, f.tasksIn(testClusterID)); diff != "" {
				t.Errorf("the other object's task changed (-want +got):\n%s", diff)
			}
			own := f.tasksIn(otherClusterID)
			if len(own) != 1 || own[0].Labels[naming.ScyllaDBManagerOwnerUIDLabel] != string(types.UID("copy-uid")) {
				t.Fatalf("expected the copy's own task in %q, got %+v", otherClusterID, own)
			}
			if got := f.task(t, "copy").Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; got != otherClusterID {
				t.Errorf("expected the record to name %q, got %q", otherClusterID, got)
			}

			// Its deletion removes its own task only.
			f.deleteAndSync(t, "copy")
			if got := f.tasksIn(otherClusterID); len(got) != 0 {
				t.Errorf("expected the copy's own task to be deleted, got %+v", got)
			}
			if diff := cmp.Diff(before, f.tasksIn(testClusterID)); diff != "" {
				t.Errorf("the other object's task changed (-want +got):\n%s", diff)
			}
		})
	}
}
