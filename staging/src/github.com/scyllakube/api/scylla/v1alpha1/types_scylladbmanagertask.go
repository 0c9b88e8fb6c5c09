package v1alpha1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScyllaDBManagerTaskType is the kind of work a ScyllaDBManagerTask schedules.
// +kubebuilder:validation:Enum=Backup;Repair
type ScyllaDBManagerTaskType string

const (
	// ScyllaDBManagerTaskTypeBackup schedules backups.
	ScyllaDBManagerTaskTypeBackup ScyllaDBManagerTaskType = "Backup"
	// ScyllaDBManagerTaskTypeRepair schedules repairs.
	ScyllaDBManagerTaskTypeRepair ScyllaDBManagerTaskType = "Repair"
)

// ScyllaDBManagerTaskSchedule says when a task runs and how failed runs are retried.
type ScyllaDBManagerTaskSchedule struct {
	// cron is the schedule as a cron expression: five fields `MIN HOUR DOM MON DOW`, or one of the macros
	// `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`, `@midnight`, `@hourly` or `@every <duration>`.
	// Time zone prefixes (`TZ=`, `CRON_TZ=`) are not supported; schedules are in UTC.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule="!self.trim().startsWith('TZ=') && !self.trim().startsWith('CRON_TZ=')",message="cron must not have a TZ= or CRON_TZ= prefix: schedules are in UTC"
	// +optional
	Cron *string `json:"cron,omitempty"`

	// numRetries is how many times a failed run is retried before the run counts as failed.
	// When unset, ScyllaDB Manager's default applies.
	// +kubebuilder:validation:Minimum=0
	// +optional
	NumRetries *int64 `json:"numRetries,omitempty"`

	// retryWait is the first wait between retries; later waits grow exponentially.
	// When unset, ScyllaDB Manager's default applies.
	// +optional
	RetryWait *metav1.Duration `json:"retryWait,omitempty"`

	// startDate is when the task first runs, in RFC 3339 form. When unset, the task starts right away.
	// +optional
	StartDate *metav1.Time `json:"startDate,omitempty"`
}

// ScyllaDBManagerBackupTaskOptions are the settings of a backup task.
type ScyllaDBManagerBackupTaskOptions struct {
	// schedule says when the backup runs.
	ScyllaDBManagerTaskSchedule `json:",inline"`

	// dc selects datacenters to back up, one glob pattern per entry; a leading `!` excludes, for example
	// `["dc1", "!otherdc*"]`. When unset, every datacenter is backed up.
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="!self.contains(',')",message="each dc entry must be a single glob pattern without commas; put every pattern in its own entry"
	// +optional
	DC []string `json:"dc,omitempty"`

	// keyspace selects tables to back up, one glob pattern per entry matching `keyspace` or `keyspace.table`;
	// a leading `!` excludes, for example `["keyspace", "!keyspace.table_prefix_*"]`.
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:XValidation:rule="!self.contains(',')",message="each keyspace entry must be a single glob pattern without commas; put every pattern in its own entry"
	// +kubebuilder:validation:items:XValidation:rule="!self.startsWith('.') && !self.startsWith('!.')",message="a keyspace entry must start with a keyspace pattern, not with '.'"
	// +optional
	Keyspace []string `json:"keyspace,omitempty"`

	// location lists where backups are stored, each as `[<dc>:]<provider>:<bucket>`, for example `s3:my-backups`
	// or `dc1:gcs:dc1-backups`. The provider is s3, gcs, azure or localstorage; the bucket name holds lowercase
	// letters, digits, dots and dashes. A `<dc>:` prefix makes the entry apply to that datacenter only.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^([^:,]+:)?(s3|gcs|azure|localstorage):[a-z0-9][a-z0-9.-]*$')",message="each location must be [<dc>:]<provider>:<bucket> with provider s3, gcs, azure or localstorage and a bucket of lowercase letters, digits, '.' and '-', e.g. s3:my-backups"
	Location []string `json:"location"`

	// rateLimit caps the upload rate of each node in MiB/s, each entry as `[<dc>:]<limit>`; 0 means no limit.
	// A `<dc>:` prefix makes the entry apply to that datacenter only.
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^([^:,]+:)?[0-9]+$')",message="each rateLimit entry must be [<dc>:]<number>, e.g. 100 or dc1:50"
	// +optional
	RateLimit []string `json:"rateLimit,omitempty"`

	// retention is how many backups are kept. When unset, ScyllaDB Manager's default applies.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Retention *int64 `json:"retention,omitempty"`

	// snapshotParallel caps how many nodes take snapshots at the same time, each entry as `[<dc>:]<limit>`.
	// For example `["dc1:2", "5"]` means two nodes at a time in dc1 and five in every other datacenter.
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^([^:,]+:)?[0-9]+$')",message="each snapshotParallel entry must be [<dc>:]<number>, e.g. 2 or dc1:1"
	// +optional
	SnapshotParallel []string `json:"snapshotParallel,omitempty"`

	// uploadParallel caps how many nodes upload at the same time, each entry as `[<dc>:]<limit>`.
	// For example `["dc1:2", "5"]` means two nodes at a time in dc1 and five in every other datacenter.
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^([^:,]+:)?[0-9]+$')",message="each uploadParallel entry must be [<dc>:]<number>, e.g. 2 or dc1:1"
	// +optional
	UploadParallel []string `json:"uploadParallel,omitempty"`
}

// ScyllaDBManagerRepairTaskOptions are the settings of a repair task.
type ScyllaDBManagerRepairTaskOptions struct {
	// schedule says when the repair runs.
	ScyllaDBManagerTaskSchedule `json:",inline"`

	// dc selects datacenters to repair, one glob pattern per entry; a leading `!` excludes, for example
	// `["dc1", "!otherdc*"]`. When unset, every datacenter is repaired.
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:XValidation:rule="!self.contains(',')",message="each dc entry must be a single glob pattern without commas; put every pattern in its own entry"
	// +optional
	DC []string `json:"dc,omitempty"`

	// keyspace selects tables to repair, one glob pattern per entry matching `keyspace` or `keyspace.table`;
	// a leading `!` excludes, for example `["keyspace", "!keyspace.table_prefix_*"]`.
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:XValidation:rule="!self.contains(',')",message="each keyspace entry must be a single glob pattern without commas; put every pattern in its own entry"
	// +kubebuilder:validation:items:XValidation:rule="!self.startsWith('.') && !self.startsWith('!.')",message="a keyspace entry must start with a keyspace pattern, not with '.'"
	// +optional
	Keyspace []string `json:"keyspace,omitempty"`

	// failFast stops the repair at the first error.
	// +optional
	FailFast *bool `json:"failFast,omitempty"`

	// host limits the repair to the token ranges replicated by the node with this IPv4 or IPv6 address.
	// Combined with dc, the node must be in one of the selected datacenters. When unset, all nodes are repaired.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isIP(self)",message="host must be an IPv4 or IPv6 address"
	// +optional
	Host *string `json:"host,omitempty"`

	// ignoreDownHosts lets the repair proceed without the nodes that are down.
	// +optional
	IgnoreDownHosts *bool `json:"ignoreDownHosts,omitempty"`

	// intensity is how many token ranges a node repairs at the same time. A higher value finishes sooner but
	// repeats more work when an interrupted repair resumes. 0 means the most the node supports; larger values are
	// capped at that maximum.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Intensity *int64 `json:"intensity,omitempty"`

	// parallel is how many repair jobs run at the same time on different token ranges and replicas; a node takes
	// part in one job at a time. 0 means as many as the keyspace replication and topology allow; larger values are
	// capped at that maximum.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Parallel *int64 `json:"parallel,omitempty"`

	// smallTableThreshold is the size, as a whole number of bytes such as `1Gi`, below which tables are repaired
	// in one piece.
	// +kubebuilder:validation:XValidation:rule="quantity(string(self)).isGreaterThan(quantity('0')) && quantity(string(self)).isInteger()",message="smallTableThreshold must be a positive whole number of bytes, for example 1Gi"
	// +optional
	SmallTableThreshold *resource.Quantity `json:"smallTableThreshold,omitempty"`
}

// LocalScyllaDBReference points at a ScyllaDB cluster object in the same namespace.
type LocalScyllaDBReference struct {
	// kind is the kind of the referenced object: ScyllaDBCluster or ScyllaDBDatacenter.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=ScyllaDBCluster;ScyllaDBDatacenter
	Kind string `json:"kind"`

	// name is the name of the referenced object.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="name must be a lowercase RFC 1123 subdomain"
	Name string `json:"name"`
}

// ScyllaDBManagerTaskSpec is the desired state of a ScyllaDBManagerTask.
// +kubebuilder:validation:XValidation:rule="self.type != 'Backup' || has(self.backup)",message="backup options are required when type is Backup",fieldPath=".backup",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.type == 'Backup' || !has(self.backup)",message="backup options may only be set when type is Backup",fieldPath=".backup",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.type != 'Repair' || has(self.repair)",message="repair options are required when type is Repair",fieldPath=".repair",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.type == 'Repair' || !has(self.repair)",message="repair options may only be set when type is Repair",fieldPath=".repair",reason="FieldValueForbidden"
type ScyllaDBManagerTaskSpec struct {
	// scyllaDBClusterRef points at the ScyllaDBCluster or ScyllaDBDatacenter, in the same namespace, the task runs
	// against. The target must be registered with ScyllaDB Manager.
	// +kubebuilder:validation:Required
	ScyllaDBClusterRef LocalScyllaDBReference `json:"scyllaDBClusterRef"`

	// type is the kind of task. It cannot be changed after creation.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="type is immutable"
	Type ScyllaDBManagerTaskType `json:"type"`

	// backup holds the backup settings. Required when type is Backup and forbidden otherwise.
	// +optional
	Backup *ScyllaDBManagerBackupTaskOptions `json:"backup,omitempty"`

	// repair holds the repair settings. Required when type is Repair and forbidden otherwise.
	// +optional
	Repair *ScyllaDBManagerRepairTaskOptions `json:"repair,omitempty"`
}

// ScyllaDBManagerTaskStatus is the observed state of a ScyllaDBManagerTask.
type ScyllaDBManagerTaskStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the task. Errors returned by ScyllaDB Manager show up in the Degraded condition.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// taskID is the ID ScyllaDB Manager gave the task.
	// +optional
	TaskID *string `json:"taskID,omitempty"`

	// The fields below reflect ScyllaDB Manager's view of the task's runs, as its task list last reported it. They
	// are refreshed whenever the task is synced, so they can lag behind ScyllaDB Manager by up to the controller's
	// resync period.

	// lastRunStatus is the status of the task's last run as ScyllaDB Manager reports it: NEW (never ran), RUNNING,
	// STOPPING, STOPPED, WAITING, DONE, ERROR or ABORTED.
	// +optional
	LastRunStatus *string `json:"lastRunStatus,omitempty"`

	// nextActivation is when ScyllaDB Manager runs the task next; unset when it is not scheduled to run again.
	// +optional
	NextActivation *metav1.Time `json:"nextActivation,omitempty"`

	// lastSuccess is when a run of the task last succeeded.
	// +optional
	LastSuccess *metav1.Time `json:"lastSuccess,omitempty"`

	// lastError is when a run of the task last failed.
	// +optional
	LastError *metav1.Time `json:"lastError,omitempty"`

	// successCount is how many runs of the task succeeded.
	// +optional
	SuccessCount *int64 `json:"successCount,omitempty"`

	// errorCount is how many runs of the task failed.
	// +optional
	ErrorCount *int64 `json:"errorCount,omitempty"`
}

// ScyllaDBManagerTask schedules a backup or repair with ScyllaDB Manager for a ScyllaDBCluster or
// ScyllaDBDatacenter.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="TASKID",type=string,JSONPath=".status.taskID",priority=1
// +kubebuilder:printcolumn:name="STATUS",type=string,JSONPath=".status.lastRunStatus"
// +kubebuilder:printcolumn:name="NEXT",type=date,JSONPath=".status.nextActivation"
// +kubebuilder:printcolumn:name="LAST SUCCESS",type=date,JSONPath=".status.lastSuccess"
// +kubebuilder:printcolumn:name="DEGRADED",type=string,JSONPath=".status.conditions[?(@.type=='Degraded')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ScyllaDBManagerTask struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the task.
	// +kubebuilder:validation:Required
	Spec ScyllaDBManagerTaskSpec `json:"spec,omitempty"`

	// status is the observed state of the task.
	// +optional
	Status ScyllaDBManagerTaskStatus `json:"status,omitempty"`
}

// ScyllaDBManagerTaskList is a list of ScyllaDBManagerTasks.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ScyllaDBManagerTaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaDBManagerTasks.
	Items []ScyllaDBManagerTask `json:"items"`
}
