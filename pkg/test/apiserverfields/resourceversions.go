package apiserverfields

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// firstResourceVersion is above the resource versions tests give the objects they seed.
const firstResourceVersion = 1000

// BumpResourceVersions makes every create, update and patch through fake store the written object in tracker with a
// new, higher resourceVersion, and return it, as the API server does; the fake clientsets keep whatever the object
// carried. A created object without a UID gets one, as from the API server, so that writes with UID preconditions
// work on it. Code that orders objects by resourceVersion (a cache.MutationCache) can then be tested.
func BumpResourceVersions(fake *clienttesting.Fake, tracker clienttesting.ObjectTracker) {
	var last atomic.Int64
	last.Store(firstResourceVersion)
	write := clienttesting.ObjectReaction(tracker)
	fake.PrependReactor("*", "*", func(action clienttesting.Action) (bool, runtime.Object, error) {
		switch action.GetVerb() {
		case "create", "update", "patch":
		default:
			return false, nil, nil
		}
		handled, obj, err := write(action)
		if !handled || err != nil || obj == nil {
			return handled, obj, err
		}
		accessor, err := meta.Accessor(obj)
		if err != nil {
			return true, nil, err
		}
		rv := last.Add(1)
		accessor.SetResourceVersion(strconv.FormatInt(rv, 10))
		if action.GetVerb() == "create" && len(accessor.GetUID()) == 0 {
			accessor.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", rv)))
		}
		// Only the resource version differs from what the write stored; field managers do not track it.
		if err := tracker.Update(action.GetResource(), obj, accessor.GetNamespace(), metav1.UpdateOptions{}); err != nil {
			return true, nil, fmt.Errorf("can't store the new resource version of %q: %w", accessor.GetName(), err)
		}
		return true, obj, nil
	})
}
