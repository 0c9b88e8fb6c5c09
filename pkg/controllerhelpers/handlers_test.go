package controllerhelpers

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2/ktesting"
)

var statefulSetGVK = appsv1.SchemeGroupVersion.WithKind("StatefulSet")

func newStatefulSet(name string, uid types.UID) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: name, UID: uid, ResourceVersion: "1"}}
}

// getFromMap looks controllers up in a map keyed by name, failing for the name "broken".
func getFromMap(controllers ...*appsv1.StatefulSet) ControllerGetterFunc[*appsv1.StatefulSet] {
	return func(namespace, name string) (*appsv1.StatefulSet, error) {
		if name == "broken" {
			return nil, errors.New("cache exploded")
		}
		i := slices.IndexFunc(controllers, func(sts *appsv1.StatefulSet) bool { return sts.Namespace == namespace && sts.Name == name })
		if i < 0 {
			return nil, apierrors.NewNotFound(schema.GroupResource{Group: "apps", Resource: "statefulsets"}, name)
		}
		return controllers[i], nil
	}
}

func newPod(name, resourceVersion string, controller *metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: name, ResourceVersion: resourceVersion}}
	if controller != nil {
		pod.OwnerReferences = []metav1.OwnerReference{*controller}
	}
	return pod
}

func controllerRefTo(sts *appsv1.StatefulSet) *metav1.OwnerReference {
	return metav1.NewControllerRef(sts, statefulSetGVK)
}

// drain returns the keys in queue, in order.
func drain(queue workqueue.TypedInterface[string]) []string {
	var keys []string
	for queue.Len() > 0 {
		key, _ := queue.Get()
		keys = append(keys, key)
		queue.Done(key)
	}
	return keys
}

func TestOwnedHandlersEnqueueTheControllerOnlyWhenKindGroupAndUIDMatch(t *testing.T) {
	t.Parallel()

	rack := newStatefulSet("rack-a", "rack-a-uid")
	otherRack := newStatefulSet("rack-b", "rack-b-uid")
	broken := newStatefulSet("broken", "broken-uid")

	withRef := func(mutate func(*metav1.OwnerReference)) *metav1.OwnerReference {
		ref := controllerRefTo(rack)
		mutate(ref)
		return ref
	}

	tt := []struct {
		name     string
		event    func(h cache.ResourceEventHandlerFuncs)
		wantKeys []string
	}{
		{
			name:     "add of a controlled object",
			event:    func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(newPod("pod", "1", controllerRefTo(rack)), false) },
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name:  "add of an orphan",
			event: func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(newPod("pod", "1", nil), false) },
		},
		{
			name: "add of an object owned but not controlled",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnAdd(newPod("pod", "1", withRef(func(ref *metav1.OwnerReference) { ref.Controller = nil })), false)
			},
		},
		{
			name: "controller of another kind",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnAdd(newPod("pod", "1", withRef(func(ref *metav1.OwnerReference) { ref.Kind = "ReplicaSet" })), false)
			},
		},
		{
			name: "controller of another group",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnAdd(newPod("pod", "1", withRef(func(ref *metav1.OwnerReference) { ref.APIVersion = "example.com/v1" })), false)
			},
		},
		{
			name: "controller deleted and recreated under the same name",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnAdd(newPod("pod", "1", withRef(func(ref *metav1.OwnerReference) { ref.UID = "old-uid" })), false)
			},
		},
		{
			name: "controller no longer in the cache",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnAdd(newPod("pod", "1", withRef(func(ref *metav1.OwnerReference) { ref.Name = "gone" })), false)
			},
		},
		{
			name:  "controller lookup failing",
			event: func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(newPod("pod", "1", controllerRefTo(broken)), false) },
		},
		{
			name:     "delete of a controlled object",
			event:    func(h cache.ResourceEventHandlerFuncs) { h.OnDelete(newPod("pod", "1", controllerRefTo(rack))) },
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "delete seen only as a tombstone",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: newPod("pod", "1", controllerRefTo(rack))})
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "tombstone of something that is not an object",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: "not an object"})
			},
		},
		{
			name: "update",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(newPod("pod", "1", controllerRefTo(rack)), newPod("pod", "2", controllerRefTo(rack)))
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "resync",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(newPod("pod", "1", controllerRefTo(rack)), newPod("pod", "1", controllerRefTo(rack)))
			},
		},
		{
			name: "update moving the object to another controller",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(newPod("pod", "1", controllerRefTo(rack)), newPod("pod", "2", controllerRefTo(otherRack)))
			},
			wantKeys: []string{"scylla/rack-b", "scylla/rack-a"},
		},
		{
			name: "update releasing the object",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(newPod("pod", "1", controllerRefTo(rack)), newPod("pod", "2", nil))
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "update adopting an orphan",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(newPod("pod", "1", nil), newPod("pod", "2", controllerRefTo(rack)))
			},
			wantKeys: []string{"scylla/rack-a"},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			queue := workqueue.NewTyped[string]()
			defer queue.ShutDown()
			logger, _ := ktesting.NewTestContext(t)
			h := NewHandlers(logger, queue, statefulSetGVK, getFromMap(rack, otherRack, broken))

			tc.event(h.OwnedHandlerFuncs())

			if diff := cmp.Diff(tc.wantKeys, drain(queue)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestControllerHandlersEnqueueEveryEvent(t *testing.T) {
	t.Parallel()

	rack := newStatefulSet("rack-a", "rack-a-uid")

	tt := []struct {
		name     string
		event    func(h cache.ResourceEventHandlerFuncs)
		wantKeys []string
	}{
		{
			name:     "add",
			event:    func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(rack, true) },
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name:     "resync",
			event:    func(h cache.ResourceEventHandlerFuncs) { h.OnUpdate(rack, rack) },
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name:     "delete",
			event:    func(h cache.ResourceEventHandlerFuncs) { h.OnDelete(rack) },
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "delete seen only as a tombstone",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/rack-a", Obj: nil})
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name:  "something that is not an object",
			event: func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(42, false) },
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			queue := workqueue.NewTyped[string]()
			defer queue.ShutDown()
			logger, _ := ktesting.NewTestContext(t)
			h := NewHandlers(logger, queue, statefulSetGVK, getFromMap(rack))

			tc.event(h.ControllerHandlerFuncs())

			if diff := cmp.Diff(tc.wantKeys, drain(queue)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestObjectFromDeleteEvent(t *testing.T) {
	t.Parallel()

	pod := newPod("pod", "1", nil)

	tt := []struct {
		name      string
		obj       any
		want      *corev1.Pod
		wantError string
	}{
		{name: "object", obj: pod, want: pod},
		{name: "tombstone", obj: cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: pod}, want: pod},
		{
			name:      "tombstone of another type",
			obj:       cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: &corev1.Service{}},
			wantError: "can't handle a delete event: expected *v1.Pod or a tombstone of it, got *v1.Service",
		},
		{
			name:      "another type",
			obj:       "pod",
			wantError: "can't handle a delete event: expected *v1.Pod or a tombstone of it, got string",
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := ObjectFromDeleteEvent[*corev1.Pod](tc.obj)
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("expected %p, got %p", tc.want, got)
			}
		})
	}
}

func TestResolveControllerRefReportsLookupFailures(t *testing.T) {
	t.Parallel()

	broken := newStatefulSet("broken", "broken-uid")
	_, found, err := ResolveControllerRef("scylla", controllerRefTo(broken), statefulSetGVK, getFromMap())
	if want := `can't get StatefulSet "broken": cache exploded`; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if found {
		t.Error("expected no controller")
	}
}

func TestNewQueueIsRateLimited(t *testing.T) {
	t.Parallel()

	queue := NewQueue("test")
	defer queue.ShutDown()

	queue.AddRateLimited("a")
	queue.AddRateLimited("a")
	if got := queue.NumRequeues("a"); got != 2 {
		t.Errorf("expected 2 requeues counted, got %d", got)
	}
	queue.Forget("a")
	if got := queue.NumRequeues("a"); got != 0 {
		t.Errorf("expected the requeues forgotten, got %d", got)
	}
}

func TestIgnoringStatusUpdatesSkipsOnlyUpdatesOfTheStatus(t *testing.T) {
	t.Parallel()

	old := newStatefulSet("rack-a", "rack-a-uid")
	old.ResourceVersion, old.Generation = "1", 3
	changed := func(change func(sts *appsv1.StatefulSet)) *appsv1.StatefulSet {
		sts := old.DeepCopy()
		sts.ResourceVersion = "2"
		change(sts)
		return sts
	}

	tt := []struct {
		name     string
		old, new *appsv1.StatefulSet
		want     bool
	}{
		{name: "the status changed", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.Status.ReadyReplicas = 1 }), want: false},
		{name: "a resync", old: old, new: old, want: true},
		{name: "the spec changed", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.Generation++ }), want: true},
		{name: "a label changed", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.Labels = map[string]string{"a": "b"} }), want: true},
		{name: "an annotation changed", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.Annotations = map[string]string{"a": "b"} }), want: true},
		{name: "a finalizer was added", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.Finalizers = []string{"f"} }), want: true},
		{name: "the owner changed", old: old, new: changed(func(sts *appsv1.StatefulSet) {
			sts.OwnerReferences = []metav1.OwnerReference{{UID: "owner"}}
		}), want: true},
		{name: "deletion started", old: old, new: changed(func(sts *appsv1.StatefulSet) { sts.DeletionTimestamp = &metav1.Time{} }), want: true},
		{name: "a kind without generations", old: func() *appsv1.StatefulSet { sts := old.DeepCopy(); sts.Generation = 0; return sts }(),
			new: changed(func(sts *appsv1.StatefulSet) { sts.Generation = 0 }), want: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			called := false
			funcs := IgnoringStatusUpdates(cache.ResourceEventHandlerFuncs{UpdateFunc: func(_, _ any) { called = true }})
			funcs.OnUpdate(tc.old, tc.new)
			if called != tc.want {
				t.Errorf("expected the update to be handled: %v, got %v", tc.want, called)
			}
		})
	}
}

func TestAddIndexerIfAbsentAddsAnIndexOnce(t *testing.T) {
	t.Parallel()
	informer := cache.NewSharedIndexInformer(&cache.ListWatch{}, &corev1.Pod{}, 0, cache.Indexers{})
	calls := 0
	byNode := func(obj any) ([]string, error) {
		calls++
		return []string{obj.(*corev1.Pod).Spec.NodeName}, nil
	}
	for range 2 {
		if err := AddIndexerIfAbsent(informer, "node", byNode); err != nil {
			t.Fatal(err)
		}
	}
	if err := informer.GetIndexer().Add(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.PodSpec{NodeName: "n1"}}); err != nil {
		t.Fatal(err)
	}
	pods, err := informer.GetIndexer().ByIndex("node", "n1")
	if err != nil || len(pods) != 1 || calls != 1 {
		t.Errorf("want the pod indexed once by one index, got %d pods, %d index calls, error %v", len(pods), calls, err)
	}
}

// RelatedHandlerFuncs enqueue what relatedTo names, for adds, updates and deletes (tombstones too), but not for
// resyncs or objects relatedTo names nothing for.
func TestRelatedHandlersEnqueueWhatTheObjectNames(t *testing.T) {
	t.Parallel()

	// A pod names the StatefulSet of its "rack" label.
	relatedTo := func(obj metav1.Object) (cache.ObjectName, bool) {
		name, ok := obj.GetLabels()["rack"]
		return cache.NewObjectName(obj.GetNamespace(), name), ok
	}
	labelled := func(resourceVersion string) *corev1.Pod {
		pod := newPod("pod", resourceVersion, nil)
		pod.Labels = map[string]string{"rack": "rack-a"}
		return pod
	}

	tt := []struct {
		name     string
		event    func(h cache.ResourceEventHandlerFuncs)
		wantKeys []string
	}{
		{name: "add", event: func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(labelled("1"), false) }, wantKeys: []string{"scylla/rack-a"}},
		{name: "add of an object naming nothing", event: func(h cache.ResourceEventHandlerFuncs) { h.OnAdd(newPod("pod", "1", nil), false) }},
		{name: "update", event: func(h cache.ResourceEventHandlerFuncs) { h.OnUpdate(labelled("1"), labelled("2")) }, wantKeys: []string{"scylla/rack-a"}},
		{
			name: "update that names another object enqueues both, so that the one no longer named notices",
			event: func(h cache.ResourceEventHandlerFuncs) {
				moved := labelled("2")
				moved.Labels["rack"] = "rack-b"
				h.OnUpdate(labelled("1"), moved)
			},
			wantKeys: []string{"scylla/rack-b", "scylla/rack-a"},
		},
		{
			name: "update that names nothing any more enqueues what was named",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnUpdate(labelled("1"), newPod("pod", "2", nil))
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{name: "resync", event: func(h cache.ResourceEventHandlerFuncs) { h.OnUpdate(labelled("1"), labelled("1")) }},
		{name: "delete", event: func(h cache.ResourceEventHandlerFuncs) { h.OnDelete(labelled("1")) }, wantKeys: []string{"scylla/rack-a"}},
		{
			name: "delete seen only as a tombstone",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: labelled("1")})
			},
			wantKeys: []string{"scylla/rack-a"},
		},
		{
			name: "tombstone of something that is not an object",
			event: func(h cache.ResourceEventHandlerFuncs) {
				h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/pod", Obj: "not an object"})
			},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			queue := workqueue.NewTyped[string]()
			defer queue.ShutDown()
			logger, _ := ktesting.NewTestContext(t)
			h := NewHandlers(logger, queue, statefulSetGVK, getFromMap())

			tc.event(h.RelatedHandlerFuncs(relatedTo))

			if diff := cmp.Diff(tc.wantKeys, drain(queue)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}
