package managerclient

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Cluster is a cluster registered with ScyllaDB Manager. The same type is the request body of create and update
// and the response body of get and list.
//
// On reads ScyllaDB Manager never returns WithoutRepair, the SSL key pair or (on a single get) the credentials;
// a list reports Username and Password as "set" or "not set" instead of their values.
type Cluster struct {
	// ID is the cluster UUID. On create it may be set to choose the ID; if a cluster with that ID already exists,
	// the create acts as an update.
	ID string `json:"id,omitempty"`
	// Name is unique across clusters and must not parse as a UUID.
	Name string `json:"name,omitempty"`
	// Labels are stored and returned verbatim.
	Labels map[string]string `json:"labels,omitempty"`
	// Host is the initial contact point (DNS name or IP) of the cluster's Manager agents.
	Host string `json:"host,omitempty"`
	// Port is the agent port; ScyllaDB Manager uses 10001 when it is zero.
	Port int `json:"port,omitempty"`
	// AuthToken is the agent auth token. ScyllaDB Manager returns it in plain text.
	AuthToken string `json:"auth_token,omitempty"`

	ForceTLSDisabled       bool `json:"force_tls_disabled,omitempty"`
	ForceNonSSLSessionPort bool `json:"force_non_ssl_session_port,omitempty"`

	// Username and Password are CQL credentials; set both or neither.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// AlternatorAccessKeyID and AlternatorSecretAccessKey are Alternator credentials; set both or neither.
	AlternatorAccessKeyID     string `json:"alternator_access_key_id,omitempty"`
	AlternatorSecretAccessKey string `json:"alternator_secret_access_key,omitempty"`
	// SSLUserCertFile and SSLUserKeyFile are a PEM key pair for CQL client authentication.
	SSLUserCertFile []byte `json:"ssl_user_cert_file,omitempty"`
	SSLUserKeyFile  []byte `json:"ssl_user_key_file,omitempty"`

	// WithoutRepair, on create only, stops ScyllaDB Manager from adding its default weekly repair task.
	WithoutRepair bool `json:"without_repair,omitempty"`
}

// CredentialsSet is the value a cluster list puts in Username and Password when CQL credentials are stored.
const CredentialsSet = "set"

// TaskType is the type of a ScyllaDB Manager task.
type TaskType string

// Task types ScyllaDB Manager accepts.
const (
	TaskTypeBackup          TaskType = "backup"
	TaskTypeRestore         TaskType = "restore"
	TaskTypeOneToOneRestore TaskType = "1_1_restore"
	TaskTypeHealthcheck     TaskType = "healthcheck"
	TaskTypeRepair          TaskType = "repair"
	TaskTypeTabletRepair    TaskType = "tablet_repair"
	TaskTypeSuspend         TaskType = "suspend"
	TaskTypeValidateBackup  TaskType = "validate_backup"
)

// TaskTypes lists every task type ScyllaDB Manager accepts.
var TaskTypes = []TaskType{
	TaskTypeBackup, TaskTypeRestore, TaskTypeOneToOneRestore, TaskTypeHealthcheck,
	TaskTypeRepair, TaskTypeTabletRepair, TaskTypeSuspend, TaskTypeValidateBackup,
}

// Validate returns an error unless t is a task type ScyllaDB Manager accepts.
func (t TaskType) Validate() error {
	return validateEnum(t, TaskTypes, "task type")
}

// TaskStatus is the status of a task run, and of a task (the status of its last run).
type TaskStatus string

// Task and run statuses.
const (
	TaskStatusNew      TaskStatus = "NEW"
	TaskStatusRunning  TaskStatus = "RUNNING"
	TaskStatusStopping TaskStatus = "STOPPING"
	TaskStatusStopped  TaskStatus = "STOPPED"
	TaskStatusWaiting  TaskStatus = "WAITING"
	TaskStatusDone     TaskStatus = "DONE"
	TaskStatusError    TaskStatus = "ERROR"
	TaskStatusAborted  TaskStatus = "ABORTED"
)

// TaskStatuses lists every status.
var TaskStatuses = []TaskStatus{
	TaskStatusNew, TaskStatusRunning, TaskStatusStopping, TaskStatusStopped,
	TaskStatusWaiting, TaskStatusDone, TaskStatusError, TaskStatusAborted,
}

// Validate returns an error unless s is a status ScyllaDB Manager knows.
func (s TaskStatus) Validate() error {
	return validateEnum(s, TaskStatuses, "task status")
}

func validateEnum[T ~string](v T, known []T, what string) error {
	if slices.Contains(known, v) {
		return nil
	}
	return fmt.Errorf("unknown %s %q", what, string(v))
}

// TaskUpdate is the request body of task create and update. Update replaces the whole task: a field left empty is
// reset, and Enabled must be set on every update of an enabled task.
type TaskUpdate struct {
	Type TaskType `json:"type"`
	// Name is optional; it must not parse as a UUID and must be unique among the cluster's tasks of the same type.
	Name string `json:"name,omitempty"`
	// Enabled defaults to false: a task created without it never runs.
	Enabled bool              `json:"enabled,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Tags is deprecated in favour of Labels.
	Tags     []string  `json:"tags,omitempty"`
	Schedule *Schedule `json:"schedule,omitempty"`
	// Properties is the free-form properties object; build it with BackupProperties.Raw or RepairProperties.Raw,
	// or carry any other JSON object verbatim. ScyllaDB Manager stores {} when it is empty.
	Properties json.RawMessage `json:"properties,omitempty"`
}

// Task is a task as ScyllaDB Manager returns it from GET.
type Task struct {
	ClusterID  string            `json:"cluster_id"`
	ID         string            `json:"id"`
	Type       TaskType          `json:"type"`
	Name       string            `json:"name"`
	Enabled    bool              `json:"enabled,omitempty"`
	Labels     map[string]string `json:"labels,omitempty"`
	Tags       []string          `json:"tags,omitempty"`
	Schedule   Schedule          `json:"schedule"`
	Properties json.RawMessage   `json:"properties,omitempty"`

	// Status is the status of the last run, NEW if the task never ran.
	Status       TaskStatus `json:"status"`
	SuccessCount int        `json:"success_count"`
	ErrorCount   int        `json:"error_count"`
	LastSuccess  *time.Time `json:"last_success"`
	LastError    *time.Time `json:"last_error"`
}

// BackupProperties decodes the task's properties as backup properties.
func (t *Task) BackupProperties() (*BackupProperties, error) {
	p := &BackupProperties{}
	if err := decodeProperties(t.Properties, p); err != nil {
		return nil, fmt.Errorf("can't decode backup properties of task %q: %w", t.ID, err)
	}
	return p, nil
}

// RepairProperties decodes the task's properties as repair properties.
func (t *Task) RepairProperties() (*RepairProperties, error) {
	p := &RepairProperties{}
	if err := decodeProperties(t.Properties, p); err != nil {
		return nil, fmt.Errorf("can't decode repair properties of task %q: %w", t.ID, err)
	}
	return p, nil
}

// TaskListItem is a task as a task list returns it. NextActivation exists only here, not in GET.
type TaskListItem struct {
	Task
	// NextActivation is the next time the task is due, nil if it is not scheduled to run again.
	NextActivation *time.Time `json:"next_activation"`
	// Suspended reports that the task's cluster is suspended.
	Suspended bool `json:"suspended"`
	// Retry is the number of the current retry of a failed run.
	Retry int `json:"retry"`
}

// TaskRun is one run of a task.
type TaskRun struct {
	ClusterID string     `json:"cluster_id"`
	Type      TaskType   `json:"type"`
	TaskID    string     `json:"task_id"`
	ID        string     `json:"id"`
	Status    TaskStatus `json:"status"`
	Cause     string     `json:"cause,omitempty"`
	Owner     string     `json:"owner"`
	StartTime time.Time  `json:"start_time"`
	EndTime   *time.Time `json:"end_time,omitempty"`
}

// TaskRunProgress is a run with its type-specific progress. Progress is null when ScyllaDB Manager recorded none.
type TaskRunProgress struct {
	Run      TaskRun         `json:"run"`
	Progress json.RawMessage `json:"progress"`
}

// HasProgress reports whether the server returned a progress object.
func (p *TaskRunProgress) HasProgress() bool {
	return len(p.Progress) != 0 && string(p.Progress) != "null"
}

// BackupProgress decodes Progress as a backup progress; it returns nil and no error when there is none.
func (p *TaskRunProgress) BackupProgress() (*BackupProgress, error) {
	if !p.HasProgress() {
		return nil, nil
	}
	bp := &BackupProgress{}
	if err := json.Unmarshal(p.Progress, bp); err != nil {
		return nil, fmt.Errorf("can't decode backup progress of run %q: %w", p.Run.ID, err)
	}
	return bp, nil
}

// RepairProgress decodes Progress as a repair progress; it returns nil and no error when there is none.
func (p *TaskRunProgress) RepairProgress() (*RepairProgress, error) {
	if !p.HasProgress() {
		return nil, nil
	}
	rp := &RepairProgress{}
	if err := json.Unmarshal(p.Progress, rp); err != nil {
		return nil, fmt.Errorf("can't decode repair progress of run %q: %w", p.Run.ID, err)
	}
	return rp, nil
}

// BackupProgress is the progress of a backup run.
type BackupProgress struct {
	SnapshotTag string         `json:"snapshot_tag,omitempty"`
	DCs         []string       `json:"dcs,omitempty"`
	Hosts       []HostProgress `json:"hosts,omitempty"`
	Stage       string         `json:"stage,omitempty"`
	Size        int64          `json:"size"`
	Uploaded    int64          `json:"uploaded"`
	Skipped     int64          `json:"skipped"`
	Failed      int64          `json:"failed"`
	StartedAt   *time.Time     `json:"started_at"`
	CompletedAt *time.Time     `json:"completed_at"`
}

// HostProgress is the backup progress of one host.
type HostProgress struct {
	Host        string     `json:"host"`
	Size        int64      `json:"size"`
	Uploaded    int64      `json:"uploaded"`
	Skipped     int64      `json:"skipped"`
	Failed      int64      `json:"failed"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

// RepairProgress is the progress of a repair run.
type RepairProgress struct {
	TokenRanges  int64      `json:"token_ranges"`
	Success      int64      `json:"success"`
	Error        int64      `json:"error"`
	StartedAt    *time.Time `json:"started_at"`
	CompletedAt  *time.Time `json:"completed_at"`
	DurationMs   int64      `json:"duration_ms"`
	DCs          []string   `json:"dcs,omitempty"`
	Host         string     `json:"host,omitempty"`
	Intensity    float64    `json:"intensity"`
	MaxIntensity float64    `json:"max_intensity"`
	Parallel     int64      `json:"parallel"`
	MaxParallel  int64      `json:"max_parallel"`
}

// HostStatus is the status of one host as GET /cluster/{id}/status reports it.
type HostStatus struct {
	DC               string  `json:"dc"`
	HostID           string  `json:"host_id"`
	Host             string  `json:"host"`
	Status           string  `json:"status"`
	SSL              bool    `json:"ssl"`
	CQLStatus        string  `json:"cql_status"`
	CQLRttMs         float64 `json:"cql_rtt_ms"`
	CQLCause         string  `json:"cql_cause,omitempty"`
	RESTStatus       string  `json:"rest_status"`
	RESTRttMs        float64 `json:"rest_rtt_ms"`
	RESTCause        string  `json:"rest_cause,omitempty"`
	AlternatorStatus string  `json:"alternator_status,omitempty"`
	AlternatorRttMs  float64 `json:"alternator_rtt_ms,omitempty"`
	AlternatorCause  string  `json:"alternator_cause,omitempty"`
	TotalRAM         int64   `json:"total_ram"`
	Uptime           int64   `json:"uptime"`
	CPUCount         int64   `json:"cpu_count"`
	ScyllaVersion    string  `json:"scylla_version"`
	AgentVersion     string  `json:"agent_version"`
}
