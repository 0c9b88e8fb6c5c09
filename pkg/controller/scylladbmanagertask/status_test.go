package scylladbmanagertask

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clienttesting "k8s.io/client-go/testing"
)

// decodeLikeScyllaCluster decodes a status annotation as the ScyllaCluster controller does (json.Unmarshal into S),
// and also strictly, so that a field its types do not have fails the test instead of being dropped.
func decodeLikeScyllaCluster[S any](t *testing.T, value string) S {
	t.Helper()
	var loose, strict S
	if err := json.Unmarshal([]byte(value), &loose); err != nil {
		t.Fatalf("the ScyllaCluster controller can't decode %s: %v", value, err)
	}
	decoder := json.NewDecoder(bytes.NewReader([]byte(value)))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&strict); err != nil {
		t.Fatalf("the annotation has fields the ScyllaCluster task status does not: %v", err)
	}
	if diff := cmp.Diff(loose, strict); diff != "" {
		t.Fatalf("strict and loose decoding differ:\n%s", diff)
	}
	return loose
}

func TestStatusAnnotationIsWhatTheScyllaClusterControllerReads(t *testing.T) {
	t.Parallel()

	startDate := time.Date(2025, time.January, 1, 12, 0, 0, 0, time.UTC)
	labels := map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "uid", naming.ScyllaDBManagerManagedHashLabel: "hash"}

	t.Run("a backup", func(t *testing.T) {
		t.Parallel()
		item := &managerclient.TaskListItem{Task: managerclient.Task{
			ID: "b-1", Type: managerclient.TaskTypeBackup, Name: "daily", Labels: labels,
			Schedule: managerclient.Schedule{Cron: "0 2 * * *", StartDate: &startDate, NumRetries: 3, RetryWait: "10m", Timezone: "Europe/Warsaw"},
			Properties: json.RawMessage(`{"location":["s3:backups"],"keyspace":["ks"],"dc":["dc1"],"retention":7,` +
				`"rate_limit":["100"],"snapshot_parallel":["2"],"upload_parallel":["dc1:3"],"continue":true}`),
		}}
		value, err := makeStatusAnnotation(item)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeLikeScyllaCluster[scyllav1.BackupTaskStatus](t, value)
		want := scyllav1.BackupTaskStatus{
			TaskStatus: scyllav1.TaskStatus{
				SchedulerTaskStatus: scyllav1.SchedulerTaskStatus{
					StartDate:  new("2025-01-01T12:00:00Z"),
					NumRetries: new(int64(3)),
					RetryWait:  &metav1.Duration{Duration: 10 * time.Minute},
					Cron:       new("0 2 * * *"),
					Timezone:   new("Europe/Warsaw"),
				},
				Name:   "daily",
				ID:     new("b-1"),
				Labels: labels,
			},
			DC:               []string{"dc1"},
			Keyspace:         []string{"ks"},
			Location:         []string{"s3:backups"},
			RateLimit:        []string{"100"},
			Retention:        new(int64(7)),
			SnapshotParallel: []string{"2"},
			UploadParallel:   []string{"dc1:3"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("unexpected backup status (-want +got):\n%s", diff)
		}
		// Encoding what was read gives back the annotation: the shapes are the same.
		if again, err := json.Marshal(got); err != nil || string(again) != value {
			t.Errorf("the annotation does not round-trip:\n%s\n%s", value, again)
		}
	})

	t.Run("a repair", func(t *testing.T) {
		t.Parallel()
		item := &managerclient.TaskListItem{Task: managerclient.Task{
			ID: "r-1", Type: managerclient.TaskTypeRepair, Name: "weekly",
			Schedule: managerclient.Schedule{Interval: "7d"},
			Properties: json.RawMessage(`{"keyspace":["ks"],"dc":["dc1"],"host":"10.0.0.1","ignore_down_hosts":true,"fail_fast":false,` +
				`"intensity":2,"parallel":1,"small_table_threshold":536870912,"incremental_mode":"disabled"}`),
		}}
		value, err := makeStatusAnnotation(item)
		if err != nil {
			t.Fatal(err)
		}
		got := decodeLikeScyllaCluster[scyllav1.RepairTaskStatus](t, value)
		want := scyllav1.RepairTaskStatus{
			TaskStatus: scyllav1.TaskStatus{
				SchedulerTaskStatus: scyllav1.SchedulerTaskStatus{Interval: new("7d"), NumRetries: new(int64(0))},
				Name:                "weekly",
				ID:                  new("r-1"),
			},
			DC:                  []string{"dc1"},
			FailFast:            new(false),
			Intensity:           new("2"),
			Parallel:            new(int64(1)),
			Keyspace:            []string{"ks"},
			SmallTableThreshold: new("512MiB"),
			Host:                new("10.0.0.1"),
			IgnoreDownHosts:     new(true),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("unexpected repair status (-want +got):\n%s", diff)
		}
		if again, err := json.Marshal(got); err != nil || string(again) != value {
			t.Errorf("the annotation does not round-trip:\n%s\n%s", value, again)
		}
	})
}

func TestSyncWritesTheStatusAnnotationFromScyllaDBManagersState(t *testing.T) {
	t.Parallel()

	task := newRepairTask("weekly")
	task.Annotations = map[string]string{
		naming.ScyllaDBManagerTaskNameOverrideAnnotation:         "weekly-repair",
		naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot:   "0.5",
		naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "512MiB",
		naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot:  "Europe/Warsaw",
		naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+3d2h",
	}
	f := newFixture(t, newRegisteredDatacenter(), task)
	f.mustSync(t, "weekly")
	settle(t, f, "weekly")

	got := f.task(t, "weekly")
	status := decodeLikeScyllaCluster[scyllav1.RepairTaskStatus](t, got.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation])
	want := scyllav1.RepairTaskStatus{
		TaskStatus: scyllav1.TaskStatus{
			SchedulerTaskStatus: scyllav1.SchedulerTaskStatus{
				StartDate:  new("2025-01-04T14:00:00Z"),
				NumRetries: new(int64(0)),
				Cron:       new("0 3 * * SUN"),
				Timezone:   new("Europe/Warsaw"),
			},
			Name:   "weekly-repair",
			ID:     got.Status.TaskID,
			Labels: f.onlyTask(t).Labels,
		},
		// ScyllaDB Manager's view: it holds 1 for the 0.5 the ScyllaCluster asked for.
		Intensity:           new("1"),
		SmallTableThreshold: new("512MiB"),
	}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("unexpected status annotation (-want +got):\n%s", diff)
	}
}

func TestSyncAppliesTheStatusUnderTheManagerControllerFieldManager(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")

	var applies []clienttesting.PatchActionImpl
	for _, a := range f.scyllaClient.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok && p.GetSubresource() == "status" {
			applies = append(applies, p)
		}
	}
	if len(applies) != 1 {
		t.Fatalf("expected one status apply, got %d", len(applies))
	}
	a := applies[0]
	if string(a.GetPatchType()) != applyPatch || a.PatchOptions.FieldManager != naming.ManagerControllerFieldManager || a.PatchOptions.Force == nil || !*a.PatchOptions.Force {
		t.Errorf("expected a forced apply as %q, got %s with %+v", naming.ManagerControllerFieldManager, a.GetPatchType(), a.PatchOptions)
	}
	var applied map[string]any
	if err := json.Unmarshal(a.GetPatch(), &applied); err != nil {
		t.Fatal(err)
	}
	if _, ok := applied["spec"]; ok {
		t.Errorf("the status apply carries the spec: %s", a.GetPatch())
	}
	// The UID makes the apply fail rather than land on another object recreated under the same name.
	metadata, _ := applied["metadata"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"name": "daily", "namespace": testNamespace, "uid": "daily-uid"}, metadata); diff != "" {
		t.Errorf("the status apply carries other metadata than the object's name and UID (-want +got):\n%s", diff)
	}
}

func TestSyncPatchesTheStatusAnnotationOfThatObjectOnly(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")

	var patches []map[string]any
	for _, a := range f.scyllaClient.Actions() {
		if p, ok := a.(clienttesting.PatchActionImpl); ok && len(p.GetSubresource()) == 0 {
			var patch map[string]any
			if err := json.Unmarshal(p.GetPatch(), &patch); err != nil {
				t.Fatal(err)
			}
			patches = append(patches, patch)
		}
	}
	// The cluster record goes before the create, the status annotation after it.
	wantKeys := [][]string{{naming.ScyllaDBManagerTaskClusterIDAnnotation}, {naming.ScyllaDBManagerTaskStatusAnnotation}}
	if len(patches) != len(wantKeys) {
		t.Fatalf("expected %d metadata patches, got %d", len(wantKeys), len(patches))
	}
	for i, patch := range patches {
		metadata, _ := patch["metadata"].(map[string]any)
		// The UID makes the patch fail rather than land on another object recreated under the same name, whose
		// ScyllaCluster would then show the old task.
		if metadata["uid"] != "daily-uid" {
			t.Errorf("expected the annotation patch to carry the object's UID, got %v", patch)
		}
		annotations, _ := metadata["annotations"].(map[string]any)
		if diff := cmp.Diff(wantKeys[i], slices.Sorted(maps.Keys(annotations))); diff != "" {
			t.Errorf("unexpected annotations in patch %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestCalculateStatus(t *testing.T) {
	t.Parallel()

	earlier := metav1.NewTime(testStart.Add(-time.Hour))
	now := metav1.NewTime(testStart)
	next := testStart.Add(14*time.Hour + 500*time.Millisecond)
	previous := scyllav1alpha1.ScyllaDBManagerTaskStatus{
		ObservedGeneration: new(int64(1)),
		TaskID:             new("old"),
		LastRunStatus:      new("DONE"),
		SuccessCount:       new(int64(4)),
		ErrorCount:         new(int64(0)),
		Conditions: []metav1.Condition{
			{Type: "Available", Status: metav1.ConditionTrue, Reason: taskScheduledReason, ObservedGeneration: 1, LastTransitionTime: earlier},
			{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: earlier},
			{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 1, LastTransitionTime: earlier},
		},
	}
	task := newBackupTask("daily")
	task.Generation = 2
	task.Status = previous

	tt := []struct {
		name    string
		outcome *outcome
		want    *scyllav1alpha1.ScyllaDBManagerTaskStatus
	}{
		{
			name: "ScyllaDB Manager holds the task",
			outcome: &outcome{managerRead: true, managerTask: &managerclient.TaskListItem{
				Task:           managerclient.Task{ID: "new", Status: managerclient.TaskStatusError, SuccessCount: 4, ErrorCount: 1, LastError: new(testStart.Add(-time.Minute))},
				NextActivation: &next,
			}},
			want: &scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(2)),
				TaskID:             new("new"),
				LastRunStatus:      new("ERROR"),
				NextActivation:     new(metav1.NewTime(testStart.Add(14 * time.Hour))),
				LastError:          new(metav1.NewTime(testStart.Add(-time.Minute))),
				SuccessCount:       new(int64(4)),
				ErrorCount:         new(int64(1)),
				Conditions: []metav1.Condition{
					{Type: "Available", Status: metav1.ConditionTrue, Reason: taskScheduledReason, ObservedGeneration: 2, LastTransitionTime: earlier},
					{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: earlier},
					{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: earlier},
				},
			},
		},
		{
			name: "waiting for registration keeps what ScyllaDB Manager last said",
			outcome: func() *outcome {
				o := &outcome{}
				o.wait(awaitingRegistrationReason, "not registered")
				return o
			}(),
			want: &scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(2)),
				TaskID:             new("old"),
				LastRunStatus:      new("DONE"),
				SuccessCount:       new(int64(4)),
				ErrorCount:         new(int64(0)),
				Conditions: []metav1.Condition{
					{Type: "Available", Status: metav1.ConditionFalse, Reason: taskNotScheduledReason, Message: "not registered", ObservedGeneration: 2, LastTransitionTime: now},
					{Type: "Progressing", Status: metav1.ConditionTrue, Reason: awaitingRegistrationReason, Message: "not registered", ObservedGeneration: 2, LastTransitionTime: now},
					{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: earlier},
				},
			},
		},
		{
			name: "ScyllaDB Manager that can't be read keeps what it last said",
			outcome: func() *outcome {
				o := &outcome{}
				o.fail(managerErrorReason, "connection refused")
				return o
			}(),
			want: &scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(2)),
				TaskID:             new("old"),
				LastRunStatus:      new("DONE"),
				SuccessCount:       new(int64(4)),
				ErrorCount:         new(int64(0)),
				Conditions: []metav1.Condition{
					{Type: "Available", Status: metav1.ConditionUnknown, Reason: managerStateUnknownReason, Message: "connection refused", ObservedGeneration: 2, LastTransitionTime: now},
					{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: earlier},
					{Type: "Degraded", Status: metav1.ConditionTrue, Reason: managerErrorReason, Message: "connection refused", ObservedGeneration: 2, LastTransitionTime: now},
				},
			},
		},
		{
			name: "a task ScyllaDB Manager does not hold has no ID or runs",
			outcome: func() *outcome {
				o := &outcome{managerRead: true}
				o.fail(managerRejectedReason, "malformed request")
				return o
			}(),
			want: &scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(2)),
				Conditions: []metav1.Condition{
					{Type: "Available", Status: metav1.ConditionFalse, Reason: taskNotScheduledReason, Message: "ScyllaDB Manager does not hold the task", ObservedGeneration: 2, LastTransitionTime: now},
					{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: earlier},
					{Type: "Degraded", Status: metav1.ConditionTrue, Reason: managerRejectedReason, Message: "malformed request", ObservedGeneration: 2, LastTransitionTime: now},
				},
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := calculateStatus(task, tc.outcome, now)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestOwnedStatusLeavesOtherConditionsOut(t *testing.T) {
	t.Parallel()

	status := &scyllav1alpha1.ScyllaDBManagerTaskStatus{Conditions: []metav1.Condition{
		{Type: "SomeoneElsesCondition", Status: metav1.ConditionTrue},
		{Type: controllerhelpers.DegradedCondition, Status: metav1.ConditionFalse},
	}}
	got := (&Controller{}).statusApplier().OwnedStatus(status, nil)
	if len(got.Conditions) != 1 || meta.FindStatusCondition(got.Conditions, controllerhelpers.DegradedCondition) == nil {
		t.Errorf("unexpected owned conditions %+v", got.Conditions)
	}
}

func TestSyncDoesNotRepeatItsWritesBeforeTheCacheSeesThem(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	settle(t, f, "daily")

	// A change the next read shows: the run state, reflected in the status and the status annotation.
	task := f.task(t, "daily")
	task.Spec.Backup.Retention = new(int64(14))
	task.Generation++
	f.put(t, task, "scylladbmanagertasks")
	f.expireMemo()
	f.kubeWrites()
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if diff := cmp.Diff(statusWrites, f.kubeWrites()); diff != "" {
		t.Fatalf("unexpected Kubernetes writes (-want +got):\n%s", diff)
	}

	// The annotation patch's event enqueues the task again while the informer still holds the object from before.
	f.syncBeforeTheCacheCatchesUp(t, "daily")
	if writes := f.kubeWrites(); len(writes) != 0 {
		t.Errorf("expected the second sync to compare with what the first one wrote and write nothing, got %q", writes)
	}
}
