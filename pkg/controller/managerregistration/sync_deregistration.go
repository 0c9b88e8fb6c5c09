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

// deleteCluster removes the cluster of target's object from ScyllaDB Manager, if it is there and it is the object's.
// A cluster of another object is left alone: the finalizer only guards what this object registered. It returns
// failure describing why it can't, with the error to retry on when a retry may help.
func (r *registrar[T]) deleteCluster(ctx context.Context, target *registrationTarget[T]) (failure *progress, _ error) {
	logger := klog.FromContext(ctx)
	obj := target.object
	id, err := scyllaDBManagerClusterID(r.kind.kind, obj)
	if err != nil {
		// Whatever cluster it was meant to name, this one can't be looked up safely.
		return invalidClusterID(err), nil
	}

	existing, err := r.managerClient.GetCluster(ctx, id)
	switch {
	case managerclient.IsNotFound(err):
		logger.V(4).Info("ScyllaDB Manager holds no cluster to deregister", "clusterID", id)
		return nil, nil
	case err != nil:
		_, failure, err := r.managerFailure(obj, "read", err)
		return failure, err
	case !isOwnedBy(existing, obj.GetUID(), target.previousOwners):
		logger.V(2).Info("Leaving a ScyllaDB Manager cluster of another object in place", "clusterID", id, "ownerUID", existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
		r.recorder.Eventf(obj, corev1.EventTypeWarning, clusterNotOwnedReason, "Left cluster %q (ID %s) in ScyllaDB Manager: it belongs to another object (%s %s)",
			existing.Name, id, naming.ScyllaDBManagerOwnerUIDLabel, existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
		return nil, nil
	}

	if err := r.managerClient.DeleteCluster(ctx, id); err != nil && !managerclient.IsNotFound(err) {
		_, failure, err := r.managerFailure(obj, "deregister", err)
		return failure, err
	}
	logger.V(2).Info("Deregistered cluster from ScyllaDB Manager", "clusterID", id, "clusterName", existing.Name)
	r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterDeregisteredReason, "Deregistered cluster %q (ID %s) from ScyllaDB Manager", existing.Name, id)
	return nil, nil
}
