package scylladbdatacenter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// appliedObjects are the results of applyAll: by name, what the API server (or the cache, when nothing changed) has
// of each required object; and the objects the API server returned from a create or update.
type appliedObjects[T kubeinterfaces.ObjectInterface] struct {
	byName  map[string]T
	written []T
}

// clientInterface is the part of a typed client applyAll needs.
type clientInterface[T kubeinterfaces.ObjectInterface] interface {
	kubeinterfaces.CreateUpdateDeleterInterface[T]
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
}

// liveGetter reads objects from the API server, for the objects the informer caches do not hold.
type liveGetter[T kubeinterfaces.ObjectInterface] struct {
	ctx    context.Context
	client clientInterface[T]
}

func (g liveGetter[T]) Get(name string) (T, error) {
	return g.client.Get(g.ctx, name, metav1.GetOptions{})
}

// applyAll applies every required object but those this sync adopted (ownedObjects.adopted), which wait for the
// cache to show their controllerRef. An object being deleted to be recreated, because an immutable field changes, is
// progress rather than an error. An object whose name is taken by someone else's is a permanent error (specError),
// reported by one event as long as that object stays as it is (ownershipConflicts); an object the cache does not
// hold, like one without the operator's labels, is read from the API server to find out.
func applyAll[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	c *Controller,
	owned *ownedObjects,
	client clientInterface[T],
	lister kubeinterfaces.GetterInterface[T],
	required []T,
) (appliedObjects[T], []metav1.Condition, error) {
	applied := appliedObjects[T]{byName: make(map[string]T, len(required))}
	var progressing []metav1.Condition
	var errs []error
	kind := kindOf[T]()
	live := liveGetter[T]{ctx: ctx, client: client}
	// Most syncs adopted nothing and know of no conflict: the objects' keys are formatted only when one may be there.
	keyed := len(owned.adopted) != 0 || c.conflicts.any(owned.key)
	for _, obj := range required {
		if keyed {
			objectKey := kindNameKey[T](obj.GetName())
			if owned.adopted[objectKey] {
				progressing = append(progressing, metav1.Condition{
					Type:    kind + " " + obj.GetName(),
					Reason:  waitingForAdoptedReason,
					Message: fmt.Sprintf("waiting for the cache to show %s %s with the controllerRef it was just given", kind, obj.GetName()),
				})
				continue
			}
			if conflict, ok := c.conflicts.get(owned.key, objectKey); ok {
				existing, err := live.Get(obj.GetName())
				switch {
				case err == nil && objectVersion(existing) == conflict.version:
					errs = append(errs, conflict.err)
					continue
				case err != nil && !apierrors.IsNotFound(err):
					errs = append(errs, fmt.Errorf("can't get %s %q: %w", kind, klog.KObj(obj), err))
					continue
				}
				c.conflicts.resolve(owned.key, objectKey)
			}
		}

		options := resourceapply.ApplyOptions{Precondition: keepsDecommissionProgress(obj)}
		actual, changed, err := resourceapply.Apply(ctx, client, lister, c.eventRecorder, obj, options)
		if apierrors.IsAlreadyExists(err) {
			// The cache does not have it: it is too late, or the object is not the operator's.
			actual, changed, err = resourceapply.Apply(ctx, client, live, c.eventRecorder, obj, options)
		}
		if errors.Is(err, resourceapply.ErrOwnershipConflict) {
			if existing, getErr := live.Get(obj.GetName()); getErr == nil {
				err = &specError{err: err}
				c.conflicts.record(owned.key, kindNameKey[T](obj.GetName()), ownershipConflict{version: objectVersion(existing), err: err})
			}
		}
		switch {
		case errors.Is(err, resourceapply.ErrObjectBeingDeleted) || (err == nil && isNil(actual)):
			progressing = append(progressing, metav1.Condition{
				Type:    kind + " " + obj.GetName(),
				Reason:  objectBeingRecreatedReason,
				Message: fmt.Sprintf("waiting for %s %s to be deleted so that it can be recreated with a changed immutable field", kind, obj.GetName()),
			})
		case err != nil:
			errs = append(errs, err)
		default:
			applied.byName[obj.GetName()] = actual
			if changed {
				applied.written = append(applied.written, actual)
			}
		}
	}
	return applied, progressing, utilerrors.NewAggregate(errs)
}

func isNil[T kubeinterfaces.ObjectInterface](obj T) bool {
	var zero T
	return any(obj) == any(zero)
}

// prune deletes the objects of existing, all controlled by sdc, whose name is not among wanted's.
func prune[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	c *Controller,
	sdc *scyllav1alpha1.ScyllaDBDatacenter,
	client kubeinterfaces.DeleterInterface,
	existing map[string]T,
	wanted []T,
) error {
	if len(existing) == 0 {
		return nil
	}
	ref := controllerRef(sdc)
	objects := make([]T, 0, len(existing))
	for _, name := range slices.Sorted(maps.Keys(existing)) {
		objects = append(objects, existing[name])
	}
	if _, err := resourceapply.Prune(ctx, client, c.eventRecorder, &ref, objects, wanted, resourceapply.PruneOptions{}); err != nil {
		return err
	}
	return nil
}

// applyAndPrune applies the required objects of a kind and deletes the other objects of that kind sdc controls.
func applyAndPrune[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	c *Controller,
	sdc *scyllav1alpha1.ScyllaDBDatacenter,
	client clientInterface[T],
	lister kubeinterfaces.GetterInterface[T],
	owned *ownedObjects,
	existing map[string]T,
	required ...T,
) (appliedObjects[T], []metav1.Condition, error) {
	applied, progressing, applyErr := applyAll(ctx, c, owned, client, lister, required)
	pruneErr := prune(ctx, c, sdc, client, existing, required)
	if applyErr != nil || pruneErr != nil {
		klog.FromContext(ctx).V(4).Info("Applying objects failed", "applyError", applyErr, "pruneError", pruneErr)
	}
	return applied, progressing, utilerrors.NewAggregate([]error{applyErr, pruneErr})
}

// errDecommissionMovedOn stops a write built from a snapshot older than the sidecar's last word on a decommission.
var errDecommissionMovedOn = errors.New("the node's sidecar has moved its decommission further since this sync's snapshot; syncing again")

// keepsDecommissionProgress returns, for a member Service that asks for a decommission ("false"), the Apply
// precondition that refuses to write it over a Service whose sidecar already reported the decommission done
// ("true"): the operator writes "false" and the sidecar "true", and a sync that started before the sidecar's write
// must not undo it. Other objects get none.
func keepsDecommissionProgress(required metav1.Object) func(existing metav1.Object) error {
	if required.GetLabels()[naming.DecommissionedLabel] != naming.DecommissionedLabelFalse {
		return nil
	}
	return func(existing metav1.Object) error {
		if existing.GetLabels()[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue {
			return errDecommissionMovedOn
		}
		return nil
	}
}

// noOpApplies remembers, per datacenter (by key), the objects Apply last found as required, by name: what the
// required object was built from (inputs) and the UID and resourceVersion of the object in the caches then. The API
// server gives an object a new resourceVersion at every change, so while the caches show it at that version and it
// is built from the same inputs, Apply would find it as required again and write nothing; it need not be called,
// which saves hashing the object. inputs must identify everything the builder reads. Objects without a UID or a
// resourceVersion are never taken as unchanged.
type noOpApplies[I comparable] struct {
	*controllerhelpers.KeyedMemory[noOpApply[I]]
}

// noOpApply is an object Apply left as it was.
type noOpApply[I comparable] struct {
	inputs          I
	uid             types.UID
	resourceVersion string
}

func newNoOpApplies[I comparable]() *noOpApplies[I] {
	return &noOpApplies[I]{controllerhelpers.NewKeyedMemory[noOpApply[I]]()}
}

// unchanged tells whether Apply left the object named like inCache, built from inputs, as it was at the version the
// caches show now.
func (n *noOpApplies[I]) unchanged(key string, inputs I, inCache metav1.Object) bool {
	if len(inCache.GetUID()) == 0 || len(inCache.GetResourceVersion()) == 0 {
		return false
	}
	a, ok := n.Lookup(key, inCache.GetName())
	return ok && a.inputs == inputs && a.uid == inCache.GetUID() && a.resourceVersion == inCache.GetResourceVersion()
}
