package controllerhelpers

import (
	"context"
	"fmt"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// writtenObjectTTL bounds how long an object a write returned can stand in for the informer's copy. The informer
// normally catches up within milliseconds, and then the newer copy wins anyway.
const writtenObjectTTL = time.Minute

// MutationCache serves objects of one kind from an informer's cache, or the object the controller's own last write
// to it returned while the cache is older (client-go's integer resource-version cache.MutationCache). A sync that
// makes several writes sees the events of the first ones enqueue its key again before the cache holds the last one;
// read through the informer alone, the next sync would compare with the older object and write the same again.
// Objects the cache does not hold are not found, whatever was written: a write does not outlive a delete.
type MutationCache[T kubeinterfaces.ObjectInterface] struct {
	resource schema.GroupResource
	cache    cache.MutationCache
}

// NewMutationCache returns a MutationCache of the objects of resource in store, an informer's store. The API server
// must order resource versions as integers, as every etcd-backed one does.
func NewMutationCache[T kubeinterfaces.ObjectInterface](store cache.Store, resource schema.GroupResource) *MutationCache[T] {
	return &MutationCache[T]{
		resource: resource,
		cache:    cache.NewIntegerResourceVersionMutationCache(klog.Background(), store, nil, writtenObjectTTL, false),
	}
}

// Get returns the newer of the informer's object namespace/name and the one a write returned, or a NotFound error
// when the informer does not hold it. The object is shared: callers must not change it.
func (c *MutationCache[T]) Get(namespace, name string) (T, error) {
	var zero T
	key := name
	if len(namespace) != 0 {
		key = namespace + "/" + name
	}
	obj, exists, err := c.cache.GetByKey(key)
	if err != nil {
		return zero, err
	}
	if !exists {
		return zero, apierrors.NewNotFound(c.resource, name)
	}
	typed, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("can't get %s %q: the cache holds a %T", c.resource, key, obj)
	}
	return typed, nil
}

// Written records obj, the object a write returned, for Get. The cache keeps a copy trimmed like the informer's
// objects (TrimForInformerCache): Get serves either, and a written object is kept until a Get finds the informer
// caught up with it (or for writtenObjectTTL at most), which for an object nobody reads again can be long.
func (c *MutationCache[T]) Written(obj T) {
	trimmed, err := TrimForInformerCache(obj.DeepCopyObject())
	if err != nil {
		// Not recording a write only costs a sync that compares with the older object.
		klog.Background().Error(err, "Can't trim a written object for the mutation cache", "resource", c.resource)
		return
	}
	c.cache.Mutation(trimmed)
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
