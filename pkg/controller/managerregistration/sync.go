package managerregistration

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
)

// makeScyllaDBDatacenterTarget returns what sdc asks the registrar for, given its agent auth-token Secret (nil when
// it does not exist).
func makeScyllaDBDatacenterTarget(sdc *scyllav1alpha1.ScyllaDBDatacenter, authTokenSecret *corev1.Secret) *registrationTarget[*scyllav1alpha1.ScyllaDBDatacenter] {
	spec, waiting := makeScyllaDBDatacenterClusterSpec(sdc, authTokenSecret)
	return &registrationTarget[*scyllav1alpha1.ScyllaDBDatacenter]{
		object:         sdc,
		spec:           spec,
		waiting:        waiting,
		previousOwners: scyllaDBDatacenterPreviousOwners(sdc),
		refused:        partOfScyllaDBCluster(sdc),
	}
}

// sync brings ScyllaDB Manager in line with target:
//   - a labelled object that is not being deleted is registered (register). naming.ScyllaDBManagerClusterFinalizer
//     goes on right before the first ScyllaDB Manager write, not before: an object that only waited (for its
//     rollout, its token) holds nothing in ScyllaDB Manager, and its deletion has nothing to wait for;
//   - an object being deleted, or no longer labelled, that has the finalizer has its cluster deregistered and then
//     loses the finalizer (deregister);
//   - an object being deleted without the finalizer holds nothing in ScyllaDB Manager: nothing is read or written;
//   - an unlabelled object without the finalizer holds nothing in ScyllaDB Manager either, but it may carry the
//     conditions of a wait that the label's removal ended: they are removed, and nothing else is read or written.
func (r *registrar[T]) sync(ctx context.Context, target *registrationTarget[T]) error {
	obj := target.object
	_, labelled := obj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]
	deleting := obj.GetDeletionTimestamp() != nil
	finalized := controllerhelpers.HasFinalizer(obj, naming.ScyllaDBManagerClusterFinalizer)

	switch {
	case finalized && (deleting || !labelled):
		return r.deregister(ctx, target)
	case deleting:
		return nil
	case !labelled:
		_, err := r.updateConditions(ctx, obj, nil)
		return err
	default:
		return r.register(ctx, target)
	}
}

// ensureFinalizer adds naming.ScyllaDBManagerClusterFinalizer to target's object unless it has it, and makes the
// patched object target's object. It is called right before ScyllaDB Manager is written, and whenever ScyllaDB Manager
// holds (or may hold) a cluster of the object, so that the object's deletion waits for the cluster's.
func (r *registrar[T]) ensureFinalizer(ctx context.Context, target *registrationTarget[T]) error {
	patched, _, err := controllerhelpers.AddFinalizer(ctx, r.kind.client(target.object.GetNamespace()), target.object, naming.ScyllaDBManagerClusterFinalizer)
	if err != nil {
		return err
	}
	target.object = patched
	return nil
}
