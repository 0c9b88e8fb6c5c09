package controllerhelpers

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

func newVersionedService(resourceVersion, note string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "scylla",
		Name:            "basic",
		ResourceVersion: resourceVersion,
		Annotations:     map[string]string{"note": note},
	}}
}

func TestMutationCacheServesTheNewerOfTheInformersAndTheWrittenObject(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name     string
		cached   *corev1.Service
		written  *corev1.Service
		wantNote string
		wantErr  bool
	}{
		{
			name:     "nothing written",
			cached:   newVersionedService("10", "cached"),
			wantNote: "cached",
		},
		{
			name:     "the cache has not seen the write yet",
			cached:   newVersionedService("10", "cached"),
			written:  newVersionedService("11", "written"),
			wantNote: "written",
		},
		{
			name:     "the cache caught up with a later write by someone else",
			cached:   newVersionedService("12", "cached"),
			written:  newVersionedService("11", "written"),
			wantNote: "cached",
		},
		{
			name:     "an object with no resource version (as fake clientsets make them) is older than any written",
			cached:   newVersionedService("", "cached"),
			written:  newVersionedService("11", "written"),
			wantNote: "written",
		},
		{
			name:    "a write does not outlive a delete the cache saw",
			written: newVersionedService("11", "written"),
			wantErr: true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			store := cache.NewStore(cache.MetaNamespaceKeyFunc)
			if tc.cached != nil {
				if err := store.Add(tc.cached); err != nil {
					t.Fatal(err)
				}
			}
			c := NewMutationCache[*corev1.Service](store, corev1.Resource("services"))
			if tc.written != nil {
				c.Written(tc.written)
			}

			got, err := c.Get("scylla", "basic")
			if tc.wantErr {
				if !apierrors.IsNotFound(err) {
					t.Fatalf("expected NotFound, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNote, got.Annotations["note"]); diff != "" {
				t.Errorf("unexpected object served (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMutationCachePatcherRecordsWhatThePatchReturned(t *testing.T) {
	t.Parallel()

	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(newVersionedService("10", "cached")); err != nil {
		t.Fatal(err)
	}
	c := NewMutationCache[*corev1.Service](store, corev1.Resource("services"))
	client := fake.NewClientset(newVersionedService("10", "cached"))
	// The API server gives every write a new resource version; the fake does not.
	client.PrependReactor("patch", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
		return true, newVersionedService("11", "patched"), nil
	})

	if _, err := c.Patcher(client.CoreV1().Services("scylla")).Patch(t.Context(), "basic", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get("scylla", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("patched", got.Annotations["note"]); diff != "" {
		t.Errorf("unexpected object served after the patch (-want +got):\n%s", diff)
	}
}

func TestMutationCacheKeepsAWrittenObjectTrimmedLikeTheInformers(t *testing.T) {
	t.Parallel()

	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	cached, err := TrimForInformerCache(appliedScyllaDBDatacenter(0, "10"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Add(cached); err != nil {
		t.Fatal(err)
	}
	c := NewMutationCache[*scyllav1alpha1.ScyllaDBDatacenter](store, schema.GroupResource{Group: "scylla.scylladb.com", Resource: "scylladbdatacenters"})
	written := appliedScyllaDBDatacenter(0, "11")
	c.Written(written)

	if diff := cmp.Diff(appliedScyllaDBDatacenter(0, "11"), written); diff != "" {
		t.Errorf("recording changed the caller's object (-want +got):\n%s", diff)
	}
	got, err := c.Get(written.Namespace, written.Name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := TrimForInformerCache(appliedScyllaDBDatacenter(0, "11"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the cache serves another object than the written one trimmed (-want +got):\n%s", diff)
	}
	if len(got.ManagedFields) != 1 || got.ManagedFields[0].Manager != naming.OperatorFieldManager || got.ManagedFields[0].Subresource != "status" {
		t.Errorf("the cached object keeps managedFields %v, want the operator's status apply entry alone", got.ManagedFields)
	}
}

func TestMutationCacheKeepsWrittenObjectsOnlyUntilTheInformerHasThem(t *testing.T) {
	t.Parallel()

	service := func(name, resourceVersion, note string) *corev1.Service {
		s := newVersionedService(resourceVersion, note)
		s.Name = name
		return s
	}
	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	for _, name := range []string{"a", "b", "c"} {
		if err := store.Add(service(name, "10", "cached")); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c := NewMutationCache[*corev1.Service](store, corev1.Resource("services"))
	c.now = func() time.Time { return now }
	kept := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return slices.Sorted(maps.Keys(c.written))
	}
	note := func(name string) string {
		t.Helper()
		got, err := c.Get("scylla", name)
		if err != nil {
			t.Fatal(err)
		}
		return got.Annotations["note"]
	}

	c.Written(service("a", "11", "written"))
	c.Written(service("b", "12", "written"))
	if err := store.Update(service("a", "11", "informer caught up")); err != nil {
		t.Fatal(err)
	}
	if err := store.Delete(service("c", "10", "")); err != nil {
		t.Fatal(err)
	}
	c.Written(service("c", "13", "written after a delete"))
	if diff := cmp.Diff([]string{"scylla/b", "scylla/c"}, kept()); diff != "" {
		t.Errorf("a write did not drop what the informer caught up with (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("written", note("b")); diff != "" {
		t.Errorf("the written object the informer has not caught up with is not served (-want +got):\n%s", diff)
	}
	if _, err := c.Get("scylla", "c"); !apierrors.IsNotFound(err) {
		t.Errorf("a write outlived a delete: %v", err)
	}
	if diff := cmp.Diff([]string{"scylla/b"}, kept()); diff != "" {
		t.Errorf("a Get of a deleted object kept what was written (-want +got):\n%s", diff)
	}

	now = now.Add(writtenObjectTTL)
	if diff := cmp.Diff("cached", note("b")); diff != "" {
		t.Errorf("a written object outlived its TTL (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), kept()); diff != "" {
		t.Errorf("an expired written object is kept (-want +got):\n%s", diff)
	}
}

func TestMutationCacheServesTheInformersObjectWhenVersionsAreNotIntegers(t *testing.T) {
	t.Parallel()

	store := cache.NewStore(cache.MetaNamespaceKeyFunc)
	if err := store.Add(newVersionedService("not-an-integer", "cached")); err != nil {
		t.Fatal(err)
	}
	c := NewMutationCache[*corev1.Service](store, corev1.Resource("services"))
	c.Written(newVersionedService("11", "written"))
	got, err := c.Get("scylla", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("cached", got.Annotations["note"]); diff != "" {
		t.Errorf("unexpected object served for a cache version that is not an integer (-want +got):\n%s", diff)
	}

	if err := store.Update(newVersionedService("10", "cached")); err != nil {
		t.Fatal(err)
	}
	c.Written(newVersionedService("eleven", "written"))
	got, err = c.Get("scylla", "basic")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("cached", got.Annotations["note"]); diff != "" {
		t.Errorf("unexpected object served for a written version that is not an integer (-want +got):\n%s", diff)
	}
}
