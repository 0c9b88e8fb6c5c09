package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SchedulerTaskSpec holds the scheduling settings shared by backup and repair tasks.
// +kubebuilder:validation:XValidation:rule="!has(self.cron) || !has(self.interval) || !self.interval.matches('[1-9]')",fieldPath=".interval",message="interval must be 0 (or unset) when cron is set; cron replaces the deprecated interval"
// +kubebuilder:validation:XValidation:rule="has(self.cron) || !has(self.timezone)",fieldPath=".timezone",reason="FieldValueForbidden",message="timezone may be set only together with cron"
type SchedulerTaskSpec struct {
	// startDate is when the task first runs: an RFC 3339 time (e.g. 2025-01-02T03:04:05Z) or "now", optionally
	// followed by an offset such as "now+3d2h10m". When unset, the task is scheduled at once.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^now([+]([0-9]+(d|h|m|s))+)?$') || self.matches('^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}([.][0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$')`,message="startDate must be an RFC 3339 time (e.g. 2025-01-02T03:04:05Z) or now, optionally followed by an offset (e.g. now+3d2h10m)"
	StartDate *string `json:"startDate,omitempty"`

	// interval is the time between runs, a duration with d, h, m and s units (e.g. 7d); 0 runs the task once.
	//
	// Deprecated: use cron. With cron set, interval must be 0 or unset.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(0|([0-9]+(d|h|m|s|ms|us|µs|ns))+)$')`,message="interval must be a duration such as 0, 12h or 7d (units d, h, m, s)"
	Interval *string `json:"interval,omitempty"`

	// numRetries is how many times a failed run is retried before the run fails.
	// +optional
	// +kubebuilder:default:=3
	// +kubebuilder:validation:Minimum=0
	NumRetries *int64 `json:"numRetries,omitempty"`

	// retryWait is the initial wait before a failed run is retried; later retries back off exponentially. When
	// unset, ScyllaDB Manager decides.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^(0|([0-9]+([.][0-9]*)?(ns|us|µs|ms|s|m|h))+)$')`,message="retryWait must be a non-negative duration such as 10m or 1h30m (units h, m, s, ms, us, ns)"
	RetryWait *metav1.Duration `json:"retryWait,omitempty"`

	// cron schedules the task with a cron expression: five fields (an optional leading seconds field is allowed)
	// or a descriptor such as @daily. Set the zone with timezone, not with a TZ= or CRON_TZ= prefix.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.startsWith('TZ=') && !self.startsWith('CRON_TZ=')",message="cron must not start with TZ= or CRON_TZ=; set the timezone field instead"
	Cron *string `json:"cron,omitempty"`

	// timezone is the IANA time zone (e.g. Europe/Warsaw) the cron expression is evaluated in; it needs cron.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Timezone *string `json:"timezone,omitempty"`
}

// TaskSpec holds what every ScyllaDB Manager task has: its name and its schedule.
type TaskSpec struct {
	// name of the task in ScyllaDB Manager; it must be a lowercase RFC 1123 subdomain and unique within its list.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="task name must be a lowercase RFC 1123 subdomain (letters a-z, digits, '-' and '.', starting and ending with a letter or digit)"
	Name string `json:"name"`

	SchedulerTaskSpec `json:",inline"`
}

// RepairTaskSpec is a repair task run by ScyllaDB Manager.
type RepairTaskSpec struct {
	TaskSpec `json:",inline"`

	// dc selects datacenters by glob patterns; a pattern starting with ! excludes. By default all datacenters
	// are repaired.
	// +optional
	// +listType=atomic
	DC []string `json:"dc,omitempty"`

	// failFast stops the repair at the first error.
	// +optional
	FailFast bool `json:"failFast,omitempty"`

	// intensity is how many token ranges per shard are repaired in one job, a non-negative number given as a
	// string. 0 means as many as possible; values between 0 and 1 only matter for the legacy row-level repair.
	// +optional
	// +kubebuilder:default:="1"
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule=`self.matches('^([0-9]+([.][0-9]*)?|[.][0-9]+)$')`,message="intensity must be a non-negative number, e.g. 1 or 0.5"
	Intensity string `json:"intensity,omitempty"`

	// parallel is the largest number of repair jobs run at the same time; 0 means as many as possible.
	// +optional
	// +kubebuilder:default:=0
	// +kubebuilder:validation:Minimum=0
	Parallel int64 `json:"parallel,omitempty"`

	// keyspace selects keyspaces and tables by glob patterns of the form keyspace[.table]; a pattern starting
	// with ! excludes. By default all keyspaces are repaired.
	// +optional
	// +listType=atomic
	Keyspace []string `json:"keyspace,omitempty"`

	// smallTableThreshold is the table size below which a table is repaired in one job, e.g. 1GiB (units B,
	// MiB, GiB, TiB).
	// +optional
	// +kubebuilder:default:="1GiB"
	SmallTableThreshold string `json:"smallTableThreshold,omitempty"`

	// host repairs only the token ranges this node (given by its address) replicates.
	// +optional
	Host *string `json:"host,omitempty"`

	// ignoreDownHosts repairs only the nodes that are up instead of failing when some are down.
	// +optional
	IgnoreDownHosts *bool `json:"ignoreDownHosts,omitempty"`
}

// BackupTaskSpec is a backup task run by ScyllaDB Manager.
type BackupTaskSpec struct {
	TaskSpec `json:",inline"`

	// dc selects datacenters by glob patterns; a pattern starting with ! excludes. By default all datacenters
	// are backed up.
	// +optional
	// +listType=atomic
	DC []string `json:"dc,omitempty"`

	// keyspace selects keyspaces and tables by glob patterns of the form keyspace[.table]; a pattern starting
	// with ! excludes. By default all keyspaces are backed up.
	// +optional
	// +listType=atomic
	Keyspace []string `json:"keyspace,omitempty"`

	// location lists where backups are written, each as [<dc>:]<provider>:<bucket>, e.g. s3:my-backups or
	// dc1:gcs:my-backups. The provider is s3, gcs or azure.
	// +optional
	// +listType=atomic
	Location []string `json:"location"`

	// rateLimit caps the upload speed in MiB/s, each entry as [<dc>:]<limit>; 0 means unlimited.
	// +optional
	// +listType=atomic
	RateLimit []string `json:"rateLimit,omitempty"`

	// retention is how many backups are kept.
	// +optional
	// +kubebuilder:default:=3
	// +kubebuilder:validation:Minimum=0
	Retention int64 `json:"retention,omitempty"`

	// snapshotParallel is how many nodes take snapshots at the same time, each entry as [<dc>:]<count>.
	// +optional
	// +listType=atomic
	SnapshotParallel []string `json:"snapshotParallel,omitempty"`

	// uploadParallel is how many nodes upload at the same time, each entry as [<dc>:]<count>.
	// +optional
	// +listType=atomic
	UploadParallel []string `json:"uploadParallel,omitempty"`
}

// SchedulerTaskStatus is the schedule of a task as ScyllaDB Manager reports it.
type SchedulerTaskStatus struct {
	// startDate is the start date the manager holds.
	// +optional
	StartDate *string `json:"startDate,omitempty"`

	// interval is the interval the manager holds.
	// +optional
	Interval *string `json:"interval,omitempty"`

	// numRetries is the retry count the manager holds.
	// +optional
	NumRetries *int64 `json:"numRetries,omitempty"`

	// retryWait is the initial retry wait the manager holds.
	// +optional
	RetryWait *metav1.Duration `json:"retryWait,omitempty"`

	// cron is the cron expression the manager holds.
	// +optional
	Cron *string `json:"cron,omitempty"`

	// timezone is the time zone the manager holds.
	// +optional
	Timezone *string `json:"timezone,omitempty"`
}

// TaskStatus is the state of one task in ScyllaDB Manager.
type TaskStatus struct {
	SchedulerTaskStatus `json:",inline"`

	// name of the task, as in the spec.
	// +optional
	Name string `json:"name"`

	// id of the task in ScyllaDB Manager.
	// +optional
	ID *string `json:"id,omitempty"`

	// labels of the task in ScyllaDB Manager.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// error is the last error met while syncing the task with ScyllaDB Manager.
	// +optional
	Error *string `json:"error,omitempty"`
}

// RepairTaskStatus is the state of a repair task in ScyllaDB Manager.
type RepairTaskStatus struct {
	TaskStatus `json:",inline"`

	// dc is the datacenter filter the manager holds.
	// +optional
	DC []string `json:"dc,omitempty"`

	// failFast is the fail-fast setting the manager holds.
	// +optional
	FailFast *bool `json:"failFast,omitempty"`

	// intensity is the intensity the manager holds.
	// +optional
	Intensity *string `json:"intensity,omitempty"`

	// parallel is the parallelism the manager holds.
	// +optional
	Parallel *int64 `json:"parallel,omitempty"`

	// keyspace is the keyspace filter the manager holds.
	// +optional
	Keyspace []string `json:"keyspace,omitempty"`

	// smallTableThreshold is the small-table threshold the manager holds.
	// +optional
	SmallTableThreshold *string `json:"smallTableThreshold,omitempty"`

	// host is the host filter the manager holds.
	// +optional
	Host *string `json:"host,omitempty"`

	// ignoreDownHosts is the down-host setting the manager holds.
	// +optional
	IgnoreDownHosts *bool `json:"ignoreDownHosts,omitempty"`
}

// BackupTaskStatus is the state of a backup task in ScyllaDB Manager.
type BackupTaskStatus struct {
	TaskStatus `json:",inline"`

	// dc is the datacenter filter the manager holds.
	// +optional
	DC []string `json:"dc,omitempty"`

	// keyspace is the keyspace filter the manager holds.
	// +optional
	Keyspace []string `json:"keyspace,omitempty"`

	// location is the list of backup locations the manager holds.
	// +optional
	Location []string `json:"location"`

	// rateLimit is the upload rate limit the manager holds.
	// +optional
	RateLimit []string `json:"rateLimit,omitempty"`

	// retention is the retention the manager holds.
	// +optional
	Retention *int64 `json:"retention,omitempty"`

	// snapshotParallel is the snapshot parallelism the manager holds.
	// +optional
	SnapshotParallel []string `json:"snapshotParallel,omitempty"`

	// uploadParallel is the upload parallelism the manager holds.
	// +optional
	UploadParallel []string `json:"uploadParallel,omitempty"`
}
