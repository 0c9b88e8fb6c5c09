package scyllacluster

import (
	"context"
	"errors"
	"fmt"
	"slices"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// syncScyllaDBManagerTasks applies a ScyllaDBManagerTask for each of sc's backups and repairs, deletes those of
// tasks that were removed from the spec, and records the tasks and their errors in state. A task that can't be
// translated, among them those with validation errors (invalidTasks, by entry path), keeps the ScyllaDBManagerTask it
// has, as it is, and its error is permanent: only a change of the spec, which syncs sc again, can fix it. So is a
// task the API server refuses (isRefusal): it is not sent again until sc, the task or sc's ScyllaDBDatacenter
// changes (applyUnlessRefused).
func (c *Controller) syncScyllaDBManagerTasks(ctx context.Context, sc *scyllav1.ScyllaCluster, invalidTasks map[string]field.ErrorList, state *syncState) ([]metav1.Condition, error) {
	tasks := makeScyllaDBManagerTasks(sc, invalidTasks)

	key := cache.MetaObjectToName(sc).String()
	client := c.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(sc.Namespace)
	lister := c.scyllaDBManagerTaskLister.ScyllaDBManagerTasks(sc.Namespace)

	var progressing []metav1.Condition
	var permanentErrs, transientErrs []error
	var awaitingScyllaDBDatacenter string
	// wanted names every task of the spec, also those that failed, so that their objects are not pruned.
	wanted := make([]*scyllav1alpha1.ScyllaDBManagerTask, 0, len(tasks))
	handled := sets.New[string]()
	for _, t := range tasks {
		if handled.Has(t.name) {
			// A later entry of an earlier one's name (validation refuses the duplicate): the object is the earlier
			// one's.
			err := t.err
			if err == nil {
				err = fmt.Errorf("%s names ScyllaDBManagerTask %q, as an earlier entry does", t.entry, t.name)
			}
			state.entryErrors[t.entry] = err
			permanentErrs = append(permanentErrs, err)
			continue
		}
		handled.Insert(t.name)
		wanted = append(wanted, &scyllav1alpha1.ScyllaDBManagerTask{ObjectMeta: metav1.ObjectMeta{Name: t.name}})

		existing, err := lister.Get(t.name)
		switch {
		case err == nil:
			c.createdTasks.observed(key, t.name)
			if isControlledBy(existing, sc) {
				// Until an apply succeeds, the status is computed from what is there.
				state.tasks[t.name] = existing
			}
		case !apierrors.IsNotFound(err):
			transientErrs = append(transientErrs, fmt.Errorf("can't get ScyllaDBManagerTask %q: %w", t.name, err))
			continue
		case c.createdTasks.pending(key, t.name):
			// Created by an earlier sync; its add event syncs the ScyllaCluster again.
			state.pendingTasks = append(state.pendingTasks, t.name)
			continue
		}

		if t.err != nil {
			state.entryErrors[t.entry] = t.err
			permanentErrs = append(permanentErrs, t.err)
			continue
		}

		if existing != nil && isOfPreviousScyllaCluster(existing, sc) {
			// sc was deleted and created again before the garbage collector got to the old one's tasks. Its
			// deletion syncs sc again (previousScyllaClusterHandlerFuncs).
			if existing.DeletionTimestamp != nil {
				progressing = append(progressing, scyllaDBManagerTaskBeingDeletedCondition(existing))
			} else {
				progressing = append(progressing, leftOverCondition("ScyllaDBManagerTaskLeftOver", "ScyllaDBManagerTask", existing))
			}
			continue
		}

		switch {
		case state.sdcTaken:
			// The task names its ScyllaDBDatacenter, not sc: while the one of that name is another's (or a deleted
			// ScyllaCluster's), ScyllaDB Manager integration would schedule the task in that one's cluster.
			awaitingScyllaDBDatacenter = "is this ScyllaCluster's, not another's"
			continue
		case state.sdcUntranslated && state.sdc == nil:
			// A task naming a ScyllaDBDatacenter that does not exist is refused by the webhook.
			awaitingScyllaDBDatacenter = "exists; it is not created while the spec outside the tasks can't be translated"
			continue
		case state.sdcRefused && state.sdc == nil:
			awaitingScyllaDBDatacenter = "exists; it is not created while the API server refuses it"
			continue
		}

		var actual *scyllav1alpha1.ScyllaDBManagerTask
		verdictKey := func() (string, error) {
			// The webhook judges a task by the ScyllaDBDatacenter it names too, which must exist.
			var existingVersion, sdcVersion string
			if existing != nil {
				existingVersion = existing.ResourceVersion
			}
			if state.sdc != nil {
				sdcVersion = fmt.Sprintf("%s/%s", state.sdc.UID, state.sdc.ResourceVersion)
			}
			return resourceapply.Hash(struct {
				Generation                  int64
				Required                    *scyllav1alpha1.ScyllaDBManagerTask
				ExistingVersion, SDCVersion string
			}{sc.Generation, t.task, existingVersion, sdcVersion})
		}
		err = c.applyUnlessRefused(state, "ScyllaDBManagerTask", "ScyllaDBManagerTask/"+t.name, verdictKey, func(recorder record.EventRecorder) error {
			var err error
			actual, _, err = resourceapply.Apply(ctx, client, lister, recorder, t.task, resourceapply.ApplyOptions{})
			return err
		})
		switch {
		case errors.Is(err, resourceapply.ErrObjectBeingDeleted):
			progressing = append(progressing, scyllaDBManagerTaskBeingDeletedCondition(t.task))
		case errors.Is(err, resourceapply.ErrOwnershipConflict), isRefused(err):
			// Only whoever owns that object, or a change of the spec, can resolve it: report it and don't retry in a
			// hot loop.
			state.taskErrors[t.name] = err
			permanentErrs = append(permanentErrs, err)
		case err != nil:
			state.taskErrors[t.name] = err
			transientErrs = append(transientErrs, err)
		default:
			state.tasks[t.name] = actual
			if existing == nil {
				c.createdTasks.recordCreate(key, t.name)
			}
		}
	}

	if len(awaitingScyllaDBDatacenter) != 0 {
		progressing = append(progressing, metav1.Condition{
			Type:   "AwaitingScyllaDBDatacenter",
			Reason: awaitingScyllaDBDatacenterReason,
			Message: fmt.Sprintf("ScyllaDBManagerTasks are created and updated once ScyllaDBDatacenter %q, which they are scheduled in, %s",
				klog.KRef(sc.Namespace, naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)), awaitingScyllaDBDatacenter),
		})
	}

	existing, err := lister.List(labels.Everything())
	if err != nil {
		transientErrs = append(transientErrs, fmt.Errorf("can't list ScyllaDBManagerTasks: %w", err))
	} else if _, err := resourceapply.Prune(ctx, client, c.eventRecorder, metav1.NewControllerRef(sc, scyllaClusterGVK), existing, wanted, resourceapply.PruneOptions{}); err != nil {
		transientErrs = append(transientErrs, err)
	}

	if len(transientErrs) != 0 {
		return progressing, utilerrors.NewAggregate(append(permanentErrs, transientErrs...))
	}
	if len(permanentErrs) != 0 {
		reason := invalidSpecReason
		if !slices.ContainsFunc(permanentErrs, func(err error) bool { return !isRefused(err) }) {
			reason = refusedReason
		}
		return progressing, state.permanent(scyllaDBManagerTaskControllerName, reason, utilerrors.NewAggregate(permanentErrs))
	}
	return progressing, nil
}

// scyllaDBManagerTaskBeingDeletedCondition is the progressing condition of waiting for the deletion of the
// ScyllaDBManagerTask named like task.
func scyllaDBManagerTaskBeingDeletedCondition(task metav1.Object) metav1.Condition {
	return metav1.Condition{
		Type:    "ScyllaDBManagerTaskBeingDeleted",
		Reason:  waitingForDeletionReason,
		Message: fmt.Sprintf("ScyllaDBManagerTask %q is being deleted; it is created again once it is gone", klog.KObj(task)),
	}
}
