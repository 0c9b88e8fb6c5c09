package scylladbbackupentry

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// objectstore.New is what the manager-controller passes as NewController's newStore.
var _ func(objectstore.Config) (objectstore.Interface, error) = objectstore.New

// drain returns the keys in the queue, sorted, and empties it.
func (f *fixture) drain() []string {
	q := f.queue.TypedRateLimitingInterface
	var keys []string
	for q.Len() > 0 {
		key, _ := q.Get()
		q.Done(key)
		q.Forget(key)
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

func TestNewControllerNeedsAStoreConstructor(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testCreated, nil, nil)
	_, err := NewController(f.kubeClient, f.scyllaClient,
		f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries(), f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		f.factory.Scylla().V1alpha1().ScyllaDBDatacenters(), f.factory.Scylla().V1alpha1().ScyllaDBClusters(), nil)
	if err == nil {
		t.Fatal("expected an error without a store constructor")
	}
}

func TestHandlersEnqueueTheEntriesAnEventConcerns(t *testing.T) {
	t.Parallel()

	otherBucket := newEntry()
	otherBucket.Name, otherBucket.UID, otherBucket.Spec.BucketRef = "in-other-bucket", "other-bucket-uid", "other"
	otherBucket.Spec.ClusterRef.Name = "unrelated"
	f := newFixture(t, testCreated, []runtime.Object{newBucket(), newDatacenter(), newEntry(), newDuplicate(testCreated.Add(1)), otherBucket}, nil)
	f.drain()

	entry := newEntry()
	dc := newDatacenter()
	bucket := newBucket()
	tt := []struct {
		name  string
		event func(c *Controller)
		want  []string
	}{
		{
			name:  "an entry change enqueues the entries of its directory",
			event: func(c *Controller) { c.entryHandlerFuncs().OnUpdate(entry, entry) },
			want:  []string{"other/dup", "scylla/basic-shared"},
		},
		{
			name: "an entry annotated keep enqueues the entries of its directory",
			event: func(c *Controller) {
				c.entryHandlerFuncs().OnUpdate(entry, bumped(entry, func(e *scyllav1alpha1.ScyllaDBBackupEntry) {
					e.Annotations = map[string]string{naming.ScyllaDBBackupRetentionAnnotation: naming.ScyllaDBBackupRetentionKeep}
				}))
			},
			want: []string{"other/dup", "scylla/basic-shared"},
		},
		{
			name: "an entry starting to be deleted enqueues the entries of its directory",
			event: func(c *Controller) {
				c.entryHandlerFuncs().OnUpdate(entry, bumped(entry, func(e *scyllav1alpha1.ScyllaDBBackupEntry) {
					e.DeletionTimestamp = new(metav1.NewTime(testDeleted))
				}))
			},
			want: []string{"other/dup", "scylla/basic-shared"},
		},
		{
			name: "an entry's status update enqueues nothing",
			event: func(c *Controller) {
				c.entryHandlerFuncs().OnUpdate(entry, bumped(entry, func(e *scyllav1alpha1.ScyllaDBBackupEntry) { e.Status.Objects = new(int64(3)) }))
			},
		},
		{
			name: "an entry deletion, seen as a tombstone, enqueues the entries of its directory",
			event: func(c *Controller) {
				c.entryHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic-shared", Obj: entry})
			},
			want: []string{"other/dup", "scylla/basic-shared"},
		},
		{
			name: "a bucket change enqueues its entries",
			event: func(c *Controller) {
				c.bucketHandlerFuncs().OnUpdate(bucket, bumped(bucket, func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Generation++ }))
			},
			want: []string{"other/dup", "scylla/basic-shared"},
		},
		{
			name: "a bucket status update enqueues nothing",
			event: func(c *Controller) {
				c.bucketHandlerFuncs().OnUpdate(bucket, bumped(bucket, func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Status.Clusters = new(int32(2)) }))
			},
		},
		{
			name:  "a cluster deletion enqueues its entries",
			event: func(c *Controller) { c.clusterHandlerFuncs(scyllaDBDatacenterKind).OnDelete(dc) },
			want:  []string{"scylla/basic-shared"},
		},
		{
			name: "a cluster being deleted enqueues its entries",
			event: func(c *Controller) {
				c.clusterHandlerFuncs(scyllaDBDatacenterKind).OnUpdate(dc, bumped(dc, func(d *scyllav1alpha1.ScyllaDBDatacenter) {
					d.DeletionTimestamp = new(metav1.NewTime(testDeleted))
				}))
			},
			want: []string{"scylla/basic-shared"},
		},
		{
			name: "a cluster's other updates enqueue nothing",
			event: func(c *Controller) {
				c.clusterHandlerFuncs(scyllaDBDatacenterKind).OnUpdate(dc, bumped(dc, func(d *scyllav1alpha1.ScyllaDBDatacenter) { d.Labels = map[string]string{"a": "b"} }))
			},
		},
		{
			name:  "a ScyllaDBCluster of the same name is another object",
			event: func(c *Controller) { c.clusterHandlerFuncs(scyllaDBClusterKind).OnDelete(dc) },
		},
	}
	for _, tc := range tt {
		tc.event(f.controller)
		if diff := cmp.Diff(tc.want, f.drain()); diff != "" {
			t.Errorf("%s: unexpected keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

// bumped returns a copy of obj changed by change, with a new resource version.
func bumped[T interface {
	runtime.Object
	metav1.Object
}](obj T, change func(T)) T {
	c := obj.DeepCopyObject().(T)
	change(c)
	c.SetResourceVersion(c.GetResourceVersion() + "1")
	return c
}

func TestEntryAppearingOrGoingEnqueuesTheEntriesOfABucketWithAQuota(t *testing.T) {
	t.Parallel()

	f := newFixture(t, testCreated, quotaObjects(), nil)
	f.drain()

	entry := newEntry()
	h := f.controller.entryHandlerFuncs()
	h.OnAdd(entry, false)
	if diff := cmp.Diff([]string{"other/dup", "scylla/basic-shared"}, f.drain()); diff != "" {
		t.Errorf("an entry added: unexpected keys (-want +got):\n%s", diff)
	}
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic-shared", Obj: entry})
	if diff := cmp.Diff([]string{"other/dup", "scylla/basic-shared"}, f.drain()); diff != "" {
		t.Errorf("an entry deleted: unexpected keys (-want +got):\n%s", diff)
	}
	// Its other updates (status writes, annotations) change no entry's place in the quota.
	h.OnUpdate(entry, entry)
	if diff := cmp.Diff([]string{"scylla/basic-shared"}, f.drain()); diff != "" {
		t.Errorf("an entry updated: unexpected keys (-want +got):\n%s", diff)
	}
}

// TestAFailedPurgeWaitsForItsBackOffWhenTheStoresErrorChanges: an error whose text changes on every attempt (a
// connection reset names the ephemeral port it came from) makes every failed attempt write the entry's status. That
// write, the controller's own, must not queue the entry at once: the queue's back-off after the failed sync decides
// when the store is tried again, or a store that resets connections is called, and the status written, in a loop.
func TestAFailedPurgeWaitsForItsBackOffWhenTheStoresErrorChanges(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name string
		now  time.Time
	}{
		{name: "purge", now: afterGracePeriod},
		{name: "inventory", now: testDeleted.Add(time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.now, goneObjects(deleted(newEntry())), allKeys(), newCredentialsSecret())
			var port atomic.Int32
			port.Store(40000)
			f.store.SetErrorFunc(func(objectstorefake.Call) error {
				return fmt.Errorf("read tcp 127.0.0.1:%d->127.0.0.1:7070: read: connection reset by peer", port.Add(1))
			})

			for attempt := range 2 {
				before := f.testEntry(t)
				if err := f.sync(t, testNamespace, testEntryName); err == nil {
					t.Fatalf("attempt %d: expected the sync to fail so that the queue backs off", attempt)
				}
				after := f.testEntry(t)
				if after.ResourceVersion == before.ResourceVersion {
					t.Fatalf("attempt %d: expected the new error to be written to the status", attempt)
				}
				f.drain()
				f.controller.entryHandlerFuncs().OnUpdate(before, after)
				if got := f.drain(); len(got) != 0 {
					t.Errorf("attempt %d: the controller's own status write queued %q at once, bypassing the back-off", attempt, got)
				}
			}
		})
	}
}
