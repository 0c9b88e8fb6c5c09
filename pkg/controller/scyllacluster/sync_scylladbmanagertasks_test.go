package scyllacluster

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// badCronError is what the webhook says of the cron "every night" of the first repair.
const badCronError = `spec.repairs[0].cron: Invalid value: "every night": must be a cron expression with five fields and an optional leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly or "@every <duration>": expected 5 to 6 fields, found 2: [every night]`

func (f *syncFixture) getScyllaDBManagerTask(t *testing.T, name string) *scyllav1alpha1.ScyllaDBManagerTask {
	t.Helper()
	task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("can't get ScyllaDBManagerTask %q: %v", name, err)
	}
	return task
}

// storeScyllaCluster stores sc as its author's update would, with its generation bumped, and lets the caches catch up.
func (f *syncFixture) storeScyllaCluster(t *testing.T, sc *scyllav1.ScyllaCluster) {
	t.Helper()
	sc.Generation++
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)
}

// expectTaskCondition checks the ScyllaDBManagerTask sub-sync's Degraded condition and the aggregated Degraded
// condition of status: both True with a message containing message or, when message is empty, the first False and
// the second not True.
func expectTaskCondition(t *testing.T, status *scyllav1.ScyllaClusterStatus, message string) {
	t.Helper()
	subSync := meta.FindStatusCondition(status.Conditions, scyllaDBManagerTaskControllerName+"Degraded")
	degraded := meta.FindStatusCondition(status.Conditions, "Degraded")
	if len(message) == 0 {
		if subSync == nil || subSync.Status != metav1.ConditionFalse {
			t.Errorf("expected %sDegraded False, got %+v", scyllaDBManagerTaskControllerName, subSync)
		}
		if degraded == nil || degraded.Status == metav1.ConditionTrue {
			t.Errorf("expected Degraded not True, got %+v", degraded)
		}
		return
	}
	for _, c := range []*metav1.Condition{subSync, degraded} {
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, message) {
			t.Errorf("expected a Degraded condition True with a message containing %q, got %+v", message, c)
		}
	}
}

// One invalid field of one task (stored while the webhook was not installed, or before it had the rule) leaves that
// task's ScyllaDBManagerTask as it was and is reported on it; the datacenter and the other tasks keep being
// reconciled. Fixing the field clears the report and updates the task.
func TestSyncKeepsReconcilingAroundATaskTheWebhookWouldRefuse(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	repairBefore := f.getScyllaDBManagerTask(t, nightlyRepairTaskName)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Repairs[0].Cron = new("every night")
	sc.Spec.Backups[0].Cron = new("0 2 * * *")
	sc.Spec.Datacenter.Racks[0].Members = 4
	f.storeScyllaCluster(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	wantWrites := []string{
		"update scylladbdatacenters basic",
		"update scylladbmanagertasks " + dailyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantMessage := `can't translate repair task "nightly": ` + badCronError
	if diff := cmp.Diff([]string{"Warning InvalidSpec " + wantMessage}, slices.DeleteFunc(f.takeEvents(), func(e string) bool {
		return strings.HasPrefix(e, "Normal ")
	})); diff != "" {
		t.Errorf("unexpected warnings (-want +got):\n%s", diff)
	}

	if got := *f.getScyllaDBDatacenter(t).Spec.Racks[0].Nodes; got != 4 {
		t.Errorf("expected the datacenter scaled to 4 nodes, got %d", got)
	}
	if got := f.getScyllaDBManagerTask(t, dailyBackupTaskName).Spec.Backup.Cron; got == nil || *got != "0 2 * * *" {
		t.Errorf("expected the valid backup's new cron applied, got %v", got)
	}
	if diff := cmp.Diff(repairBefore, f.getScyllaDBManagerTask(t, nightlyRepairTaskName)); diff != "" {
		t.Errorf("expected the invalid repair's ScyllaDBManagerTask left as it was (-before +after):\n%s", diff)
	}

	status := f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, wantMessage)
	if status.Repairs[0].Error == nil || *status.Repairs[0].Error != wantMessage {
		t.Errorf("expected the repair's status error %q, got %v", wantMessage, status.Repairs[0].Error)
	}
	for _, backup := range status.Backups {
		if backup.Error != nil {
			t.Errorf("expected no error on backup %q, got %q", backup.Name, *backup.Error)
		}
	}
	f.expectQuietResync(t, sc)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Repairs[0].Cron = new("0 3 * * *")
	f.storeScyllaCluster(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error once the field is fixed: %v", err)
	}
	wantWrites = []string{
		"update scylladbmanagertasks " + nightlyRepairTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the field is fixed (-want +got):\n%s", diff)
	}
	f.takeEvents()
	if got := f.getScyllaDBManagerTask(t, nightlyRepairTaskName).Spec.Repair.Cron; got == nil || *got != "0 3 * * *" {
		t.Errorf("expected the fixed repair's cron applied, got %v", got)
	}
	status = f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, "")
	if status.Repairs[0].Error != nil {
		t.Errorf("expected the fixed repair's status error cleared, got %q", *status.Repairs[0].Error)
	}
	f.expectQuietResync(t, sc)
}

// A task added with an invalid field is not created, and the others are; once fixed, it is created.
func TestSyncCreatesNoTaskTheWebhookWouldRefuseUntilItIsFixed(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.Spec.Repairs[0].Cron = new("every night")
	f := newSyncFixture(t, sc)
	f.syncCreatingScyllaDBDatacenter(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	// The error is news: the status goes out without waiting for the ScyllaDBDatacenter's first one.
	wantWrites := []string{
		"create scylladbmanagertasks " + dailyBackupTaskName,
		"create scylladbmanagertasks " + weeklyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantMessage := `can't translate repair task "nightly": ` + badCronError
	status := f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, wantMessage)
	if status.Repairs[0].Error == nil || *status.Repairs[0].Error != wantMessage {
		t.Errorf("expected the repair's status error %q, got %v", wantMessage, status.Repairs[0].Error)
	}
	f.takeEvents()
	f.expectQuietResync(t, sc)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Repairs[0].Cron = new("0 3 * * *")
	f.storeScyllaCluster(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error once the field is fixed: %v", err)
	}
	wantWrites = []string{
		"create scylladbmanagertasks " + nightlyRepairTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the field is fixed (-want +got):\n%s", diff)
	}
	status = f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, "")
	if status.Repairs[0].Error != nil {
		t.Errorf("expected the fixed repair's status error cleared, got %q", *status.Repairs[0].Error)
	}
	f.takeEvents()
	f.expectQuietResync(t, sc)
}

// Two repairs of one name would be one ScyllaDBManagerTask: the webhook refuses the second, so the sync applies the
// first, and only the second's status entry reports the error.
func TestSyncAppliesTheFirstOfTwoTasksOfOneName(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.Spec.Repairs = append(sc.Spec.Repairs, scyllav1.RepairTaskSpec{TaskSpec: scyllav1.TaskSpec{Name: "nightly"}, Parallel: 2})
	f := newSyncFixture(t, sc)
	f.syncCreatingScyllaDBDatacenter(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff(append(slices.Clone(createTasks), "update scyllaclusters/status basic"), f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if got := *f.getScyllaDBManagerTask(t, nightlyRepairTaskName).Spec.Repair.Parallel; got != 0 {
		t.Errorf("expected the first repair's parallel 0 applied, got %d", got)
	}

	f.takeEvents()

	// The task controller reports what ScyllaDB Manager holds: the first entry's task, not the second's.
	task := f.getScyllaDBManagerTask(t, nightlyRepairTaskName)
	task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation] = `{"name":"nightly","id":"r-1"}`
	f.update(t, task, "scylladbmanagertasks", scyllav1alpha1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}

	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes after the task's status (-want +got):\n%s", diff)
	}
	const wantMessage = `can't translate repair task "nightly": spec.repairs[1].name: Duplicate value: "nightly"`
	status := f.getScyllaCluster(t, sc).Status
	expectTaskCondition(t, &status, wantMessage)
	want := []scyllav1.RepairTaskStatus{
		{TaskStatus: scyllav1.TaskStatus{Name: "nightly", ID: new("r-1")}},
		{TaskStatus: scyllav1.TaskStatus{Name: "nightly", Error: new(wantMessage)}},
	}
	if diff := cmp.Diff(want, status.Repairs); diff != "" {
		t.Errorf("unexpected repair statuses (-want +got):\n%s", diff)
	}
	f.takeEvents()
	f.expectQuietResync(t, sc)
}

func TestSplitTaskErrors(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	errs := field.ErrorList{
		field.Invalid(field.NewPath("spec", "repairs").Index(0).Child("cron"), "x", "bad cron"),
		field.Invalid(field.NewPath("spec", "backups").Index(1).Child("rateLimit").Index(0), "x", "bad limit"),
		field.Required(field.NewPath("spec", "backups").Index(1).Child("location"), "needed"),
		field.Invalid(field.NewPath("spec", "sysctls").Index(0), "x", "bad sysctl"),
		// Not an entry of the lists: an index past their end, and a field whose name merely starts like one.
		field.Invalid(field.NewPath("spec", "repairs").Index(1).Child("cron"), "x", "no such repair"),
		field.Invalid(field.NewPath("spec", "backupsExtra").Index(0), "x", "other field"),
	}

	taskErrs, specErrs := splitTaskErrors(sc, errs)
	wantTaskErrs := map[string]field.ErrorList{
		"spec.repairs[0]": {errs[0]},
		"spec.backups[1]": {errs[1], errs[2]},
	}
	if diff := cmp.Diff(wantTaskErrs, taskErrs); diff != "" {
		t.Errorf("unexpected task errors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(field.ErrorList{errs[3], errs[4], errs[5]}, specErrs); diff != "" {
		t.Errorf("unexpected spec errors (-want +got):\n%s", diff)
	}
}

// An error outside the backups and repairs (here a sysctl; a bad opt-out annotation or agent repository alike) leaves
// the ScyllaDBDatacenter as it is, but not the tasks, which don't depend on its spec: they keep being applied while
// the datacenter exists.
func TestSyncKeepsApplyingTasksWhileTheDatacenterCantBeTranslated(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	sdcBefore := f.getScyllaDBDatacenter(t)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Sysctls = []string{"nonsense"}
	sc.Spec.Datacenter.Racks[0].Members = 4
	sc.Spec.Backups[0].Cron = new("0 2 * * *")
	sc.Spec.Repairs[0].Cron = new("every night")
	f.storeScyllaCluster(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	wantWrites := []string{
		"update scylladbmanagertasks " + dailyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	const specError = `spec.sysctls[0]: Invalid value: "nonsense": must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000`
	taskError := `can't translate repair task "nightly": ` + badCronError
	wantWarnings := []string{"Warning InvalidSpec " + taskError, "Warning InvalidSpec " + specError}
	events := slices.DeleteFunc(f.takeEvents(), func(e string) bool { return strings.HasPrefix(e, "Normal ") })
	slices.Sort(events)
	if diff := cmp.Diff(wantWarnings, events); diff != "" {
		t.Errorf("unexpected warnings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sdcBefore, f.getScyllaDBDatacenter(t)); diff != "" {
		t.Errorf("expected the ScyllaDBDatacenter left as it was (-before +after):\n%s", diff)
	}
	if got := f.getScyllaDBManagerTask(t, dailyBackupTaskName).Spec.Backup.Cron; got == nil || *got != "0 2 * * *" {
		t.Errorf("expected the valid backup's new cron applied, got %v", got)
	}

	status := f.getScyllaCluster(t, sc).Status
	if c := meta.FindStatusCondition(status.Conditions, specValidationName+"Degraded"); c == nil || c.Status != metav1.ConditionTrue || c.Message != specError {
		t.Errorf("expected %sDegraded True with message %q, got %+v", specValidationName, specError, c)
	}
	expectTaskCondition(t, &status, taskError)
	if status.Repairs[0].Error == nil || *status.Repairs[0].Error != taskError {
		t.Errorf("expected the repair's status error %q, got %v", taskError, status.Repairs[0].Error)
	}
	if status.ObservedGeneration == nil || *status.ObservedGeneration == sc.Generation {
		t.Errorf("expected observedGeneration to stay behind %d while the datacenter is not updated, got %v", sc.Generation, status.ObservedGeneration)
	}
	f.expectQuietResync(t, sc)
}

// Without a ScyllaDBDatacenter, which a spec with errors outside the tasks does not create, the tasks are not created
// either: they would be scheduled in a datacenter that does not exist, which the webhook refuses.
func TestSyncCreatesNoTaskWithoutTheScyllaDBDatacenterItCantTranslate(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.Spec.Sysctls = []string{"nonsense"}
	f := newSyncFixture(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	c := meta.FindStatusCondition(status.Conditions, scyllaDBManagerTaskControllerName+"Progressing")
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != awaitingScyllaDBDatacenterReason || !strings.Contains(c.Message, "can't be translated") {
		t.Errorf("expected %sProgressing True saying the tasks wait for the ScyllaDBDatacenter, got %+v", scyllaDBManagerTaskControllerName, c)
	}
	f.takeEvents()
	f.expectQuietResync(t, sc)
}
