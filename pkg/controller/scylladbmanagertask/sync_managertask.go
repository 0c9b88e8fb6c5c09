package scylladbmanagertask

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// outcome is what syncing a ScyllaDBManagerTask with ScyllaDB Manager learnt, for calculateStatus.
type outcome struct {
	// managerRead tells whether ScyllaDB Manager's state of the task is known: read in this sync, or known absent
	// because ScyllaDB Manager does not know the cluster. Without it the status keeps its previous view.
	managerRead bool
	// managerTask is the task as ScyllaDB Manager holds it after the sync; nil when it holds none (or managerRead is
	// false).
	managerTask *managerclient.TaskListItem

	// waiting, when set, is why the task waits for something that happens without a change to it (Progressing).
	waiting *metav1.Condition
	// failure, when set, is what went wrong (Degraded).
	failure *metav1.Condition

	// moved tells that the task was deleted from the ScyllaDB Manager cluster it was recorded in, because its
	// reference now leads to another: the previous status describes a task that is gone.
	moved bool

	// requeueAfter, when positive, asks for another sync after that long.
	requeueAfter time.Duration

	// task is the object as the sync's last write of its metadata returned it; nil when the sync wrote none.
	task *scyllav1alpha1.ScyllaDBManagerTask
	// clusterID is the ScyllaDB Manager cluster whose task list was read; set with managerRead.
	clusterID string
	// metadataFailed tells that the metadata patch before ScyllaDB Manager's write failed: nothing was written to
	// ScyllaDB Manager, and the sync stops without a status write.
	metadataFailed bool
}

func (o *outcome) wait(reason, message string) {
	o.waiting = &metav1.Condition{Reason: reason, Message: message}
}

func (o *outcome) fail(reason, message string) {
	o.failure = &metav1.Condition{Reason: reason, Message: message}
}

// registration is the state of the ScyllaDB cluster object a task references.
type registration struct {
	// clusterID is its ScyllaDB Manager cluster ID, empty until it is registered.
	clusterID string
	// uid is the object's UID, set with clusterID.
	uid types.UID
	// waiting says why it is not registered, when it is not.
	waiting string
}

// getRegistration returns the registration of the cluster object task references. Per the contract with the
// registration controller, the object is registered when it carries naming.RegisterWithScyllaDBManagerLabel and
// naming.ScyllaDBManagerClusterIDAnnotation and is not being deleted. The error is permanent: the reference can't be
// followed until the task changes.
func (c *Controller) getRegistration(task *scyllav1alpha1.ScyllaDBManagerTask) (registration, error) {
	ref := task.Spec.ScyllaDBClusterRef
	var obj metav1.Object
	var err error
	switch ref.Kind {
	case scyllaDBDatacenterKind:
		obj, err = c.scyllaDBDatacenterLister.ScyllaDBDatacenters(task.Namespace).Get(ref.Name)
	case scyllaDBClusterKind:
		obj, err = c.scyllaDBClusterLister.ScyllaDBClusters(task.Namespace).Get(ref.Name)
	default:
		return registration{}, fmt.Errorf("spec.scyllaDBClusterRef.kind %q is not supported: use %s or %s", ref.Kind, scyllaDBClusterKind, scyllaDBDatacenterKind)
	}
	what := fmt.Sprintf("%s %q", ref.Kind, klog.KRef(task.Namespace, ref.Name))
	switch {
	case apierrors.IsNotFound(err):
		return registration{waiting: fmt.Sprintf("%s does not exist", what)}, nil
	case err != nil:
		// Listers only fail on not found; anything else is a bug worth seeing.
		return registration{}, fmt.Errorf("can't get %s: %w", what, err)
	case obj.GetDeletionTimestamp() != nil:
		return registration{waiting: fmt.Sprintf("%s is being deleted", what)}, nil
	}
	if _, ok := obj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]; !ok {
		return registration{waiting: fmt.Sprintf("%s is not labelled %q for registration with ScyllaDB Manager", what, naming.RegisterWithScyllaDBManagerLabel)}, nil
	}
	clusterID := obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation]
	if len(clusterID) == 0 {
		return registration{waiting: fmt.Sprintf("%s is not registered with ScyllaDB Manager yet", what)}, nil
	}
	// The registration controller's check: anything it would not register under, ScyllaDB Manager would read as a
	// cluster name. The registration controller reports it.
	if !managerclient.IsUUID(clusterID) {
		return registration{waiting: fmt.Sprintf("%s has annotation %q = %q, which is not a ScyllaDB Manager cluster ID", what, naming.ScyllaDBManagerClusterIDAnnotation, clusterID)}, nil
	}
	// The registration controller's check too: a derived ID other than the object's own came with a manifest copied
	// from another object, and names that object's cluster. The registration controller replaces it.
	if clusterID != naming.ScyllaDBManagerClusterID(ref.Kind, obj.GetUID()) && isDerivedClusterID(clusterID) {
		return registration{waiting: fmt.Sprintf("%s has annotation %q = %q, which is another object's ScyllaDB Manager cluster ID (copied with its manifest); waiting for the registration controller to replace it", what, naming.ScyllaDBManagerClusterIDAnnotation, clusterID)}, nil
	}
	return registration{clusterID: clusterID, uid: obj.GetUID()}, nil
}

// syncManagerTask makes ScyllaDB Manager hold the task that task asks for: it finds the task in its cluster's task
// list, creates it when it is missing and updates it when it differs. The error is one retrying may fix; permanent
// failures are only recorded in the outcome.
func (c *Controller) syncManagerTask(ctx context.Context, key string, task *scyllav1alpha1.ScyllaDBManagerTask) (*outcome, error) {
	logger := klog.FromContext(ctx).WithValues("scyllaDBManagerTask", klog.KObj(task))
	o := &outcome{}

	// Nothing reaches ScyllaDB Manager from a spec the webhook would refuse (one created while it was down).
	if err := validation.ValidateScyllaDBManagerTask(task).ToAggregate(); err != nil {
		o.fail(invalidSpecReason, err.Error())
		return o, nil
	}

	reg, err := c.getRegistration(task)
	if err != nil {
		o.fail(invalidSpecReason, err.Error())
		return o, nil
	}
	if len(reg.waiting) != 0 {
		o.wait(awaitingRegistrationReason, reg.waiting)
		return o, nil
	}
	clusterID := reg.clusterID
	waiting, err := c.verifyClusterOwner(ctx, task.Spec.ScyllaDBClusterRef.Kind, reg)
	if err != nil {
		o.fail(managerErrorReason, fmt.Sprintf("can't read ScyllaDB Manager cluster %q: %s", clusterID, managerErrorMessage(err)))
		return o, fmt.Errorf("can't read ScyllaDB Manager cluster %q: %w", clusterID, err)
	}
	if len(waiting) != 0 {
		o.wait(awaitingRegistrationReason, waiting)
		return o, nil
	}

	taskType, err := managerTaskType(task.Spec.Type)
	if err != nil {
		o.fail(invalidSpecReason, err.Error())
		return o, nil
	}

	// A backup to a declared bucket waits for the cluster's directory in it to be recorded, so that the backups it
	// writes are never left behind unaccounted for.
	ref := task.Spec.ScyllaDBClusterRef
	ready, err := c.syncBackupEntries(ctx, task, backupEntryCluster{kind: ref.Kind, name: ref.Name, uid: reg.uid, clusterID: clusterID}, o)
	if !ready || err != nil {
		return o, err
	}

	// A changed reference that leads to another ScyllaDB Manager cluster moves the task: it leaves the cluster it
	// was recorded in first, so that it never runs in two, and the new cluster is recorded before anything is created
	// there (below), so that a crash at any point leaves the task only where the record or the owner-uid label finds
	// it: killed after the delete, the record still leads the next sync to the old cluster, where it finds nothing
	// more to delete.
	if recorded := recordedClusterID(task); len(recorded) != 0 && recorded != clusterID {
		if err := c.deleteManagerTask(ctx, task, recorded); err != nil {
			o.fail(managerErrorReason, fmt.Sprintf("can't delete the task from ScyllaDB Manager cluster %q, which it moves from: %s", recorded, managerErrorMessage(err)))
			return o, err
		}
		o.moved = true
	}

	items, err := c.taskLists.get(ctx, clusterID)
	if managerclient.IsNotFound(err) {
		// The cluster is gone from ScyllaDB Manager, and its tasks with it. The registration controller registers it
		// again under the same ID once told (it would otherwise only find out at its next resync); nothing the
		// informers see changes then, hence the requeue.
		c.clusterMissingReporter.ReportClusterMissing(ref.Kind, task.Namespace, ref.Name, clusterID)
		o.managerRead = true
		o.wait(clusterNotInManagerReason, fmt.Sprintf("ScyllaDB Manager does not know cluster %q; waiting for it to be registered again: %s", clusterID, managerErrorMessage(err)))
		o.requeueAfter = c.clusterMissingRequeueDelay
		return o, nil
	}
	if err != nil {
		o.fail(managerErrorReason, fmt.Sprintf("can't list the tasks of ScyllaDB Manager cluster %q: %s", clusterID, managerErrorMessage(err)))
		return o, fmt.Errorf("can't list tasks of ScyllaDB Manager cluster %q: %w", clusterID, err)
	}
	o.managerRead, o.clusterID = true, clusterID

	existing, err := findManagerTask(items, task, taskType)
	if err != nil {
		// Only whoever owns that task can resolve this; the resync looks again.
		o.fail(ownershipConflictReason, err.Error())
		return o, nil
	}
	o.managerTask = existing

	now := c.clock()
	desired, err := makeDesiredTask(task, existing, now)
	if err != nil {
		o.fail(invalidSpecReason, fmt.Sprintf("can't make the ScyllaDB Manager task of ScyllaDBManagerTask %q: %v", klog.KObj(task), err))
		return o, nil
	}

	if existing == nil {
		if err := checkCreatable(&desired.update, now); err != nil {
			// The object must change first: ScyllaDB Manager would refuse it with a 500 on every attempt.
			o.fail(invalidSpecReason, fmt.Sprintf("can't create the ScyllaDB Manager task of ScyllaDBManagerTask %q: %v", klog.KObj(task), err))
			return o, nil
		}
	}

	var diff []string
	if existing != nil {
		diff = taskDiff(&desired.update, &existing.Task, now)
		if existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel] != string(task.UID) {
			diff = append(diff, "labels."+naming.ScyllaDBManagerOwnerUIDLabel)
		}
		if existing.Labels[naming.ScyllaDBManagerManagedHashLabel] != desired.hash {
			diff = append(diff, "labels."+naming.ScyllaDBManagerManagedHashLabel)
		}
		if len(diff) == 0 {
			c.rejections.forget(key)
			return o, nil
		}
	}

	if message, ok := c.rejections.get(key, task, desired.hash, now); ok {
		// ScyllaDB Manager rejected exactly this a moment ago; it would again.
		o.fail(managerRejectedReason, message)
		return o, nil
	}

	// Right before ScyllaDB Manager's write, one patch gives the object what it lacks of the finalizer and the record
	// of the cluster, so that whatever the write leaves in ScyllaDB Manager is deleted with the object, from the
	// cluster the record names, even if the sync is killed right after the write. Killed before the write, the object
	// keeps a finalizer that holds nothing: its deletion finds no task and lets it go.
	patched, err := c.updateMetadata(ctx, task, clusterID, nil)
	if err != nil {
		o.metadataFailed = true
		return o, err
	}
	task, o.task = patched, patched

	if existing == nil {
		id, err := c.managerClient.CreateTask(ctx, clusterID, &desired.update)
		if err != nil {
			return o, c.handleWriteError(ctx, o, key, task, desired, clusterID, "create", err)
		}
		c.rejections.forget(key)
		logger.V(2).Info("Created ScyllaDB Manager task", "clusterID", clusterID, "taskID", id, "taskName", desired.update.Name)
		c.eventRecorder.Eventf(task, corev1.EventTypeNormal, taskCreatedReason, "Created %s task %q (%s) in ScyllaDB Manager cluster %s", taskType, desired.update.Name, id, clusterID)
		return o, c.readBack(ctx, o, task, taskType, clusterID)
	}

	// The labels others put on the task stay; ours are replaced.
	update := desired.update
	update.Labels = maps.Clone(existing.Labels)
	if update.Labels == nil {
		update.Labels = map[string]string{}
	}
	maps.Copy(update.Labels, desired.update.Labels)
	if _, err := c.managerClient.UpdateTask(ctx, clusterID, taskType, existing.ID, &update); err != nil {
		return o, c.handleWriteError(ctx, o, key, task, desired, clusterID, "update", err)
	}
	c.rejections.forget(key)
	logger.V(2).Info("Updated ScyllaDB Manager task", "clusterID", clusterID, "taskID", existing.ID, "taskName", update.Name, "fields", diff)
	c.eventRecorder.Eventf(task, corev1.EventTypeNormal, taskUpdatedReason, "Updated %s task %q (%s) in ScyllaDB Manager cluster %s: %s", taskType, update.Name, existing.ID, clusterID, strings.Join(diff, ", "))
	return o, c.readBack(ctx, o, task, taskType, clusterID)
}

// readBack makes o describe task's task as ScyllaDB Manager holds it after the controller created or updated it in
// cluster clusterID, read from a task list requested after the write. ScyllaDB Manager fills in and normalises what it
// was sent (start date, schedule) and only its list tells the next activation: a status made from what was sent
// would change on the next read, a write after convergence. When the read fails, o says ScyllaDB Manager's state is
// unknown, so that the status keeps its previous view, and the error asks for a retry.
func (c *Controller) readBack(ctx context.Context, o *outcome, task *scyllav1alpha1.ScyllaDBManagerTask, taskType managerclient.TaskType, clusterID string) error {
	c.taskLists.invalidate(clusterID)
	o.managerRead, o.managerTask = false, nil
	items, err := c.taskLists.get(ctx, clusterID)
	if err != nil {
		o.fail(managerErrorReason, fmt.Sprintf("can't read the task back from ScyllaDB Manager cluster %q after writing it: %s", clusterID, managerErrorMessage(err)))
		return fmt.Errorf("can't read the task of ScyllaDBManagerTask %q back from ScyllaDB Manager cluster %q: %w", klog.KObj(task), clusterID, err)
	}
	o.managerRead = true
	existing, err := findManagerTask(items, task, taskType)
	if err != nil {
		o.fail(ownershipConflictReason, err.Error())
		return nil
	}
	o.managerTask = existing
	return nil
}

// handleWriteError records a failed create or update (verb) of task's ScyllaDB Manager task in o and returns the
// error to retry with, nil for a 400: ScyllaDB Manager rejects the task as it is, and sending it again right away
// would fail again; it is sent again once it changes, or after statusRefreshInterval (rejections).
func (c *Controller) handleWriteError(ctx context.Context, o *outcome, key string, task *scyllav1alpha1.ScyllaDBManagerTask, desired *desiredTask, clusterID, verb string, err error) error {
	// The memo may be what made the write wrong (a task deleted or changed behind its back).
	c.taskLists.invalidate(clusterID)
	message := fmt.Sprintf("can't %s ScyllaDB Manager task %q: %s", verb, desired.update.Name, managerErrorMessage(err))
	if managerclient.IsBadRequest(err) {
		c.rejections.set(key, task, desired.hash, message, c.clock().Add(c.statusRefreshInterval))
		o.fail(managerRejectedReason, message)
		klog.FromContext(ctx).V(2).Info("ScyllaDB Manager rejected the task; it is not sent again until it changes or the retry interval passes", "scyllaDBManagerTask", klog.KObj(task), "retryInterval", c.statusRefreshInterval, "err", err)
		return nil
	}
	o.fail(managerErrorReason, message)
	return fmt.Errorf("can't %s ScyllaDB Manager task %q of ScyllaDBManagerTask %q: %w", verb, desired.update.Name, klog.KObj(task), err)
}

// managerErrorMessage returns ScyllaDB Manager's message of err, with its details (hints such as "Check
// --ignore-down-hosts") when it has some, or err itself when ScyllaDB Manager did not answer.
func managerErrorMessage(err error) string {
	var apiErr *managerclient.APIError
	if errors.As(err, &apiErr) && len(apiErr.Details) != 0 {
		return apiErr.Message + " (" + apiErr.Details + ")"
	}
	return managerclient.ErrorMessage(err)
}

// findManagerTask returns task's task among items, the task list of its cluster, or nil when there is none: the task
// of taskType labelled with task's UID (which finds what this controller created, even when it was killed before it
// could record the ID), else the one named as task's (which adopts what was created before, by the established
// operator or by hand), else the one with the ID task's status records. A task of that name owned by another object is
// a conflict, returned as an error.
func findManagerTask(items []managerclient.TaskListItem, task *scyllav1alpha1.ScyllaDBManagerTask, taskType managerclient.TaskType) (*managerclient.TaskListItem, error) {
	uid := string(task.UID)
	name := naming.ScyllaDBManagerTaskNameInManager(task.Name, task.Annotations)
	var byOwner, byName, byID *managerclient.TaskListItem
	for i := range items {
		item := &items[i]
		if item.Type != taskType {
			continue
		}
		switch owner := item.Labels[naming.ScyllaDBManagerOwnerUIDLabel]; {
		case owner == uid:
			// Of two (which only hands could make), the one with the right name.
			if byOwner == nil || (byOwner.Name != name && item.Name == name) {
				byOwner = item
			}
		case item.Name == name:
			byName = item
		case task.Status.TaskID != nil && item.ID == *task.Status.TaskID && len(owner) == 0:
			byID = item
		}
	}
	switch {
	case byOwner != nil:
		return byOwner, nil
	case byName != nil:
		if owner := byName.Labels[naming.ScyllaDBManagerOwnerUIDLabel]; len(owner) != 0 {
			return nil, fmt.Errorf("ScyllaDB Manager %s task %q (%s) belongs to another object (UID %q); delete it or rename this task", taskType, name, byName.ID, owner)
		}
		return byName, nil
	default:
		return byID, nil
	}
}

// isDerivedClusterID tells whether id is a version 5 UUID, as naming.ScyllaDBManagerClusterID derives from an object's
// kind and UID; ScyllaDB Manager, and the established operator, gave clusters random (version 4) IDs.
func isDerivedClusterID(id string) bool {
	parsed, err := uuid.Parse(id)
	return err == nil && parsed.Version() == 5
}

// recordedClusterID returns the ScyllaDB Manager cluster task's task was recorded in, or "" when there is no record
// (a task synced by an earlier manager-controller) or it is not a cluster ID, which ScyllaDB Manager would read as a
// cluster name.
func recordedClusterID(task *scyllav1alpha1.ScyllaDBManagerTask) string {
	clusterID := task.Annotations[naming.ScyllaDBManagerTaskClusterIDAnnotation]
	if !managerclient.IsUUID(clusterID) {
		return ""
	}
	return clusterID
}

// syncDeletion deletes the ScyllaDB Manager task of task, which is being deleted, and then removes the finalizer.
// The task is looked for in the cluster it was recorded in and in the cluster the reference leads to now, when that
// differs; a cluster ScyllaDB Manager does not know has nothing to delete. A task without a record (synced by an
// earlier manager-controller) whose referenced object is gone, unregistered or being deleted has nothing to delete
// either: the cluster's removal from ScyllaDB Manager takes its tasks with it.
func (c *Controller) syncDeletion(ctx context.Context, key string, task *scyllav1alpha1.ScyllaDBManagerTask) error {
	if !controllerhelpers.HasFinalizer(task, naming.ScyllaDBManagerTaskFinalizer) && !controllerhelpers.HasFinalizer(task, naming.LegacyScyllaDBManagerTaskFinalizer) {
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("scyllaDBManagerTask", klog.KObj(task))

	var clusterIDs []string
	if recorded := recordedClusterID(task); len(recorded) != 0 {
		clusterIDs = append(clusterIDs, recorded)
	}
	reg, err := c.getRegistration(task)
	switch {
	case err != nil:
		logger.V(2).Info("The task's cluster reference can't be followed", "err", err)
	case len(reg.waiting) != 0:
		logger.V(2).Info("The task's cluster is not registered with ScyllaDB Manager", "reason", reg.waiting)
	case !slices.Contains(clusterIDs, reg.clusterID):
		clusterIDs = append(clusterIDs, reg.clusterID)
	}
	for _, clusterID := range clusterIDs {
		if err := c.deleteManagerTask(ctx, task, clusterID); err != nil {
			c.eventRecorder.Event(task, corev1.EventTypeWarning, taskDeleteFailed, err.Error())
			// The object's deletion waits for ScyllaDB Manager: Degraded says why, and the rest of the status keeps
			// what ScyllaDB Manager last said.
			o := &outcome{}
			o.fail(managerErrorReason, fmt.Sprintf("can't delete the task from ScyllaDB Manager cluster %q, so the object keeps its finalizer %q: %s", clusterID, naming.ScyllaDBManagerTaskFinalizer, managerErrorMessage(err)))
			if statusErr := c.updateStatus(ctx, task, calculateStatus(task, o, c.now())); statusErr != nil {
				return utilerrors.NewAggregate([]error{err, statusErr})
			}
			return err
		}
	}

	// A task the established operator created also holds its finalizer, which only it removed: the object would never
	// go. Objects of this operator have ours alone, and are released with one patch.
	for _, finalizer := range []string{naming.ScyllaDBManagerTaskFinalizer, naming.LegacyScyllaDBManagerTaskFinalizer} {
		task, _, err = controllerhelpers.RemoveFinalizer(ctx, c.taskPatcher(task.Namespace), task, finalizer)
		if err != nil {
			return fmt.Errorf("can't remove finalizer %q from ScyllaDBManagerTask %q: %w", finalizer, key, err)
		}
	}
	c.rejections.forget(key)
	return nil
}

// deleteManagerTask deletes task's task from ScyllaDB Manager cluster clusterID, if it holds one labelled with task's
// UID. A task found otherwise (by name, or by status.taskID) is left in place: the cluster may have been recorded in an
// annotation copied from another object's manifest, and the task of that name may be that object's.
func (c *Controller) deleteManagerTask(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, clusterID string) error {
	logger := klog.FromContext(ctx).WithValues("scyllaDBManagerTask", klog.KObj(task), "clusterID", clusterID)

	items, err := c.taskLists.get(ctx, clusterID)
	if managerclient.IsNotFound(err) {
		logger.V(2).Info("Releasing a task whose cluster ScyllaDB Manager does not know")
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't list tasks of ScyllaDB Manager cluster %q: %w", clusterID, err)
	}

	var found *managerclient.TaskListItem
	if taskType, err := managerTaskType(task.Spec.Type); err == nil {
		// A task of this name owned by someone else is theirs to delete.
		found, _ = findManagerTask(items, task, taskType)
	}
	if found == nil {
		return nil
	}
	if owner := found.Labels[naming.ScyllaDBManagerOwnerUIDLabel]; owner != string(task.UID) {
		// Found by name or by status.taskID only: the name is shared by objects of that name in other namespaces, and
		// the record of the cluster comes along with a copied manifest, so nothing proves the task is this object's.
		logger.V(2).Info("Leaving a ScyllaDB Manager task that is not provably the object's in place", "taskID", found.ID, "taskName", found.Name, "ownerUID", owner)
		c.eventRecorder.Eventf(task, corev1.EventTypeWarning, taskNotOwnedReason, "Left %s task %q (%s) in ScyllaDB Manager cluster %s: it is not labelled %s=%s, so it may be another object's",
			found.Type, found.Name, found.ID, clusterID, naming.ScyllaDBManagerOwnerUIDLabel, task.UID)
		return nil
	}

	err = c.managerClient.DeleteTask(ctx, clusterID, found.Type, found.ID)
	if err != nil && !managerclient.IsNotFound(err) {
		c.taskLists.invalidate(clusterID)
		return fmt.Errorf("can't delete ScyllaDB Manager task %q (%s) of ScyllaDBManagerTask %q: %w", found.Name, found.ID, klog.KObj(task), err)
	}
	c.taskLists.remove(clusterID, found.ID)
	logger.V(2).Info("Deleted ScyllaDB Manager task", "taskID", found.ID, "taskName", found.Name)
	c.eventRecorder.Eventf(task, corev1.EventTypeNormal, taskDeletedReason, "Deleted %s task %q (%s) from ScyllaDB Manager cluster %s", found.Type, found.Name, found.ID, clusterID)
	return nil
}

// rejections remembers, per ScyllaDBManagerTask key, the task ScyllaDB Manager last answered 400 to: the object's UID
// and generation, the hash of what was sent, and until when the rejection holds. The same task is not sent again until
// one of them changes (a spec change bumps the generation, an annotation change the hash) or the rejection expires:
// ScyllaDB Manager also answers 400 for causes outside the object that heal without any change to it (a keyspace
// the repair or backup selects that is not created yet, a location the nodes can't write to until their credentials
// are set, a repair of a cluster that has one node yet, a suspended cluster), so a rejected task is sent again once
// per expiry, which the status refresh reaches, and never hot. It lives in memory: after a restart a rejected task is
// sent once more, which costs one request and records the same failure.
type rejections struct {
	mu      sync.Mutex
	entries map[string]rejection
}

type rejection struct {
	uid        types.UID
	generation int64
	hash       string
	message    string
	expires    time.Time
}

func newRejections() *rejections {
	return &rejections{entries: map[string]rejection{}}
}

// get returns the message of the rejection of exactly task as hash digests it, if ScyllaDB Manager rejected it and the
// rejection still holds at now.
func (r *rejections) get(key string, task *scyllav1alpha1.ScyllaDBManagerTask, hash string, now time.Time) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[key]
	if !ok || e.uid != task.UID || e.generation != task.Generation || e.hash != hash || !now.Before(e.expires) {
		return "", false
	}
	return e.message, true
}

// set records that ScyllaDB Manager rejected task as hash digests it with message; the rejection holds until expires.
func (r *rejections) set(key string, task *scyllav1alpha1.ScyllaDBManagerTask, hash, message string, expires time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries[key] = rejection{uid: task.UID, generation: task.Generation, hash: hash, message: message, expires: expires}
}

func (r *rejections) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, key)
}
