package scylladbmanagertask

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTypes are the condition types the controller owns in a ScyllaDBManagerTask's status, in the order it
// writes them.
var conditionTypes = []string{
	controllerhelpers.AvailableCondition,
	controllerhelpers.ProgressingCondition,
	controllerhelpers.DegradedCondition,
}

// calculateStatus returns the status fields the controller owns in task after a sync that ended in o. now is the
// lastTransitionTime of conditions that change status.
func calculateStatus(task *scyllav1alpha1.ScyllaDBManagerTask, o *outcome, now metav1.Time) *scyllav1alpha1.ScyllaDBManagerTaskStatus {
	status := &scyllav1alpha1.ScyllaDBManagerTaskStatus{
		ObservedGeneration: new(task.Generation),
	}

	switch {
	case o.managerTask != nil:
		setManagerView(status, o.managerTask)
	case !o.managerRead && !o.moved:
		// ScyllaDB Manager was not read: what it last said still holds as far as anyone knows.
		previous := task.Status.DeepCopy()
		status.TaskID = previous.TaskID
		status.LastRunStatus = previous.LastRunStatus
		status.NextActivation = previous.NextActivation
		status.LastSuccess = previous.LastSuccess
		status.LastError = previous.LastError
		status.SuccessCount = previous.SuccessCount
		status.ErrorCount = previous.ErrorCount
	}

	available := metav1.Condition{Type: controllerhelpers.AvailableCondition}
	switch {
	case o.managerTask != nil:
		available.Status, available.Reason = metav1.ConditionTrue, taskScheduledReason
	case o.managerRead || o.waiting != nil:
		available.Status, available.Reason = metav1.ConditionFalse, taskNotScheduledReason
		available.Message = "ScyllaDB Manager does not hold the task"
		if o.waiting != nil {
			available.Message = o.waiting.Message
		}
	default:
		available.Status, available.Reason = metav1.ConditionUnknown, managerStateUnknownReason
		available.Message = "ScyllaDB Manager's state of the task is unknown"
		if o.failure != nil {
			available.Message = o.failure.Message
		}
	}

	progressing := metav1.Condition{Type: controllerhelpers.ProgressingCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if o.waiting != nil {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, o.waiting.Reason, o.waiting.Message
	}

	degraded := metav1.Condition{Type: controllerhelpers.DegradedCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if o.failure != nil {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, o.failure.Reason, o.failure.Message
	}

	status.Conditions = []metav1.Condition{available, progressing, degraded}
	for i := range status.Conditions {
		status.Conditions[i].ObservedGeneration = task.Generation
	}
	controllerhelpers.SetTransitionTimes(status.Conditions, task.Status.Conditions, now)
	return status
}

// setManagerView fills the status fields that reflect ScyllaDB Manager's view of the task from item.
func setManagerView(status *scyllav1alpha1.ScyllaDBManagerTaskStatus, item *managerclient.TaskListItem) {
	status.TaskID = new(item.ID)
	if len(item.Status) != 0 {
		status.LastRunStatus = new(string(item.Status))
	}
	status.NextActivation = statusTime(item.NextActivation)
	status.LastSuccess = statusTime(item.LastSuccess)
	status.LastError = statusTime(item.LastError)
	status.SuccessCount = new(int64(item.SuccessCount))
	status.ErrorCount = new(int64(item.ErrorCount))
}

// statusTime converts a ScyllaDB Manager time to the precision the API server keeps, so that an unchanged time
// compares equal to the one read back.
func statusTime(t *time.Time) *metav1.Time {
	if t == nil || t.IsZero() {
		return nil
	}
	return new(metav1.NewTime(t.UTC().Truncate(time.Second)))
}

// updateStatus applies status, the fields the controller owns, to task's status with server-side apply under the
// manager-controller's field manager, unless task already has them. Fields left unset in status are released, and so
// removed; fields others own stay.
func (c *Controller) updateStatus(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, status *scyllav1alpha1.ScyllaDBManagerTaskStatus) error {
	_, err := c.statusApplier().ApplyStatus(ctx, task, status)
	return err
}

// taskStatusApplier applies the status fields of a ScyllaDBManagerTask the controller owns.
type taskStatusApplier = controllerhelpers.StatusApplier[*scyllav1alpha1.ScyllaDBManagerTask, scyllav1alpha1.ScyllaDBManagerTaskStatus, scyllav1alpha1applyconfigurations.ScyllaDBManagerTaskStatusApplyConfiguration]

// statusApplier returns the applier of the status fields the controller owns.
func (c *Controller) statusApplier() *taskStatusApplier {
	return &taskStatusApplier{
		Kind:           "ScyllaDBManagerTask",
		FieldManager:   naming.ManagerControllerFieldManager,
		ConditionTypes: conditionTypes,
		Status: func(task *scyllav1alpha1.ScyllaDBManagerTask) *scyllav1alpha1.ScyllaDBManagerTaskStatus {
			return &task.Status
		},
		Conditions: func(status *scyllav1alpha1.ScyllaDBManagerTaskStatus) *[]metav1.Condition { return &status.Conditions },
		Apply: func(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, status *scyllav1alpha1applyconfigurations.ScyllaDBManagerTaskStatusApplyConfiguration, opts metav1.ApplyOptions) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
			return c.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(task.Namespace).ApplyStatus(ctx, scyllav1alpha1applyconfigurations.ScyllaDBManagerTask(task.Name, task.Namespace).WithUID(task.UID).WithStatus(status), opts)
		},
		Written: c.scyllaDBManagerTasks.Written,
	}
}

// makeStatusAnnotation returns the value of naming.ScyllaDBManagerTaskStatusAnnotation for item, task's task as
// ScyllaDB Manager holds it: a JSON scyllav1.BackupTaskStatus or scyllav1.RepairTaskStatus, the shape the ScyllaCluster
// controller decodes into status.backups[] and status.repairs[] of the ScyllaCluster the task was translated from.
// Like the established operator's ScyllaCluster status, it reflects ScyllaDB Manager's view, not the spec. Errors are
// left out: the ScyllaCluster controller reads them from the Degraded condition.
func makeStatusAnnotation(item *managerclient.TaskListItem) (string, error) {
	taskStatus := scyllav1.TaskStatus{
		SchedulerTaskStatus: makeSchedulerTaskStatus(&item.Schedule),
		Name:                item.Name,
		ID:                  new(item.ID),
	}
	if len(item.Labels) != 0 {
		taskStatus.Labels = maps.Clone(item.Labels)
	}

	var value any
	switch item.Type {
	case managerclient.TaskTypeBackup:
		var p managerclient.BackupProperties
		if err := decodeProperties(item.Properties, &p); err != nil {
			return "", fmt.Errorf("can't decode the properties of ScyllaDB Manager task %q: %w", item.ID, err)
		}
		value = scyllav1.BackupTaskStatus{
			TaskStatus:       taskStatus,
			DC:               nilIfEmpty(p.DC),
			Keyspace:         nilIfEmpty(p.Keyspace),
			Location:         nilIfEmpty(p.Location),
			RateLimit:        nilIfEmpty(p.RateLimit),
			Retention:        copyPointer(p.Retention),
			SnapshotParallel: nilIfEmpty(p.SnapshotParallel),
			UploadParallel:   nilIfEmpty(p.UploadParallel),
		}
	case managerclient.TaskTypeRepair:
		var p managerclient.RepairProperties
		if err := decodeProperties(item.Properties, &p); err != nil {
			return "", fmt.Errorf("can't decode the properties of ScyllaDB Manager task %q: %w", item.ID, err)
		}
		s := scyllav1.RepairTaskStatus{
			TaskStatus:      taskStatus,
			DC:              nilIfEmpty(p.DC),
			FailFast:        copyPointer(p.FailFast),
			Parallel:        copyPointer(p.Parallel),
			Keyspace:        nilIfEmpty(p.Keyspace),
			IgnoreDownHosts: copyPointer(p.IgnoreDownHosts),
		}
		if p.Intensity != nil {
			s.Intensity = new(strconv.FormatFloat(*p.Intensity, 'f', -1, 64))
		}
		if p.SmallTableThreshold != nil {
			s.SmallTableThreshold = new(validation.FormatSize(*p.SmallTableThreshold))
		}
		if len(p.Host) != 0 {
			s.Host = new(p.Host)
		}
		value = s
	default:
		return "", fmt.Errorf("can't describe ScyllaDB Manager task %q of type %q", item.ID, item.Type)
	}

	data, err := json.Marshal(value)
	if err != nil {
		return "", fmt.Errorf("can't encode the status of ScyllaDB Manager task %q: %w", item.ID, err)
	}
	return string(data), nil
}

// makeSchedulerTaskStatus returns the schedule fields of the status annotation.
func makeSchedulerTaskStatus(schedule *managerclient.Schedule) scyllav1.SchedulerTaskStatus {
	s := scyllav1.SchedulerTaskStatus{
		NumRetries: new(int64(schedule.NumRetries)),
	}
	if schedule.StartDate != nil && !schedule.StartDate.IsZero() {
		s.StartDate = new(schedule.StartDate.UTC().Format(time.RFC3339))
	}
	if len(schedule.Interval) != 0 {
		s.Interval = new(schedule.Interval)
	}
	if d, err := validation.ParseManagerDuration(schedule.RetryWait); err == nil && d != 0 {
		s.RetryWait = &metav1.Duration{Duration: d}
	}
	if len(schedule.Cron) != 0 {
		s.Cron = new(schedule.Cron)
	}
	if len(schedule.Timezone) != 0 {
		s.Timezone = new(schedule.Timezone)
	}
	return s
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
