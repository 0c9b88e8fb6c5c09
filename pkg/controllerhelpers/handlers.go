// Package controllerhelpers holds the pieces every controller of the operator needs and that are the same in each:
// informer event handlers that map objects to the key of their controller, claiming of owned objects, the sub-sync
// runner and condition aggregation, finalizer patches, and the loop that runs a controller's workers (RunWorkers).
package controllerhelpers

import (
	"fmt"
	"maps"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// NewQueue returns the rate-limited queue of object keys a controller syncs, named for workqueue metrics.
func NewQueue(name string) workqueue.TypedRateLimitingInterface[string] {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: name},
	)
}

// ObjectFromDeleteEvent returns the object of an informer's delete notification, which is either the object itself
// or, when the watch missed the deletion, a cache.DeletedFinalStateUnknown tombstone holding its last known state.
func ObjectFromDeleteEvent[T any](obj any) (T, error) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	typed, ok := obj.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("can't handle a delete event: expected %T or a tombstone of it, got %T", zero, obj)
	}
	return typed, nil
}

// ControllerGetterFunc looks up a controller by its name and the namespace of the object it controls; getters of
// cluster-scoped controllers ignore the namespace. It is usually a lister call.
type ControllerGetterFunc[T kubeinterfaces.ObjectInterface] func(namespace, name string) (T, error)

// ResolveControllerRef returns the controller that ref, a controllerRef of an object in namespace, points to, if
// ref is of controllerGVK's kind and group and the controller getter returns has ref's UID. A controller deleted and
// recreated under the same name has another UID and is not returned: it does not own the object. found is false
// with a nil error when there is no such controller.
func ResolveControllerRef[T kubeinterfaces.ObjectInterface](
	namespace string,
	ref *metav1.OwnerReference,
	controllerGVK schema.GroupVersionKind,
	getController ControllerGetterFunc[T],
) (controller T, found bool, err error) {
	var zero T
	if !refersToKind(ref, controllerGVK) {
		return zero, false, nil
	}

	controller, err = getController(namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, fmt.Errorf("can't get %s %q: %w", ref.Kind, ref.Name, err)
	}
	if controller.GetUID() != ref.UID {
		return zero, false, nil
	}
	return controller, true, nil
}

// Handlers enqueue the keys of controllers of kind T in a controller's queue: the key of a T when a T changes, and
// the key of the controlling T when an object it owns changes.
type Handlers[T kubeinterfaces.ObjectInterface] struct {
	queue         workqueue.TypedInterface[string]
	controllerGVK schema.GroupVersionKind
	getController ControllerGetterFunc[T]
	logger        klog.Logger
}

// NewHandlers returns handlers that feed queue with keys of controllers of kind controllerGVK, looked up through
// getController.
func NewHandlers[T kubeinterfaces.ObjectInterface](
	logger klog.Logger,
	queue workqueue.TypedInterface[string],
	controllerGVK schema.GroupVersionKind,
	getController ControllerGetterFunc[T],
) *Handlers[T] {
	return &Handlers[T]{
		queue:         queue,
		controllerGVK: controllerGVK,
		getController: getController,
		logger:        logger.WithValues("controllerKind", controllerGVK.Kind),
	}
}

// Enqueue adds the key of obj, a T or a tombstone of one.
func (h *Handlers[T]) Enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		h.logger.Error(err, "Can't get the key of an object", "type", fmt.Sprintf("%T", obj))
		return
	}
	h.logger.V(5).Info("Enqueuing", "key", key)
	h.queue.Add(key)
}

// EnqueueController adds the key of the T controlling obj, any object or a tombstone of one, when obj has one.
func (h *Handlers[T]) EnqueueController(obj any) {
	if accessor, ok := h.metadataOf(obj); ok {
		h.enqueueControllerOf(accessor)
	}
}

// metadataOf returns the metadata of obj, any object or a tombstone of one; an obj without any is logged.
func (h *Handlers[T]) metadataOf(obj any) (metav1.Object, bool) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	accessor, err := meta.Accessor(obj)
	if err != nil {
		h.logger.Error(err, "Can't read the metadata of an object", "type", fmt.Sprintf("%T", obj))
		return nil, false
	}
	return accessor, true
}

func (h *Handlers[T]) enqueueControllerOf(obj metav1.Object) {
	controller, found, err := ResolveControllerRef(obj.GetNamespace(), metav1.GetControllerOfNoCopy(obj), h.controllerGVK, h.getController)
	if err != nil {
		h.logger.Error(err, "Can't look up the controller of an object", "object", klog.KObj(obj))
		return
	}
	if !found {
		return
	}
	h.logger.V(5).Info("Enqueuing the controller of an object", "object", klog.KObj(obj), "controller", klog.KObj(controller))
	h.Enqueue(controller)
}

// ControllerHandlerFuncs handle events of the controller kind T itself: every add, update (including resyncs, which
// keep the controller level-driven) and delete enqueues the object's key.
func (h *Handlers[T]) ControllerHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    h.Enqueue,
		UpdateFunc: func(_, newObj any) { h.Enqueue(newObj) },
		DeleteFunc: h.Enqueue,
	}
}

// OwnedHandlerFuncs handle events of objects a T controls: each enqueues the key of the controlling T. An update
// whose controllerRef changed enqueues the old controller as well, so it notices the loss. Resyncs (updates with an
// unchanged resourceVersion) enqueue nothing: the controller kind's own resync already covers every T.
func (h *Handlers[T]) OwnedHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: h.EnqueueController,
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, err := meta.Accessor(oldObj)
			if err != nil {
				h.logger.Error(err, "Can't read the metadata of an object", "type", fmt.Sprintf("%T", oldObj))
				return
			}
			newAccessor, err := meta.Accessor(newObj)
			if err != nil {
				h.logger.Error(err, "Can't read the metadata of an object", "type", fmt.Sprintf("%T", newObj))
				return
			}
			if oldAccessor.GetResourceVersion() == newAccessor.GetResourceVersion() {
				return
			}

			h.enqueueControllerOf(newAccessor)
			oldRef, newRef := metav1.GetControllerOfNoCopy(oldAccessor), metav1.GetControllerOfNoCopy(newAccessor)
			if oldRef != nil && (newRef == nil || oldRef.UID != newRef.UID) {
				h.enqueueControllerOf(oldAccessor)
			}
		},
		DeleteFunc: h.EnqueueController,
	}
}

// RelatedHandlerFuncs handle events of objects tied to a T otherwise than by their controllerRef (a name they share,
// a label naming it): each enqueues the T that relatedTo names for the object (a tombstone's object on delete), if
// any. An update enqueues the T the object was tied to before it as well, so that a T an object stopped naming (a
// label changed, a controllerRef removed) notices the loss, as OwnedHandlerFuncs do for a changed controllerRef.
// Resyncs (updates with an unchanged resourceVersion) enqueue nothing: the controller kind's own resync already
// covers every T.
func (h *Handlers[T]) RelatedHandlerFuncs(relatedTo func(obj metav1.Object) (cache.ObjectName, bool)) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		accessor, ok := h.metadataOf(obj)
		if !ok {
			return
		}
		if key, ok := relatedTo(accessor); ok {
			h.logger.V(5).Info("Enqueuing an object related to another", "object", klog.KObj(accessor), "key", key.String())
			h.queue.Add(key.String())
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr == nil && newErr == nil && oldAccessor.GetResourceVersion() == newAccessor.GetResourceVersion() {
				return
			}
			enqueue(newObj)
			// The queue holds a key once: a T the object still names is not synced twice.
			if oldErr == nil {
				enqueue(oldObj)
			}
		},
		DeleteFunc: enqueue,
	}
}

// IgnoringStatusUpdates returns funcs whose UpdateFunc skips updates that changed only the status of an object
// whose metadata.generation counts its spec changes: same generation, labels, annotations, owner references,
// finalizers and deletion timestamp. It is for the objects of a kind whose status the controller never reads, or
// reads only as what it wrote itself, so that another controller's (or its own) status writes do not cost it a sync.
// Resyncs (an unchanged resourceVersion) still go through.
func IgnoringStatusUpdates(funcs cache.ResourceEventHandlerFuncs) cache.ResourceEventHandlerFuncs {
	update := funcs.UpdateFunc
	if update == nil {
		return funcs
	}
	funcs.UpdateFunc = func(oldObj, newObj any) {
		oldAccessor, oldErr := meta.Accessor(oldObj)
		newAccessor, newErr := meta.Accessor(newObj)
		if oldErr == nil && newErr == nil && statusOnlyUpdate(oldAccessor, newAccessor) {
			return
		}
		update(oldObj, newObj)
	}
	return funcs
}

func statusOnlyUpdate(old, cur metav1.Object) bool {
	return old.GetResourceVersion() != cur.GetResourceVersion() &&
		cur.GetGeneration() != 0 && old.GetGeneration() == cur.GetGeneration() &&
		maps.Equal(old.GetLabels(), cur.GetLabels()) &&
		maps.Equal(old.GetAnnotations(), cur.GetAnnotations()) &&
		slices.Equal(old.GetFinalizers(), cur.GetFinalizers()) &&
		apiequality.Semantic.DeepEqual(old.GetOwnerReferences(), cur.GetOwnerReferences()) &&
		(old.GetDeletionTimestamp() == nil) == (cur.GetDeletionTimestamp() == nil)
}

// AddIndexerIfAbsent adds the index name to informer unless a controller sharing the informer already did: a shared
// informer refuses an index name twice.
func AddIndexerIfAbsent(informer cache.SharedIndexInformer, name string, indexFunc cache.IndexFunc) error {
	if _, ok := informer.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	if err := informer.AddIndexers(cache.Indexers{name: indexFunc}); err != nil {
		return fmt.Errorf("can't add index %q: %w", name, err)
	}
	return nil
}
