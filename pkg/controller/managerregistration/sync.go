package managerregistration

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// sync reconciles the ScyllaDB Manager cluster of the ScyllaDBDatacenter named by key.
func (c *ScyllaDBDatacenterController) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	sdc, err := c.scyllaDBDatacenters.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		// Its finalizer kept it until its cluster was deregistered, unless it never had one.
		logger.V(4).Info("ScyllaDBDatacenter is gone", "scyllaDBDatacenter", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBDatacenter %q: %w", key, err)
	}

	authTokenSecret, err := c.authTokenSecret(sdc)
	if err != nil {
		return err
	}

	spec, waiting := makeScyllaDBDatacenterClusterSpec(sdc, authTokenSecret)
	ctx = klog.NewContext(ctx, logger.WithValues("scyllaDBDatacenter", klog.KObj(sdc)))
	return c.registrar.sync(ctx, &registrationTarget[*scyllav1alpha1.ScyllaDBDatacenter]{
		object:         sdc,
		spec:           spec,
		waiting:        waiting,
		previousOwners: scyllaDBDatacenterPreviousOwners(sdc),
		refused:        partOfScyllaDBCluster(sdc),
	})
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
