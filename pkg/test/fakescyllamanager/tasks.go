package fakescyllamanager

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// task builds a stored task from a request body.
func (in taskIn) task(clusterID, id, taskType string) *task {
	return &task{
		ClusterID:  clusterID,
		ID:         id,
		Type:       taskType,
		Name:       in.Name,
		Enabled:    in.Enabled,
		Labels:     maps.Clone(in.Labels),
		Tags:       slices.Clone(in.Tags),
		Schedule:   in.Schedule.schedule(),
		Properties: normalizeProperties(in.Properties),
	}
}

func (s *Server) addTaskLocked(t *task) {
	s.tasks[t.ID] = t
	s.taskOrder = append(s.taskOrder, t.ID)
}

// lookupTaskLocked resolves the cluster and the task of a task route. The task is found by ID or by name; a
// deleted task is a 500, as in ScyllaDB Manager.
func (s *Server) lookupTaskLocked(clusterIDOrName, taskType, taskIDOrName string) (*cluster, *task, *apiError) {
	c, aErr := s.lookupClusterLocked(clusterIDOrName)
	if aErr != nil {
		return nil, nil, aErr
	}
	if err := validateTaskType(taskType); err != nil {
		return nil, nil, badRequest("%v", err)
	}
	if isUUID(taskIDOrName) {
		t := s.tasks[strings.ToLower(taskIDOrName)]
		if t == nil || t.ClusterID != c.ID || t.Type != taskType {
			return nil, nil, notFound("load task %q", taskIDOrName)
		}
		if t.Deleted {
			return nil, nil, internalError("load task %q: task %q is deleted", taskIDOrName, t.ID)
		}
		return c, t, nil
	}
	for _, id := range s.taskOrder {
		t := s.tasks[id]
		if !t.Deleted && t.ClusterID == c.ID && t.Type == taskType && t.Name == taskIDOrName {
			return c, t, nil
		}
	}
	return nil, nil, notFound("load task %q", taskIDOrName)
}

func (s *Server) listTasks(r *http.Request, clusterID string) (result, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, aErr := s.lookupClusterLocked(clusterID)
	if aErr != nil {
		return result{}, aErr
	}
	all, aErr := parseBoolParam(r, "all", false)
	if aErr != nil {
		return result{}, aErr
	}
	if _, aErr := parseBoolParam(r, "short", false); aErr != nil {
		return result{}, aErr
	}
	q := r.URL.Query()
	taskType := q.Get("type")
	if taskType != "" {
		if err := validateTaskType(taskType); err != nil {
			return result{}, badRequest("%v", err)
		}
	}
	status := q.Get("status")
	if status != "" && !slices.Contains(taskStatuses, status) {
		return result{}, badRequest("unrecognized Status %q", status)
	}
	taskID := q.Get("task_id")
	if taskID != "" {
		if !isUUID(taskID) {
			return result{}, badRequest("invalid task ID %q", taskID)
		}
		taskID = strings.ToLower(taskID)
	}

	now := s.now()
	// A nil slice is rendered as null, as ScyllaDB Manager does for an empty result.
	var items []*taskListItemOut
	for _, id := range s.taskOrder {
		t := s.tasks[id]
		switch {
		case t.ClusterID != c.ID, t.Deleted, !all && !t.Enabled:
			continue
		case taskType != "" && t.Type != taskType, taskID != "" && t.ID != taskID:
			continue
		}
		item := &taskListItemOut{
			taskOut:        t.out(),
			NextActivation: t.Schedule.nextActivation(now),
			Suspended:      s.clusterSuspended(c.ID) && t.Type != typeHealthcheck && t.Type != typeSuspend,
		}
		if status != "" && item.Status != status {
			continue
		}
		items = append(items, item)
	}
	slices.SortStableFunc(items, func(a, b *taskListItemOut) int {
		switch {
		case a.NextActivation == nil && b.NextActivation == nil:
			return 0
		case a.NextActivation == nil:
			return 1
		case b.NextActivation == nil:
			return -1
		}
		return cmp.Compare(a.NextActivation.Unix(), b.NextActivation.Unix())
	})
	return ok(items), nil
}

// validateTargetLocked runs the target validation of backup and repair tasks.
func (s *Server) validateTargetLocked(c *cluster, taskType string, properties []byte) *apiError {
	switch taskType {
	case typeBackup:
		return s.validateBackupTarget(c, properties)
	case typeRepair:
		return s.validateRepairTarget(c, properties)
	}
	return nil
}

// validateTaskLocked applies ScyllaDB Manager's task validation: type and name rules, then name uniqueness among
// the cluster's tasks of the same type.
func (s *Server) validateTaskLocked(t *task) *apiError {
	var errs []string
	if t.Type == "" {
		errs = append(errs, "no TaskType specified")
	}
	if isUUID(t.Name) {
		errs = append(errs, "name cannot be an UUID")
	}
	if len(errs) > 0 {
		return validationError("invalid task: %s", strings.Join(errs, "; "))
	}
	if t.Name == "" {
		return nil
	}
	for _, id := range s.taskOrder {
		other := s.tasks[id]
		if other.ID != t.ID && !other.Deleted && other.ClusterID == t.ClusterID && other.Type == t.Type && other.Name == t.Name {
			return internalError("task name %s is already used", t.Name)
		}
	}
	return nil
}

// sleepForBackupValidation waits as long as backup validation is set to take; it reports whether the client is
// still waiting.
func (s *Server) sleepForBackupValidation(r *http.Request, taskType string) bool {
	if taskType != typeBackup {
		return true
	}
	s.mu.Lock()
	d := s.knobs.BackupValidationLatency.Duration
	s.mu.Unlock()
	return sleepCtx(r, d)
}

func (s *Server) createTask(r *http.Request, clusterID string) (result, *apiError) {
	var in taskIn
	decodeErr := decodeJSON(r, &in)
	if decodeErr == nil && !s.sleepForBackupValidation(r, string(in.Type)) {
		return result{}, internalError("create backup target: %v", r.Context().Err())
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	c, aErr := s.lookupClusterLocked(clusterID)
	if aErr != nil {
		return result{}, aErr
	}
	if decodeErr != nil {
		return result{}, badRequest("%v", decodeErr)
	}
	if in.ID != "" {
		return result{}, badRequest("unexpected ID %q", in.ID)
	}
	t := in.task(c.ID, newUUID(), string(in.Type))
	if aErr := s.validateTargetLocked(c, t.Type, t.Properties); aErr != nil {
		return result{}, aErr.wrap("create %s target", t.Type)
	}
	if aErr := s.validateTaskLocked(t); aErr != nil {
		return result{}, aErr.wrap("create task")
	}
	if s.clusterSuspended(c.ID) && t.Type != typeHealthcheck && t.Type != typeSuspend {
		return result{}, validationError("create task: cluster is suspended, scheduling tasks is not allowed")
	}
	runNow, err := t.Schedule.validateCreate(s.now())
	if err != nil {
		return result{}, internalError("create task: %v", err)
	}
	t.Schedule.ScheduledAt = s.now()
	s.addTaskLocked(t)
	var after func(context.Context)
	if runNow && t.Enabled {
		_, after = s.startRunLocked(c, t)
	}
	loc := r.URL.ResolveReference(&url.URL{Path: path.Join("task", t.Type, t.ID)})
	return result{status: http.StatusCreated, location: loc.String(), after: after}, nil
}

func (s *Server) updateTask(r *http.Request, rt route, clusterID string) (result, *apiError) {
	var in taskIn
	decodeErr := decodeJSON(r, &in)
	if decodeErr == nil && !s.sleepForBackupValidation(r, rt.taskType) {
		return result{}, internalError("update task %q: %v", rt.taskID, r.Context().Err())
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	c, t, aErr := s.lookupTaskLocked(clusterID, rt.taskType, rt.taskID)
	if aErr != nil {
		return result{}, aErr
	}
	if decodeErr != nil {
		return result{}, badRequest("%v", decodeErr)
	}
	// The type and ID come from the path; the body's are ignored.
	next := in.task(t.ClusterID, t.ID, t.Type)
	next.Runs = t.Runs
	next.Schedule.ScheduledAt = s.now()
	if aErr := s.validateTargetLocked(c, next.Type, next.Properties); aErr != nil {
		return result{}, aErr.wrap("update task %q", t.ID)
	}
	if aErr := s.validateTaskLocked(next); aErr != nil {
		return result{}, aErr.wrap("update task %q", t.ID)
	}
	s.tasks[t.ID] = next
	return ok(next.out()), nil
}

// deleteTaskLocked soft-deletes a task: it is disabled, its name is freed and it is hidden from lists.
func (s *Server) deleteTaskLocked(t *task) {
	s.stopRunLocked(t)
	t.Deleted = true
	t.Enabled = false
	t.Name = ""
}

// startRunLocked records a run that ends in the status the knobs set (DONE by default). A backup run with
// locations the fake can reach (Knobs.S3Endpoints) stays RUNNING until its upload, returned to be run once the
// lock is released, is over.
func (s *Server) startRunLocked(c *cluster, t *task) (*run, func(context.Context)) {
	status := s.knobs.RunStatus
	if status == "" {
		status = statusDone
	}
	var (
		targets   []*uploadTarget
		props     backupProperties
		topo      Topology
		keyspaces []string
	)
	if t.Type == typeBackup && status != statusError {
		targets, props, topo, keyspaces = s.planBackupTargetsLocked(c, t)
	}
	runStatus := status
	if len(targets) > 0 {
		runStatus = statusRunning
	}
	r := s.newRunLocked(c, t, runStatus, "")
	if status == statusError {
		r.Cause = "injected run failure"
	}
	if len(targets) == 0 {
		return r, nil
	}
	u := s.planBackupUploadLocked(c, t, r, targets, props, topo, keyspaces)
	u.finalStatus = status
	return r, func(ctx context.Context) { s.uploadBackup(ctx, u) }
}

// newRunLocked appends a run with the given status to t, with a progress document for backup and repair.
func (s *Server) newRunLocked(c *cluster, t *task, status, cause string) *run {
	now := s.now()
	r := &run{ID: newUUID(), Status: status, Cause: cause, StartTime: now}
	ended := status != statusRunning && status != statusWaiting && status != statusStopping && status != statusNew
	if ended {
		r.EndTime = &now
	}
	switch t.Type {
	case typeBackup:
		p := map[string]any{
			"snapshot_tag": "sm_" + now.Format("20060102150405") + "UTC",
			"dcs":          datacenterNames(s.topology(c.Host)),
			"stage":        "",
			"size":         0, "uploaded": 0, "skipped": 0, "failed": 0,
			"started_at": now, "completed_at": r.EndTime,
		}
		if status == statusDone {
			p["stage"] = "DONE"
		}
		r.Progress = mustJSON(p)
	case typeRepair:
		r.Progress = mustJSON(map[string]any{
			"token_ranges": 0, "success": 0, "error": 0, "started_at": now, "completed_at": r.EndTime, "duration_ms": 0,
			"intensity": 0, "max_intensity": 0, "parallel": 0, "max_parallel": 0,
		})
	}
	t.Runs = append(t.Runs, r)
	return r
}

// stopRunLocked stops the task's running run, if any.
func (s *Server) stopRunLocked(t *task) {
	r := t.lastRun()
	if r == nil || r.Status != statusRunning {
		return
	}
	now := s.now()
	r.Status = statusStopped
	r.EndTime = &now
}

func (s *Server) taskHistoryLocked(r *http.Request, t *task) (result, *apiError) {
	limit := 10
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil {
			return result{}, badRequest("%v", err)
		}
		if n <= 0 {
			return result{}, internalError("load task %q history: LIMIT must be strictly positive", t.ID)
		}
		limit = n
	}
	runs := make([]runOut, 0, min(limit, len(t.Runs)))
	for i := len(t.Runs) - 1; i >= 0 && len(runs) < limit; i-- {
		runs = append(runs, t.Runs[i].out(t))
	}
	return ok(runs), nil
}

// emptyProgress is what a task that never ran reports as progress.
var emptyProgress = map[string]string{
	typeBackup: `{"snapshot_tag":"","stage":"","size":0,"uploaded":0,"skipped":0,"failed":0,"started_at":null,"completed_at":null}`,
	typeRepair: `{"token_ranges":0,"success":0,"error":0,"started_at":null,"completed_at":null,"duration_ms":0,` +
		`"intensity":0,"max_intensity":0,"parallel":0,"max_parallel":0}`,
}

// runProgressOut is a run with its progress, null when none was recorded.
type runProgressOut struct {
	Run      runOut    `json:"run"`
	Progress rawOrNull `json:"progress"`
}

// rawOrNull is a raw JSON value that encodes as null when empty.
type rawOrNull []byte

func (r rawOrNull) MarshalJSON() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

func (s *Server) taskRunProgressLocked(t *task, ref string) (result, *apiError) {
	var r *run
	switch {
	case ref == "latest":
		r = t.lastRun()
		if r == nil {
			return ok(runProgressOut{
				Run:      runOut{ClusterID: t.ClusterID, Type: t.Type, TaskID: t.ID, ID: "00000000-0000-0000-0000-000000000000", Status: statusNew},
				Progress: rawOrNull(emptyProgress[t.Type]),
			}), nil
		}
	case strings.HasPrefix(ref, "~"):
		n, err := strconv.Atoi(ref[1:])
		if err != nil || n < 0 {
			return result{}, badRequest("invalid run %q: use a run ID, latest or ~N", ref)
		}
		if n >= len(t.Runs) {
			return result{}, notFound("load task %q run %s", t.ID, ref)
		}
		r = t.Runs[len(t.Runs)-1-n]
	case isUUID(ref):
		for _, candidate := range t.Runs {
			if candidate.ID == strings.ToLower(ref) {
				r = candidate
			}
		}
		if r == nil {
			return result{}, notFound("load task %q runs: run %q", t.ID, ref)
		}
	default:
		return result{}, badRequest("invalid run %q: use a run ID, latest or ~N", ref)
	}
	switch t.Type {
	case typeHealthcheck, typeSuspend:
		return result{}, badRequest("unsupported task type %s", t.Type)
	}
	return ok(runProgressOut{Run: r.out(t), Progress: rawOrNull(r.Progress)}), nil
}

// RecordRun adds a run with the given status and cause to a task, as if ScyllaDB Manager had run it now, and
// returns the run's ID. Terminal statuses get an end time.
func (s *Server) RecordRun(clusterID, taskID, status, cause string) (string, error) {
	if !slices.Contains(taskStatuses, status) {
		return "", fmt.Errorf("unknown run status %q", status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clusters[strings.ToLower(clusterID)]
	if c == nil {
		return "", fmt.Errorf("%w %q", errUnknownCluster, clusterID)
	}
	t := s.tasks[strings.ToLower(taskID)]
	if t == nil || t.ClusterID != c.ID || t.Deleted {
		return "", fmt.Errorf("unknown task %q of cluster %q", taskID, clusterID)
	}
	return s.newRunLocked(c, t, status, cause).ID, nil
}

func mustJSON(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("can't encode %T: %v", v, err))
	}
	return data
}

// timeOrNil converts a zero time to nil.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
