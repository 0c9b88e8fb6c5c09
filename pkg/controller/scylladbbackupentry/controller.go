// Package scylladbbackupentry holds the manager-controller's controller of ScyllaDBBackupEntries: one ScyllaDB
// cluster's directory in one shared ScyllaDBBackupBucket. It holds a deleted cluster's entry with a finalizer for the
// bucket's deletion grace period, inventorying the directory once meanwhile (sync_inventory.go), then purges it in
// resumable batches, or lets it go untouched when the entry is annotated keep (design/backup-storage.md).
package scylladbbackupentry

import (
	"context"
	"errors"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaDBBackupEntryController"

// Kinds an entry's spec.clusterRef may name.
const (
	scyllaDBDatacenterKind = "ScyllaDBDatacenter"
	scyllaDBClusterKind    = "ScyllaDBCluster"
)

const (
	// defaultPurgeBatchSize is how many objects one PurgeBatch deletes: S3's DeleteObjects takes up to 1000 keys, and
	// one listing request returns up to 1000, one of which is held back to tell whether more remain (the minio
	// store's ListObjects), so batches of 999 list with one request per prefix.
	defaultPurgeBatchSize = 999
	// defaultPurgeBatchesPerSync bounds the batches of one sync, so that a large directory does not hold a worker
	// for long; the entry is queued again right away.
	defaultPurgeBatchesPerSync = 10
	// defaultStoreTimeout bounds the object store calls of one batch (its listings and its deletion), so that a store
	// that does not answer, or answers ever more slowly, fails the batch instead of holding a worker.
	defaultStoreTimeout = time.Minute
)

// Controller purges the directories of deleted clusters' ScyllaDBBackupEntries.
type Controller struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface
	newStore     func(objectstore.Config) (objectstore.Interface, error)

	// entries is what a sync reads its entry from: the informer's copy, or the one the controller's last write
	// returned while the informer has not caught up with it.
	entries                  *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBBackupEntry]
	entryLister              scyllav1alpha1listers.ScyllaDBBackupEntryLister
	entryIndexer             cache.Indexer
	bucketLister             scyllav1alpha1listers.ScyllaDBBackupBucketLister
	scyllaDBDatacenterLister scyllav1alpha1listers.ScyllaDBDatacenterLister
	scyllaDBClusterLister    scyllav1alpha1listers.ScyllaDBClusterLister
	cachesToSync             []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBBackupEntry]

	// clock is the time source of the grace period, lastOperation and condition transitions; tests replace it.
	clock               func() time.Time
	purgeBatchSize      int
	purgeBatchesPerSync int
	storeTimeout        time.Duration
}

// NewController returns a Controller that reads through the given informers, writes through the clients, and reaches
// object stores through newStore (objectstore.New in production). The caller starts the informers (after every
// controller registered its handlers) and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	entryInformer scyllav1alpha1informers.ScyllaDBBackupEntryInformer,
	bucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	newStore func(objectstore.Config) (objectstore.Interface, error),
) (*Controller, error) {
	if newStore == nil {
		return nil, errors.New("can't create the ScyllaDBBackupEntry controller without an object store constructor")
	}

	if err := entryInformer.Informer().AddIndexers(cache.Indexers{
		clusterIndex: clusterIndexFunc,
	}); err != nil {
		return nil, fmt.Errorf("can't add the ScyllaDBBackupEntry indexes: %w", err)
	}
	if err := backupstorage.AddEntryDirectoryIndex(entryInformer.Informer()); err != nil {
		return nil, fmt.Errorf("can't index ScyllaDBBackupEntries: %w", err)
	}
	if err := backupstorage.AddEntryBucketRefIndex(entryInformer.Informer()); err != nil {
		return nil, fmt.Errorf("can't index ScyllaDBBackupEntries: %w", err)
	}

	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.ManagerControllerProgramName, ControllerName))
	if err != nil {
		return nil, err
	}

	c := &Controller{
		kubeClient:   kubeClient,
		scyllaClient: scyllaClient,
		newStore:     newStore,

		entries: controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBBackupEntry](
			entryInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbbackupentries")),
		entryLister:              entryInformer.Lister(),
		entryIndexer:             entryInformer.Informer().GetIndexer(),
		bucketLister:             bucketInformer.Lister(),
		scyllaDBDatacenterLister: scyllaDBDatacenterInformer.Lister(),
		scyllaDBClusterLister:    scyllaDBClusterInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			entryInformer.Informer().HasSynced,
			bucketInformer.Informer().HasSynced,
			scyllaDBDatacenterInformer.Informer().HasSynced,
			scyllaDBClusterInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue: controllerhelpers.NewQueue(ControllerName),

		clock:               time.Now,
		purgeBatchSize:      defaultPurgeBatchSize,
		purgeBatchesPerSync: defaultPurgeBatchesPerSync,
		storeTimeout:        defaultStoreTimeout,
	}

	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue,
		scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBBackupEntry"), c.getEntry)
	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"ScyllaDBBackupEntry", entryInformer.Informer(), c.entryHandlerFuncs()},
		{"ScyllaDBBackupBucket", bucketInformer.Informer(), c.bucketHandlerFuncs()},
		{scyllaDBDatacenterKind, scyllaDBDatacenterInformer.Informer(), c.clusterHandlerFuncs(scyllaDBDatacenterKind)},
		{scyllaDBClusterKind, scyllaDBClusterInformer.Informer(), c.clusterHandlerFuncs(scyllaDBClusterKind)},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}

	return c, nil
}

func (c *Controller) getEntry(namespace, name string) (*scyllav1alpha1.ScyllaDBBackupEntry, error) {
	return c.entryLister.ScyllaDBBackupEntries(namespace).Get(name)
}

// enqueueIndexed enqueues the entries indexerKey finds in index.
func (c *Controller) enqueueIndexed(index, indexerKey string) {
	entries, err := c.entryIndexer.ByIndex(index, indexerKey)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't look up the ScyllaDBBackupEntries of %s %q: %w", index, indexerKey, err))
		return
	}
	for _, entry := range entries {
		c.handlers.Enqueue(entry)
	}
}

// entryHandlerFuncs enqueue an entry on every event but an update of its status only, and the other entries of its
// directory too: whether an entry is a refused duplicate depends on them. An entry that appears or goes away also
// enqueues the other entries of its bucket when the bucket has a quota: whether an entry is over it depends on the
// entries created before it. No decision reads another entry's status, and the controller's own status writes must
// not queue the entry at once: a failed purge or inventory whose error text changes on every attempt (a connection
// reset names its ephemeral port) would write its status each time and, through that write, skip the back-off.
func (c *Controller) entryHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any, entriesOfBucket bool) {
		c.handlers.Enqueue(obj)
		entry, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupEntry](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueIndexed(backupstorage.EntryDirectoryIndex, backupstorage.EntryDirectoryKey(entry.Spec.BucketRef, entry.Spec.ManagerClusterID))
		if !entriesOfBucket {
			return
		}
		if bucket, err := c.bucketLister.Get(entry.Spec.BucketRef); err == nil && bucket.Spec.MaxClusters != nil {
			c.enqueueIndexed(backupstorage.EntryBucketRefIndex, entry.Spec.BucketRef)
		}
	}
	return controllerhelpers.IgnoringStatusUpdates(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj, true) },
		UpdateFunc: func(_, newObj any) { enqueue(newObj, false) },
		DeleteFunc: func(obj any) { enqueue(obj, true) },
	})
}

// bucketHandlerFuncs enqueue the entries of a bucket when it appears, changes or goes away.
func (c *Controller) bucketHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		bucket, err := controllerhelpers.ObjectFromDeleteEvent[metav1.Object](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueIndexed(backupstorage.EntryBucketRefIndex, bucket.GetName())
	}
	return controllerhelpers.IgnoringStatusUpdates(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, newObj any) { enqueue(newObj) },
		DeleteFunc: enqueue,
	})
}

// clusterHandlerFuncs enqueue the entries that reference a ScyllaDBDatacenter or ScyllaDBCluster (kind) when it
// appears, goes away, is recreated or starts being deleted. Other updates enqueue nothing: entries do not depend on
// them.
func (c *Controller) clusterHandlerFuncs(kind string) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		accessor, err := controllerhelpers.ObjectFromDeleteEvent[metav1.Object](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueIndexed(clusterIndex, clusterKey(accessor.GetNamespace(), kind, accessor.GetName()))
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr == nil && newErr == nil && oldAccessor.GetUID() == newAccessor.GetUID() &&
				(oldAccessor.GetDeletionTimestamp() == nil) == (newAccessor.GetDeletionTimestamp() == nil) {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}

// Run waits for the informer caches, then syncs ScyllaDBBackupEntries with workers workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllerhelpers.RunWorkers(ctx, workers, controllerhelpers.Loop{
		Name:             ControllerName,
		Queue:            c.queue,
		CachesToSync:     c.cachesToSync,
		Sync:             c.sync,
		EventBroadcaster: c.eventBroadcaster,
		KubeClient:       c.kubeClient,
	})
}

// now returns the current time at the precision the API keeps.
func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock().UTC().Truncate(time.Second))
}
