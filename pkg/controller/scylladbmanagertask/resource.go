package scylladbmanagertask

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	// The image may have no zoneinfo: time zone names are checked against the embedded database.
	_ "time/tzdata"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Defaults ScyllaDB Manager gives properties left unset (scylla-manager-api.md 1.7 and 1.8). Comparing what ScyllaDB
// Manager holds with what a ScyllaDBManagerTask asks for treats an unset property and its default as equal, so that a
// Manager that stores its defaults does not make a task look changed on every sync.
const (
	defaultBackupRetention           = int64(3)
	defaultBackupMethod              = "rclone"
	defaultRepairSmallTableThreshold = int64(1) << 30
)

// defaultRepairKeyspace is ScyllaDB Manager's keyspace filter of a repair without one.
var defaultRepairKeyspace = []string{"*", "!system_traces"}

// startDate is the start date a ScyllaDBManagerTask asks for, before it is resolved against ScyllaDB Manager's state.
type startDate struct {
	// absolute is spec.*.startDate.
	absolute *time.Time
	// relative is set for a start date relative to the task's creation in ScyllaDB Manager ("now+3d2h"), which is
	// offset after it.
	relative bool
	offset   time.Duration
}

// desiredTask is what a ScyllaDBManagerTask asks ScyllaDB Manager to hold.
type desiredTask struct {
	// update is the body of the task's create or update, labelled with the owner's UID and hash.
	update managerclient.TaskUpdate
	// hash digests what the object asks for. A relative start date enters it as written, not resolved, so that the
	// hash stays the same from one sync to the next.
	hash string
}

// hashInput is what desiredTask.hash digests.
type hashInput struct {
	Update managerclient.TaskUpdate `json:"update"`
	// StartDateOverride is the relative start date as written.
	StartDateOverride string `json:"startDateOverride,omitempty"`
}

// managerTaskType returns ScyllaDB Manager's name of a task type.
func managerTaskType(taskType scyllav1alpha1.ScyllaDBManagerTaskType) (managerclient.TaskType, error) {
	switch taskType {
	case scyllav1alpha1.ScyllaDBManagerTaskTypeBackup:
		return managerclient.TaskTypeBackup, nil
	case scyllav1alpha1.ScyllaDBManagerTaskTypeRepair:
		return managerclient.TaskTypeRepair, nil
	default:
		return "", fmt.Errorf("unsupported task type %q: use %s or %s", taskType, scyllav1alpha1.ScyllaDBManagerTaskTypeBackup, scyllav1alpha1.ScyllaDBManagerTaskTypeRepair)
	}
}

// makeDesiredTask returns what task asks ScyllaDB Manager to hold: the task named by
// naming.ScyllaDBManagerTaskNameInManager, enabled, with the schedule and properties of its spec and the override
// annotations the ScyllaCluster translator sets (interval, timezone, start date, repair intensity and small table
// threshold). existing is the task as ScyllaDB Manager holds it, nil when it holds none yet: a relative start date
// ("now+3d") and an unset one are resolved against it (resolveStartDate), now being the current time. Errors come
// from the object alone; retrying does not fix them.
func makeDesiredTask(task *scyllav1alpha1.ScyllaDBManagerTask, existing *managerclient.TaskListItem, now time.Time) (*desiredTask, error) {
	taskType, err := managerTaskType(task.Spec.Type)
	if err != nil {
		return nil, err
	}

	var errs []error
	var schedule *scyllav1alpha1.ScyllaDBManagerTaskSchedule
	var properties json.RawMessage
	switch taskType {
	case managerclient.TaskTypeBackup:
		if task.Spec.Backup == nil {
			return nil, errors.New("spec.backup must be set for a task of type Backup")
		}
		schedule = &task.Spec.Backup.ScyllaDBManagerTaskSchedule
		properties, err = makeBackupProperties(task.Spec.Backup)
	case managerclient.TaskTypeRepair:
		if task.Spec.Repair == nil {
			return nil, errors.New("spec.repair must be set for a task of type Repair")
		}
		schedule = &task.Spec.Repair.ScyllaDBManagerTaskSchedule
		properties, err = makeRepairProperties(task.Spec.Repair, task.Annotations)
	}
	if err != nil {
		errs = append(errs, err)
	}
	managerSchedule, start, err := makeSchedule(schedule, task.Annotations)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}

	update := managerclient.TaskUpdate{
		Type:       taskType,
		Name:       naming.ScyllaDBManagerTaskNameInManager(task.Name, task.Annotations),
		Enabled:    true,
		Schedule:   managerSchedule,
		Properties: properties,
	}
	input := hashInput{Update: update}
	if start.relative {
		input.StartDateOverride = strings.TrimSpace(task.Annotations[naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot])
	}
	hash, err := resourceapply.Hash(input)
	if err != nil {
		return nil, fmt.Errorf("can't hash ScyllaDB Manager task %q: %w", update.Name, err)
	}

	// The schedule is shared with the hash input; the resolved start date must not leak into it.
	resolved := *managerSchedule
	resolved.StartDate = resolveStartDate(start, existing, now)
	update.Schedule = &resolved
	update.Labels = map[string]string{
		naming.ScyllaDBManagerOwnerUIDLabel:    string(task.UID),
		naming.ScyllaDBManagerManagedHashLabel: hash,
	}
	return &desiredTask{update: update, hash: hash}, nil
}

// makeSchedule returns the ScyllaDB Manager schedule of spec and the override annotations, with its start date
// unresolved (nil) and returned apart.
func makeSchedule(spec *scyllav1alpha1.ScyllaDBManagerTaskSchedule, annotations map[string]string) (*managerclient.Schedule, startDate, error) {
	schedule := &managerclient.Schedule{}
	var errs []error
	if spec.Cron != nil {
		schedule.Cron = strings.TrimSpace(*spec.Cron)
	}
	if spec.NumRetries != nil {
		if *spec.NumRetries < 0 || *spec.NumRetries > math.MaxInt32 {
			errs = append(errs, fmt.Errorf("numRetries %d is out of range", *spec.NumRetries))
		} else {
			schedule.NumRetries = int(*spec.NumRetries)
		}
	}
	if spec.RetryWait != nil {
		schedule.RetryWait = formatManagerDuration(spec.RetryWait.Duration)
	}

	if interval, ok := annotations[naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot]; ok {
		interval = strings.TrimSpace(interval)
		d, err := validation.ParseManagerDuration(interval)
		switch {
		case err != nil || d < 0:
			// Checked here so that the user reads what is wrong without a round trip to ScyllaDB Manager.
			errs = append(errs, fmt.Errorf("can't parse annotation %q value %q: want a non-negative duration in d, h, m and s, e.g. 7d or 1d12h", naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot, interval))
		case d != 0:
			// "0" meant "run once" in the ScyllaCluster API, which is what no interval means to ScyllaDB Manager.
			schedule.Interval = interval
		}
	}
	if timezone, ok := annotations[naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot]; ok {
		// An empty name is UTC to both time.LoadLocation and ScyllaDB Manager.
		timezone = strings.TrimSpace(timezone)
		if _, err := time.LoadLocation(timezone); err != nil {
			errs = append(errs, fmt.Errorf("can't parse annotation %q value %q: want an IANA time zone name, e.g. Europe/Warsaw", naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot, timezone))
		} else {
			schedule.Timezone = timezone
		}
	}

	var start startDate
	if spec.StartDate != nil {
		t := spec.StartDate.UTC()
		start.absolute = &t
	}
	if override, ok := annotations[naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot]; ok {
		parsed, err := parseStartDateOverride(override)
		if err != nil {
			errs = append(errs, err)
		} else {
			start = parsed
		}
	}
	if start.absolute != nil {
		// ScyllaDB Manager keeps start dates to the millisecond (a CQL timestamp): a finer one would never compare
		// equal to what it echoes, and the task would be updated on every sync.
		t := start.absolute.Truncate(time.Millisecond)
		start.absolute = &t
		schedule.StartDate = start.absolute
	}
	if len(errs) != 0 {
		return nil, startDate{}, utilerrors.NewAggregate(errs)
	}
	return schedule, start, nil
}

// parseStartDateOverride parses the start date override annotation: "now", "now+<duration>" with d, h, m and s
// units, or an RFC 3339 time.
func parseStartDateOverride(value string) (startDate, error) {
	value = strings.TrimSpace(value)
	if offset, ok, err := validation.ParseRelativeStartDate(value); ok {
		if err != nil {
			return startDate{}, fmt.Errorf("can't parse annotation %q value %q: %w", naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot, value, err)
		}
		return startDate{relative: true, offset: offset}, nil
	}
	t, err := time.Parse(time.RFC3339, value)
	if err != nil {
		return startDate{}, fmt.Errorf("can't parse annotation %q value %q: want now, now+<duration> (e.g. now+3d2h) or an RFC 3339 time", naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot, value)
	}
	t = t.UTC()
	return startDate{absolute: &t}, nil
}

// resolveStartDate returns the start date to send to ScyllaDB Manager for start, given existing, the task as ScyllaDB
// Manager holds it (nil when it holds none), at now.
//
// An absolute start date is sent as is. A relative one ("now+3d2h") means "that long after the task is created": on
// create it is now plus the offset (or unset for plain "now", which ScyllaDB Manager itself turns into its own now,
// immune to clock skew), and afterwards it is the start date ScyllaDB Manager already holds, so that syncing and
// updating never move the schedule. Without a start date a new task starts right away; an update keeps a start date
// that is already past (it changes nothing) and drops one in the future, which the object no longer asks for.
func resolveStartDate(start startDate, existing *managerclient.TaskListItem, now time.Time) *time.Time {
	switch {
	case start.absolute != nil:
		t := *start.absolute
		return &t
	case start.relative && existing != nil:
		return copyTime(existing.Schedule.StartDate)
	case start.relative:
		if start.offset == 0 {
			return nil
		}
		t := now.UTC().Add(start.offset).Truncate(time.Second)
		return &t
	case existing != nil && existing.Schedule.StartDate != nil && !existing.Schedule.StartDate.After(now):
		return copyTime(existing.Schedule.StartDate)
	default:
		return nil
	}
}

// checkCreatable returns why ScyllaDB Manager would refuse to create task at now, for a reason it reports as a 500,
// which retrying never fixes: a task with an interval whose start date is not ahead of now ("start date of scheduled
// task cannot be in the past", scylla-manager-api.md 1.5). ScyllaDB Manager checks it on creation only, so a task it
// holds is updated whatever its start date.
func checkCreatable(task *managerclient.TaskUpdate, now time.Time) error {
	schedule := task.Schedule
	if schedule == nil || schedule.StartDate == nil {
		return nil
	}
	if interval, err := validation.ParseManagerDuration(schedule.Interval); err != nil || interval == 0 {
		return nil
	}
	if schedule.StartDate.After(now) {
		return nil
	}
	return fmt.Errorf("start date %s is in the past, and ScyllaDB Manager refuses to create a task with an interval (%s) that starts in the past: set a start date ahead, now, now+<duration>, or none to start right away",
		schedule.StartDate.UTC().Format(time.RFC3339), schedule.Interval)
}

// makeBackupProperties returns the ScyllaDB Manager properties of a backup task.
func makeBackupProperties(options *scyllav1alpha1.ScyllaDBManagerBackupTaskOptions) (json.RawMessage, error) {
	properties := managerclient.BackupProperties{
		Location:         slices.Clone(options.Location),
		Keyspace:         slices.Clone(options.Keyspace),
		DC:               slices.Clone(options.DC),
		Retention:        copyPointer(options.Retention),
		RateLimit:        slices.Clone(options.RateLimit),
		SnapshotParallel: slices.Clone(options.SnapshotParallel),
		UploadParallel:   slices.Clone(options.UploadParallel),
	}
	raw, err := properties.Raw()
	if err != nil {
		return nil, fmt.Errorf("can't encode backup properties: %w", err)
	}
	return raw, nil
}

// makeRepairProperties returns the ScyllaDB Manager properties of a repair task. The intensity and small table
// threshold override annotations win over the spec's fields.
func makeRepairProperties(options *scyllav1alpha1.ScyllaDBManagerRepairTaskOptions, annotations map[string]string) (json.RawMessage, error) {
	var errs []error
	intensity, err := makeIntensity(options.Intensity, annotations)
	if err != nil {
		errs = append(errs, err)
	}
	smallTableThreshold, err := makeSmallTableThreshold(options.SmallTableThreshold, annotations)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) != 0 {
		return nil, utilerrors.NewAggregate(errs)
	}

	properties := managerclient.RepairProperties{
		Keyspace:            slices.Clone(options.Keyspace),
		DC:                  slices.Clone(options.DC),
		IgnoreDownHosts:     copyPointer(options.IgnoreDownHosts),
		FailFast:            copyPointer(options.FailFast),
		Intensity:           intensity,
		Parallel:            copyPointer(options.Parallel),
		SmallTableThreshold: smallTableThreshold,
	}
	if options.Host != nil {
		properties.Host = *options.Host
	}
	raw, err := properties.Raw()
	if err != nil {
		return nil, fmt.Errorf("can't encode repair properties: %w", err)
	}
	return raw, nil
}

// makeIntensity returns the repair intensity to send: the override annotation's (a decimal string, as the
// ScyllaCluster API has it) when set, else spec.repair.intensity.
func makeIntensity(spec *int64, annotations map[string]string) (*float64, error) {
	if value, ok := annotations[naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("can't parse annotation %q value %q: want a non-negative number, e.g. 1 or 0.5", naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot, value)
		}
		return new(managerIntensity(f)), nil
	}
	if spec == nil {
		return nil, nil
	}
	return new(float64(*spec)), nil
}

// managerIntensity returns the whole number ScyllaDB Manager makes of a repair intensity (scylla-manager-api.md 1.8):
// 0 stays "the maximum", a value in (0,1) becomes 1 and larger values lose their fraction. Sending that number rather
// than the fraction keeps what ScyllaDB Manager holds equal to what was sent.
func managerIntensity(intensity float64) float64 {
	switch {
	case intensity <= 0:
		return 0
	case intensity < 1:
		return 1
	default:
		return math.Trunc(intensity)
	}
}

// makeSmallTableThreshold returns the repair small table threshold in bytes: the override annotation's (a size such
// as 1GiB, as the ScyllaCluster API has it, or a Kubernetes quantity) when set, else spec.repair.smallTableThreshold.
func makeSmallTableThreshold(spec *resource.Quantity, annotations map[string]string) (*int64, error) {
	if value, ok := annotations[naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot]; ok {
		bytes, err := validation.ParseSize(value)
		if err != nil {
			return nil, fmt.Errorf("can't parse annotation %q value %q: %w", naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot, value, err)
		}
		return &bytes, nil
	}
	if spec == nil {
		return nil, nil
	}
	bytes, ok := spec.AsInt64()
	if !ok || bytes < 0 {
		return nil, fmt.Errorf("smallTableThreshold %q must be a non-negative whole number of bytes", spec.String())
	}
	return &bytes, nil
}

// formatManagerDuration renders d in units ScyllaDB Manager accepts (d, h, m, s), e.g. 1d2h30m. Durations with a
// fraction of a second have no such form; they are rendered as Go does and ScyllaDB Manager rejects them.
func formatManagerDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d < 0 || d%time.Second != 0 {
		return d.String()
	}
	var b strings.Builder
	for _, u := range []struct {
		name string
		unit time.Duration
	}{{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}

// taskDiff returns the fields in which actual, a task as ScyllaDB Manager holds it, differs from desired, empty when
// it holds what desired asks for. Values are compared decoded and normalised, not as JSON: ScyllaDB Manager echoes
// cron inside a JSON document, rewrites durations (36h as 1d12h), fills in property defaults and picks a start date
// for a task created without one. Labels are not compared here: the owner and hash labels are checked on their own,
// and others are left to whoever set them. now is the current time.
func taskDiff(desired *managerclient.TaskUpdate, actual *managerclient.Task, now time.Time) []string {
	var diff []string
	if desired.Name != actual.Name {
		diff = append(diff, "name")
	}
	if desired.Enabled != actual.Enabled {
		diff = append(diff, "enabled")
	}

	want := desired.Schedule
	if want == nil {
		want = &managerclient.Schedule{}
	}
	got := &actual.Schedule
	if strings.TrimSpace(want.Cron) != strings.TrimSpace(got.Cron) {
		diff = append(diff, "schedule.cron")
	}
	if !durationsEqual(want.Interval, got.Interval) {
		diff = append(diff, "schedule.interval")
	}
	if normalizeTimezone(want.Timezone) != normalizeTimezone(got.Timezone) {
		diff = append(diff, "schedule.timezone")
	}
	if want.NumRetries != got.NumRetries {
		diff = append(diff, "schedule.num_retries")
	}
	// Without a retry wait ScyllaDB Manager picks one; whatever it holds then is what was asked for.
	if len(want.RetryWait) != 0 && !durationsEqual(want.RetryWait, got.RetryWait) {
		diff = append(diff, "schedule.retry_wait")
	}
	if len(want.Window) != 0 || len(got.Window) != 0 {
		if !slices.Equal(want.Window, got.Window) {
			diff = append(diff, "schedule.window")
		}
	}
	switch {
	case want.StartDate != nil:
		if got.StartDate == nil || !want.StartDate.Equal(*got.StartDate) {
			diff = append(diff, "schedule.start_date")
		}
	case got.StartDate != nil && got.StartDate.After(now):
		// No start date means "right away": a start date ScyllaDB Manager picked (its now at creation) is that,
		// one still ahead is not.
		diff = append(diff, "schedule.start_date")
	}

	equal, err := propertiesEqual(desired.Type, desired.Properties, actual.Properties)
	if err != nil || !equal {
		diff = append(diff, "properties")
	}
	return diff
}

// durationsEqual compares two durations as ScyllaDB Manager or Go write them; values that do not parse are compared
// as written.
func durationsEqual(a, b string) bool {
	da, errA := validation.ParseManagerDuration(a)
	db, errB := validation.ParseManagerDuration(b)
	if errA != nil || errB != nil {
		return strings.TrimSpace(a) == strings.TrimSpace(b)
	}
	return da == db
}

// normalizeTimezone maps the ways of saying UTC to one: ScyllaDB Manager evaluates cron in UTC without a timezone.
func normalizeTimezone(timezone string) string {
	if timezone = strings.TrimSpace(timezone); timezone == "" {
		return "UTC"
	}
	return timezone
}

// propertiesEqual compares the properties of a task of taskType, decoded and with ScyllaDB Manager's defaults
// filled in on both sides. Properties this controller does not model (Extra) are not compared: a newer ScyllaDB
// Manager may add some, and sending the desired properties on an update drops any set by hand anyway.
func propertiesEqual(taskType managerclient.TaskType, desired, actual json.RawMessage) (bool, error) {
	switch taskType {
	case managerclient.TaskTypeBackup:
		var want, got managerclient.BackupProperties
		if err := decodeProperties(desired, &want); err != nil {
			return false, err
		}
		if err := decodeProperties(actual, &got); err != nil {
			return false, err
		}
		return reflect.DeepEqual(normalizeBackupProperties(want), normalizeBackupProperties(got)), nil
	case managerclient.TaskTypeRepair:
		var want, got managerclient.RepairProperties
		if err := decodeProperties(desired, &want); err != nil {
			return false, err
		}
		if err := decodeProperties(actual, &got); err != nil {
			return false, err
		}
		return reflect.DeepEqual(normalizeRepairProperties(want), normalizeRepairProperties(got)), nil
	default:
		return false, fmt.Errorf("can't compare properties of task type %q", taskType)
	}
}

// decodeProperties decodes task properties; empty and null properties leave v as it is.
func decodeProperties(raw json.RawMessage, v any) error {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

func normalizeBackupProperties(p managerclient.BackupProperties) managerclient.BackupProperties {
	p.Extra = nil
	for _, list := range []*[]string{&p.Location, &p.Keyspace, &p.DC, &p.RateLimit, &p.SnapshotParallel, &p.UploadParallel} {
		if len(*list) == 0 {
			*list = nil
		}
	}
	if p.Retention == nil && p.RetentionDays == nil {
		p.Retention = new(defaultBackupRetention)
	}
	p.Continue = orDefault(p.Continue, true)
	p.PurgeOnly = orDefault(p.PurgeOnly, false)
	p.SkipSchema = orDefault(p.SkipSchema, false)
	if len(p.Method) == 0 {
		p.Method = defaultBackupMethod
	}
	return p
}

func normalizeRepairProperties(p managerclient.RepairProperties) managerclient.RepairProperties {
	p.Extra = nil
	if len(p.Keyspace) == 0 {
		p.Keyspace = slices.Clone(defaultRepairKeyspace)
	}
	if len(p.DC) == 0 {
		p.DC = nil
	}
	p.Continue = orDefault(p.Continue, true)
	p.IgnoreDownHosts = orDefault(p.IgnoreDownHosts, false)
	p.FailFast = orDefault(p.FailFast, false)
	p.AllowEmpty = orDefault(p.AllowEmpty, false)
	if p.SmallTableThreshold == nil {
		p.SmallTableThreshold = new(defaultRepairSmallTableThreshold)
	}
	if p.Intensity != nil {
		p.Intensity = new(managerIntensity(*p.Intensity))
	}
	return p
}

func orDefault[T any](p *T, def T) *T {
	if p == nil {
		return &def
	}
	return p
}

func copyPointer[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := t.UTC()
	return &c
}
