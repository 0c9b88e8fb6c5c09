package scylladbbackupentry

import (
	"context"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTypes are the condition types the controller owns in a ScyllaDBBackupEntry's status.
var conditionTypes = []string{
	controllerhelpers.AvailableCondition,
	controllerhelpers.ProgressingCondition,
	controllerhelpers.DegradedCondition,
}

// calculateStatus returns the status fields the controller owns in entry after a sync that ended in o. now is the
// time of conditions that change status and of a lastOperation that changed.
func calculateStatus(entry *scyllav1alpha1.ScyllaDBBackupEntry, o *outcome, now metav1.Time) *scyllav1alpha1.ScyllaDBBackupEntryStatus {
	status := &scyllav1alpha1.ScyllaDBBackupEntryStatus{
		ObservedGeneration: new(entry.Generation),
		ClusterDeletedAt:   o.clusterDeletedAt.DeepCopy(),
		PurgeAfter:         o.purgeAfter.DeepCopy(),
		LastOperation:      entry.Status.LastOperation.DeepCopy(),
		Objects:            entry.Status.Objects,
		Bytes:              entry.Status.Bytes,
	}
	if o.inventory != nil {
		status.Objects, status.Bytes = new(o.inventory.objects), new(o.inventory.bytes)
	}
	if o.lastOperation != nil {
		op := o.lastOperation.DeepCopy()
		op.Time = now
		if previous := entry.Status.LastOperation; previous != nil && previous.Type == op.Type && previous.State == op.State &&
			previous.Message == op.Message && apiequality.Semantic.DeepEqual(previous.ObjectsDeleted, op.ObjectsDeleted) {
			// The same failure again is not news: keep when it was first seen, and write nothing.
			op.Time = previous.Time
		}
		status.LastOperation = op
	}

	available := metav1.Condition{Type: controllerhelpers.AvailableCondition, Status: metav1.ConditionTrue, Reason: entryUsableReason}
	if o.unavailable != nil {
		available.Status, available.Reason, available.Message = metav1.ConditionFalse, o.unavailable.reason, o.unavailable.message
	}
	progressing := metav1.Condition{Type: controllerhelpers.ProgressingCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if len(o.waiting) != 0 {
		progressing.Status = metav1.ConditionTrue
		progressing.Reason, progressing.Message = joinConditions(o.waiting)
	}
	degraded := metav1.Condition{Type: controllerhelpers.DegradedCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if len(o.failures) != 0 {
		degraded.Status = metav1.ConditionTrue
		degraded.Reason, degraded.Message = joinConditions(o.failures)
	}

	status.Conditions = []metav1.Condition{available, progressing, degraded}
	for i := range status.Conditions {
		status.Conditions[i].ObservedGeneration = entry.Generation
	}
	controllerhelpers.SetTransitionTimes(status.Conditions, entry.Status.Conditions, now)
	return status
}

// joinConditions returns the distinct reasons of conditions joined by commas and their messages, one per line.
func joinConditions(conditions []condition) (string, string) {
	var reasons, messages []string
	for _, c := range conditions {
		if !slices.Contains(reasons, c.reason) {
			reasons = append(reasons, c.reason)
		}
		messages = append(messages, c.message)
	}
	return strings.Join(reasons, ","), truncateMessage(strings.Join(messages, "\n"))
}

// maxMessageLength is the API's limit on condition and lastOperation messages.
const maxMessageLength = 32768

// truncateMessage keeps message within maxMessageLength, marking the cut.
func truncateMessage(message string) string {
	const marker = "... (truncated)"
	if len(message) <= maxMessageLength {
		return message
	}
	cut := maxMessageLength - len(marker)
	// Do not split a UTF-8 sequence.
	for cut > 0 && message[cut]&0xC0 == 0x80 {
		cut--
	}
	return message[:cut] + marker
}

// writeStatus computes the status of entry after o, records a Warning event when it turns Degraded or changes why,
// and applies it unless entry has it already.
func (c *Controller) writeStatus(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, o *outcome) error {
	status := calculateStatus(entry, o, c.now())
	c.recordDegradedTransition(entry, status)
	return c.updateStatus(ctx, entry, status)
}

// recordDegradedTransition records a Warning event when status, about to be written, turns the entry Degraded or
// changes why it is; a failure that holds is not news.
func (c *Controller) recordDegradedTransition(entry *scyllav1alpha1.ScyllaDBBackupEntry, status *scyllav1alpha1.ScyllaDBBackupEntryStatus) {
	current := meta.FindStatusCondition(status.Conditions, controllerhelpers.DegradedCondition)
	if current == nil || current.Status != metav1.ConditionTrue {
		return
	}
	previous := meta.FindStatusCondition(entry.Status.Conditions, controllerhelpers.DegradedCondition)
	if previous != nil && previous.Status == current.Status && previous.Reason == current.Reason && previous.Message == current.Message {
		return
	}
	c.eventRecorder.Event(entry, corev1.EventTypeWarning, current.Reason, current.Message)
}

// updateStatus applies status, the fields the controller owns, to entry's status with server-side apply under the
// manager-controller's field manager, unless entry already has them. Fields left unset in status are released, and
// so removed; conditions of other types stay.
func (c *Controller) updateStatus(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, status *scyllav1alpha1.ScyllaDBBackupEntryStatus) error {
	_, err := c.statusApplier().ApplyStatus(ctx, entry, status)
	return err
}

// entryStatusApplier applies the status fields of a ScyllaDBBackupEntry the controller owns.
type entryStatusApplier = controllerhelpers.StatusApplier[*scyllav1alpha1.ScyllaDBBackupEntry, scyllav1alpha1.ScyllaDBBackupEntryStatus, scyllav1alpha1applyconfigurations.ScyllaDBBackupEntryStatusApplyConfiguration]

// statusApplier returns the applier of the status fields the controller owns.
func (c *Controller) statusApplier() *entryStatusApplier {
	return &entryStatusApplier{
		Kind:           "ScyllaDBBackupEntry",
		FieldManager:   naming.ManagerControllerFieldManager,
		ConditionTypes: conditionTypes,
		Status: func(entry *scyllav1alpha1.ScyllaDBBackupEntry) *scyllav1alpha1.ScyllaDBBackupEntryStatus {
			return &entry.Status
		},
		Conditions: func(status *scyllav1alpha1.ScyllaDBBackupEntryStatus) *[]metav1.Condition { return &status.Conditions },
		Apply: func(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, status *scyllav1alpha1applyconfigurations.ScyllaDBBackupEntryStatusApplyConfiguration, opts metav1.ApplyOptions) (*scyllav1alpha1.ScyllaDBBackupEntry, error) {
			return c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(entry.Namespace).ApplyStatus(ctx, scyllav1alpha1applyconfigurations.ScyllaDBBackupEntry(entry.Name, entry.Namespace).WithUID(entry.UID).WithStatus(status), opts)
		},
		Written: c.entries.Written,
	}
}
