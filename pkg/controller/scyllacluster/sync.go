package scyllacluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// permanentError is an error that retrying does not fix: the ScyllaCluster's spec or a conflicting object must
// change first, and either change triggers a sync.
type permanentError struct {
	// reason is the reason of the Warning event that reports it.
	reason string
	err    error
}

func (e *permanentError) Error() string { return e.err.Error() }

func (e *permanentError) Unwrap() error { return e.err }

// permanent records err as a permanent error of subSync and returns it.
func (s *syncState) permanent(subSync, reason string, err error) error {
	pe := &permanentError{reason: reason, err: err}
	s.permanentErrors[subSync] = pe
	return pe
}

// isPermanent tells whether err, possibly wrapped but not aggregated with others, is a permanentError. An aggregate
// is permanent only as a whole, when wrapped in one.
func isPermanent(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if _, ok := err.(*permanentError); ok {
			return true
		}
	}
	return false
}

// sync makes the ScyllaDBDatacenter and ScyllaDBManagerTasks of the ScyllaCluster named by key match its spec and
// writes its status back.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	sc, err := c.scyllaClusters.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaCluster is gone", "scyllaCluster", klog.KRef(namespace, name))
		c.statusBatcher.Forget(key)
		c.createdTasks.forget(key)
		c.refusals.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaCluster %q: %w", key, err)
	}

	if sc.DeletionTimestamp != nil {
		// The garbage collector removes the owned objects; applying them now would only fight it.
		return nil
	}

	state := newSyncState()
	state.previousRefusals = c.refusals.Get(key)
	// Whatever way the sync ends, a refused write it did not send again is forgotten: one it did not get to (the tasks
	// after the ScyllaDBDatacenter's creation, the datacenter of a spec that can't be translated) is sent once more
	// next time.
	defer func() { c.refusals.Set(key, state.refusals) }()
	// A spec the webhook would refuse (one stored while it was not installed, or before it had a rule) is not
	// translated where it is wrong: errors inside one backup or repair leave only that task as it is, and the
	// ScyllaDBManagerTask sub-sync reports them.
	validationErrs := validation.ValidateScyllaCluster(sc)
	invalidTasks, specErrs := splitTaskErrors(sc, validationErrs)
	subSyncs := []controllerhelpers.SubSync{
		{
			Name: scyllaDBDatacenterControllerName,
			Sync: func(ctx context.Context) ([]metav1.Condition, error) { return c.syncScyllaDBDatacenter(ctx, sc, state) },
		},
		{
			Name: scyllaDBManagerTaskControllerName,
			Sync: func(ctx context.Context) ([]metav1.Condition, error) {
				if state.sdcCreated {
					// Left to the next sync, see below.
					return nil, nil
				}
				return c.syncScyllaDBManagerTasks(ctx, sc, invalidTasks, state)
			},
		},
	}
	if len(specErrs) != 0 {
		// Any other error stops the ScyllaDBDatacenter's translation: it stays as it is, and the status is computed
		// from it. The tasks don't depend on its spec, and are still applied while it exists.
		c.observeScyllaDBDatacenter(sc, state)
		err := specErrs.ToAggregate()
		subSyncs[0] = controllerhelpers.SubSync{
			Name: specValidationName,
			Sync: func(ctx context.Context) ([]metav1.Condition, error) {
				return nil, state.permanent(specValidationName, invalidSpecReason, err)
			},
		}
	}
	subSyncConditions, syncErr := controllerhelpers.RunSubSyncs(ctx, sc.Generation, subSyncs...)
	if subSyncConditions == nil {
		return syncErr
	}
	if state.sdcCreated {
		// The ScyllaDBDatacenter is what makes pods; the tasks and the status can wait. When hundreds of
		// ScyllaClusters are created at once, their task creates and status writes would otherwise queue in the
		// client's rate limiter ahead of the other ScyllaClusters' datacenters. The informer's add event of the new
		// ScyllaDBDatacenter syncs the ScyllaCluster again, and that sync does the rest.
		logger.V(2).Info("Created ScyllaDBDatacenter; its add event brings the sync of the tasks and the status", "scyllaCluster", klog.KObj(sc))
		return syncErr
	}

	if len(state.pendingTasks) != 0 {
		// Tasks an earlier sync created are not in the cache yet: a status computed now would report them missing, and
		// their add events sync the ScyllaCluster again.
		logger.V(4).Info("Waiting for the cache to show created ScyllaDBManagerTasks before writing the status", "scyllaCluster", klog.KObj(sc), "tasks", state.pendingTasks)
		return syncErr
	}

	if syncErr != nil && resourceapply.IsStaleCacheError(syncErr) {
		// A create or update refused because the cache is behind (the object exists already, or changed meanwhile)
		// says nothing about the ScyllaCluster, and this sync's view of its objects is stale: a status written from
		// it would report a failure and the next write would take it back. The retry writes the status.
		logger.V(2).Info("Cache is behind the API server; retrying before writing the status", "scyllaCluster", klog.KObj(sc), "err", syncErr)
		return syncErr
	}

	c.recordPermanentErrors(sc, state, subSyncConditions)

	status, err := calculateStatus(sc, state, subSyncConditions, c.now())
	if err != nil {
		return utilerrors.NewAggregate([]error{syncErr, err})
	}
	c.recordDroppedManagerID(sc, status)
	var statusErr error
	if awaitsFirstScyllaDBDatacenterStatus(sc, state, status) {
		logger.V(4).Info("Waiting for the ScyllaDBDatacenter's first status before writing the first status", "scyllaCluster", klog.KObj(sc))
	} else {
		statusErr = c.updateStatus(ctx, sc, status)
	}

	requeueErr := utilerrors.FilterOut(syncErr, isPermanent)
	if syncErr != nil && requeueErr == nil {
		// Reported in the status; retrying would not help.
		logger.V(2).Info("ScyllaCluster can't be fully reconciled until it or a conflicting object changes", "scyllaCluster", klog.KObj(sc), "err", syncErr)
	}
	return utilerrors.NewAggregate([]error{requeueErr, statusErr})
}

// observeScyllaDBDatacenter records in state the ScyllaDBDatacenter of sc, as cached, for a sync that can't translate
// it: sc's own, or whether an object sc does not control has its name.
func (c *Controller) observeScyllaDBDatacenter(sc *scyllav1.ScyllaCluster, state *syncState) {
	state.sdcUntranslated = true
	sdc, err := c.scyllaDBDatacenterLister.ScyllaDBDatacenters(sc.Namespace).Get(naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name))
	switch {
	case err != nil:
		// Not there (the lister reads the cache, where a miss is all that can go wrong): the tasks wait for it.
	case isControlledBy(sdc, sc):
		state.sdc = sdc
	default:
		state.sdcTaken = true
	}
}

// recordPermanentErrors records a Warning event for each permanent error the sync met, unless the ScyllaCluster's
// status already reports it: an unchanged failure is not news.
func (c *Controller) recordPermanentErrors(sc *scyllav1.ScyllaCluster, state *syncState, subSyncConditions []metav1.Condition) {
	for subSync, pe := range state.permanentErrors {
		condType := subSync + controllerhelpers.DegradedCondition
		current := meta.FindStatusCondition(subSyncConditions, condType)
		previous := meta.FindStatusCondition(sc.Status.Conditions, condType)
		if current == nil || (previous != nil && previous.Status == current.Status && previous.Message == current.Message) {
			continue
		}
		c.eventRecorder.Event(sc, corev1.EventTypeWarning, pe.reason, pe.Error())
	}
}

// recordDroppedManagerID records a Warning event when status drops sc's managerId because it can't be handed over to
// ScyllaDB Manager integration: the cluster is then registered under a new ID, which the user should know about. The
// dropped value is what makes the event fire once.
func (c *Controller) recordDroppedManagerID(sc *scyllav1.ScyllaCluster, status *scyllav1.ScyllaClusterStatus) {
	_, err := scyllaClusterManagerID(sc)
	if err == nil || status.ManagerID != nil {
		return
	}
	c.eventRecorder.Eventf(sc, corev1.EventTypeWarning, invalidManagerIDReason,
		"%v: it is not handed over to ScyllaDB Manager integration and is dropped from the status; the cluster is registered in ScyllaDB Manager under a new ID", err)
}

// now returns the time conditions that change status get as lastTransitionTime.
func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock().Truncate(time.Second))
}
