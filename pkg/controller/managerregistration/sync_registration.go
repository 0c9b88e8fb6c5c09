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
//
// A first registration writes, in this order, and a sync killed between any two of the writes leaks and loses
// nothing, because the next sync (or the deregistration of an object deleted meanwhile) finds what it left:
//  1. the finalizer, right before ScyllaDB Manager's write (ensureCluster). Killed after it: ScyllaDB Manager holds
//     nothing; the next sync finds no cluster under the ID and creates it, a deletion finds none and lets the object
//     go.
//  2. the cluster in ScyllaDB Manager, under the ID derived from the object's UID. Killed after it: the annotation is
//     missing, but the same ID is derived again; the next sync finds the cluster up to date and writes only the
//     annotation and the conditions, a deletion finds the cluster under that ID and deletes it (the finalizer holds
//     the object until then).
//  3. the annotation, only once ScyllaDB Manager holds the cluster: tasks are scheduled in the cluster it names, and
//     the operator shows it as a ScyllaCluster's status.managerId. Killed after it: the next sync finds the cluster
//     and writes only the conditions.
//  4. the conditions, once, saying the outcome (a wait before was reported by an earlier sync).
//
// An annotation copied from another object's manifest is not trusted (ensureCluster): the object registers under
// its derived ID, and the annotation is replaced at step 3.
//
// The finalizer and the annotation can't share a patch: one must precede ScyllaDB Manager's write, the other follow
// it. A cluster adopted by name has another ID, which the annotation records before the adopting update
// (createCluster).
func (r *registrar[T]) register(ctx context.Context, target *registrationTarget[T]) error {
	obj := target.object
	if target.refused != nil {
		r.reportFailure(obj, target.refused)
		_, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), nil, target.refused))
		return err
	}
	if target.spec == nil {
		id, ok := obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation]
		// Another object's derived ID, copied with a manifest, names nothing of this object's; it stays until the
		// registration replaces it (the operator would copy a ScyllaCluster's status.managerId back into a removed
		// one), and the task controller does not schedule into it meanwhile.
		foreign := id != naming.ScyllaDBManagerClusterID(r.kind.kind, obj.GetUID()) && isDerivedClusterID(id)
		if ok && !foreign {
			// The annotation names a cluster ScyllaDB Manager may hold for the object already (registered before
			// the object's current generation, or by an older manager-controller, whose ID the operator copies
			// there): the object's deletion must remove it, wait or no wait.
			if err := r.ensureFinalizer(ctx, target); err != nil {
				return err
			}
			obj = target.object
		}
		_, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), target.waiting, nil))
		return err
	}

	id, failure, syncErr := r.ensureCluster(ctx, target)
	obj = target.object
	if syncErr != nil && failure == nil {
		// A Kubernetes write failed before ScyllaDB Manager's: nothing new to report, the retry goes on from there.
		return syncErr
	}
	if failure == nil && obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] != id {
		patched, err := r.patchClusterIDAnnotation(ctx, obj, &id)
		if err != nil {
			return err
		}
		obj = patched
	}

	target.retryLater = failure != nil && (failure.reason == scyllaDBManagerRejectedReason || failure.reason == ownershipConflictReason)
	r.reportFailure(obj, failure)
	if _, err := r.updateConditions(ctx, obj, makeConditions(obj.GetGeneration(), nil, failure)); err != nil {
		return utilerrors.NewAggregate([]error{syncErr, err})
	}
	return syncErr
}

// ensureCluster makes ScyllaDB Manager hold the cluster target asks for with one read, and a write only when it
// differs (one more read when the annotation names a cluster of another object, see isAnnotatedClusterOwnedBy: the
// object then uses its derived ID); the object gets the finalizer before that write, or as soon as the read finds its cluster. It returns the
// ID of the cluster, or failure describing why it can't, with the error to retry on when a retry may help; an error
// without failure is a Kubernetes write that failed before ScyllaDB Manager was written.
func (r *registrar[T]) ensureCluster(ctx context.Context, target *registrationTarget[T]) (id string, failure *progress, _ error) {
	logger := klog.FromContext(ctx)
	obj := target.object

	id, err := scyllaDBManagerClusterID(r.kind.kind, obj)
	if err != nil {
		return "", invalidClusterID(err), nil
	}
	derivedID := naming.ScyllaDBManagerClusterID(r.kind.kind, obj.GetUID())
	if id != derivedID && isDerivedClusterID(id) {
		r.reportCopiedClusterID(obj, id, derivedID, nil)
		id = derivedID
	}

	existing, err := r.managerClient.GetCluster(ctx, id)
	if err == nil && id != derivedID && !isAnnotatedClusterOwnedBy(existing, obj.GetUID(), target.previousOwners, target.spec.Name) {
		// The annotation came with a copied manifest: the cluster it names stays untouched, and the object gets its
		// own, whose ID replaces the annotation's once ScyllaDB Manager holds it (register).
		r.reportCopiedClusterID(obj, id, derivedID, existing)
		id = derivedID
		existing, err = r.managerClient.GetCluster(ctx, id)
	}
	required, makeErr := makeManagerCluster(id, obj.GetUID(), target.spec)
	if makeErr != nil {
		return "", &progress{reason: scyllaDBManagerErrorReason, message: makeErr.Error()}, makeErr
	}

	switch {
	case managerclient.IsNotFound(err):
		// A first registration, a lost ScyllaDB Manager database or one restored from an old copy: the cluster comes
		// back under the same ID, and so does its backup directory.
		if err := r.ensureFinalizer(ctx, target); err != nil {
			return "", nil, err
		}
		return r.createCluster(ctx, target, required)

	case err != nil:
		return r.managerFailure(obj, "read", err)

	case !isOwnedBy(existing, obj.GetUID(), target.previousOwners):
		return "", ownershipConflict(existing), nil
	}

	// ScyllaDB Manager holds the object's cluster: even when nothing is to be written (a finalizer removed by hand),
	// the object's deletion must remove it.
	if err := r.ensureFinalizer(ctx, target); err != nil {
		return "", nil, err
	}
	diff := clusterDiff(required, existing)
	if len(diff) == 0 {
		logger.V(4).Info("ScyllaDB Manager cluster is up to date", "clusterID", id)
		return id, nil, nil
	}

	// The name, the host or the token changed, the cluster was registered by someone else for this object, or it was
	// edited in ScyllaDB Manager behind the controller's back (sctool keeps the labels, the hash among them).
	if _, err := r.managerClient.UpdateCluster(ctx, withOthersLabels(required, existing.Labels)); err != nil {
		return r.managerFailure(obj, "update", err)
	}
	logger.V(2).Info("Updated ScyllaDB Manager cluster", "clusterID", id, "clusterName", required.Name, "fields", diff)
	r.recorder.Eventf(obj, corev1.EventTypeNormal, clusterUpdatedReason, "Updated cluster %q (ID %s) in ScyllaDB Manager", required.Name, id)
	return id, nil, nil
}

// reportCopiedClusterID records a Warning event on obj saying that its naming.ScyllaDBManagerClusterIDAnnotation, id,
// names a cluster of another object, found in ScyllaDB Manager as existing (nil when the ID alone tells: another
// object's derived ID), so that the object is registered under derivedID instead.
func (r *registrar[T]) reportCopiedClusterID(obj T, id, derivedID string, existing *managerclient.Cluster) {
	var owner string
	switch {
	case existing == nil:
		owner = "the ID is derived from another object's UID"
	case len(existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel]) == 0:
		owner = fmt.Sprintf("ScyllaDB Manager holds it as cluster %q, without label %s, and this object's cluster is named %q", existing.Name, naming.ScyllaDBManagerOwnerUIDLabel, managerClusterName(r.kind.kind, obj))
	default:
		owner = fmt.Sprintf("ScyllaDB Manager holds it as cluster %q of owner %s=%s", existing.Name, naming.ScyllaDBManagerOwnerUIDLabel, existing.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
	}
	r.recorder.Eventf(obj, corev1.EventTypeWarning, clusterIDNotOwnedReason,
		"Annotation %q names cluster ID %s, which is not this object's (%s): it was copied from another object, whose cluster is left alone; this object uses its own cluster ID %s",
		naming.ScyllaDBManagerClusterIDAnnotation, id, owner, derivedID)
}

// createCluster registers required, which ScyllaDB Manager does not hold under its ID. When another ID holds its name
// (registered by an older manager-controller under an ID it chose at random), that cluster is adopted instead if it
// is this object's: its ID is recorded in the annotation first, so that a sync killed before the adopting update
// finds it under that ID, as does the object's deregistration.
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
	if obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] != adopted.ID {
		patched, err := r.patchClusterIDAnnotation(ctx, obj, &adopted.ID)
		if err != nil {
			return "", nil, err
		}
		target.object, obj = patched, patched
	}
	if _, err := r.managerClient.UpdateCluster(ctx, withOthersLabels(adopted, named.Labels)); err != nil {
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
