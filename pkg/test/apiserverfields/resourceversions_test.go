package apiserverfields

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// event is what a test compares of a watch event.
type event struct {
	Type            watch.EventType
	ResourceVersion string
	HasUID          bool
}

// receivedEvents returns the events w already holds: the fake tracker hands a write's events to its watchers before
// the write returns.
func receivedEvents(t *testing.T, w watch.Interface) []event {
	t.Helper()
	var events []event
	for {
		select {
		case e := <-w.ResultChan():
			accessor, err := meta.Accessor(e.Object)
			if err != nil {
				t.Fatalf("can't read the metadata of a %s event: %v", e.Type, err)
			}
			events = append(events, event{Type: e.Type, ResourceVersion: accessor.GetResourceVersion(), HasUID: len(accessor.GetUID()) != 0})
		default:
			return events
		}
	}
}

func resourceVersionOf(t *testing.T, obj runtime.Object) string {
	t.Helper()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return accessor.GetResourceVersion()
}

func TestEachWriteOfAScyllaObjectMakesOneWatchEventWithItsNewResourceVersion(t *testing.T) {
	t.Parallel()

	const sdcApply = `{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBDatacenter","metadata":{"name":"%s","namespace":"scylla","labels":{"applied":"true"}}}`
	for _, tc := range []struct {
		name      string
		write     func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error)
		eventType watch.EventType
	}{
		{
			name: "create",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				sdc := newSDC()
				sdc.Name, sdc.ResourceVersion = "other", ""
				return c.Create(ctx, sdc, metav1.CreateOptions{})
			},
			eventType: watch.Added,
		},
		{
			name: "update",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				sdc := newSDC()
				sdc.Labels = map[string]string{"updated": "true"}
				return c.Update(ctx, sdc, metav1.UpdateOptions{})
			},
			eventType: watch.Modified,
		},
		{
			name: "status update",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				sdc := newSDC()
				sdc.Status.ObservedGeneration = ptr.To(int64(1))
				return c.UpdateStatus(ctx, sdc, metav1.UpdateOptions{})
			},
			eventType: watch.Modified,
		},
		{
			name: "merge patch",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				return c.Patch(ctx, "basic", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"true"}}}`), metav1.PatchOptions{})
			},
			eventType: watch.Modified,
		},
		{
			name: "JSON patch of the status",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				return c.Patch(ctx, "basic", types.JSONPatchType, []byte(`[{"op":"add","path":"/status","value":{"observedGeneration":1}}]`), metav1.PatchOptions{}, "status")
			},
			eventType: watch.Modified,
		},
		{
			name: "apply",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				return c.Patch(ctx, "basic", types.ApplyPatchType, []byte(fmt.Sprintf(sdcApply, "basic")), metav1.PatchOptions{FieldManager: "test", Force: ptr.To(true)})
			},
			eventType: watch.Modified,
		},
		{
			name: "apply that creates",
			write: func(ctx context.Context, c scyllav1alpha1Client) (runtime.Object, error) {
				return c.Patch(ctx, "other", types.ApplyPatchType, []byte(fmt.Sprintf(sdcApply, "other")), metav1.PatchOptions{FieldManager: "test", Force: ptr.To(true)})
			},
			eventType: watch.Added,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			cs, _, err := NewScyllaClientset(newSDC())
			if err != nil {
				t.Fatal(err)
			}
			c := cs.ScyllaV1alpha1().ScyllaDBDatacenters("scylla")
			list, err := c.List(t.Context(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w, err := c.Watch(t.Context(), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			written, err := tc.write(t.Context(), c)
			if err != nil {
				t.Fatal(err)
			}
			rv := resourceVersionOf(t, written)
			if n, err := strconv.Atoi(rv); err != nil || n <= firstResourceVersion {
				t.Fatalf("the write returned resourceVersion %q, want one above %d", rv, firstResourceVersion)
			}
			want := []event{{Type: tc.eventType, ResourceVersion: rv, HasUID: tc.eventType == watch.Added}}
			if diff := cmp.Diff(want, receivedEvents(t, w)); diff != "" {
				t.Errorf("unexpected watch events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEachWriteOfAKubeObjectMakesOneWatchEventWithItsNewResourceVersion(t *testing.T) {
	t.Parallel()

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "scylla", Name: "cm", ResourceVersion: "1"}}
	cs := kubefake.NewClientset(cm)
	BumpResourceVersions(&cs.Fake, cs.Tracker())
	c := cs.CoreV1().ConfigMaps("scylla")
	w, err := c.Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// Without a resource version, the watch starts with the objects the tracker holds.
	if diff := cmp.Diff([]event{{Type: watch.Added, ResourceVersion: "1"}}, receivedEvents(t, w)); diff != "" {
		t.Fatalf("unexpected initial watch events (-want +got):\n%s", diff)
	}

	for _, write := range []struct {
		name      string
		do        func() (runtime.Object, error)
		eventType watch.EventType
	}{
		{"strategic merge patch", func() (runtime.Object, error) {
			return c.Patch(t.Context(), "cm", types.StrategicMergePatchType, []byte(`{"data":{"a":"1"}}`), metav1.PatchOptions{})
		}, watch.Modified},
		{"update", func() (runtime.Object, error) {
			updated := cm.DeepCopy()
			updated.Data = map[string]string{"b": "2"}
			return c.Update(t.Context(), updated, metav1.UpdateOptions{})
		}, watch.Modified},
		{"create", func() (runtime.Object, error) {
			created := cm.DeepCopy()
			created.Name, created.ResourceVersion = "other", ""
			return c.Create(t.Context(), created, metav1.CreateOptions{})
		}, watch.Added},
	} {
		written, err := write.do()
		if err != nil {
			t.Fatalf("%s: %v", write.name, err)
		}
		rv := resourceVersionOf(t, written)
		want := []event{{Type: write.eventType, ResourceVersion: rv, HasUID: write.eventType == watch.Added}}
		if diff := cmp.Diff(want, receivedEvents(t, w)); diff != "" {
			t.Errorf("%s: unexpected watch events (-want +got):\n%s", write.name, diff)
		}
	}
}

type scyllav1alpha1Client interface {
	Create(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, opts metav1.CreateOptions) (*scyllav1alpha1.ScyllaDBDatacenter, error)
	Update(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, opts metav1.UpdateOptions) (*scyllav1alpha1.ScyllaDBDatacenter, error)
	UpdateStatus(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, opts metav1.UpdateOptions) (*scyllav1alpha1.ScyllaDBDatacenter, error)
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*scyllav1alpha1.ScyllaDBDatacenter, error)
}
