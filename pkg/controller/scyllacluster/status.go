package scyllacluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// aggregatedConditionTypes are the conditions that sum up a ScyllaCluster, and those mirrored from its
// ScyllaDBDatacenter.
var aggregatedConditionTypes = []string{
	controllerhelpers.AvailableCondition,
	controllerhelpers.ProgressingCondition,
	controllerhelpers.DegradedCondition,
}

// syncState is what the sub-syncs of one sync learnt, for calculateStatus.
type syncState struct {
	// sdc is the ScyllaCluster's ScyllaDBDatacenter: as applied in this sync or, when applying failed, as cached.
	// It is nil when there is none that the ScyllaCluster controls.
	sdc *scyllav1alpha1.ScyllaDBDatacenter
	// sdcCurrent tells whether sdc's spec was translated from the ScyllaCluster's current spec.
	sdcCurrent bool
	// sdcCreated tells whether this sync created sdc.
	sdcCreated bool
	// sdcTaken tells whether the ScyllaDBDatacenter's name is taken by an object the ScyllaCluster does not control.
	sdcTaken bool
	// sdcUntranslated tells whether the ScyllaCluster's spec has errors outside its tasks, so that its
	// ScyllaDBDatacenter was not translated, and is not created or updated.
	sdcUntranslated bool
	// sdcRefused tells whether the API server refused to create or update the ScyllaDBDatacenter (isRefusal).
	sdcRefused bool

	// tasks holds, by object name, the ScyllaDBManagerTasks of the ScyllaCluster's backups and repairs that exist.
	tasks map[string]*scyllav1alpha1.ScyllaDBManagerTask
	// pendingTasks names the tasks an earlier sync created that the cache does not show yet (createExpectations).
	pendingTasks []string
	// taskErrors holds, by object name, why a task's ScyllaDBManagerTask could not be applied.
	taskErrors map[string]error
	// entryErrors holds, by the path of the task's entry in the spec (taskEntryPath), why a backup or repair could not
	// be translated: its ScyllaDBManagerTask, if any, is left as it is.
	entryErrors map[string]error

	// permanentErrors holds, by sub-sync name, the errors that retrying does not fix.
	permanentErrors map[string]*permanentError

	// previousRefusals are the writes the API server refused in the previous sync, by object (refusals).
	previousRefusals map[string]refusal
	// refusals are the writes refused in this sync, by object, the previous sync's included when they were not sent
	// again.
	refusals map[string]refusal
}

func newSyncState() *syncState {
	return &syncState{
		tasks:           map[string]*scyllav1alpha1.ScyllaDBManagerTask{},
		taskErrors:      map[string]error{},
		entryErrors:     map[string]error{},
		permanentErrors: map[string]*permanentError{},
		refusals:        map[string]refusal{},
	}
}

// calculateStatus returns the status of sc after a sync that learnt state and produced subSyncConditions. now is the
// lastTransitionTime of conditions that change status.
func calculateStatus(sc *scyllav1.ScyllaCluster, state *syncState, subSyncConditions []metav1.Condition, now metav1.Time) (*scyllav1.ScyllaClusterStatus, error) {
	status := &scyllav1.ScyllaClusterStatus{
		ObservedGeneration: sc.Status.ObservedGeneration,
	}

	sdc := state.sdc
	staleness := scyllaDBDatacenterStaleness(naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name), sdc, state.sdcCurrent, state.sdcTaken)
	if len(staleness) == 0 {
		// The ScyllaDBDatacenter's status describes the current spec, so this status describes the ScyllaCluster's.
		status.ObservedGeneration = new(sc.Generation)
	}

	if sdc != nil {
		if sdc.Status.ObservedGeneration != nil {
			status.Members = sdc.Status.Nodes
			status.ReadyMembers = sdc.Status.ReadyNodes
			status.AvailableMembers = sdc.Status.AvailableNodes
			status.RackCount = new(int32(len(sdc.Status.Racks)))
			status.Racks = make(map[string]scyllav1.RackStatus, len(sdc.Status.Racks))
			for _, rack := range sdc.Status.Racks {
				status.Racks[rack.Name] = makeRackStatus(&rack, sdc.Status.Conditions, len(staleness) != 0)
			}
		}
	}
	status.ManagerID = managerIDStatus(sc, sdc)

	backups := newTaskStatusLookup(sc.Name, naming.ScyllaDBManagerTaskTypeBackup, "backups", state)
	for i, backup := range sc.Spec.Backups {
		task, err := backups.lookUp(i, backup.Name)
		status.Backups = append(status.Backups, makeTaskStatus(backup.Name, task, err,
			func(s *scyllav1.BackupTaskStatus) *scyllav1.TaskStatus { return &s.TaskStatus }))
	}
	repairs := newTaskStatusLookup(sc.Name, naming.ScyllaDBManagerTaskTypeRepair, "repairs", state)
	for i, repair := range sc.Spec.Repairs {
		task, err := repairs.lookUp(i, repair.Name)
		status.Repairs = append(status.Repairs, makeTaskStatus(repair.Name, task, err,
			func(s *scyllav1.RepairTaskStatus) *scyllav1.TaskStatus { return &s.TaskStatus }))
	}

	conditions, err := calculateConditions(sc, sdc, staleness, subSyncConditions, now)
	if err != nil {
		return nil, err
	}
	status.Conditions = conditions

	return status, nil
}

// taskStatusLookup finds what a status entry of one of a ScyllaCluster's lists of tasks shows.
type taskStatusLookup struct {
	clusterName, taskType, list string
	state                       *syncState
	// seen holds the names of the entries looked up so far.
	seen sets.Set[string]
}

func newTaskStatusLookup(clusterName, taskType, list string, state *syncState) *taskStatusLookup {
	return &taskStatusLookup{clusterName: clusterName, taskType: taskType, list: list, state: state, seen: sets.New[string]()}
}

// lookUp returns what the status of the list's entry index, named name, shows: its ScyllaDBManagerTask (nil when
// there is none) and its error, why the entry could not be translated or its task applied. The task of a name is the
// first entry's of that name; a later one (a duplicate, which validation refuses) shows only its own error.
func (l *taskStatusLookup) lookUp(index int, name string) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
	entryErr := l.state.entryErrors[taskEntryPath(l.list, index)]
	if l.seen.Has(name) {
		return nil, entryErr
	}
	l.seen.Insert(name)
	objectName := naming.ScyllaDBManagerTaskName(l.clusterName, l.taskType, name)
	if entryErr != nil {
		// An entry that was not translated was not applied either.
		return l.state.tasks[objectName], entryErr
	}
	return l.state.tasks[objectName], l.state.taskErrors[objectName]
}

// managerIDStatus returns sc's status.managerId: the ID of sc's cluster in ScyllaDB Manager that the
// manager-controller recorded on sdc, or, until it has, the managerId sc has (being handed over to sdc) when it is a
// valid ID. An invalid one is dropped.
func managerIDStatus(sc *scyllav1.ScyllaCluster, sdc *scyllav1alpha1.ScyllaDBDatacenter) *string {
	if sdc != nil {
		if id := sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; len(id) != 0 {
			return &id
		}
	}
	if id, err := scyllaClusterManagerID(sc); err == nil && len(id) != 0 {
		return &id
	}
	return nil
}

// scyllaDBDatacenterStaleness says why sdc, the ScyllaDBDatacenter named name, does not have a status describing the
// ScyllaCluster's current spec, or returns "" when it has. sdcTaken tells whether an object the ScyllaCluster does not
// control has the name.
func scyllaDBDatacenterStaleness(name string, sdc *scyllav1alpha1.ScyllaDBDatacenter, sdcCurrent, sdcTaken bool) string {
	switch {
	case sdc == nil && sdcTaken:
		return fmt.Sprintf("ScyllaDBDatacenter %q is not this ScyllaCluster's: the name is taken by an object it does not control", name)
	case sdc == nil:
		return fmt.Sprintf("ScyllaDBDatacenter %q does not exist yet", name)
	case !sdcCurrent:
		return fmt.Sprintf("ScyllaDBDatacenter %q has not been updated to the current spec yet", sdc.Name)
	case sdc.Status.ObservedGeneration == nil:
		return fmt.Sprintf("ScyllaDBDatacenter %q has not observed any generation yet", sdc.Name)
	case *sdc.Status.ObservedGeneration < sdc.Generation:
		return fmt.Sprintf("ScyllaDBDatacenter %q has observed generation %d, not %d yet", sdc.Name, *sdc.Status.ObservedGeneration, sdc.Generation)
	default:
		return ""
	}
}

// makeRackStatus returns the v1 status of rack, a rack of a ScyllaDBDatacenter whose status has sdcConditions: its
// counts and version, and condition MemberReplacing while a node of the rack is replaced (the datacenter's condition
// naming.RackMemberReplacingConditionType of the rack is True).
func makeRackStatus(rack *scyllav1alpha1.RackStatus, sdcConditions []metav1.Condition, datacenterStale bool) scyllav1.RackStatus {
	var conditions []scyllav1.RackCondition
	if meta.IsStatusConditionTrue(sdcConditions, naming.RackMemberReplacingConditionType(rack.Name)) {
		conditions = append(conditions, scyllav1.RackCondition{Type: scyllav1.RackConditionTypeMemberReplacing, Status: corev1.ConditionTrue})
	}
	version := rack.CurrentVersion
	if len(version) == 0 {
		version = rack.UpdatedVersion
	}
	return scyllav1.RackStatus{
		Version:          version,
		Members:          deref(rack.Nodes),
		ReadyMembers:     deref(rack.ReadyNodes),
		AvailableMembers: rack.AvailableNodes,
		UpdatedMembers:   rack.UpdatedNodes,
		Stale:            new(datacenterStale || isTrue(rack.Stale)),
		Conditions:       conditions,
	}
}

// makeTaskStatus returns the status of the ScyllaCluster task name (a BackupTaskStatus or a RepairTaskStatus, S)
// from the status annotation and the Degraded condition of its ScyllaDBManagerTask, when it exists, and from
// syncErr, the error met while translating or applying it. taskStatus returns the TaskStatus embedded in an S.
func makeTaskStatus[S any](name string, task *scyllav1alpha1.ScyllaDBManagerTask, syncErr error, taskStatus func(*S) *scyllav1.TaskStatus) S {
	var status S
	var messages []string
	if syncErr != nil {
		messages = append(messages, syncErr.Error())
	}

	if task != nil {
		if value, ok := task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]; ok {
			if err := json.Unmarshal([]byte(value), &status); err != nil {
				// A partial decode would pass off wrong values as the manager's.
				var zero S
				status = zero
				messages = append(messages, fmt.Sprintf("can't decode annotation %q of ScyllaDBManagerTask %q: %v", naming.ScyllaDBManagerTaskStatusAnnotation, task.Name, err))
			}
		}
		if errorMessage := taskStatus(&status).Error; errorMessage != nil {
			messages = append(messages, *errorMessage)
		}
		if degraded := meta.FindStatusCondition(task.Status.Conditions, controllerhelpers.DegradedCondition); degraded != nil && degraded.Status == metav1.ConditionTrue {
			messages = append(messages, degraded.Message)
		}
	}

	ts := taskStatus(&status)
	ts.Name = name
	ts.Error = nil
	if messages = slices.Compact(slices.DeleteFunc(messages, func(m string) bool { return len(m) == 0 })); len(messages) != 0 {
		ts.Error = new(strings.Join(messages, "; "))
	}
	return status
}

// calculateConditions returns sc's conditions: the sub-syncs' conditions, the ScyllaDBDatacenter's aggregated
// conditions mirrored, and Available, Progressing and Degraded aggregated over both. Conditions of other types are
// dropped; those whose status did not change keep their lastTransitionTime, the others get now.
func calculateConditions(sc *scyllav1.ScyllaCluster, sdc *scyllav1alpha1.ScyllaDBDatacenter, staleness string, subSyncConditions []metav1.Condition, now metav1.Time) ([]metav1.Condition, error) {
	desired := slices.Concat(subSyncConditions, mirrorScyllaDBDatacenterConditions(sc, sdc, staleness))
	aggregated := make([]metav1.Condition, 0, len(aggregatedConditionTypes))
	for _, condType := range aggregatedConditionTypes {
		c, err := controllerhelpers.AggregateCondition(desired, condType, sc.Generation)
		if err != nil {
			return nil, fmt.Errorf("can't aggregate the conditions of ScyllaCluster %q: %w", klog.KObj(sc), err)
		}
		aggregated = append(aggregated, c)
	}
	desired = append(desired, aggregated...)

	conditions := slices.Clone(sc.Status.Conditions)
	wanted := sets.New[string]()
	for _, c := range desired {
		c.LastTransitionTime = now
		meta.SetStatusCondition(&conditions, c)
		wanted.Insert(c.Type)
	}
	return slices.DeleteFunc(conditions, func(c metav1.Condition) bool { return !wanted.Has(c.Type) }), nil
}

// mirrorScyllaDBDatacenterConditions returns the Available, Progressing and Degraded conditions of sdc as
// ScyllaDBDatacenter<Type> conditions of sc. They carry sc's generation only when sdc's status describes sc's current
// spec (staleness is empty). Otherwise the mirrored Progressing is True, and Available and Degraded keep sdc's word
// with the generation sc last saw described, so that the aggregation treats them as old news.
func mirrorScyllaDBDatacenterConditions(sc *scyllav1.ScyllaCluster, sdc *scyllav1alpha1.ScyllaDBDatacenter, staleness string) []metav1.Condition {
	var previousGeneration int64
	if sc.Status.ObservedGeneration != nil {
		previousGeneration = *sc.Status.ObservedGeneration
	}

	mirrored := make([]metav1.Condition, 0, len(aggregatedConditionTypes))
	for _, condType := range aggregatedConditionTypes {
		m := metav1.Condition{Type: scyllaDBDatacenterConditionPrefix + condType, ObservedGeneration: sc.Generation}
		var c *metav1.Condition
		if sdc != nil {
			c = meta.FindStatusCondition(sdc.Status.Conditions, condType)
		}

		switch {
		case c != nil && len(staleness) == 0 && c.ObservedGeneration >= sdc.Generation:
			m.Status, m.Reason, m.Message = c.Status, c.Reason, c.Message

		case condType == controllerhelpers.ProgressingCondition:
			m.Status = metav1.ConditionTrue
			m.Reason = scyllaDBDatacenterNotObservedReason
			m.Message = staleness
			if len(m.Message) == 0 {
				m.Message = fmt.Sprintf("ScyllaDBDatacenter %q has not reported condition %s for generation %d yet", sdc.Name, condType, sdc.Generation)
			}

		case c != nil && c.Status != metav1.ConditionUnknown:
			m.Status, m.Reason, m.Message = c.Status, c.Reason, c.Message
			m.ObservedGeneration = previousGeneration

		default:
			m.Status = metav1.ConditionUnknown
			m.Reason = conditionNotReportedReason
			m.Message = staleness
			if len(m.Message) == 0 {
				m.Message = fmt.Sprintf("ScyllaDBDatacenter %q has not reported condition %s for generation %d yet", sdc.Name, condType, sdc.Generation)
			}
		}
		mirrored = append(mirrored, m)
	}
	return mirrored
}

// scyllaDBDatacenterStatusChanged tells whether status differs from existing in what it mirrors of the
// ScyllaDBDatacenter's status: the observed generation, the member counts, the racks (with their MemberReplacing
// condition) and the mirrored ScyllaDBDatacenter<Type> conditions. The ScyllaDBDatacenter controller already batches
// its status writes, one per change worth reporting; batching the mirror again would only make the ScyllaCluster lag
// its datacenter by up to a batch period, while writing the same number of times.
func scyllaDBDatacenterStatusChanged(existing, status *scyllav1.ScyllaClusterStatus) bool {
	mirrored := func(s *scyllav1.ScyllaClusterStatus) *scyllav1.ScyllaClusterStatus {
		m := &scyllav1.ScyllaClusterStatus{
			ObservedGeneration: s.ObservedGeneration,
			Members:            s.Members,
			ReadyMembers:       s.ReadyMembers,
			AvailableMembers:   s.AvailableMembers,
			RackCount:          s.RackCount,
		}
		if len(s.Racks) != 0 {
			m.Racks = s.Racks
		}
		for _, c := range s.Conditions {
			if strings.HasPrefix(c.Type, scyllaDBDatacenterConditionPrefix) && slices.Contains(aggregatedConditionTypes, strings.TrimPrefix(c.Type, scyllaDBDatacenterConditionPrefix)) {
				// When a condition changes status its transition time changes with it.
				c.LastTransitionTime = metav1.Time{}
				m.Conditions = append(m.Conditions, c)
			}
		}
		return m
	}
	return !apiequality.Semantic.DeepEqual(mirrored(existing), mirrored(status))
}

// awaitsFirstScyllaDBDatacenterStatus tells whether the first status of sc, status, waits for the first status of
// its ScyllaDBDatacenter: sc has none yet, its datacenter exists as translated from its current spec but has not
// reported anything, and nothing is wrong. Written now, status would only say that, and the datacenter's first status
// (which its controller writes right after creating it) would replace it at once; that status write's watch event
// syncs sc again. A status reporting an error is written at once.
func awaitsFirstScyllaDBDatacenterStatus(sc *scyllav1.ScyllaCluster, state *syncState, status *scyllav1.ScyllaClusterStatus) bool {
	if !apiequality.Semantic.DeepEqual(&sc.Status, &scyllav1.ScyllaClusterStatus{}) {
		return false
	}
	sdc := state.sdc
	if sdc == nil || !state.sdcCurrent || sdc.DeletionTimestamp != nil || sdc.Status.ObservedGeneration != nil {
		return false
	}
	if meta.IsStatusConditionTrue(status.Conditions, controllerhelpers.DegradedCondition) {
		return false
	}
	for _, b := range status.Backups {
		if b.Error != nil {
			return false
		}
	}
	for _, r := range status.Repairs {
		if r.Error != nil {
			return false
		}
	}
	return true
}

// ownChangeSlack is how much longer than the batch period a change of the ScyllaCluster's own waits. The
// ScyllaCluster's writes follow its datacenter's by the time it takes to react, and the datacenter's batched writes
// come a batch period apart, so a change of its own falling due as the period ends would often be written just before
// the datacenter's next status arrives, and that status in a second write. Waiting a little longer lets one write carry
// both.
const ownChangeSlack = time.Second

// updateStatus writes status as sc's status unless it is already that. A change clients wait for
// (controllerhelpers.UrgentStatusChange) or of what sc mirrors of its ScyllaDBDatacenter's status (already batched
// by that controller, see scyllaDBDatacenterStatusChanged) is written at once; any other, of the ScyllaCluster's own
// (the ScyllaDB Manager IDs, the tasks' statuses), waits until sc's last status write is
// controllerhelpers.DefaultStatusBatchPeriod old (statusBatcher), and sc is synced again then, ownChangeSlack later.
//
// The operator is the only writer of a ScyllaCluster's status and computes all of it, so an Update that replaces it
// whole is right. sc comes from the informer or, while that is behind, from the controller's own last write
// (scyllaClusters), so a Conflict means that someone else changed it meanwhile: the watch event of the newer
// ScyllaCluster queues it again, and that sync writes the status, so the conflict is not retried with back-off.
func (c *Controller) updateStatus(ctx context.Context, sc *scyllav1.ScyllaCluster, status *scyllav1.ScyllaClusterStatus) error {
	if apiequality.Semantic.DeepEqual(&sc.Status, status) {
		return nil
	}
	key := cache.MetaObjectToName(sc).String()
	urgent := controllerhelpers.UrgentStatusChange(sc.Status.ObservedGeneration, status.ObservedGeneration, sc.Status.Conditions, status.Conditions, aggregatedConditionTypes...) ||
		scyllaDBDatacenterStatusChanged(&sc.Status, status)
	if !urgent {
		if wait := c.statusBatcher.Wait(key); wait > 0 {
			klog.FromContext(ctx).V(4).Info("Batching status change", "scyllaCluster", klog.KObj(sc), "wait", wait)
			c.queue.AddAfter(key, wait+ownChangeSlack)
			return nil
		}
	}

	sc = sc.DeepCopy()
	sc.Status = *status
	updated, err := c.scyllaClient.ScyllaV1().ScyllaClusters(sc.Namespace).UpdateStatus(ctx, sc, metav1.UpdateOptions{})
	if apierrors.IsConflict(err) {
		klog.FromContext(ctx).V(2).Info("ScyllaCluster changed since it was cached; its next sync writes the status", "scyllaCluster", klog.KObj(sc))
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't update status of ScyllaCluster %q: %w", klog.KObj(sc), err)
	}
	c.scyllaClusters.Written(updated)
	c.statusBatcher.Wrote(key)
	klog.FromContext(ctx).V(2).Info("Updated status", "scyllaCluster", klog.KObj(sc), "resourceVersion", updated.ResourceVersion)
	return nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
