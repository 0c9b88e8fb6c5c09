package fakescyllamanager

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Task types and statuses as ScyllaDB Manager spells them.
const (
	typeBackup          = "backup"
	typeRestore         = "restore"
	typeOneToOneRestore = "1_1_restore"
	typeHealthcheck     = "healthcheck"
	typeRepair          = "repair"
	typeTabletRepair    = "tablet_repair"
	typeSuspend         = "suspend"
	typeValidateBackup  = "validate_backup"

	statusNew      = "NEW"
	statusRunning  = "RUNNING"
	statusStopping = "STOPPING"
	statusStopped  = "STOPPED"
	statusWaiting  = "WAITING"
	statusDone     = "DONE"
	statusError    = "ERROR"
	statusAborted  = "ABORTED"
)

var (
	taskTypes = []string{
		typeBackup, typeRestore, typeOneToOneRestore, typeHealthcheck, typeRepair, typeTabletRepair, typeSuspend,
		typeValidateBackup,
	}
	taskStatuses = []string{
		statusNew, statusRunning, statusStopping, statusStopped, statusWaiting, statusDone, statusError, statusAborted,
	}
)

// cluster is a stored cluster.
type cluster struct {
	ID                        string
	Name                      string
	Labels                    map[string]string
	Host                      string
	Port                      int
	AuthToken                 string
	ForceTLSDisabled          bool
	ForceNonSSLSessionPort    bool
	Username                  string
	Password                  string
	AlternatorAccessKeyID     string
	AlternatorSecretAccessKey string
	SSLUserCert               []byte
	SSLUserKey                []byte
}

func (c *cluster) cqlCredentialsSet() bool {
	return c.Username != ""
}

// task is a stored task, deleted ones included.
type task struct {
	ClusterID  string
	ID         string
	Type       string
	Name       string
	Enabled    bool
	Deleted    bool
	Labels     map[string]string
	Tags       []string
	Schedule   schedule
	Properties json.RawMessage
	// Runs are oldest first.
	Runs []*run
}

func (t *task) lastRun() *run {
	if len(t.Runs) == 0 {
		return nil
	}
	return t.Runs[len(t.Runs)-1]
}

// run is one run of a task.
type run struct {
	ID        string
	Status    string
	Cause     string
	StartTime time.Time
	EndTime   *time.Time
	Progress  json.RawMessage
	// Uploads are what a backup run uploaded, per location.
	Uploads []Upload
}

// uuidField is a UUID in a request body; like ScyllaDB Manager's UUID type, anything else fails decoding.
type uuidField string

func (u *uuidField) UnmarshalText(text []byte) error {
	s := string(text)
	if s == "" {
		*u = ""
		return nil
	}
	if !isUUID(s) {
		return fmt.Errorf("invalid UUID %q", s)
	}
	*u = uuidField(strings.ToLower(s))
	return nil
}

// taskTypeField is a task type in a request body; unknown types fail decoding as in ScyllaDB Manager.
type taskTypeField string

func (t *taskTypeField) UnmarshalText(text []byte) error {
	if err := validateTaskType(string(text)); err != nil {
		return err
	}
	*t = taskTypeField(text)
	return nil
}

func validateTaskType(t string) error {
	if !slices.Contains(taskTypes, t) {
		return fmt.Errorf("unrecognized TaskType %q", t)
	}
	return nil
}

// clusterIn is the request body of cluster create and update.
type clusterIn struct {
	ID                        uuidField         `json:"id"`
	Name                      string            `json:"name"`
	Labels                    map[string]string `json:"labels"`
	Host                      string            `json:"host"`
	Port                      int               `json:"port"`
	AuthToken                 string            `json:"auth_token"`
	ForceTLSDisabled          bool              `json:"force_tls_disabled"`
	ForceNonSSLSessionPort    bool              `json:"force_non_ssl_session_port"`
	Username                  string            `json:"username"`
	Password                  string            `json:"password"`
	AlternatorAccessKeyID     string            `json:"alternator_access_key_id"`
	AlternatorSecretAccessKey string            `json:"alternator_secret_access_key"`
	SSLUserCertFile           []byte            `json:"ssl_user_cert_file"`
	SSLUserKeyFile            []byte            `json:"ssl_user_key_file"`
	WithoutRepair             bool              `json:"without_repair"`
}

// clusterOut is a cluster in a response. without_repair and the SSL key pair are never returned.
type clusterOut struct {
	ID                        string            `json:"id"`
	Name                      string            `json:"name"`
	Labels                    map[string]string `json:"labels"`
	Host                      string            `json:"host"`
	Port                      int               `json:"port,omitempty"`
	AuthToken                 string            `json:"auth_token,omitempty"`
	ForceTLSDisabled          bool              `json:"force_tls_disabled"`
	ForceNonSSLSessionPort    bool              `json:"force_non_ssl_session_port"`
	Username                  string            `json:"username,omitempty"`
	Password                  string            `json:"password,omitempty"`
	AlternatorAccessKeyID     string            `json:"alternator_access_key_id,omitempty"`
	AlternatorSecretAccessKey string            `json:"alternator_secret_access_key,omitempty"`
}

func (c *cluster) out() clusterOut {
	return clusterOut{
		ID:                     c.ID,
		Name:                   c.Name,
		Labels:                 maps.Clone(c.Labels),
		Host:                   c.Host,
		Port:                   c.Port,
		AuthToken:              c.AuthToken,
		ForceTLSDisabled:       c.ForceTLSDisabled,
		ForceNonSSLSessionPort: c.ForceNonSSLSessionPort,
	}
}

// listOut is a cluster as the list shows it: secrets masked.
func (c *cluster) listOut() clusterOut {
	o := c.out()
	if c.cqlCredentialsSet() {
		o.Username, o.Password = "set", "set"
	} else {
		o.Username, o.Password = "not set", "not set"
	}
	if c.AlternatorAccessKeyID != "" {
		o.AlternatorAccessKeyID, o.AlternatorSecretAccessKey = "set", "set"
	}
	return o
}

// taskIn is the request body of task create and update.
type taskIn struct {
	ID         uuidField         `json:"id"`
	Type       taskTypeField     `json:"type"`
	Name       string            `json:"name"`
	Enabled    bool              `json:"enabled"`
	Labels     map[string]string `json:"labels"`
	Tags       []string          `json:"tags"`
	Schedule   scheduleIn        `json:"schedule"`
	Properties json.RawMessage   `json:"properties"`
}

// taskOut is a task in a GET response.
type taskOut struct {
	ClusterID    string            `json:"cluster_id"`
	Type         string            `json:"type"`
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Labels       map[string]string `json:"labels"`
	Enabled      bool              `json:"enabled,omitempty"`
	Schedule     scheduleOut       `json:"schedule"`
	Properties   json.RawMessage   `json:"properties,omitempty"`
	Tags         []string          `json:"tags,omitempty"`
	Status       string            `json:"status"`
	SuccessCount int               `json:"success_count"`
	ErrorCount   int               `json:"error_count"`
	LastSuccess  *time.Time        `json:"last_success"`
	LastError    *time.Time        `json:"last_error"`
}

// taskListItemOut is a task in a list response; next_activation exists only here.
type taskListItemOut struct {
	taskOut
	NextActivation *time.Time `json:"next_activation,omitempty"`
	Suspended      bool       `json:"suspended"`
	Retry          int        `json:"retry"`
}

func (t *task) out() taskOut {
	o := taskOut{
		ClusterID:  t.ClusterID,
		Type:       t.Type,
		ID:         t.ID,
		Name:       t.Name,
		Labels:     maps.Clone(t.Labels),
		Enabled:    t.Enabled,
		Schedule:   t.Schedule.out(),
		Properties: slices.Clone(t.Properties),
		Tags:       slices.Clone(t.Tags),
		Status:     statusNew,
	}
	if r := t.lastRun(); r != nil {
		o.Status = r.Status
	}
	for _, r := range t.Runs {
		if r.EndTime == nil {
			continue
		}
		end := *r.EndTime
		switch r.Status {
		case statusDone:
			o.SuccessCount++
			o.LastSuccess = &end
		case statusError:
			o.ErrorCount++
			o.LastError = &end
		}
	}
	return o
}

// runOut is a TaskRun in a response.
type runOut struct {
	ClusterID string     `json:"cluster_id"`
	Type      string     `json:"type"`
	TaskID    string     `json:"task_id"`
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	Cause     string     `json:"cause,omitempty"`
	Owner     string     `json:"owner"`
	StartTime time.Time  `json:"start_time"`
	EndTime   *time.Time `json:"end_time,omitempty"`
}

func (r *run) out(t *task) runOut {
	return runOut{
		ClusterID: t.ClusterID,
		Type:      t.Type,
		TaskID:    t.ID,
		ID:        r.ID,
		Status:    r.Status,
		Cause:     r.Cause,
		StartTime: r.StartTime,
		EndTime:   r.EndTime,
	}
}

// hostStatusOut is one host in the cluster status response.
type hostStatusOut struct {
	DC            string  `json:"dc"`
	HostID        string  `json:"host_id"`
	Host          string  `json:"host"`
	Status        string  `json:"status"`
	SSL           bool    `json:"ssl"`
	CQLStatus     string  `json:"cql_status"`
	CQLRttMs      float64 `json:"cql_rtt_ms"`
	CQLCause      string  `json:"cql_cause,omitempty"`
	RESTStatus    string  `json:"rest_status"`
	RESTRttMs     float64 `json:"rest_rtt_ms"`
	RESTCause     string  `json:"rest_cause,omitempty"`
	TotalRAM      int64   `json:"total_ram"`
	Uptime        int64   `json:"uptime"`
	CPUCount      int64   `json:"cpu_count"`
	ScyllaVersion string  `json:"scylla_version"`
	AgentVersion  string  `json:"agent_version"`
}
