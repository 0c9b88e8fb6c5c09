package scylladbmanagertask

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const (
	mergePatch = "application/merge-patch+json"
	// jsonPatch is how a finalizer is added or removed (controllerhelpers.AddFinalizer).
	jsonPatch  = "application/json-patch+json"
	applyPatch = "application/apply-patch+yaml"
)

var (
	// statusWrites are the Kubernetes writes of a sync that changed the task's status and status annotation.
	statusWrites = []string{"patch scylladbmanagertasks " + mergePatch, "patch scylladbmanagertasks/status " + applyPatch}
	// onlyStatusApply is the Kubernetes write of a sync that changed only the task's status.
	onlyStatusApply = []string{"patch scylladbmanagertasks/status " + applyPatch}
	// createWrites are the Kubernetes writes of a sync that created the task in a cluster the object did not record:
	// the cluster record before the create, then the status annotation and status.
	createWrites = append([]string{"patch scylladbmanagertasks " + mergePatch}, statusWrites...)
)

// settle syncs the task named name until a sync with a fresh task list writes nothing to ScyllaDB Manager or
// Kubernetes. It fails the test if that takes more than three syncs.
func settle(t *testing.T, f *fixture, name string) {
	t.Helper()
	for range 3 {
		f.expireMemo()
		f.managerRequests()
		f.kubeWrites()
		f.mustSync(t, name)
		if len(managerWrites(f.managerRequests())) == 0 && len(f.kubeWrites()) == 0 {
			return
		}
	}
	t.Fatalf("task %q did not settle in three syncs", name)
}

func TestSyncAddsTheFinalizerOnlyWhenScyllaDBManagerHoldsOrIsAboutToHoldTheTask(t *testing.T) {
	t.Parallel()

	backupProperties, err := managerclient.BackupProperties{Location: []string{"s3:backups"}}.Raw()
	if err != nil {
		t.Fatal(err)
	}
	tt := []struct {
		name string
		dc   *scyllav1alpha1.ScyllaDBDatacenter
		// setup puts into ScyllaDB Manager what it holds before the sync.
		setup          func(t *testing.T, f *fixture)
		wantWrites     []string
		wantFinalizers []string
	}{
		{
			name:       "waiting for the registration",
			dc:         newUnregisteredDatacenter(),
			wantWrites: []string{writeAwaitingRegistration},
		},
		{
			name:           "registered",
			dc:             newRegisteredDatacenter(),
			wantWrites:     schedulingWrites,
			wantFinalizers: []string{naming.ScyllaDBManagerTaskFinalizer},
		},
		{
			name: "ScyllaDB Manager holds a task of the name without an owner",
			dc:   newRegisteredDatacenter(),
			setup: func(t *testing.T, f *fixture) {
				if _, err := f.managerClient.CreateTask(t.Context(), testClusterID, &managerclient.TaskUpdate{
					Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
					Schedule: &managerclient.Schedule{Cron: "0 1 * * *"}, Properties: backupProperties,
				}); err != nil {
					t.Fatal(err)
				}
			},
			wantWrites:     []string{writeFinalizerAndRecord, "ScyllaDB Manager UpdateTask", writeStatusAnnotation, writeScheduled},
			wantFinalizers: []string{naming.ScyllaDBManagerTaskFinalizer},
		},
		{
			name: "ScyllaDB Manager holds the task as asked, and the object lost its finalizer and record",
			dc:   newRegisteredDatacenter(),
			setup: func(t *testing.T, f *fixture) {
				desired, err := makeDesiredTask(newCreatedTask("daily"), nil, f.clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				if _, err := f.managerClient.CreateTask(t.Context(), testClusterID, &desired.update); err != nil {
					t.Fatal(err)
				}
			},
			wantWrites: []string{
				"patch scylladbmanagertasks: finalizers=[scylladb-manager-task] +scylladb-manager-task-cluster-id +scylladb-manager-task-status",
				writeScheduled,
			},
			wantFinalizers: []string{naming.ScyllaDBManagerTaskFinalizer},
		},
		{
			name: "ScyllaDB Manager holds a task of the name that another object owns",
			dc:   newRegisteredDatacenter(),
			setup: func(t *testing.T, f *fixture) {
				if _, err := f.managerClient.CreateTask(t.Context(), testClusterID, &managerclient.TaskUpdate{
					Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
					Labels:   map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"},
					Schedule: &managerclient.Schedule{Cron: "0 1 * * *"}, Properties: backupProperties,
				}); err != nil {
					t.Fatal(err)
				}
			},
			wantWrites: []string{"apply scylladbmanagertasks/status: Available=False/TaskNotScheduled Progressing=False/AsExpected Degraded=True/OwnershipConflict"},
		},
		{
			name: "ScyllaDB Manager fails to list the tasks",
			dc:   newRegisteredDatacenter(),
			setup: func(t *testing.T, f *fixture) {
				if err := f.manager.InjectFailure(fakescyllamanager.EndpointListTasks, fakescyllamanager.Failure{Status: http.StatusServiceUnavailable}); err != nil {
					t.Fatal(err)
				}
			},
			wantWrites: []string{"apply scylladbmanagertasks/status: Available=Unknown/ScyllaDBManagerStateUnknown Progressing=False/AsExpected Degraded=True/ScyllaDBManagerError"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.dc, newCreatedTask("daily"))
			if tc.setup != nil {
				tc.setup(t, f)
			}
			f.managerRequests()
			f.journal.Take()

			_ = f.sync(t, "daily")
			if diff := cmp.Diff(tc.wantWrites, f.journal.Take()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantFinalizers, f.task(t, "daily").Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncWaitsForTheRegistrationOfTheReferencedCluster(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		dc          func() *scyllav1alpha1.ScyllaDBDatacenter
		wantMessage string
	}{
		{
			name:        "the datacenter does not exist",
			dc:          func() *scyllav1alpha1.ScyllaDBDatacenter { return nil },
			wantMessage: `ScyllaDBDatacenter "scylla/basic" does not exist`,
		},
		{
			name: "the datacenter is not labelled for registration",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Labels = nil
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" is not labelled "scylla-operator.scylladb.com/register-with-scylladb-manager" for registration with ScyllaDB Manager`,
		},
		{
			name: "the datacenter has no cluster ID yet",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Annotations = nil
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" is not registered with ScyllaDB Manager yet`,
		},
		{
			name: "the datacenter's cluster ID is not a UUID",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "scylla/basic"
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" has annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" = "scylla/basic", which is not a ScyllaDB Manager cluster ID`,
		},
		{
			// uuid.Parse takes these forms; ScyllaDB Manager and the registration controller do not.
			name: "the datacenter's cluster ID is a braced UUID",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "{" + testClusterID + "}"
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" has annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" = "{` + testClusterID + `}", which is not a ScyllaDB Manager cluster ID`,
		},
		{
			name: "the datacenter's cluster ID is a UUID URN",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "urn:uuid:" + testClusterID
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" has annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" = "urn:uuid:` + testClusterID + `", which is not a ScyllaDB Manager cluster ID`,
		},
		{
			// Copied with another datacenter's manifest: the registration controller replaces it.
			name: "the datacenter's cluster ID is derived from another object's UID",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", "other-sdc-uid")
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" has annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" = "` +
				naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", "other-sdc-uid") +
				`", which is another object's ScyllaDB Manager cluster ID (copied with its manifest); waiting for the registration controller to replace it`,
		},
		{
			name: "the datacenter is being deleted",
			dc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				dc := newRegisteredDatacenter()
				dc.DeletionTimestamp = new(metav1.NewTime(testStart))
				dc.Finalizers = []string{naming.ScyllaDBManagerClusterFinalizer}
				return dc
			},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" is being deleted`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newBackupTask("daily"))
			if dc := tc.dc(); dc != nil {
				f.put(t, dc, "scylladbdatacenters")
			}

			f.mustSync(t, "daily")

			if requests := f.managerRequests(); len(requests) != 0 {
				t.Errorf("expected no ScyllaDB Manager requests while waiting, got %+v", requests)
			}
			if diff := cmp.Diff(onlyStatusApply, f.kubeWrites()); diff != "" {
				t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
			}
			task := f.task(t, "daily")
			want := []string{"Available=False/TaskNotScheduled", "Degraded=False/AsExpected", "Progressing=True/AwaitingRegistration"}
			if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if c := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.ProgressingCondition); c.Message != tc.wantMessage {
				t.Errorf("expected Progressing message %q, got %q", tc.wantMessage, c.Message)
			}

			// Waiting again writes nothing.
			f.mustSync(t, "daily")
			if writes := f.kubeWrites(); len(writes) != 0 {
				t.Errorf("expected no writes while still waiting, got %q", writes)
			}

			// Registration ends the wait.
			f.put(t, newRegisteredDatacenter(), "scylladbdatacenters")
			f.mustSync(t, "daily")
			f.onlyTask(t)
		})
	}
}

func TestSyncCreatesTheTaskAndThenWritesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))

	f.mustSync(t, "daily")

	requests := f.managerRequests()
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(requests)); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(createWrites, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}

	got := f.onlyTask(t)
	task := f.task(t, "daily")
	if recorded := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]; recorded != testClusterID {
		t.Errorf("expected the task to record cluster %q, got %q", testClusterID, recorded)
	}
	desired, err := makeDesiredTask(task, nil, testStart)
	if err != nil {
		t.Fatal(err)
	}
	want := fakescyllamanager.TaskState{
		ClusterID: testClusterID,
		ID:        got.ID,
		Type:      "backup",
		Name:      "daily",
		Enabled:   true,
		Labels: map[string]string{
			naming.ScyllaDBManagerOwnerUIDLabel:    "daily-uid",
			naming.ScyllaDBManagerManagedHashLabel: desired.hash,
		},
		Schedule:   fakescyllamanager.ScheduleState{Cron: "0 2 * * *", StartDate: new(testStart), NumRetries: 3},
		Properties: json.RawMessage(`{"location":["s3:backups"],"retention":7}`),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected task in ScyllaDB Manager (-want +got):\n%s", diff)
	}
	if task.Status.TaskID == nil || *task.Status.TaskID != got.ID {
		t.Errorf("expected status.taskID %q, got %v", got.ID, task.Status.TaskID)
	}
	if task.Status.ObservedGeneration == nil || *task.Status.ObservedGeneration != 1 {
		t.Errorf("expected observedGeneration 1, got %v", task.Status.ObservedGeneration)
	}
	wantConditions := []string{"Available=True/TaskScheduled", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(wantConditions, conditionStatuses(task)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	// Once a read tells what ScyllaDB Manager filled in, a sync writes nothing and reads one list.
	settle(t, f, "daily")
	f.expireMemo()
	f.mustSync(t, "daily")
	requests = f.managerRequests()
	if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n != 1 || len(requests) != 1 {
		t.Errorf("expected exactly one task list read, got %+v", requests)
	}
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes in steady state, got %q", writes)
	}
	task = f.task(t, "daily")
	wantNext := metav1.NewTime(time.Date(2025, time.January, 2, 2, 0, 0, 0, time.UTC))
	if task.Status.NextActivation == nil || !task.Status.NextActivation.Equal(&wantNext) {
		t.Errorf("expected nextActivation %v, got %v", wantNext, task.Status.NextActivation)
	}
	if task.Status.LastRunStatus == nil || *task.Status.LastRunStatus != "NEW" {
		t.Errorf("expected lastRunStatus NEW, got %v", task.Status.LastRunStatus)
	}
	if got := f.onlyTask(t).ID; got != *task.Status.TaskID {
		t.Errorf("the task changed ID from %q to %q", *task.Status.TaskID, got)
	}
}

func TestSyncUpdatesTheTaskWhenTheSpecChanges(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	settle(t, f, "daily")
	id := f.onlyTask(t).ID

	task := f.task(t, "daily")
	task.Spec.Backup.Retention = new(int64(14))
	task.Spec.Backup.Cron = new("0 4 * * *")
	task.Generation = 2
	f.put(t, task, "scylladbmanagertasks")
	f.mustSync(t, "daily")

	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	got := f.onlyTask(t)
	if got.ID != id {
		t.Errorf("expected the task to keep ID %q, got %q", id, got.ID)
	}
	if got.Schedule.Cron != "0 4 * * *" || string(got.Properties) != `{"location":["s3:backups"],"retention":14}` {
		t.Errorf("the update did not reach ScyllaDB Manager: %+v", got)
	}
	// A start date ScyllaDB Manager picked for a task created without one is not reset by an update.
	if got.Schedule.StartDate == nil || !got.Schedule.StartDate.Equal(testStart) {
		t.Errorf("expected the start date %v to stay, got %v", testStart, got.Schedule.StartDate)
	}
	if g := f.task(t, "daily").Status.ObservedGeneration; g == nil || *g != 2 {
		t.Errorf("expected observedGeneration 2, got %v", g)
	}
	settle(t, f, "daily")
}

func TestSyncAdoptsATaskOfTheSameNameWithoutOwner(t *testing.T) {
	t.Parallel()

	task := newBackupTask("basic-backup-daily-abcde")
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskNameOverrideAnnotation: "daily"}
	f := newFixture(t, newRegisteredDatacenter(), task)

	// As the established operator's manager-controller left it: same name, no labels.
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

	f.mustSync(t, "basic-backup-daily-abcde")

	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	got := f.onlyTask(t)
	if got.ID != id {
		t.Errorf("expected the task %q to be adopted, got %q", id, got.ID)
	}
	if got.Labels[naming.ScyllaDBManagerOwnerUIDLabel] != "basic-backup-daily-abcde-uid" || got.Schedule.Cron != "0 2 * * *" {
		t.Errorf("the adopted task was not updated: %+v", got)
	}
	if got := f.task(t, "basic-backup-daily-abcde").Status.TaskID; got == nil || *got != id {
		t.Errorf("expected status.taskID %q, got %v", id, got)
	}
	settle(t, f, "basic-backup-daily-abcde")
}

func TestSyncFindsTheTaskItCreatedBeforeItCouldRecordIt(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	task := f.task(t, "daily")
	desired, err := makeDesiredTask(task, nil, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	// Created by a previous run that was killed before it wrote the status: only the labels tell it is ours.
	update := desired.update
	update.Name = "renamed-by-hand"
	id, err := f.managerClient.CreateTask(t.Context(), testClusterID, &update)
	if err != nil {
		t.Fatal(err)
	}
	f.managerRequests()

	f.mustSync(t, "daily")

	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if got := f.onlyTask(t); got.ID != id || got.Name != "daily" {
		t.Errorf("expected task %q renamed back to daily, got %+v", id, got)
	}
}

func TestSyncReportsATaskOfTheSameNameThatAnotherObjectOwns(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	properties, err := managerclient.BackupProperties{Location: []string{"s3:backups"}}.Raw()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.managerClient.CreateTask(t.Context(), testClusterID, &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
		Labels:   map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "someone-else"},
		Schedule: &managerclient.Schedule{Cron: "0 1 * * *"}, Properties: properties,
	}); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()

	if err := f.sync(t, "daily"); err != nil {
		t.Fatalf("expected a conflict not to be retried hot, got %v", err)
	}

	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
	}
	task := f.task(t, "daily")
	want := []string{"Available=False/TaskNotScheduled", "Degraded=True/OwnershipConflict", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.DegradedCondition); !strings.Contains(c.Message, `"someone-else"`) {
		t.Errorf("expected the conflict to name the owner, got %q", c.Message)
	}
	if events := f.events(); len(events) != 1 || !strings.HasPrefix(events[0], "Warning OwnershipConflict") {
		t.Errorf("expected one OwnershipConflict warning, got %q", events)
	}
}

func TestSyncRecreatesATaskDeletedByHand(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	settle(t, f, "daily")
	old := f.onlyTask(t).ID
	if err := f.managerClient.DeleteTask(t.Context(), testClusterID, managerclient.TaskTypeBackup, old); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()

	f.expireMemo()
	f.mustSync(t, "daily")

	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	recreated := f.onlyTask(t).ID
	if recreated == old {
		t.Errorf("expected a new task")
	}
	if got := f.task(t, "daily").Status.TaskID; got == nil || *got != recreated {
		t.Errorf("expected status.taskID %q, got %v", recreated, got)
	}
}

func TestSyncRestoresATaskEditedByHand(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		edit func(u *managerclient.TaskUpdate)
		// restored adjusts the task as it was to what it is restored to, when that differs.
		restored func(want *fakescyllamanager.TaskState)
	}{
		{name: "properties", edit: func(u *managerclient.TaskUpdate) {
			u.Properties = json.RawMessage(`{"location":["s3:backups"],"retention":1}`)
		}},
		{name: "an unset property", edit: func(u *managerclient.TaskUpdate) {
			u.Properties = json.RawMessage(`{"location":["s3:backups"],"retention":7,"keyspace":["system_auth"]}`)
		}},
		{name: "cron", edit: func(u *managerclient.TaskUpdate) { u.Schedule.Cron = "0 5 * * *" }},
		{name: "disabled", edit: func(u *managerclient.TaskUpdate) { u.Enabled = false }},
		{name: "retries", edit: func(u *managerclient.TaskUpdate) { u.Schedule.NumRetries = 9 }},
		{name: "window", edit: func(u *managerclient.TaskUpdate) { u.Schedule.Window = []string{"Sat-22:00", "Sun-06:00"} }},
		{name: "timezone", edit: func(u *managerclient.TaskUpdate) { u.Schedule.Timezone = "Europe/Warsaw" }},
		{name: "name", edit: func(u *managerclient.TaskUpdate) { u.Name = "renamed" }},
		{
			name: "a start date in the future",
			edit: func(u *managerclient.TaskUpdate) { u.Schedule.StartDate = new(testStart.Add(30 * 24 * time.Hour)) },
			// No start date asks for "right away", which ScyllaDB Manager holds as no start date after an update.
			restored: func(want *fakescyllamanager.TaskState) { want.Schedule.StartDate = nil },
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			f.mustSync(t, "daily")
			settle(t, f, "daily")
			want := f.onlyTask(t)

			// sctool keeps the labels and sends the whole task back.
			current, err := f.managerClient.GetTask(t.Context(), testClusterID, managerclient.TaskTypeBackup, want.ID)
			if err != nil {
				t.Fatal(err)
			}
			edited := managerclient.TaskUpdate{
				Type: current.Type, Name: current.Name, Enabled: current.Enabled, Labels: current.Labels,
				Schedule: &current.Schedule, Properties: current.Properties,
			}
			tc.edit(&edited)
			if _, err := f.managerClient.UpdateTask(t.Context(), testClusterID, managerclient.TaskTypeBackup, want.ID, &edited); err != nil {
				t.Fatal(err)
			}
			f.managerRequests()

			f.expireMemo()
			f.mustSync(t, "daily")

			if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if tc.restored != nil {
				tc.restored(&want)
			}
			if diff := cmp.Diff(want, f.onlyTask(t)); diff != "" {
				t.Errorf("the task was not restored (-want +got):\n%s", diff)
			}
			settle(t, f, "daily")
		})
	}
}

func TestSyncWaitsForAClusterMissingFromScyllaDBManagerAndRecreatesTheTask(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.controller.clusterMissingRequeueDelay = time.Millisecond
	f.mustSync(t, "daily")
	old := f.onlyTask(t).ID
	if err := f.managerClient.DeleteCluster(t.Context(), testClusterID); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()
	f.expireMemo()

	if err := f.sync(t, "daily"); err != nil {
		t.Fatalf("expected waiting, not an error: %v", err)
	}
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
	}
	task := f.task(t, "daily")
	want := []string{"Available=False/TaskNotScheduled", "Degraded=False/AsExpected", "Progressing=True/ScyllaDBManagerClusterMissing"}
	if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	// The key comes back by itself: re-registration under the same ID changes nothing the informers see.
	deadline := time.Now().Add(10 * time.Second)
	for f.controller.queue.Len() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if key, _ := f.controller.queue.Get(); key != testNamespace+"/daily" {
		t.Errorf("expected the task to be requeued, got %q", key)
	}

	// Registered again under the same ID, the cluster gets the task again; the 404 dropped the memo.
	if _, err := f.managerClient.CreateCluster(t.Context(), &managerclient.Cluster{ID: testClusterID, Name: "scylla/basic", Host: "basic-client.scylla.svc", WithoutRepair: true}); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if got := f.onlyTask(t).ID; got == old {
		t.Errorf("expected a new task in the re-registered cluster")
	}
}

func TestSyncDoesNotResendATaskScyllaDBManagerRejected(t *testing.T) {
	t.Parallel()

	// ScyllaDB Manager answers 400 to a task name that is a UUID; nothing checks that before it.
	const uuidName = "6d3a0a8e-0000-4000-8000-000000000001"
	task := newBackupTask("daily")
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskNameOverrideAnnotation: uuidName}
	f := newFixture(t, newRegisteredDatacenter(), task)

	if err := f.sync(t, "daily"); err != nil {
		t.Fatalf("expected a 400 not to be retried, got %v", err)
	}
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	got := f.task(t, "daily")
	want := []string{"Available=False/TaskNotScheduled", "Degraded=True/ScyllaDBManagerRejected", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(got)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	degraded := meta.FindStatusCondition(got.Status.Conditions, controllerhelpers.DegradedCondition)
	if !strings.Contains(degraded.Message, "name cannot be an UUID") {
		t.Errorf("expected ScyllaDB Manager's message in Degraded, got %q", degraded.Message)
	}
	if degraded.ObservedGeneration != 1 {
		t.Errorf("expected the failure to be recorded at generation 1, got %d", degraded.ObservedGeneration)
	}

	// The resync reads the list but does not send the task again, nor rewrites the status.
	f.expireMemo()
	f.kubeWrites()
	f.mustSync(t, "daily")
	requests := f.managerRequests()
	if writes := managerWrites(requests); len(writes) != 0 {
		t.Errorf("expected the rejected task not to be sent again, got %v", writes)
	}
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes, got %q", writes)
	}

	// Fixing the annotation is a change: the task is sent again and accepted.
	got.Annotations[naming.ScyllaDBManagerTaskNameOverrideAnnotation] = "daily"
	f.put(t, got, "scylladbmanagertasks")
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	want = []string{"Available=True/TaskScheduled", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(f.task(t, "daily"))); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

// TestSyncSendsARejectedTaskAgainOnceTheRejectionExpires: ScyllaDB Manager answers 400 also for causes outside the
// object, such as a location the nodes can't write to until their credentials are set. Once that heals, the task is
// scheduled by the first sync after the rejection expired (the status refresh reaches it), with no change to the
// object; syncs before that do not send it again.
func TestSyncSendsARejectedTaskAgainOnceTheRejectionExpires(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	if err := f.manager.SetLocationState("s3:backups", fakescyllamanager.LocationInaccessible); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(t, "daily"); err != nil {
		t.Fatalf("expected a 400 not to be retried with back-off, got %v", err)
	}
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	want := []string{"Available=False/TaskNotScheduled", "Degraded=True/ScyllaDBManagerRejected", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(f.task(t, "daily"))); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	// The nodes get their credentials. Until the rejection expires, syncs do not send the task again.
	if err := f.manager.SetLocationState("s3:backups", fakescyllamanager.LocationAccessible); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(f.controller.statusRefreshInterval - time.Second)
	f.mustSync(t, "daily")
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected the rejected task not to be sent again before the rejection expires, got %v", writes)
	}

	f.clock.Advance(time.Second)
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes once the rejection expired (-want +got):\n%s", diff)
	}
	want = []string{"Available=True/TaskScheduled", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(f.task(t, "daily"))); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	f.onlyTask(t)
}

// TestSyncDoesNotActOnASpecTheWebhookWouldRefuse: a task validation.ValidateScyllaDBManagerTask refuses, as the
// admission webhook does, never reaches ScyllaDB Manager; its status says why.
func TestSyncDoesNotActOnASpecTheWebhookWouldRefuse(t *testing.T) {
	t.Parallel()

	task := newBackupTask("daily")
	task.Spec.Backup.Cron = new("61 * * * *")
	f := newFixture(t, newRegisteredDatacenter(), task)

	if err := f.sync(t, "daily"); err != nil {
		t.Fatalf("expected an invalid spec not to be retried, got %v", err)
	}
	if requests := f.managerRequests(); len(requests) != 0 {
		t.Errorf("expected no ScyllaDB Manager request, got %+v", requests)
	}
	got := f.task(t, "daily")
	want := []string{"Available=Unknown/ScyllaDBManagerStateUnknown", "Degraded=True/InvalidSpec", "Progressing=False/AsExpected"}
	if diff := cmp.Diff(want, conditionStatuses(got)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	degraded := meta.FindStatusCondition(got.Status.Conditions, controllerhelpers.DegradedCondition)
	if !strings.Contains(degraded.Message, `spec.backup.cron: Invalid value: "61 * * * *"`) {
		t.Errorf("expected the validation error in Degraded, got %q", degraded.Message)
	}
}

func TestSyncRetriesAFailedSpecAfterTheGenerationChanges(t *testing.T) {
	t.Parallel()

	task := newRepairTask("weekly")
	task.Spec.Repair.Host = new("10.9.9.9")
	f := newFixture(t, newRegisteredDatacenter(), task)

	if err := f.sync(t, "weekly"); err != nil {
		t.Fatalf("expected a 400 not to be retried, got %v", err)
	}
	f.managerRequests()
	f.expireMemo()
	f.mustSync(t, "weekly")
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected the rejected task not to be sent again, got %v", writes)
	}

	got := f.task(t, "weekly")
	got.Spec.Repair.Host = new("10.0.0.2")
	got.Generation = 2
	f.put(t, got, "scylladbmanagertasks")
	f.mustSync(t, "weekly")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(f.task(t, "weekly").Status.Conditions, controllerhelpers.DegradedCondition); c.Status != metav1.ConditionFalse {
		t.Errorf("expected Degraded to clear, got %+v", c)
	}
}

func TestSyncRetriesScyllaDBManagerServerErrors(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name          string
		endpoint      fakescyllamanager.Endpoint
		failure       fakescyllamanager.Failure
		wantAvailable string
		wantMessage   string
	}{
		{
			name:          "a 500 on create",
			endpoint:      fakescyllamanager.EndpointCreateTask,
			failure:       fakescyllamanager.Failure{Status: http.StatusInternalServerError, Message: "agents unreachable", Times: 1},
			wantAvailable: "Available=False/TaskNotScheduled",
			wantMessage:   `can't create ScyllaDB Manager task "daily": agents unreachable`,
		},
		{
			name:     "a dropped connection on the list",
			endpoint: fakescyllamanager.EndpointListTasks,
			// Every time: Go's transport retries an idempotent request once when a reused connection drops.
			failure:       fakescyllamanager.Failure{DropConnection: true},
			wantAvailable: "Available=Unknown/ScyllaDBManagerStateUnknown",
			wantMessage:   `can't list the tasks of ScyllaDB Manager cluster "` + testClusterID + `"`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			if err := f.manager.InjectFailure(tc.endpoint, tc.failure); err != nil {
				t.Fatal(err)
			}

			if err := f.sync(t, "daily"); err == nil {
				t.Fatal("expected an error, so that the queue backs off and retries")
			}
			task := f.task(t, "daily")
			want := []string{tc.wantAvailable, "Degraded=True/ScyllaDBManagerError", "Progressing=False/AsExpected"}
			if diff := cmp.Diff(want, conditionStatuses(task)); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if c := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.DegradedCondition); !strings.HasPrefix(c.Message, tc.wantMessage) {
				t.Errorf("expected Degraded message to start with %q, got %q", tc.wantMessage, c.Message)
			}

			f.manager.ClearFailures()
			f.mustSync(t, "daily")
			f.onlyTask(t)
			want = []string{"Available=True/TaskScheduled", "Degraded=False/AsExpected", "Progressing=False/AsExpected"}
			if diff := cmp.Diff(want, conditionStatuses(f.task(t, "daily"))); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncDeletesTheTaskOnDeletionAndThenReleasesTheObject(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	f.onlyTask(t)
	f.managerRequests()
	f.kubeWrites()

	task := f.task(t, "daily")
	task.DeletionTimestamp = new(metav1.NewTime(testStart))
	f.put(t, task, "scylladbmanagertasks")
	f.mustSync(t, "daily")

	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointDeleteTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if tasks := f.ourTasks(); len(tasks) != 0 {
		t.Errorf("expected ScyllaDB Manager to hold no task, got %+v", tasks)
	}
	if diff := cmp.Diff([]string{"patch scylladbmanagertasks " + jsonPatch}, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}
	if got := f.task(t, "daily").Finalizers; len(got) != 0 {
		t.Errorf("expected the finalizer to be removed, got %q", got)
	}
}

// TestSyncReleasesATaskOfTheEstablishedOperator: a ScyllaDBManagerTask the established operator created carries its
// finalizer, next to this operator's or alone; the deletion removes it too, or the object would never go.
func TestSyncReleasesATaskOfTheEstablishedOperator(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name       string
		finalizers []string
		wantWrites []string
	}{
		{
			name:       "both finalizers",
			finalizers: []string{naming.ScyllaDBManagerTaskFinalizer, naming.LegacyScyllaDBManagerTaskFinalizer},
			wantWrites: []string{"patch scylladbmanagertasks " + jsonPatch, "patch scylladbmanagertasks " + jsonPatch},
		},
		{
			name:       "the established operator's alone",
			finalizers: []string{naming.LegacyScyllaDBManagerTaskFinalizer},
			wantWrites: []string{"patch scylladbmanagertasks " + jsonPatch},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			f.mustSync(t, "daily")
			f.onlyTask(t)
			f.managerRequests()
			f.kubeWrites()

			task := f.task(t, "daily")
			task.Finalizers = tc.finalizers
			task.DeletionTimestamp = new(metav1.NewTime(testStart))
			f.put(t, task, "scylladbmanagertasks")
			f.mustSync(t, "daily")

			if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointDeleteTask}, managerWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWrites, f.kubeWrites()); diff != "" {
				t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 0 {
				t.Errorf("expected every finalizer to be removed, got %q", got)
			}
		})
	}
}

func TestSyncReleasesADeletedTaskOnceNoClusterHoldsItsTask(t *testing.T) {
	t.Parallel()

	deleteTask := []fakescyllamanager.Endpoint{fakescyllamanager.EndpointDeleteTask}
	tt := []struct {
		name   string
		before func(t *testing.T, f *fixture)
		// wantWrites are ScyllaDB Manager's writes: a delete where it still knows the recorded cluster, so that the
		// task can't outlive the object there.
		wantWrites []fakescyllamanager.Endpoint
	}{
		{
			name: "the cluster is gone from ScyllaDB Manager",
			before: func(t *testing.T, f *fixture) {
				if err := f.managerClient.DeleteCluster(t.Context(), testClusterID); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "the datacenter of a task without a cluster record is gone",
			before: func(t *testing.T, f *fixture) {
				f.dropClusterRecord(t, "daily")
				gvr := scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters")
				if err := f.scyllaClient.Tracker().Delete(gvr, testNamespace, testDCName); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "the datacenter of a task without a cluster record is no longer labelled for registration",
			before: func(t *testing.T, f *fixture) {
				f.dropClusterRecord(t, "daily")
				dc := newRegisteredDatacenter()
				dc.Labels = nil
				f.put(t, dc, "scylladbdatacenters")
			},
		},
		{
			name: "the task is gone from ScyllaDB Manager",
			before: func(t *testing.T, f *fixture) {
				if err := f.managerClient.DeleteTask(t.Context(), testClusterID, managerclient.TaskTypeBackup, f.onlyTask(t).ID); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "the datacenter is gone",
			before: func(t *testing.T, f *fixture) {
				gvr := scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters")
				if err := f.scyllaClient.Tracker().Delete(gvr, testNamespace, testDCName); err != nil {
					t.Fatal(err)
				}
			},
			wantWrites: deleteTask,
		},
		{
			name: "the datacenter is no longer labelled for registration",
			before: func(t *testing.T, f *fixture) {
				dc := newRegisteredDatacenter()
				dc.Labels = nil
				f.put(t, dc, "scylladbdatacenters")
			},
			wantWrites: deleteTask,
		},
		{
			name: "the reference was changed to a datacenter that does not exist",
			before: func(t *testing.T, f *fixture) {
				task := f.task(t, "daily")
				task.Spec.ScyllaDBClusterRef.Name = "typo"
				f.put(t, task, "scylladbmanagertasks")
			},
			wantWrites: deleteTask,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			f.mustSync(t, "daily")
			tc.before(t, f)
			f.deleteAndSync(t, "daily")

			if diff := cmp.Diff(tc.wantWrites, managerWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if tasks := f.ourTasks(); len(tc.wantWrites) != 0 && len(tasks) != 0 {
				t.Errorf("expected ScyllaDB Manager to hold no task, got %+v", tasks)
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 0 {
				t.Errorf("expected the finalizer to be removed, got %q", got)
			}
		})
	}
}

// TestSyncKeepsTheFinalizerWhenScyllaDBManagerFailsToDelete: a deleted task keeps its finalizer while its ScyllaDB
// Manager task can't be deleted, and loses it once it is. A 404 other than ScyllaDB Manager's for a cluster it does not
// hold (its answer to a --scylladb-manager-url that misses its API, or a proxy's in front of it) tells nothing about
// the task: it is a failure like any other, not a cluster that took its tasks with it.
// TestSyncSaysWhyADeletedTaskKeepsItsFinalizer: while ScyllaDB Manager fails to delete the task, the object's Degraded
// condition says why its deletion waits (as the troubleshooting guide promises), written once for an unchanged failure,
// and the deletion still goes through once ScyllaDB Manager answers.
func TestSyncSaysWhyADeletedTaskKeepsItsFinalizer(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	if err := f.manager.InjectFailure(fakescyllamanager.EndpointDeleteTask, fakescyllamanager.Failure{Status: http.StatusInternalServerError, Message: "unavailable"}); err != nil {
		t.Fatal(err)
	}
	f.expireMemo()
	f.kubeWrites()
	task := f.task(t, "daily")
	task.DeletionTimestamp = new(metav1.NewTime(testStart))
	f.put(t, task, "scylladbmanagertasks")

	if err := f.sync(t, "daily"); err == nil {
		t.Fatal("expected an error for the queue to retry")
	}
	if diff := cmp.Diff(onlyStatusApply, f.kubeWrites()); diff != "" {
		t.Errorf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}
	got := f.task(t, "daily")
	degraded := meta.FindStatusCondition(got.Status.Conditions, controllerhelpers.DegradedCondition)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != managerErrorReason ||
		!strings.Contains(degraded.Message, "can't delete the task from ScyllaDB Manager cluster") || !strings.Contains(degraded.Message, "unavailable") {
		t.Errorf("expected Degraded=True/%s saying why the deletion waits, got %+v", managerErrorReason, degraded)
	}
	if got.Status.TaskID == nil {
		t.Errorf("expected the status to keep the task's ID, got none")
	}

	if err := f.sync(t, "daily"); err == nil {
		t.Fatal("expected an error for the queue to retry")
	}
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected an unchanged failure to write nothing, got %v", writes)
	}

	f.manager.ClearFailures()
	f.mustSync(t, "daily")
	if tasks := f.ourTasks(); len(tasks) != 0 {
		t.Errorf("expected ScyllaDB Manager to hold no task, got %+v", tasks)
	}
	if got := f.task(t, "daily").Finalizers; len(got) != 0 {
		t.Errorf("expected the finalizer to be removed, got %q", got)
	}
}

func TestSyncKeepsTheFinalizerWhenScyllaDBManagerFailsToDelete(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name     string
		endpoint fakescyllamanager.Endpoint
		failure  fakescyllamanager.Failure
	}{
		{
			name:     "the delete fails",
			endpoint: fakescyllamanager.EndpointDeleteTask,
			failure:  fakescyllamanager.Failure{Status: http.StatusInternalServerError},
		},
		{
			name:     "a path ScyllaDB Manager has no endpoint for answers",
			endpoint: fakescyllamanager.EndpointAll,
			failure:  fakescyllamanager.Failure{Status: http.StatusNotFound, Message: "find endpoint for path /scylla-manager/api/v1/cluster/" + testClusterID + "/tasks - make sure api-url is correct"},
		},
		{
			name:     "a proxy in front of ScyllaDB Manager answers",
			endpoint: fakescyllamanager.EndpointAll,
			failure:  fakescyllamanager.Failure{Status: http.StatusNotFound, Message: "404 page not found"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			f.mustSync(t, "daily")
			if err := f.manager.InjectFailure(tc.endpoint, tc.failure); err != nil {
				t.Fatal(err)
			}
			f.expireMemo()
			task := f.task(t, "daily")
			task.DeletionTimestamp = new(metav1.NewTime(testStart))
			f.put(t, task, "scylladbmanagertasks")

			if err := f.sync(t, "daily"); err == nil {
				t.Fatal("expected an error for the queue to retry")
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 1 {
				t.Errorf("expected the finalizer to stay, got %q", got)
			}
			f.onlyTask(t)

			f.manager.ClearFailures()
			f.mustSync(t, "daily")
			if tasks := f.ourTasks(); len(tasks) != 0 {
				t.Errorf("expected ScyllaDB Manager to hold no task, got %+v", tasks)
			}
			if got := f.task(t, "daily").Finalizers; len(got) != 0 {
				t.Errorf("expected the finalizer to be removed, got %q", got)
			}
		})
	}
}

func TestSyncReadsTheTaskListOncePerClusterInABurst(t *testing.T) {
	t.Parallel()

	names := []string{"backup-a", "backup-b", "backup-c", "repair-a", "repair-b"}
	objects := []runtime.Object{newRegisteredDatacenter()}
	for _, name := range names {
		if strings.HasPrefix(name, "backup") {
			objects = append(objects, newBackupTask(name))
		} else {
			objects = append(objects, newRepairTask(name))
		}
	}
	f := newFixture(t, objects...)

	burst := func() {
		var wg sync.WaitGroup
		for _, name := range names {
			wg.Go(func() {
				if err := f.controller.sync(t.Context(), testNamespace+"/"+name); err != nil {
					t.Errorf("sync of %q failed: %v", name, err)
				}
			})
		}
		wg.Wait()
		f.catchUp(t)
	}

	burst()
	requests := f.managerRequests()
	// One read finds the tasks missing; each create is read back, by a read it may share with concurrent ones.
	if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n < 2 || n > 1+len(names) {
		t.Errorf("expected one task list read and at most one read back per create for %d tasks, got %d reads", len(names), n)
	}
	if n := countEndpoint(requests, fakescyllamanager.EndpointCreateTask); n != len(names) {
		t.Errorf("expected %d creates, got %d", len(names), n)
	}

	for range 2 {
		f.expireMemo()
		burst()
		requests = f.managerRequests()
		if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n != 1 {
			t.Errorf("expected one task list read for %d tasks, got %d", len(names), n)
		}
		if writes := managerWrites(requests); len(writes) != 0 {
			t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
		}
	}
}

func TestSyncSchedulesTasksOfAScyllaDBCluster(t *testing.T) {
	t.Parallel()

	sc := &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   testNamespace,
			Name:        "multi",
			UID:         "sc-uid",
			Labels:      map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
			Annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: naming.ScyllaDBManagerClusterID(scyllaDBClusterKind, "sc-uid")},
		},
	}
	task := newRepairTask("weekly")
	task.Spec.ScyllaDBClusterRef = scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterKind, Name: "multi"}
	f := newFixture(t, sc, task)
	clusterID := naming.ScyllaDBManagerClusterID(scyllaDBClusterKind, "sc-uid")
	if _, err := f.managerClient.CreateCluster(t.Context(), &managerclient.Cluster{
		ID: clusterID, Name: "scylla/ScyllaDBCluster/multi", Host: "multi-client.scylla.svc", AuthToken: "token", WithoutRepair: true,
	}); err != nil {
		t.Fatal(err)
	}

	f.mustSync(t, "weekly")

	got := f.tasksIn(clusterID)
	if len(got) != 1 || got[0].Type != "repair" || got[0].Name != "weekly" {
		t.Errorf("unexpected task %+v", got)
	}
}

func TestSyncIsStableAgainstScyllaDBManagersRewrites(t *testing.T) {
	t.Parallel()

	// ScyllaDB Manager rewrites 36h as 1d12h and 90m as 1h30m, echoes cron in a JSON document and fills in a start
	// date; none of it may look like a change.
	task := newBackupTask("hourly")
	task.Spec.Backup.Cron = nil
	task.Spec.Backup.RetryWait = &metav1.Duration{Duration: 90 * time.Minute}
	task.Annotations = map[string]string{
		naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot:  "36h",
		naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+1h",
	}
	repair := newRepairTask("weekly")
	repair.Annotations = map[string]string{naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot: "Europe/Warsaw"}
	f := newFixture(t, newRegisteredDatacenter(), task, repair)

	for _, name := range []string{"hourly", "weekly"} {
		f.mustSync(t, name)
		settle(t, f, name)
	}
	var hourly fakescyllamanager.TaskState
	for _, task := range f.ourTasks() {
		if task.Name == "hourly" {
			hourly = task
		}
	}
	want := fakescyllamanager.ScheduleState{StartDate: new(testStart.Add(time.Hour)), Interval: "1d12h", NumRetries: 3, RetryWait: "1h30m"}
	if diff := cmp.Diff(want, hourly.Schedule); diff != "" {
		t.Errorf("unexpected schedule in ScyllaDB Manager (-want +got):\n%s", diff)
	}
}

// TestSyncDoesNotCreateAnIntervalTaskStartingInThePast: ScyllaDB Manager refuses to create a task with an interval
// and a start date in the past, with a 500 that retrying never fixes (and every attempt validates the backup location
// from every node again). The object says what is wrong instead, and nothing is sent until it changes; a task
// ScyllaDB Manager already holds, whose start date has passed since, is still updated.
func TestSyncDoesNotCreateAnIntervalTaskStartingInThePast(t *testing.T) {
	t.Parallel()

	task := newBackupTask("daily")
	task.Spec.Backup.Cron = nil
	task.Spec.Backup.StartDate = new(metav1.NewTime(testStart.Add(-48 * time.Hour)))
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot: "1d"}
	f := newFixture(t, newRegisteredDatacenter(), task)

	f.mustSync(t, "daily")
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
	}
	got := f.task(t, "daily")
	degraded := meta.FindStatusCondition(got.Status.Conditions, controllerhelpers.DegradedCondition)
	if degraded == nil || degraded.Status != metav1.ConditionTrue || degraded.Reason != invalidSpecReason || !strings.Contains(degraded.Message, "is in the past") {
		t.Errorf("expected Degraded=True/%s saying the start date is in the past, got %+v", invalidSpecReason, degraded)
	}
	settle(t, f, "daily")
	if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
		t.Errorf("expected no ScyllaDB Manager writes at rest, got %v", writes)
	}

	// A start date ahead is created; once it has passed, the task is still kept in line.
	got.Spec.Backup.StartDate = new(metav1.NewTime(testStart.Add(time.Hour)))
	got.Generation = 2
	f.put(t, got, "scylladbmanagertasks")
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	f.clock.Advance(48 * time.Hour)
	updated := f.task(t, "daily")
	updated.Spec.Backup.Retention = new(int64(1))
	updated.Generation = 3
	f.put(t, updated, "scylladbmanagertasks")
	f.expireMemo()
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if got := conditionStatuses(f.task(t, "daily")); !slices.Contains(got, "Degraded=False/AsExpected") {
		t.Errorf("expected the update to leave the task not Degraded, got %v", got)
	}
}

// TestSyncIsStableWithAStartDateFinerThanScyllaDBManagerKeeps: ScyllaDB Manager keeps start dates to the millisecond;
// a start date override written to the nanosecond (RFC 3339 allows it) must not look changed on every sync.
func TestSyncIsStableWithAStartDateFinerThanScyllaDBManagerKeeps(t *testing.T) {
	t.Parallel()

	task := newBackupTask("daily")
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "2030-01-01T02:00:00.123456789Z"}
	f := newFixture(t, newRegisteredDatacenter(), task)
	f.mustSync(t, "daily")
	settle(t, f, "daily")
	want := time.Date(2030, 1, 1, 2, 0, 0, 123000000, time.UTC)
	if got := f.onlyTask(t).Schedule.StartDate; got == nil || !got.Equal(want) {
		t.Errorf("expected ScyllaDB Manager to hold the start date %v, got %v", want, got)
	}
}

func TestSyncNeverMovesARelativeStartDate(t *testing.T) {
	t.Parallel()

	task := newBackupTask("daily")
	task.Annotations = map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+3d2h"}
	f := newFixture(t, newRegisteredDatacenter(), task)
	f.mustSync(t, "daily")
	wantStart := testStart.Add(3*24*time.Hour + 2*time.Hour)
	if got := f.onlyTask(t).Schedule.StartDate; got == nil || !got.Equal(wantStart) {
		t.Fatalf("expected the task to start at %v, got %v", wantStart, got)
	}

	// Days later, syncs compute nothing new.
	f.clock.Advance(5 * 24 * time.Hour)
	settle(t, f, "daily")

	// An update for another reason keeps the start date ScyllaDB Manager holds.
	updated := f.task(t, "daily")
	updated.Spec.Backup.Retention = new(int64(1))
	updated.Generation = 2
	f.put(t, updated, "scylladbmanagertasks")
	f.managerRequests()
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointUpdateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
	}
	if got := f.onlyTask(t).Schedule.StartDate; got == nil || !got.Equal(wantStart) {
		t.Errorf("expected the update to keep the start date %v, got %v", wantStart, got)
	}
	settle(t, f, "daily")
}

func TestSyncShowsScyllaDBManagersHintsInDegraded(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newRepairTask("weekly"))
	if err := f.manager.SetNodeDown("10.0.0.2", true); err != nil {
		t.Fatal(err)
	}

	if err := f.sync(t, "weekly"); err == nil {
		t.Fatal("expected ScyllaDB Manager's 500 to be retried")
	}
	degraded := meta.FindStatusCondition(f.task(t, "weekly").Status.Conditions, controllerhelpers.DegradedCondition)
	want := `can't create ScyllaDB Manager task "weekly": create repair target: host 10.0.0.2 is down (One of the nodes is down. Task cannot be created. Check --ignore-down-hosts to repair the live nodes only.)`
	if degraded == nil || degraded.Message != want {
		t.Errorf("expected Degraded message %q, got %+v", want, degraded)
	}

	// Once the node is back, the retry goes through and Degraded clears.
	if err := f.manager.SetNodeDown("10.0.0.2", false); err != nil {
		t.Fatal(err)
	}
	f.mustSync(t, "weekly")
	if degraded := meta.FindStatusCondition(f.task(t, "weekly").Status.Conditions, controllerhelpers.DegradedCondition); degraded.Status != metav1.ConditionFalse {
		t.Errorf("expected Degraded to clear, got %+v", degraded)
	}
}

func TestSyncReflectsWhatScyllaDBManagerHoldsRightAfterItsOwnWrite(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		// write runs the sync that writes the task to ScyllaDB Manager, and returns the write it expects.
		write func(t *testing.T, f *fixture) fakescyllamanager.Endpoint
	}{
		{
			name: "create",
			write: func(t *testing.T, f *fixture) fakescyllamanager.Endpoint {
				f.mustSync(t, "daily")
				return fakescyllamanager.EndpointCreateTask
			},
		},
		{
			name: "update",
			write: func(t *testing.T, f *fixture) fakescyllamanager.Endpoint {
				f.mustSync(t, "daily")
				settle(t, f, "daily")
				task := f.task(t, "daily")
				task.Spec.Backup.Cron = new("0 4 * * *")
				task.Generation++
				f.put(t, task, "scylladbmanagertasks")
				f.expireMemo()
				f.managerRequests()
				f.kubeWrites()
				f.mustSync(t, "daily")
				return fakescyllamanager.EndpointUpdateTask
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
			want := tc.write(t, f)
			requests := f.managerRequests()
			if diff := cmp.Diff([]fakescyllamanager.Endpoint{want}, managerWrites(requests)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			// The read that found the task missing or different, and the read back.
			if n := countEndpoint(requests, fakescyllamanager.EndpointListTasks); n != 2 {
				t.Errorf("expected two task list reads, got %d", n)
			}
			task := f.task(t, "daily")
			if task.Status.NextActivation == nil {
				t.Errorf("expected status.nextActivation, which only ScyllaDB Manager's list tells, got none")
			}
			if annotation := task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]; !strings.Contains(annotation, `"startDate"`) {
				t.Errorf("expected the status annotation to carry the start date ScyllaDB Manager filled in, got %s", annotation)
			}
			f.kubeWrites()

			// The next read of ScyllaDB Manager changes nothing.
			f.expireMemo()
			f.mustSync(t, "daily")
			if writes := managerWrites(f.managerRequests()); len(writes) != 0 {
				t.Errorf("expected no ScyllaDB Manager writes, got %v", writes)
			}
			if writes := f.kubeWrites(); len(writes) != 0 {
				t.Errorf("expected no Kubernetes writes once ScyllaDB Manager was read again, got %q", writes)
			}
		})
	}
}

func TestSyncKeepsTheStatusWhenTheReadBackFails(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	settle(t, f, "daily")
	before := f.task(t, "daily")

	task := before.DeepCopy()
	task.Spec.Backup.Cron = new("0 4 * * *")
	task.Generation++
	f.put(t, task, "scylladbmanagertasks")
	f.kubeWrites()
	// The sync compares with the memo of settle's last read; the update goes through and the list after it fails.
	if err := f.manager.InjectFailure(fakescyllamanager.EndpointListTasks, fakescyllamanager.Failure{Status: http.StatusServiceUnavailable, Times: 1}); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(t, "daily"); err == nil {
		t.Fatal("expected the failed read back to be retried")
	}
	got := f.task(t, "daily")
	if diff := cmp.Diff(before.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation], got.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]); diff != "" {
		t.Errorf("the status annotation changed without a read of ScyllaDB Manager (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(before.Status.NextActivation, got.Status.NextActivation); diff != "" {
		t.Errorf("status.nextActivation changed without a read of ScyllaDB Manager (-before +after):\n%s", diff)
	}
}

func TestSyncSeesATaskDeletedByHandOnTheNextResync(t *testing.T) {
	t.Parallel()

	// The shortest --resync-period the manager-controller accepts.
	const minResyncPeriod = time.Minute

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	settle(t, f, "daily")

	// A resync: the burst reaches this task's cluster a few seconds after the informer's tick and reads its tasks.
	const burstDelay = 2 * time.Second
	f.clock.Advance(defaultTaskListTTL + burstDelay)
	f.mustSync(t, "daily")
	deleted := f.onlyTask(t).ID
	if err := f.managerClient.DeleteTask(t.Context(), testClusterID, managerclient.TaskTypeBackup, deleted); err != nil {
		t.Fatal(err)
	}
	f.managerRequests()

	// The next resync comes one period after the previous tick.
	f.clock.Advance(minResyncPeriod - burstDelay)
	f.mustSync(t, "daily")
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
		t.Errorf("expected the next resync to recreate the task deleted by hand (-want +got):\n%s", diff)
	}
}
