package controllerhelpers

import (
	"context"
	"fmt"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/klog/v2"
)

// CanAdoptFunc tells whether the controller may adopt orphans right now; it returns an error when it may not.
type CanAdoptFunc func(ctx context.Context) error

// RecheckController returns a CanAdoptFunc that reads controller afresh, bypassing the cache, through getFresh and
// allows adoption only if it is still the same object (same UID) and not being deleted. A controller that is going
// away must not adopt: the garbage collector could then delete the adopted objects with it.
func RecheckController(controller metav1.Object, getFresh func(ctx context.Context) (metav1.Object, error)) CanAdoptFunc {
	return func(ctx context.Context) error {
		fresh, err := getFresh(ctx)
		if err != nil {
			return fmt.Errorf("can't recheck controller %q before adopting: %w", klog.KObj(controller), err)
		}
		if fresh.GetUID() != controller.GetUID() {
			return fmt.Errorf("controller %q was recreated (UID %s, expected %s), so it can't adopt", klog.KObj(controller), fresh.GetUID(), controller.GetUID())
		}
		if fresh.GetDeletionTimestamp() != nil {
			return fmt.Errorf("controller %q is being deleted, so it can't adopt", klog.KObj(controller))
		}
		return nil
	}
}

// Claimer sorts out which objects of kind T a controller owns: it adopts orphans its selector matches and releases
// the objects it controls that the selector no longer matches.
type Claimer[T kubeinterfaces.ObjectInterface] struct {
	controller    metav1.Object
	controllerRef metav1.OwnerReference
	selector      labels.Selector
	client        kubeinterfaces.PatcherInterface[T]
	canAdopt      CanAdoptFunc
}

// NewClaimer returns a Claimer for controller, of kind controllerGVK, that patches through client. canAdopt is
// called, at most once per Claim, before the first adoption.
func NewClaimer[T kubeinterfaces.ObjectInterface](
	controller metav1.Object,
	controllerGVK schema.GroupVersionKind,
	selector labels.Selector,
	client kubeinterfaces.PatcherInterface[T],
	canAdopt CanAdoptFunc,
) *Claimer[T] {
	return &Claimer[T]{
		controller:    controller,
		controllerRef: *metav1.NewControllerRef(controller, controllerGVK),
		selector:      selector,
		client:        client,
		canAdopt:      canAdopt,
	}
}

// Claim returns the objects among objects (usually everything a lister has in the controller's namespace) that the
// controller owns after claiming, as they were passed in (an adopted object is returned without its new
// controllerRef; the informer delivers the patched version):
//   - objects it controls (same UID, kind and group) that the selector matches are kept;
//   - objects it controls that the selector no longer matches are released (their controllerRef removed), unless the
//     controller is being deleted;
//   - orphans the selector matches are adopted (the controllerRef added), unless the controller or the orphan is
//     being deleted or canAdopt refuses;
//   - objects of other controllers are ignored.
//
// Adoptions and releases are JSON merge patches guarded by the object's resourceVersion and UID. An object that is
// gone by then is skipped; other failures do not stop the rest and come back aggregated.
func (c *Claimer[T]) Claim(ctx context.Context, objects []T) ([]T, error) {
	logger := klog.FromContext(ctx)
	var claimed []T
	var errs []error
	var canAdoptErr error
	canAdoptChecked := false
	controllerDeleting := c.controller.GetDeletionTimestamp() != nil

	for _, obj := range objects {
		matches := c.selector.Matches(labels.Set(obj.GetLabels()))
		ref := metav1.GetControllerOfNoCopy(obj)

		switch {
		case ref != nil && !SameController(ref, &c.controllerRef):
			continue

		case ref != nil && matches:
			claimed = append(claimed, obj)

		case ref != nil && controllerDeleting:
			// Releasing now would orphan the object instead of letting it be garbage collected with the controller.
			continue

		case ref != nil:
			err := c.patchOwnerReferences(ctx, obj, withoutUID(obj.GetOwnerReferences(), c.controllerRef.UID))
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("can't release %q: %w", klog.KObj(obj), err))
				continue
			}
			logger.V(2).Info("Released object", "object", klog.KObj(obj), "controller", klog.KObj(c.controller))

		case !matches || controllerDeleting || obj.GetDeletionTimestamp() != nil:
			continue

		default:
			if !canAdoptChecked {
				canAdoptChecked = true
				if c.canAdopt != nil {
					canAdoptErr = c.canAdopt(ctx)
				}
			}
			if canAdoptErr != nil {
				errs = append(errs, fmt.Errorf("can't adopt %q: %w", klog.KObj(obj), canAdoptErr))
				continue
			}

			// Another non-controller reference to the same owner is replaced by the controllerRef.
			ownerReferences := append(withoutUID(obj.GetOwnerReferences(), c.controllerRef.UID), c.controllerRef)
			err := c.patchOwnerReferences(ctx, obj, ownerReferences)
			if apierrors.IsNotFound(err) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("can't adopt %q: %w", klog.KObj(obj), err))
				continue
			}
			logger.V(2).Info("Adopted object", "object", klog.KObj(obj), "controller", klog.KObj(c.controller))
			claimed = append(claimed, obj)
		}
	}

	return claimed, utilerrors.NewAggregate(errs)
}

func (c *Claimer[T]) patchOwnerReferences(ctx context.Context, obj T, ownerReferences []metav1.OwnerReference) error {
	patch, err := newMetadataMergePatch(obj, "ownerReferences", ownerReferences)
	if err != nil {
		return err
	}
	_, err = c.client.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// withoutUID returns a copy of refs without the references to uid; never nil, so that a patch sets an empty list.
func withoutUID(refs []metav1.OwnerReference, uid types.UID) []metav1.OwnerReference {
	return slices.DeleteFunc(append(make([]metav1.OwnerReference, 0, len(refs)+1), refs...), func(ref metav1.OwnerReference) bool {
		return ref.UID == uid
	})
}
