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
//   - an object labelled naming.RegisterWithScyllaDBManagerLabel first gets naming.ScyllaDBManagerClusterFinalizer,
//     before anything is written that would need cleaning up, then its cluster is registered (register);
//   - an object being deleted, or no longer labelled, that has the finalizer has its cluster deregistered and then
//     loses the finalizer (deregister);
//   - any other object is not the registrar's business: nothing is read or written.
func (r *registrar[T]) sync(ctx context.Context, target *registrationTarget[T]) error {
	obj := target.object
	_, labelled := obj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]
	deleting := obj.GetDeletionTimestamp() != nil

	if !controllerhelpers.HasFinalizer(obj, naming.ScyllaDBManagerClusterFinalizer) {
		if !labelled || deleting {
			return nil
		}
		// The patch's watch event brings the object back with the finalizer.
		_, _, err := controllerhelpers.AddFinalizer(ctx, r.kind.client(obj.GetNamespace()), obj, naming.ScyllaDBManagerClusterFinalizer)
		return err
	}

	switch {
	case deleting, !labelled:
		return r.deregister(ctx, target)
	default:
		return r.register(ctx, target)
	}
}
