package scylladbmanagertask

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withAnnotations returns task with annotations set.
func withAnnotations(task *scyllav1alpha1.ScyllaDBManagerTask, annotations map[string]string) *scyllav1alpha1.ScyllaDBManagerTask {
	task.Annotations = annotations
	return task
}

// listItemWithStartDate returns a task list item whose schedule starts at startDate.
func listItemWithStartDate(startDate time.Time) *managerclient.TaskListItem {
	return &managerclient.TaskListItem{Task: managerclient.Task{ID: "existing", Schedule: managerclient.Schedule{StartDate: &startDate}}}
}

func TestMakeDesiredTaskTranslatesTheSpecAndTheOverrideAnnotations(t *testing.T) {
	t.Parallel()

	now := testStart.Add(123 * time.Millisecond)
	tt := []struct {
		name         string
		task         *scyllav1alpha1.ScyllaDBManagerTask
		existing     *managerclient.TaskListItem
		wantSchedule managerclient.Schedule
		wantName     string
		wantProps    string
		wantErr      string
	}{
		{
			name:         "a backup",
			task:         newBackupTask("daily"),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name: "a backup with every option",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newBackupTask("daily")
				task.Spec.Backup.DC = []string{"dc1", "!dc2*"}
				task.Spec.Backup.Keyspace = []string{"ks", "!ks.t*"}
				task.Spec.Backup.RateLimit = []string{"100", "dc1:50"}
				task.Spec.Backup.SnapshotParallel = []string{"2"}
				task.Spec.Backup.UploadParallel = []string{"dc1:3"}
				task.Spec.Backup.RetryWait = &metav1.Duration{Duration: 90 * time.Minute}
				return task
			}(),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, RetryWait: "1h30m"},
			wantProps:    `{"location":["s3:backups"],"keyspace":["ks","!ks.t*"],"dc":["dc1","!dc2*"],"retention":7,"rate_limit":["100","dc1:50"],"snapshot_parallel":["2"],"upload_parallel":["dc1:3"]}`,
		},
		{
			name:         "a repair",
			task:         newRepairTask("weekly"),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":2,"small_table_threshold":1073741824}`,
		},
		{
			name: "a repair with every option",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newRepairTask("weekly")
				r := task.Spec.Repair
				r.DC, r.Keyspace = []string{"dc1"}, []string{"ks"}
				r.FailFast, r.IgnoreDownHosts = new(true), new(false)
				r.Host, r.Parallel = new("10.0.0.1"), new(int64(0))
				return task
			}(),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"keyspace":["ks"],"dc":["dc1"],"host":"10.0.0.1","ignore_down_hosts":false,"fail_fast":true,"intensity":2,"parallel":0,"small_table_threshold":1073741824}`,
		},
		{
			name:         "the name override annotation names the task",
			task:         withAnnotations(newBackupTask("basic-backup-daily-abcde"), map[string]string{naming.ScyllaDBManagerTaskNameOverrideAnnotation: "daily"}),
			wantName:     "daily",
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name: "the interval annotation is sent as the interval",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot: "7d"})
				task.Spec.Backup.Cron = nil
				return task
			}(),
			wantSchedule: managerclient.Schedule{Interval: "7d", NumRetries: 3},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "an interval of 0 is no interval",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot: "0"}),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "the timezone annotation is sent as the timezone",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot: "Europe/Warsaw"}),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, Timezone: "Europe/Warsaw"},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "the intensity annotation wins over the spec",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot: "5"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":5,"small_table_threshold":1073741824}`,
		},
		{
			name:         "an intensity below 1 is sent as 1, as ScyllaDB Manager would take it",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot: "0.5"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":1,"small_table_threshold":1073741824}`,
		},
		{
			name:         "a fractional intensity above 1 loses its fraction",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot: "2.7"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":2,"small_table_threshold":1073741824}`,
		},
		{
			name:         "an intensity of 0 stays the maximum",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot: "0"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":0,"small_table_threshold":1073741824}`,
		},
		{
			name:    "an intensity annotation that is not a number is an error",
			task:    withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot: "max"}),
			wantErr: `can't parse annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-intensity-override" value "max"`,
		},
		{
			name:         "the small table threshold annotation wins over the spec",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "512MiB"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":2,"small_table_threshold":536870912}`,
		},
		{
			name:         "a small table threshold in bytes",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "1000"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":2,"small_table_threshold":1000}`,
		},
		{
			name:         "a small table threshold as a Kubernetes quantity",
			task:         withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "2Gi"}),
			wantSchedule: managerclient.Schedule{Cron: "0 3 * * SUN"},
			wantProps:    `{"intensity":2,"small_table_threshold":2147483648}`,
		},
		{
			name:    "a small table threshold that is not a size is an error",
			task:    withAnnotations(newRepairTask("weekly"), map[string]string{naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "big"}),
			wantErr: `can't parse annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override" value "big"`,
		},
		{
			name: "spec.startDate is sent as is",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newBackupTask("daily")
				task.Spec.Backup.StartDate = new(metav1.NewTime(time.Date(2030, time.May, 6, 7, 8, 9, 0, time.UTC)))
				return task
			}(),
			existing:     listItemWithStartDate(testStart),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, StartDate: new(time.Date(2030, time.May, 6, 7, 8, 9, 0, time.UTC))},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "a relative start date is now plus the offset on create",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+3d2h"}),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, StartDate: new(testStart.Add(74 * time.Hour))},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "now is left to ScyllaDB Manager on create",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now"}),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "a relative start date is the one ScyllaDB Manager holds afterwards",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+3d2h"}),
			existing:     listItemWithStartDate(testStart.Add(-48 * time.Hour)),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, StartDate: new(testStart.Add(-48 * time.Hour))},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:         "an RFC 3339 start date annotation is sent as is",
			task:         withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "2030-05-06T07:08:09+02:00"}),
			wantSchedule: managerclient.Schedule{Cron: "0 2 * * *", NumRetries: 3, StartDate: new(time.Date(2030, time.May, 6, 5, 8, 9, 0, time.UTC))},
			wantProps:    `{"location":["s3:backups"],"retention":7}`,
		},
		{
			name:    "a start date annotation that is neither is an error",
			task:    withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "tomorrow"}),
			wantErr: `can't parse annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-start-date-override" value "tomorrow"`,
		},
		{
			name:    "an interval annotation that is not a duration is an error",
			task:    withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot: "weekly"}),
			wantErr: `can't parse annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-interval-override" value "weekly"`,
		},
		{
			name:    "a timezone annotation that is not an IANA name is an error",
			task:    withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot: "Mars/Olympus"}),
			wantErr: `can't parse annotation "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-timezone-override" value "Mars/Olympus"`,
		},
		{
			name: "a type without its options is an error",
			task: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := newBackupTask("daily")
				task.Spec.Backup = nil
				return task
			}(),
			wantErr: "spec.backup must be set for a task of type Backup",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := makeDesiredTask(tc.task, tc.existing, now)
			if len(tc.wantErr) != 0 {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("expected an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			wantName := tc.wantName
			if len(wantName) == 0 {
				wantName = tc.task.Name
			}
			want := managerclient.TaskUpdate{
				Type:    map[scyllav1alpha1.ScyllaDBManagerTaskType]managerclient.TaskType{"Backup": "backup", "Repair": "repair"}[tc.task.Spec.Type],
				Name:    wantName,
				Enabled: true,
				Labels: map[string]string{
					naming.ScyllaDBManagerOwnerUIDLabel:    string(tc.task.UID),
					naming.ScyllaDBManagerManagedHashLabel: got.hash,
				},
				Schedule:   &tc.wantSchedule,
				Properties: json.RawMessage(tc.wantProps),
			}
			if diff := cmp.Diff(want, got.update); diff != "" {
				t.Errorf("unexpected task update (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDesiredTaskHashFollowsTheObjectNotTheResolvedStartDate(t *testing.T) {
	t.Parallel()

	relative := func() *scyllav1alpha1.ScyllaDBManagerTask {
		return withAnnotations(newBackupTask("daily"), map[string]string{naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+1d"})
	}
	hash := func(task *scyllav1alpha1.ScyllaDBManagerTask, existing *managerclient.TaskListItem, now time.Time) string {
		t.Helper()
		d, err := makeDesiredTask(task, existing, now)
		if err != nil {
			t.Fatal(err)
		}
		return d.hash
	}

	base := hash(relative(), nil, testStart)
	if got := hash(relative(), listItemWithStartDate(testStart.Add(time.Hour)), testStart.Add(72*time.Hour)); got != base {
		t.Errorf("the hash changed with the resolved start date")
	}
	if got := hash(newBackupTask("daily"), listItemWithStartDate(testStart), testStart); got != hash(newBackupTask("daily"), nil, testStart) {
		t.Errorf("the hash of a task without a start date changed with ScyllaDB Manager's start date")
	}
	other := relative()
	other.Annotations[naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot] = "now+2d"
	if hash(other, nil, testStart) == base {
		t.Errorf("the hash did not change with the start date annotation")
	}
	changed := relative()
	changed.Spec.Backup.Retention = new(int64(1))
	if hash(changed, nil, testStart) == base {
		t.Errorf("the hash did not change with the spec")
	}
}

func TestResolveStartDate(t *testing.T) {
	t.Parallel()

	now := testStart
	past, future := now.Add(-time.Hour), now.Add(time.Hour)
	absolute := time.Date(2030, time.January, 1, 0, 0, 0, 0, time.UTC)
	tt := []struct {
		name     string
		start    startDate
		existing *managerclient.TaskListItem
		want     *time.Time
	}{
		{name: "absolute on create", start: startDate{absolute: &absolute}, want: &absolute},
		{name: "absolute over ScyllaDB Manager's", start: startDate{absolute: &absolute}, existing: listItemWithStartDate(past), want: &absolute},
		{name: "now on create", start: startDate{relative: true}, want: nil},
		{name: "now plus an offset on create", start: startDate{relative: true, offset: 50 * time.Hour}, want: new(now.Add(50 * time.Hour))},
		{name: "relative reuses ScyllaDB Manager's past start date", start: startDate{relative: true, offset: time.Hour}, existing: listItemWithStartDate(past), want: &past},
		{name: "relative reuses ScyllaDB Manager's future start date", start: startDate{relative: true}, existing: listItemWithStartDate(future), want: &future},
		{name: "relative without a start date in ScyllaDB Manager", start: startDate{relative: true, offset: time.Hour}, existing: &managerclient.TaskListItem{}, want: nil},
		{name: "unset on create", want: nil},
		{name: "unset keeps a past start date", existing: listItemWithStartDate(past), want: &past},
		{name: "unset drops a future start date", existing: listItemWithStartDate(future), want: nil},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, resolveStartDate(tc.start, tc.existing, now)); diff != "" {
				t.Errorf("unexpected start date (-want +got):\n%s", diff)
			}
		})
	}
}

func TestManagerDurations(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"}, {10 * time.Minute, "10m"}, {36 * time.Hour, "1d12h"}, {90*time.Minute + time.Second, "1h30m1s"}, {1500 * time.Millisecond, "1.5s"},
	} {
		if got := formatManagerDuration(tc.in); got != tc.want {
			t.Errorf("formatManagerDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTaskDiffComparesWhatScyllaDBManagerHoldsSemantically(t *testing.T) {
	t.Parallel()

	now := testStart
	backup := func() *managerclient.TaskUpdate {
		return &managerclient.TaskUpdate{
			Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
			Schedule:   &managerclient.Schedule{Cron: "0 2 * * *", Interval: "36h", NumRetries: 3},
			Properties: json.RawMessage(`{"location":["s3:backups"]}`),
		}
	}
	repair := func() *managerclient.TaskUpdate {
		return &managerclient.TaskUpdate{
			Type: managerclient.TaskTypeRepair, Name: "weekly", Enabled: true,
			Schedule:   &managerclient.Schedule{Cron: "@weekly", RetryWait: "10m"},
			Properties: json.RawMessage(`{"intensity":2}`),
		}
	}
	// decode reads a task the way the client reads ScyllaDB Manager's answer.
	decode := func(wire string) *managerclient.Task {
		t.Helper()
		task := &managerclient.Task{}
		if err := json.Unmarshal([]byte(wire), task); err != nil {
			t.Fatal(err)
		}
		return task
	}

	tt := []struct {
		name    string
		desired *managerclient.TaskUpdate
		actual  *managerclient.Task
		want    []string
	}{
		{
			name:    "cron echoed in a JSON document, an interval rewritten in days, defaulted properties and no timezone",
			desired: backup(),
			actual: decode(`{"name":"daily","enabled":true,"schedule":{"cron":"{\"spec\":\"0 2 * * *\",\"start_date\":\"0001-01-01T00:00:00Z\"}",` +
				`"interval":"1d12h","timezone":"UTC","num_retries":3,"retry_wait":"0","start_date":"2025-01-01T11:00:00Z","window":null},` +
				`"properties":{"location":["s3:backups"],"retention":3,"continue":true,"method":"rclone","retention_map":{"x":1}}}`),
		},
		{
			name:    "repair defaults and an unset retry wait ScyllaDB Manager filled in",
			desired: func() *managerclient.TaskUpdate { u := repair(); u.Schedule.RetryWait = ""; return u }(),
			actual: decode(`{"name":"weekly","enabled":true,"schedule":{"cron":"@weekly","retry_wait":"10m"},` +
				`"properties":{"keyspace":["*","!system_traces"],"continue":true,"intensity":2.7,"small_table_threshold":1073741824,"fail_fast":false}}`),
		},
		{
			name:    "a retry wait written differently",
			desired: repair(),
			actual:  decode(`{"name":"weekly","enabled":true,"schedule":{"cron":"@weekly","retry_wait":"10m0s"},"properties":{"intensity":2}}`),
		},
		{
			name:    "everything different",
			desired: backup(),
			actual: decode(`{"name":"other","schedule":{"cron":"0 3 * * *","interval":"1d","timezone":"Europe/Warsaw","num_retries":1,` +
				`"window":["Sat-22:00","Sun-06:00"],"start_date":"2025-01-02T00:00:00Z"},"properties":{"location":["s3:other"]}}`),
			want: []string{"name", "enabled", "schedule.cron", "schedule.interval", "schedule.timezone", "schedule.num_retries", "schedule.window", "schedule.start_date", "properties"},
		},
		{
			name:    "a different retry wait",
			desired: repair(),
			actual:  decode(`{"name":"weekly","enabled":true,"schedule":{"cron":"@weekly","retry_wait":"20m"},"properties":{"intensity":2}}`),
			want:    []string{"schedule.retry_wait"},
		},
		{
			name: "an absolute start date ScyllaDB Manager does not hold",
			desired: func() *managerclient.TaskUpdate {
				u := repair()
				u.Schedule.StartDate = new(testStart.Add(time.Hour))
				return u
			}(),
			actual: decode(`{"name":"weekly","enabled":true,"schedule":{"cron":"@weekly","retry_wait":"10m","start_date":"2025-01-01T12:00:00Z"},"properties":{"intensity":2}}`),
			want:   []string{"schedule.start_date"},
		},
		{
			name:    "a property set by hand",
			desired: repair(),
			actual:  decode(`{"name":"weekly","enabled":true,"schedule":{"cron":"@weekly","retry_wait":"10m"},"properties":{"intensity":2,"parallel":3}}`),
			want:    []string{"properties"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, taskDiff(tc.desired, tc.actual, now)); diff != "" {
				t.Errorf("unexpected differences (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMakeSmallTableThresholdTakesTheSpecsQuantityInBytes(t *testing.T) {
	t.Parallel()

	q := resource.MustParse("3Mi")
	if got, err := makeSmallTableThreshold(&q, nil); err != nil || *got != 3<<20 {
		t.Errorf("expected the spec's quantity in bytes, got %v, %v", got, err)
	}
}
