package managerregistration

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// register makes ScyllaDB Manager hold the cluster target asks for, records its ID in
// naming.ScyllaDBManagerClusterIDAnnotation and reports the outcome in the object's conditions. A failure ScyllaDB
// Manager will repeat until the object changes is reported and not returned, so that it is not retried hot; any other
// failure is returned too, for the queue to retry with back-off.
func (r *registrar[T]) register(ctx context.Context, target *registrationTarget[T]) error {
	obj := target.object
	if target.refused != nil {
		r.reportFailure(obj, target.refused)
		_, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), nil, target.refused))
		return err
	}
	if target.spec == nil {
		_, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), target.waiting, nil))
		return err
	}

	id, failure, syncErr := r.ensureCluster(ctx, target)
	if failure == nil && obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] != id {
		// Only once ScyllaDB Manager holds the cluster: later syncs, and the ScyllaCluster's status.managerId, take
		// the annotation for the registered cluster.
		patched, err := r.patchClusterIDAnnotation(ctx, obj, &id)
		if err != nil {
			return err
		}
		obj = patched
	}

	r.reportFailure(obj, failure)
	if _, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), nil, failure)); err != nil {
		return utilerrors.NewAggregate([]error{syncErr, err})
	}
	return syncErr
}

// ensureCluster makes ScyllaDB Manager hold the cluster target asks for with one read, and a write only when it
// differs. It returns the ID of the cluster, or failure describing why it can't, with the error to retry on when a
// retry may help.
func (r *registrar[T]) ensureCluster(ctx context.Context, target *registrationTarget[T]) (id string, failure *progress, _ error) {
	logger := klog.FromContext(ctx)
	obj := target.object

	id, err := scyllaDBManagerClusterID(r.kind.kind, obj)
	if err != nil {
		return "", invalidClusterID(err), nil
	}
	required, err := makeManagerCluster(id, obj.GetUID(), target.spec)
	if err != nil {
		return "", &progress{reason: scyllaDBManagerErrorReason, message: err.Error()}, err
	}

	existing, err := r.managerClient.GetCluster(ctx, id)
	switch {
	case managerclient.IsNotFound(err):
		// A first registration, a lost ScyllaDB Manager database or one restored from an old copy: the cluster comes
		// back under the same ID, and so does its backup directory.
		return r.createCluster(ctx, target, required)

	case err != nil:
		return r.managerFailure(obj, "read", err)

	case !isOwnedBy(existing, obj.GetUID(), target.previousOwners):
		return "", ownershipConflict(existing), nil

	case existing.Labels[naming.ScyllaDBManagerManagedHashLabel] == required.Labels[naming.ScyllaDBManagerManagedHashLabel]:
		logger.V(4).Info("ScyllaDB Manager cluster is up to date", "clusterID", id)
		return id, nil, nil
	}

	// The name, the host or the token changed, or the cluster was registered by someone else for this object.
	if _, err := r.managerClient.UpdateCluster(ctx, required); err != nil {
		return r.managerFailure(obj, "update", err)
	}
	logger.V(2).Info("Updated ScyllaDB Manager cluster", "clusterID", id, "clusterName", required.Name)
	r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterUpdatedReason, "Updated cluster %q (ID %s) in ScyllaDB Manager", required.Name, id)
	return id, nil, nil
}

// createCluster registers required, which ScyllaDB Manager does not hold under its ID. When another ID holds its name
// (registered by an older manager-controller under an ID it chose at random), that cluster is adopted instead if it
// is this object's.
func (r *registrar[T]) createCluster(ctx context.Context, target *registrationTarget[T], required *managerclient.Cluster) (string, *progress, error) {
	logger := klog.FromContext(ctx)
	obj := target.object

	_, err := r.managerClient.CreateCluster(ctx, required)
	if err == nil {
		logger.V(2).Info("Registered cluster with ScyllaDB Manager", "clusterID", required.ID, "clusterName", required.Name)
		r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterRegisteredReason, "Registered cluster %q (ID %s) with ScyllaDB Manager", required.Name, required.ID)
		return required.ID, nil, nil
	}
	if !isNameTakenError(err) {
		return r.managerFailure(obj, "register", err)
	}

	// Names can't be looked up by name reliably (they hold "/"), so the list is read, and only in this case.
	clusters, err := r.managerClient.ListClusters(ctx)
	if err != nil {
		return r.managerFailure(obj, "list clusters to adopt", err)
	}
	var named *managerclient.Cluster
	for i := range clusters {
		if clusters[i].Name == required.Name {
			named = &clusters[i]
			break
		}
	}
	if named == nil {
		// Deleted since; the next attempt creates it.
		err := fmt.Errorf("ScyllaDB Manager reported name %q as taken, but lists no cluster with it", required.Name)
		return "", &progress{reason: scyllaDBManagerErrorReason, message: err.Error()}, err
	}
	if !isOwnedBy(named, obj.GetUID(), target.previousOwners) {
		return "", ownershipConflict(named), nil
	}

	adopted, err := makeManagerCluster(named.ID, obj.GetUID(), target.spec)
	if err != nil {
		return "", &progress{reason: scyllaDBManagerErrorReason, message: err.Error()}, err
	}
	if _, err := r.managerClient.UpdateCluster(ctx, adopted); err != nil {
		return r.managerFailure(obj, "adopt", err)
	}
	logger.V(2).Info("Adopted ScyllaDB Manager cluster by name", "clusterID", adopted.ID, "clusterName", adopted.Name)
	r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterAdoptedReason, "Adopted cluster %q (ID %s) registered in ScyllaDB Manager before", adopted.Name, adopted.ID)
	return adopted.ID, nil, nil
}

// ownershipConflict describes cluster, which belongs to another object and is left alone. Retrying does not help:
// the object, or the other one, must change first.
func ownershipConflict(cluster *managerclient.Cluster) *progress {
	return &progress{
		reason: ownershipConflictReason,
		message: fmt.Sprintf("ScyllaDB Manager cluster %q (ID %s) belongs to another object (%s %s)",
			cluster.Name, cluster.ID, naming.ScyllaDBManagerOwnerUIDLabel, cluster.Labels[naming.ScyllaDBManagerOwnerUIDLabel]),
	}
}

// managerFailure describes a failed ScyllaDB Manager call about obj. A 400 is reported only: ScyllaDB Manager refuses
// the same request again until the object changes, which syncs it anyway. Anything else is also returned, to be
// retried with back-off.
func (r *registrar[T]) managerFailure(obj metav1.Object, verb string, err error) (string, *progress, error) {
	message := fmt.Sprintf("can't %s the cluster in ScyllaDB Manager: %s", verb, describeManagerError(err))
	if managerclient.IsBadRequest(err) {
		return "", &progress{reason: scyllaDBManagerRejectedReason, message: message}, nil
	}
	return "", &progress{reason: scyllaDBManagerErrorReason, message: message},
		fmt.Errorf("can't %s the ScyllaDB Manager cluster of %s %q: %w", verb, r.kind.kind, klog.KObj(obj), err)
}

// reportFailure records a Warning event for failure unless the object's Degraded condition already reports it: an
// unchanged failure is not news.
func (r *registrar[T]) reportFailure(obj T, failure *progress) {
	if failure == nil {
		return
	}
	for _, c := range r.kind.conditions(obj) {
		if c.Type == ScyllaDBManagerRegistrationDegradedCondition && c.Status == metav1.ConditionTrue && c.Message == failure.message {
			return
		}
	}
	r.recorder.Event(obj, corev1.EventTypeWarning, registrationFailedReason, failure.message)
}

// patchClusterIDAnnotation sets naming.ScyllaDBManagerClusterIDAnnotation to id, or removes it when id is nil, with a
// JSON merge patch that touches no other annotation. The patch carries obj's UID so that it never lands on another
// object recreated under the same name.
func (r *registrar[T]) patchClusterIDAnnotation(ctx context.Context, obj T, id *string) (T, error) {
	var zero T
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"uid":         obj.GetUID(),
			"annotations": map[string]any{naming.ScyllaDBManagerClusterIDAnnotation: id},
		},
	})
	if err != nil {
		return zero, fmt.Errorf("can't marshal the annotation patch of %s %q: %w", r.kind.kind, klog.KObj(obj), err)
	}
	patched, err := r.kind.client(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: naming.ManagerControllerFieldManager})
	if err != nil {
		return zero, fmt.Errorf("can't patch annotation %q of %s %q: %w", naming.ScyllaDBManagerClusterIDAnnotation, r.kind.kind, klog.KObj(obj), err)
	}
	if id != nil {
		klog.FromContext(ctx).V(2).Info("Set the ScyllaDB Manager cluster ID annotation", "clusterID", *id)
	} else {
		klog.FromContext(ctx).V(2).Info("Removed the ScyllaDB Manager cluster ID annotation")
	}
	return patched, nil
}
