package apiserverfields

import (
	"fmt"
	"strconv"
	"sync/atomic"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// firstResourceVersion is above the resource versions tests give the objects they seed.
const firstResourceVersion = 1000

// BumpResourceVersions makes every create, update and patch (apply included) through fake store the written object
// in tracker with a new, higher resourceVersion, and return it, as the API server does; the fake clientsets keep
// whatever the object carried. The object is stored once, already carrying its new resourceVersion, so a watch sees
// one event per write, with that resourceVersion, as from the API server. A created object without a UID gets one,
// as from the API server, so that writes with UID preconditions work on it. Code that orders objects by
// resourceVersion (a cache.MutationCache) or that ignores updates keeping the resourceVersion (resyncs) can then be
// tested.
func BumpResourceVersions(fake *clienttesting.Fake, tracker clienttesting.ObjectTracker) {
	vt := &versioningTracker{ObjectTracker: tracker}
	vt.last.Store(firstResourceVersion)
	write := clienttesting.ObjectReaction(vt)
	fake.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		switch action.GetVerb() {
		case "create", "update", "patch":
		default:
			return false, nil, nil
		}
		handled, obj, err := write(action)
		if !handled || err != nil || obj == nil || action.GetVerb() != "patch" {
			return handled, obj, err
		}
		// A JSON, merge or strategic merge patch returns the patched object before the tracker's field manager
		// recorded the write; the API server returns what it stored.
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		stored, err := tracker.Get(action.GetResource(), action.GetNamespace(), accessor.GetName())
		return true, stored, err
	})
}

// versioningTracker stamps every object written through it with the next resourceVersion (and a created one without
// a UID with a UID) before handing it to the tracker it wraps, so that the tracker stores, and tells its watchers
// about, each write once.
type versioningTracker struct {
	clienttesting.ObjectTracker
	last atomic.Int64
}

var _ clienttesting.ObjectTracker = &versioningTracker{}

// stamp gives obj the next resourceVersion and, if create and obj has none, a UID. It changes obj in place: the
// objects ObjectReaction hands to the tracker are its own (the fake copies each action before reacting to it).
func (t *versioningTracker) stamp(obj runtime.Object, create bool) error {
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rv := t.last.Add(1)
	accessor.SetResourceVersion(strconv.FormatInt(rv, 10))
	if create && len(accessor.GetUID()) == 0 {
		accessor.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", rv)))
	}
	return nil
}

func (t *versioningTracker) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	if err := t.stamp(obj, true); err != nil {
		return err
	}
	return t.ObjectTracker.Create(gvr, obj, ns, opts...)
}

func (t *versioningTracker) Update(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.UpdateOptions) error {
	if err := t.stamp(obj, false); err != nil {
		return err
	}
	return t.ObjectTracker.Update(gvr, obj, ns, opts...)
}

func (t *versioningTracker) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	if err := t.stamp(obj, false); err != nil {
		return err
	}
	return t.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// Apply puts the new resourceVersion (and, for an object the apply creates, a UID) into the applied configuration:
// the tracker computes the applied object itself, and its field manager tracks neither field.
func (t *versioningTracker) Apply(gvr schema.GroupVersionResource, applyConfiguration runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	accessor, err := meta.Accessor(applyConfiguration)
	if err != nil {
		return err
	}
	_, err = t.ObjectTracker.Get(gvr, ns, accessor.GetName())
	create := apierrors.IsNotFound(err)
	if err != nil && !create {
		return err
	}
	if err := t.stamp(applyConfiguration, create); err != nil {
		return err
	}
	return t.ObjectTracker.Apply(gvr, applyConfiguration, ns, opts...)
}
