package managerclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// RunLatest selects the latest run in TaskRunProgress. For a task that never ran, ScyllaDB Manager answers with a
// synthetic run in status NEW.
const RunLatest = "latest"

// PreviousRun selects the n-th run before the latest in TaskRunProgress; PreviousRun(0) is the latest run.
func PreviousRun(n int) string {
	return "~" + strconv.Itoa(n)
}

func taskPath(clusterID string, taskType TaskType, taskID string) string {
	return clusterPath(clusterID) + "/task/" + url.PathEscape(string(taskType)) + "/" + url.PathEscape(taskID)
}

func requireTaskArgs(clusterID string, taskType TaskType, taskID string) error {
	return requireArgs("cluster ID", clusterID, "task type", string(taskType), "task ID", taskID)
}

// ListTasksOptions filter a task list.
type ListTasksOptions struct {
	// All includes disabled tasks; without it only enabled tasks are listed.
	All bool
	// Type keeps tasks of this type.
	Type TaskType
	// Status keeps tasks whose last run has this status (NEW for tasks that never ran).
	Status TaskStatus
	// TaskID keeps the task with this ID.
	TaskID string
	// Short asks ScyllaDB Manager for a shorter listing.
	Short bool
}

func (o ListTasksOptions) query() url.Values {
	q := url.Values{}
	if o.All {
		q.Set("all", "true")
	}
	if o.Type != "" {
		q.Set("type", string(o.Type))
	}
	if o.Status != "" {
		q.Set("status", string(o.Status))
	}
	if o.TaskID != "" {
		q.Set("task_id", o.TaskID)
	}
	if o.Short {
		q.Set("short", "true")
	}
	return q
}

// ListTasks returns the cluster's tasks, sorted by next activation, those without one last. Deleted tasks are never
// listed. The result is never nil, although ScyllaDB Manager may answer JSON null for an empty list.
func (c *Client) ListTasks(ctx context.Context, clusterID string, opts ListTasksOptions) ([]TaskListItem, error) {
	if err := requireArgs("cluster ID", clusterID); err != nil {
		return nil, err
	}
	var tasks []TaskListItem
	req := request{method: http.MethodGet, path: clusterPath(clusterID) + "/tasks", query: opts.query()}
	if _, err := c.do(ctx, req, &tasks); err != nil {
		return nil, err
	}
	if tasks == nil {
		tasks = []TaskListItem{}
	}
	return tasks, nil
}

// GetTask returns a task by ID or name. A deleted task is an error with status 500, not 404.
func (c *Client) GetTask(ctx context.Context, clusterID string, taskType TaskType, taskIDOrName string) (*Task, error) {
	if err := requireTaskArgs(clusterID, taskType, taskIDOrName); err != nil {
		return nil, err
	}
	task := &Task{}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: taskPath(clusterID, taskType, taskIDOrName)}, task); err != nil {
		return nil, err
	}
	return task, nil
}

// CreateTask creates a task and returns its ID. ScyllaDB Manager validates the task against the live cluster first,
// so this call is bounded by the task write timeout rather than the request timeout.
func (c *Client) CreateTask(ctx context.Context, clusterID string, task *TaskUpdate) (string, error) {
	if task == nil {
		return "", errors.New("task must not be nil")
	}
	if err := requireArgs("cluster ID", clusterID, "task type", string(task.Type)); err != nil {
		return "", err
	}
	req := request{method: http.MethodPost, path: clusterPath(clusterID) + "/tasks", body: task, timeout: c.taskWriteTimeout}
	resp, err := c.do(ctx, req, nil)
	if err != nil {
		return "", err
	}
	return idFromLocation(resp)
}

// UpdateTask replaces a task and returns it as stored. The type and ID come from the arguments; task.Type must be
// empty or equal to taskType.
func (c *Client) UpdateTask(ctx context.Context, clusterID string, taskType TaskType, taskID string, task *TaskUpdate) (*Task, error) {
	if task == nil {
		return nil, errors.New("task must not be nil")
	}
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return nil, err
	}
	if task.Type != "" && task.Type != taskType {
		return nil, fmt.Errorf("task type %q differs from the updated task's type %q", task.Type, taskType)
	}
	body := *task
	body.Type = taskType
	updated := &Task{}
	req := request{method: http.MethodPut, path: taskPath(clusterID, taskType, taskID), body: &body, timeout: c.taskWriteTimeout}
	if _, err := c.do(ctx, req, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// DeleteTask soft-deletes a task: it disappears from lists, a GET of it fails with 500, and its name is free again.
func (c *Client) DeleteTask(ctx context.Context, clusterID string, taskType TaskType, taskID string) error {
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return err
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: taskPath(clusterID, taskType, taskID)}, nil)
	return err
}

// StartTaskOptions tune StartTask.
type StartTaskOptions struct {
	// NoContinue restarts the run from scratch instead of resuming the last one.
	NoContinue bool
}

// StartTask starts a run of the task now.
func (c *Client) StartTask(ctx context.Context, clusterID string, taskType TaskType, taskID string, opts StartTaskOptions) error {
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return err
	}
	q := url.Values{}
	if opts.NoContinue {
		q.Set("continue", "false")
	}
	_, err := c.do(ctx, request{method: http.MethodPut, path: taskPath(clusterID, taskType, taskID) + "/start", query: q}, nil)
	return err
}

// StopTaskOptions tune StopTask.
type StopTaskOptions struct {
	// Disable also disables the task so it is not scheduled again.
	Disable bool
}

// StopTask stops the running run of the task, if any.
func (c *Client) StopTask(ctx context.Context, clusterID string, taskType TaskType, taskID string, opts StopTaskOptions) error {
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return err
	}
	q := url.Values{}
	if opts.Disable {
		q.Set("disable", "true")
	}
	_, err := c.do(ctx, request{method: http.MethodPut, path: taskPath(clusterID, taskType, taskID) + "/stop", query: q}, nil)
	return err
}

// TaskHistory returns the task's last runs, newest first. A limit of zero uses the server's default of 10.
func (c *Client) TaskHistory(ctx context.Context, clusterID string, taskType TaskType, taskID string, limit int) ([]TaskRun, error) {
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return nil, err
	}
	if limit < 0 {
		return nil, fmt.Errorf("limit must not be negative, got %d", limit)
	}
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var runs []TaskRun
	if _, err := c.do(ctx, request{method: http.MethodGet, path: taskPath(clusterID, taskType, taskID) + "/history", query: q}, &runs); err != nil {
		return nil, err
	}
	if runs == nil {
		runs = []TaskRun{}
	}
	return runs, nil
}

// TaskRunProgress returns a run and its progress. run is a run ID, RunLatest, or PreviousRun(n).
func (c *Client) TaskRunProgress(ctx context.Context, clusterID string, taskType TaskType, taskID, run string) (*TaskRunProgress, error) {
	if err := requireTaskArgs(clusterID, taskType, taskID); err != nil {
		return nil, err
	}
	if err := requireArgs("run", run); err != nil {
		return nil, err
	}
	progress := &TaskRunProgress{}
	req := request{method: http.MethodGet, path: taskPath(clusterID, taskType, taskID) + "/" + url.PathEscape(run)}
	if _, err := c.do(ctx, req, progress); err != nil {
		return nil, err
	}
	return progress, nil
}
