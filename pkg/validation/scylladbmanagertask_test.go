package validation

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newBackupTask(t testing.TB) *scyllav1alpha1.ScyllaDBManagerTask {
	return exampleOf[*scyllav1alpha1.ScyllaDBManagerTask](t, "scylladbmanagertask-backup-scylladbdatacenter.yaml")
}

func newRepairTask(t testing.TB) *scyllav1alpha1.ScyllaDBManagerTask {
	return exampleOf[*scyllav1alpha1.ScyllaDBManagerTask](t, "scylladbmanagertask-repair-scylladbdatacenter.yaml")
}

func TestValidateScyllaDBManagerTaskRefuses(t *testing.T) {
	t.Parallel()
	backup := field.NewPath("spec", "backup")
	repair := field.NewPath("spec", "repair")
	annotations := field.NewPath("metadata", "annotations")
	runValidationCases(t, newBackupTask, ValidateScyllaDBManagerTask, []validationCase[*scyllav1alpha1.ScyllaDBManagerTask]{
		{
			name:   "a cron with a bad minute",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Backup.Cron = new("61 * * * *") },
			want: field.ErrorList{field.Invalid(backup.Child("cron"), "61 * * * *",
				`must be a cron expression with five fields and an optional leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly or "@every <duration>": end of range (61) above maximum (59): 61`)},
		},
		{
			name:   "a blank cron",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Backup.Cron = new(" ") },
			want:   field.ErrorList{field.Invalid(backup.Child("cron"), " ", `must be a cron expression such as "0 23 * * SAT" or "@daily"`)},
		},
		{
			name: "a negative retry wait and retries beyond int32",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) {
				task.Spec.Backup.RetryWait = &metav1.Duration{Duration: -time.Second}
				task.Spec.Backup.NumRetries = new(int64(1) << 40)
			},
			want: field.ErrorList{
				field.Invalid(backup.Child("numRetries"), int64(1)<<40, "must be between 0 and 2147483647"),
				field.Invalid(backup.Child("retryWait"), "-1s", "must not be negative"),
			},
		},
		{
			name:   "an empty location list",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Backup.Location = nil },
			want:   field.ErrorList{field.Required(backup.Child("location"), "a backup needs at least one location, e.g. s3:backups")},
		},
		{
			name:   "a keyspace glob with a stray bracket",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Backup.Keyspace = []string{"ks]"} },
			want:   field.ErrorList{field.Invalid(backup.Child("keyspace").Index(0), "ks]", "glob pattern has a ']' without an opening '['")},
		},
		{
			name: "override annotations that don't parse",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) {
				task.Annotations = map[string]string{
					naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot:  "-1d",
					naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot:  "Nowhere/Town",
					naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now-1d",
					naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot:   "NaN",
					naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "1 GB",
					naming.ScyllaDBManagerTaskNameOverrideAnnotation:         "Daily Backup",
					naming.ScyllaDBManagerTaskClusterIDAnnotation:            "not-a-uuid",
				}
			},
			want: field.ErrorList{
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot), "-1d", "must be a non-negative duration in d, h, m and s, e.g. 7d or 1d12h"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot), "Nowhere/Town", "must be an IANA time zone name such as Europe/Warsaw or UTC"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot), "now-1d", "must be now, now+<duration> (e.g. now+3d2h) or an RFC 3339 time"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot), "NaN", "must be a non-negative number, e.g. 1 or 0.5"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot), "1 GB", "must be a size such as 1GiB or 512MiB"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskClusterIDAnnotation), "not-a-uuid", "must be a ScyllaDB Manager cluster ID (a UUID)"),
				field.Invalid(annotations.Key(naming.ScyllaDBManagerTaskNameOverrideAnnotation), "Daily Backup", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
			},
		},
	})
	runValidationCases(t, newRepairTask, ValidateScyllaDBManagerTask, []validationCase[*scyllav1alpha1.ScyllaDBManagerTask]{
		{
			name:   "a repair dc filter with a comma",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Repair.DC = []string{"dc1,dc2"} },
			want:   field.ErrorList{field.Invalid(repair.Child("dc").Index(0), "dc1,dc2", "must be a single glob pattern without commas; put every pattern in its own entry")},
		},
		{
			name: "a fractional small table threshold",
			modify: func(task *scyllav1alpha1.ScyllaDBManagerTask) {
				task.Spec.Repair.SmallTableThreshold = new(resource.MustParse("1500m"))
			},
			want: field.ErrorList{field.Invalid(repair.Child("smallTableThreshold"), "1500m", "must be a positive whole number of bytes, e.g. 1Gi")},
		},
	})
}

func TestValidateScyllaDBManagerTaskAcceptsOverrides(t *testing.T) {
	t.Parallel()
	task := newRepairTask(t)
	task.Annotations = map[string]string{
		naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot:  "7d",
		naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot:  "",
		naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot: "now+1d2h",
		naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot:   "0.5",
		naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot: "1GiB",
		naming.ScyllaDBManagerTaskNameOverrideAnnotation:         "weekly",
	}
	if errs := ValidateScyllaDBManagerTask(task); len(errs) != 0 {
		t.Error(errs.ToAggregate())
	}
}

// fakeLookup answers from a fixed set of objects, or with err.
type fakeLookup struct {
	existing map[string]bool
	err      error
}

func (f *fakeLookup) ScyllaDBManagerTaskTargetExists(_ context.Context, namespace string, ref scyllav1alpha1.LocalScyllaDBReference) (bool, error) {
	return f.existing[ref.Kind+"/"+namespace+"/"+ref.Name], f.err
}

var _ Lookup = &fakeLookup{}

func TestValidateScyllaDBManagerTaskReferences(t *testing.T) {
	t.Parallel()
	ref := field.NewPath("spec", "scyllaDBClusterRef")
	for _, tc := range []struct {
		name   string
		lookup *fakeLookup
		want   field.ErrorList
	}{
		{name: "the target exists", lookup: &fakeLookup{existing: map[string]bool{"ScyllaDBDatacenter/scylla/analytics": true}}},
		{
			name:   "a ScyllaDBCluster of that name doesn't count",
			lookup: &fakeLookup{existing: map[string]bool{"ScyllaDBCluster/scylla/analytics": true}},
			want:   field.ErrorList{field.NotFound(ref.Child("name"), "analytics")},
		},
		{
			name:   "the lookup fails",
			lookup: &fakeLookup{err: errors.New("cache not synced")},
			want:   field.ErrorList{field.InternalError(ref, errors.New(`can't check whether ScyllaDBDatacenter "scylla/analytics" exists: cache not synced`))},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := ValidateScyllaDBManagerTaskReferences(context.Background(), newBackupTask(t), tc.lookup)
			if diff := cmp.Diff(tc.want, got, ignoreOrigin, cmp.Comparer(func(a, b error) bool { return a.Error() == b.Error() })); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}
