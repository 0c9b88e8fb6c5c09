package fakescyllamanager

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// State is a snapshot of everything the fake stores, secrets included, for tests to assert on without the client
// under test. /fake/state serves it as JSON.
type State struct {
	Clusters []ClusterState `json:"clusters"`
	// Tasks holds every task, soft-deleted ones and those of deleted clusters included, in creation order.
	Tasks []TaskState `json:"tasks"`
}

// ClusterState is a stored cluster.
type ClusterState struct {
	ID                        string            `json:"id"`
	Name                      string            `json:"name"`
	Labels                    map[string]string `json:"labels,omitempty"`
	Host                      string            `json:"host"`
	Port                      int               `json:"port,omitempty"`
	AuthToken                 string            `json:"authToken,omitempty"`
	ForceTLSDisabled          bool              `json:"forceTLSDisabled"`
	ForceNonSSLSessionPort    bool              `json:"forceNonSSLSessionPort"`
	Username                  string            `json:"username,omitempty"`
	Password                  string            `json:"password,omitempty"`
	AlternatorAccessKeyID     string            `json:"alternatorAccessKeyID,omitempty"`
	AlternatorSecretAccessKey string            `json:"alternatorSecretAccessKey,omitempty"`
	SSLUserCertSet            bool              `json:"sslUserCertSet"`
	Suspended                 bool              `json:"suspended"`
}

// TaskState is a stored task.
type TaskState struct {
	ClusterID string            `json:"clusterID"`
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Name      string            `json:"name"`
	Enabled   bool              `json:"enabled"`
	Deleted   bool              `json:"deleted"`
	Labels    map[string]string `json:"labels,omitempty"`
	Tags      []string          `json:"tags,omitempty"`
	Schedule  ScheduleState     `json:"schedule"`
	// Properties are stored as sent, {} when none were.
	Properties json.RawMessage `json:"properties"`
	// Runs are newest first.
	Runs []RunState `json:"runs,omitempty"`
}

// ScheduleState is a stored schedule, with cron as its plain spec.
type ScheduleState struct {
	Cron       string     `json:"cron,omitempty"`
	StartDate  *time.Time `json:"startDate,omitempty"`
	Interval   string     `json:"interval,omitempty"`
	Window     []string   `json:"window,omitempty"`
	Timezone   string     `json:"timezone,omitempty"`
	NumRetries int        `json:"numRetries,omitempty"`
	RetryWait  string     `json:"retryWait,omitempty"`
}

// RunState is a recorded run.
type RunState struct {
	ID        string     `json:"id"`
	Status    string     `json:"status"`
	Cause     string     `json:"cause,omitempty"`
	StartTime time.Time  `json:"startTime"`
	EndTime   *time.Time `json:"endTime,omitempty"`
	// Uploads are the objects a backup run uploaded to the locations with an S3 endpoint, per location.
	Uploads []Upload `json:"uploads,omitempty"`
}

// State returns a deep copy of the stored clusters and tasks.
func (s *Server) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := State{Clusters: []ClusterState{}, Tasks: []TaskState{}}
	for _, id := range s.clusterOrder {
		c := s.clusters[id]
		st.Clusters = append(st.Clusters, ClusterState{
			ID:                        c.ID,
			Name:                      c.Name,
			Labels:                    maps.Clone(c.Labels),
			Host:                      c.Host,
			Port:                      c.Port,
			AuthToken:                 c.AuthToken,
			ForceTLSDisabled:          c.ForceTLSDisabled,
			ForceNonSSLSessionPort:    c.ForceNonSSLSessionPort,
			Username:                  c.Username,
			Password:                  c.Password,
			AlternatorAccessKeyID:     c.AlternatorAccessKeyID,
			AlternatorSecretAccessKey: c.AlternatorSecretAccessKey,
			SSLUserCertSet:            len(c.SSLUserCert) != 0,
			Suspended:                 s.clusterSuspended(c.ID),
		})
	}
	for _, id := range s.taskOrder {
		t := s.tasks[id]
		ts := TaskState{
			ClusterID:  t.ClusterID,
			ID:         t.ID,
			Type:       t.Type,
			Name:       t.Name,
			Enabled:    t.Enabled,
			Deleted:    t.Deleted,
			Labels:     maps.Clone(t.Labels),
			Tags:       slices.Clone(t.Tags),
			Schedule:   t.Schedule.state(),
			Properties: slices.Clone(t.Properties),
		}
		for i := len(t.Runs) - 1; i >= 0; i-- {
			r := t.Runs[i]
			ts.Runs = append(ts.Runs, RunState{ID: r.ID, Status: r.Status, Cause: r.Cause, StartTime: r.StartTime, EndTime: r.EndTime, Uploads: cloneUploads(r.Uploads)})
		}
		st.Tasks = append(st.Tasks, ts)
	}
	return st
}

func (s schedule) state() ScheduleState {
	st := ScheduleState{
		Cron:       s.Cron.spec,
		StartDate:  timeOrNil(s.StartDate),
		Window:     slices.Clone(s.Window),
		Timezone:   s.Timezone,
		NumRetries: s.NumRetries,
	}
	if s.Interval != 0 {
		st.Interval = formatDuration(s.Interval)
	}
	if s.RetryWait != 0 {
		st.RetryWait = formatDuration(s.RetryWait)
	}
	return st
}

// LiveTasks returns the tasks of State that are not deleted.
func (st State) LiveTasks() []TaskState {
	var out []TaskState
	for _, t := range st.Tasks {
		if !t.Deleted {
			out = append(out, t)
		}
	}
	return out
}

func cloneUploads(in []Upload) []Upload {
	if in == nil {
		return nil
	}
	out := make([]Upload, 0, len(in))
	for _, u := range in {
		u.Keys = slices.Clone(u.Keys)
		out = append(out, u)
	}
	return out
}

// UploadedKeys returns the keys the runs of the cluster's backup tasks uploaded to bucket, sorted and without
// duplicates; an empty clusterID or bucket matches any.
func (st State) UploadedKeys(clusterID, bucket string) []string {
	var keys []string
	for _, t := range st.Tasks {
		if clusterID != "" && t.ClusterID != clusterID {
			continue
		}
		for _, r := range t.Runs {
			for _, u := range r.Uploads {
				if bucket == "" || u.Bucket == bucket {
					keys = append(keys, u.Keys...)
				}
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}
