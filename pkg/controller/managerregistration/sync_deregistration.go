package managerregistration

import (
	"context"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// deregister removes the cluster of target's object from ScyllaDB Manager and then the object's finalizer, last, so
// that a failure in between leaves the object to be deregistered again. unlabelled tells that the object stays but no
// longer asks to be registered: it then also loses the cluster ID annotation and this controller's conditions, which
// would otherwise describe a registration that is gone. The annotation goes even when another actor set it (the
// operator, for a ScyllaCluster's datacenter): such objects are always labelled, so they never get here.
func (r *registrar[T]) deregister(ctx context.Context, target *registrationTarget[T]) error {
	obj := target.object
	unlabelled := obj.GetDeletionTimestamp() == nil

	failure, syncErr := r.deleteCluster(ctx, target)
	if failure != nil {
		target.retryLater = failure.reason == scyllaDBManagerRejectedReason
		r.reportFailure(obj, failure)
		waiting := &progress{reason: deregisteringReason, message: "waiting for the cluster to be removed from ScyllaDB Manager"}
		if _, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), waiting, failure)); err != nil {
			return utilerrors.NewAggregate([]error{syncErr, err})
		}
		return syncErr
	}

	if unlabelled {
		if _, ok := obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
			patched, err := r.patchClusterIDAnnotation(ctx, obj, nil)
			if err != nil {
				return err
			}
			obj = patched
		}
		patched, err := r.updateConditions(ctx, obj, nil)
		if err != nil {
			return err
		}
		obj = patched
	}

	_, _, err := controllerhelpers.RemoveFinalizer(ctx, r.kind.client(obj.GetNamespace()), obj, naming.ScyllaDBManagerClusterFinalizer)
	return err
}

// deleteCluster removes the cluster of target's object from ScyllaDB Manager, if it is there and provably the
// object's (isProvablyOwnedBy). It looks under the ID the annotation names and, unless that cluster was the object's,
// under the object's derived ID too: an annotation copied from another object names that object's cluster, while the
// object's own may have been registered under its derived ID by a sync killed before it replaced the annotation. A
// cluster of another object, or one without an owner label, is left alone: the finalizer only guards what this object
// registered. It returns failure describing why it can't, with the error to retry on when a retry may help.
func (r *registrar[T]) deleteCluster(ctx context.Context, target *registrationTarget[T]) (failure *progress, _ error) {
	obj := target.object
	id, err := scyllaDBManagerClusterID(r.kind.kind, obj)
	if err != nil {
		// Whatever cluster it was meant to name, this one can't be looked up safely.
		return invalidClusterID(err), nil
	}
	derivedID := naming.ScyllaDBManagerClusterID(r.kind.kind, obj.GetUID())
	if id != derivedID {
		if isDerivedClusterID(id) {
			// Another object's derived ID: its cluster is not looked at.
			r.reportCopiedClusterID(obj, id, derivedID, nil)
		} else {
			deleted, failure, err := r.deleteClusterWithID(ctx, target, id)
			if failure != nil || deleted {
				return failure, err
			}
		}
	}
	_, failure, err = r.deleteClusterWithID(ctx, target, derivedID)
	return failure, err
}

// deleteClusterWithID removes the cluster ScyllaDB Manager holds under id if it is provably target's object's, and
// tells whether it did.
func (r *registrar[T]) deleteClusterWithID(ctx context.Context, target *registrationTarget[T], id string) (deleted bool, failure *progress, _ error) {
	logger := klog.FromContext(ctx)
	obj := target.object

	existing, err := r.managerClient.GetCluster(ctx, id)
	switch {
	case managerclient.IsNotFound(err):
		logger.V(4).Info("ScyllaDB Manager holds no cluster to deregister", "clusterID", id)
		return false, nil, nil
	case err != nil:
		_, failure, err := r.managerFailure(obj, "read", err)
		return false, failure, err
	case !isProvablyOwnedBy(existing, obj.GetUID(), target.previousOwners):
		owner := existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel]
		logger.V(2).Info("Leaving a ScyllaDB Manager cluster that is not provably the object's in place", "clusterID", id, "ownerUID", owner)
		if len(owner) == 0 {
			r.recorder.Eventf(obj, corev1.EventTypeWarning, clusterNotOwnedReason, "Left cluster %q (ID %s) in ScyllaDB Manager: it has no %s label, so it may be another object's",
				existing.Name, id, naming.ScyllaDBManagerOwnerUIDLabel)
		} else {
			r.recorder.Eventf(obj, corev1.EventTypeWarning, clusterNotOwnedReason, "Left cluster %q (ID %s) in ScyllaDB Manager: it belongs to another object (%s %s)",
				existing.Name, id, naming.ScyllaDBManagerOwnerUIDLabel, owner)
		}
		return false, nil, nil
	}

	if err := r.managerClient.DeleteCluster(ctx, id); err != nil && !managerclient.IsNotFound(err) {
		_, failure, err := r.managerFailure(obj, "deregister", err)
		return false, failure, err
	}
	logger.V(2).Info("Deregistered cluster from ScyllaDB Manager", "clusterID", id, "clusterName", existing.Name)
	r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterDeregisteredReason, "Deregistered cluster %q (ID %s) from ScyllaDB Manager", existing.Name, id)
	return true, nil, nil
}
