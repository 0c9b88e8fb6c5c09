package controllerhelpers

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// writtenObjectTTL bounds how long an object a write returned can stand in for the informer's copy, should the
// informer never deliver that version (a watch that restarted past it and an object deleted and created again). The
// informer normally catches up within milliseconds, and the written object is dropped at the first Get or Written
// that sees it did: the TTL is a backstop, not what frees memory.
const writtenObjectTTL = time.Minute

// MutationCache serves objects of one kind from an informer's cache, or the object the controller's own last write
// to it returned while the cache is older (by integer resource version, like client-go's
// cache.NewIntegerResourceVersionMutationCache). A sync that makes several writes sees the events of the first ones
// enqueue its key again before the cache holds the last one; read through the informer alone, the next sync would
// compare with the older object and write the same again. Objects the cache does not hold are not found, whatever was
// written: a write does not outlive a delete.
//
// A written object is kept, trimmed like the informer's (TrimForInformerCache), only until the informer holds its
// version or a later one: every Written drops those the informer caught up with, so that the objects of datacenters
// no sync reads again (the ScyllaDBDatacenter controller ignores its own status writes) are not kept twice.
type MutationCache[T kubeinterfaces.ObjectInterface] struct {
	resource schema.GroupResource
	store    cache.Store
	now      func() time.Time

	mu      sync.Mutex
	written map[string]writtenObject[T]
}

type writtenObject[T kubeinterfaces.ObjectInterface] struct {
	obj             T
	resourceVersion uint64
	expires         time.Time
}

// NewMutationCache returns a MutationCache of the objects of resource in store, an informer's store. The API server
// must order resource versions as integers, as every etcd-backed one does; an object whose resource version is not an
// integer is served from the store.
func NewMutationCache[T kubeinterfaces.ObjectInterface](store cache.Store, resource schema.GroupResource) *MutationCache[T] {
	return &MutationCache[T]{resource: resource, store: store, now: time.Now, written: map[string]writtenObject[T]{}}
}

// Get returns the newer of the informer's object namespace/name and the one a write returned, or a NotFound error
// when the informer does not hold it. The object is shared: callers must not change it.
func (c *MutationCache[T]) Get(namespace, name string) (T, error) {
	var zero T
	key := name
	if len(namespace) != 0 {
		key = namespace + "/" + name
	}
	obj, exists, err := c.store.GetByKey(key)
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !exists {
		delete(c.written, key)
		return zero, apierrors.NewNotFound(c.resource, name)
	}
	typed, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("can't get %s %q: the cache holds a %T", c.resource, key, obj)
	}
	if w, ok := c.written[key]; ok {
		if c.supersedes(w, typed) {
			delete(c.written, key)
		} else {
			return w.obj, nil
		}
	}
	return typed, nil
}

// Written records obj, the object a write returned, for Get. The cache keeps a copy trimmed like the informer's
// objects (TrimForInformerCache), and drops the written objects the informer caught up with.
func (c *MutationCache[T]) Written(obj T) {
	logger := klog.Background().WithValues("resource", c.resource)
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		// Not recording a write only costs a sync that compares with the older object.
		logger.Error(err, "Can't record a written object")
		return
	}
	resourceVersion, err := integerResourceVersion(obj)
	if err != nil {
		logger.Error(err, "Can't record a written object whose resource version is not an integer", "key", key)
		return
	}
	trimmed, err := TrimForInformerCache(obj.DeepCopyObject())
	if err != nil {
		logger.Error(err, "Can't trim a written object", "key", key)
		return
	}
	typed, ok := trimmed.(T)
	if !ok {
		logger.Error(nil, "Can't record a written object trimmed into another type", "key", key, "type", fmt.Sprintf("%T", trimmed))
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, w := range c.written {
		if cached, exists, err := c.store.GetByKey(k); err != nil || !exists || c.supersedesAny(w, cached) {
			delete(c.written, k)
		}
	}
	c.written[key] = writtenObject[T]{obj: typed, resourceVersion: resourceVersion, expires: c.now().Add(writtenObjectTTL)}
}

// supersedes tells whether cached, the informer's object, is to be served rather than w: w expired, or cached is of
// w's version or later, or its version can't be compared.
func (c *MutationCache[T]) supersedes(w writtenObject[T], cached T) bool {
	if !c.now().Before(w.expires) {
		return true
	}
	version, err := integerResourceVersion(cached)
	return err != nil || version >= w.resourceVersion
}

// integerResourceVersion returns the resource version of obj as an integer; none is 0, as in client-go's
// cache.NewIntegerResourceVersionMutationCache (fake clientsets leave it empty).
func integerResourceVersion(obj metav1.Object) (uint64, error) {
	if len(obj.GetResourceVersion()) == 0 {
		return 0, nil
	}
	return strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
}

func (c *MutationCache[T]) supersedesAny(w writtenObject[T], cached any) bool {
	typed, ok := cached.(T)
	return !ok || c.supersedes(w, typed)
}

// Patcher returns client with every successful patch recorded for Get.
func (c *MutationCache[T]) Patcher(client kubeinterfaces.PatcherInterface[T]) kubeinterfaces.PatcherInterface[T] {
	return &recordingPatcher[T]{client: client, cache: c}
}

type recordingPatcher[T kubeinterfaces.ObjectInterface] struct {
	client kubeinterfaces.PatcherInterface[T]
	cache  *MutationCache[T]
}

func (p *recordingPatcher[T]) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error) {
	obj, err := p.client.Patch(ctx, name, pt, data, opts, subresources...)
	if err == nil {
		p.cache.Written(obj)
	}
	return obj, err
}
