package scylladbmanagertask

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
)

// createLegacyTask creates the task "daily" in the test cluster with createLegacyTaskIn, and returns its ID.
func createLegacyTask(t *testing.T, f *fixture) string {
	t.Helper()
	createLegacyTaskIn(t, f, testClusterID)
	return f.tasksIn(testClusterID)[0].ID
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

func TestSyncSchedulesIntoAClusterOfAnotherIDOnlyOnceItIsLabelledWithTheObjectsUID(t *testing.T) {
	t.Parallel()

	// As the established operator registered it, under an ID ScyllaDB Manager chose; the operator copies such an ID
	// into the annotation, and so does a manifest copied from another datacenter.
	const legacyID = "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
	tt := []struct {
		name        string
		labels      map[string]string
		wantMessage string
	}{
		{
			name:        "labelled with another object's UID",
			labels:      map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"},
			wantMessage: `ScyllaDB Manager cluster "other/basic" (ID ` + legacyID + `) is not labelled scylla-operator.scylladb.com/owner-uid=sdc-uid yet (it has "someone-else"): waiting for the registration controller to register it for ScyllaDBDatacenter; an ID annotation copied from another object's manifest is replaced then`,
		},
		{
			name:        "not adopted yet",
			wantMessage: `ScyllaDB Manager cluster "other/basic" (ID ` + legacyID + `) is not labelled scylla-operator.scylladb.com/owner-uid=sdc-uid yet (it has ""): waiting for the registration controller to register it for ScyllaDBDatacenter; an ID annotation copied from another object's manifest is replaced then`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			dc := newRegisteredDatacenter()
			dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = legacyID
			f := newFixture(t, dc, newBackupTask("daily"))
			cluster := managerclient.Cluster{ID: legacyID, Name: "other/basic", Host: "basic-client.other.svc", AuthToken: "token", WithoutRepair: true, Labels: tc.labels}
			if _, err := f.managerClient.CreateCluster(t.Context(), &cluster); err != nil {
				t.Fatal(err)
			}
			createLegacyTaskIn(t, f, legacyID)
			before := f.tasksIn(legacyID)

			f.mustSync(t, "daily")

			requests := f.managerRequests()
			if writes := managerWrites(requests); len(writes) != 0 {
				t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
			}
			if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n != 0 {
				t.Errorf("expected the cluster's tasks not to be read, got %d reads", n)
			}
			if diff := cmp.Diff(before, f.tasksIn(legacyID)); diff != "" {
				t.Errorf("the cluster's tasks changed (-want +got):\n%s", diff)
			}
			task := f.task(t, "daily")
			want := []string{"Available=False/TaskNotScheduled", "Degraded=False/AsExpected", "Progressing=True/AwaitingRegistration"}
			if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if c := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.ProgressingCondition); c.Message != tc.wantMessage {
				t.Errorf("expected Progressing message %q, got %q", tc.wantMessage, c.Message)
			}
			if len(task.Finalizers) != 1 || len(task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]) != 0 {
				t.Errorf("expected nothing recorded, got finalizers %q and annotations %v", task.Finalizers, task.Annotations)
			}

			// The registration controller adopts the cluster for the datacenter: the task is scheduled, and the
			// cluster is not read again.
			cluster.Labels = map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "sdc-uid"}
			if _, err := f.managerClient.UpdateCluster(t.Context(), &cluster); err != nil {
				t.Fatal(err)
			}
			f.managerRequests()
			f.mustSync(t, "daily")
			if got := f.tasksIn(legacyID); len(got) != 1 || got[0].Labels[naming.ScyllaDBManagerOwnerUIDLabel] != "daily-uid" {
				t.Errorf("expected the task adopted for daily-uid, got %+v", got)
			}
			f.managerRequests()
			f.expireMemo()
			f.mustSync(t, "daily")
			if n := countEndpoint(f.managerRequests(), fakescyllamanager.EndpointGetCluster); n != 0 {
				t.Errorf("expected the cluster's owner to be checked once, got %d more reads", n)
			}
		})
	}
}

// createLegacyTaskIn creates the task "daily" in cluster clusterID as the established operator's manager-controller
// left it for some object (no labels).
func createLegacyTaskIn(t *testing.T, f *fixture, clusterID string) {
	t.Helper()
	properties, err := managerclient.BackupProperties{Location: []string{"s3:backups"}}.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.managerClient.CreateTask(t.Context(), clusterID, &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
		Schedule: &managerclient.Schedule{Cron: "0 1 * * *"}, Properties: properties,
	}); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()
}
