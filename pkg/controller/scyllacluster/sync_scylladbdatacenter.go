package scyllacluster

import (
	"context"
	"errors"
	"fmt"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// syncScyllaDBDatacenter applies the ScyllaDBDatacenter translated from sc, handing sc's status.managerId over to it,
// and records it in state, noting whether this sync created it. A write the API server refuses (isRefusal) is a
// permanent error, not sent again until sc or the ScyllaDBDatacenter changes (applyUnlessRefused).
func (c *Controller) syncScyllaDBDatacenter(ctx context.Context, sc *scyllav1.ScyllaCluster, state *syncState) ([]metav1.Condition, error) {
	required, err := makeScyllaDBDatacenter(sc)
	if err != nil {
		return nil, state.permanent(scyllaDBDatacenterControllerName, invalidSpecReason,
			fmt.Errorf("can't translate ScyllaCluster %q into a ScyllaDBDatacenter: %w", klog.KObj(sc), err))
	}

	lister := c.scyllaDBDatacenterLister.ScyllaDBDatacenters(sc.Namespace)
	existing, err := lister.Get(required.Name)
	missing := apierrors.IsNotFound(err)
	switch {
	case missing:
	case err != nil:
		return nil, fmt.Errorf("can't get ScyllaDBDatacenter %q: %w", klog.KObj(required), err)
	case isControlledBy(existing, sc):
		// Until the apply below succeeds, the status is computed from what is there.
		state.sdc = existing
	case existing.DeletionTimestamp != nil:
		// Its deletion syncs this ScyllaCluster again (blockingScyllaDBDatacenterHandlerFuncs,
		// previousScyllaClusterHandlerFuncs); there is nothing for the user to sort out.
		state.sdcTaken = true
		return []metav1.Condition{scyllaDBDatacenterBeingDeletedCondition(required)}, nil
	case isOfPreviousScyllaCluster(existing, sc):
		// sc was deleted and created again before the garbage collector got to the old one's objects.
		state.sdcTaken = true
		return []metav1.Condition{leftOverCondition("ScyllaDBDatacenterLeftOver", "ScyllaDBDatacenter", existing)}, nil
	default:
		// Apply would refuse too, but with an event on every sync; this is the user's to sort out, so it is
		// reported once and not retried until the ScyllaDBDatacenter changes.
		state.sdcTaken = true
		return nil, state.permanent(scyllaDBDatacenterControllerName, ownershipConflictReason,
			fmt.Errorf("ScyllaDBDatacenter %q already exists and is %s, not by this ScyllaCluster; delete it or give it a different name", klog.KObj(existing), describeController(existing)))
	}

	// An invalid managerId is not handed over; sync reports it when the status drops it.
	handOver, _ := makeScyllaDBManagerClusterIDHandOver(sc)
	var sdc *scyllav1alpha1.ScyllaDBDatacenter
	verdictKey := func() (string, error) {
		// The webhook judges an update by the existing object too (a rack removed while it still has nodes, in its
		// status): any change of it, status included, is worth another try, as is any change of sc's spec.
		var existingVersion string
		if existing != nil {
			existingVersion = existing.ResourceVersion
		}
		return resourceapply.Hash(struct {
			Generation      int64
			Required        *scyllav1alpha1.ScyllaDBDatacenter
			HandOver        map[string]string
			ExistingVersion string
		}{sc.Generation, required, handOver, existingVersion})
	}
	err = c.applyUnlessRefused(state, "ScyllaDBDatacenter", "ScyllaDBDatacenter/"+required.Name, verdictKey, func(recorder record.EventRecorder) error {
		var err error
		sdc, _, err = resourceapply.Apply(ctx, c.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(sc.Namespace), lister, recorder, required, resourceapply.ApplyOptions{
			AnnotationsIfAbsent: handOver,
		})
		return err
	})
	switch {
	case errors.Is(err, resourceapply.ErrObjectBeingDeleted):
		return []metav1.Condition{scyllaDBDatacenterBeingDeletedCondition(required)}, nil
	case isRefused(err):
		// Retrying would be refused alike: reported once, and tried again when sc or the ScyllaDBDatacenter changes.
		// The tasks are still applied while the ScyllaDBDatacenter exists, and the status is computed from it.
		state.sdcRefused = true
		return nil, state.permanent(scyllaDBDatacenterControllerName, refusedReason, err)
	case err != nil:
		return nil, err
	}

	state.sdc = sdc
	state.sdcCurrent = true
	state.sdcCreated = missing
	return nil, nil
}

// scyllaDBDatacenterBeingDeletedCondition is the progressing condition of waiting for the deletion of the
// ScyllaDBDatacenter named like required.
func scyllaDBDatacenterBeingDeletedCondition(required metav1.Object) metav1.Condition {
	return metav1.Condition{
		Type:    "ScyllaDBDatacenterBeingDeleted",
		Reason:  waitingForDeletionReason,
		Message: fmt.Sprintf("ScyllaDBDatacenter %q is being deleted; it is created again once it is gone", klog.KObj(required)),
	}
}

// leftOverCondition is the progressing condition, of type condType, of waiting for the garbage collector to delete
// obj, an object of kind that a deleted ScyllaCluster of the same name controls (isOfPreviousScyllaCluster).
func leftOverCondition(condType, kind string, obj metav1.Object) metav1.Condition {
	return metav1.Condition{
		Type:   condType,
		Reason: waitingForDeletionReason,
		Message: fmt.Sprintf("%s %q belongs to a deleted ScyllaCluster of the same name (UID %s) and is left to the garbage collector; it is created again once it is gone",
			kind, klog.KObj(obj), metav1.GetControllerOfNoCopy(obj).UID),
	}
}

// describeController says what controls obj, for messages.
func describeController(obj metav1.Object) string {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return "not controlled by anything"
	}
	return fmt.Sprintf("controlled by %s %q (UID %s)", ref.Kind, ref.Name, ref.UID)
}
