// Package scylladbbackupbucket holds the manager-controller's controller of ScyllaDBBackupBuckets: it checks that each
// declared bucket exists and is reachable with its credentials, creates it when spec.provision asks for it, and
// reports that and the number of ScyllaDBBackupEntries using it in the bucket's status.
package scylladbbackupbucket

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaDBBackupBucketController"

// defaultStoreTimeout bounds each object store call, so that a store that does not answer does not hold a worker.
const defaultStoreTimeout = 30 * time.Second

// defaultCredentialsRecheckInterval is how often a bucket whose credentials Secret is missing or incomplete, or whose
// credentials the store refused, reads the Secret again: the controller does not watch Secrets, and a resync may be
// hours away.
const defaultCredentialsRecheckInterval = time.Minute

// backupstorage.EntryBucketRefIndex indexes ScyllaDBBackupEntries by spec.bucketRef. The ScyllaDBManagerTask controller adds the
// same index (name and function) to the shared informer; whichever controller is built first adds it.

// NewStoreFunc returns the object store a bucket's configuration describes; objectstore.New in production.
type NewStoreFunc func(objectstore.Config) (objectstore.Interface, error)

// Controller reconciles ScyllaDBBackupBuckets with their object store.
type Controller struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface
	newStore     NewStoreFunc

	// buckets is what a sync reads its bucket from: the informer's copy, or the one the controller's last status
	// write returned while the informer has not caught up with it.
	buckets      *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBBackupBucket]
	bucketLister scyllav1alpha1listers.ScyllaDBBackupBucketLister
	entryIndexer cache.Indexer
	cachesToSync []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBBackupBucket]

	// clock is the time source of condition transitions; tests replace it.
	clock                      func() time.Time
	storeTimeout               time.Duration
	credentialsRecheckInterval time.Duration

	// refusals are the buckets, by name, whose credentials from their credentials Secret the store refused: a
	// recheck asks the store again only once the Secret holds other credentials.
	refusalsLock sync.Mutex
	refusals     map[string]refusal
}

// NewController returns a Controller that reads buckets and entries through the given informers, Secrets through
// kubeClient, and reaches object stores through newStore. The caller starts the informers (after every controller
// registered its handlers) and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	bucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer,
	entryInformer scyllav1alpha1informers.ScyllaDBBackupEntryInformer,
	newStore func(objectstore.Config) (objectstore.Interface, error),
) (*Controller, error) {
	if newStore == nil {
		return nil, errors.New("can't create the ScyllaDBBackupBucket controller without an object store constructor")
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

		buckets: controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBBackupBucket](
			bucketInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbbackupbuckets")),
		bucketLister: bucketInformer.Lister(),
		entryIndexer: entryInformer.Informer().GetIndexer(),
		cachesToSync: []cache.InformerSynced{
			bucketInformer.Informer().HasSynced,
			entryInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue: controllerhelpers.NewQueue(ControllerName),

		clock:                      time.Now,
		storeTimeout:               defaultStoreTimeout,
		credentialsRecheckInterval: defaultCredentialsRecheckInterval,
		refusals:                   map[string]refusal{},
	}
	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue,
		scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBBackupBucket"),
		func(_, name string) (*scyllav1alpha1.ScyllaDBBackupBucket, error) { return c.bucketLister.Get(name) })

	// The controller's own status writes would otherwise cost a sync, and an object store call, each.
	if _, err := bucketInformer.Informer().AddEventHandler(controllerhelpers.IgnoringStatusUpdates(c.handlers.ControllerHandlerFuncs())); err != nil {
		return nil, fmt.Errorf("can't add ScyllaDBBackupBucket event handler: %w", err)
	}
	if _, err := entryInformer.Informer().AddEventHandler(c.entryHandlerFuncs()); err != nil {
		return nil, fmt.Errorf("can't add ScyllaDBBackupEntry event handler: %w", err)
	}
	return c, nil
}

// entryHandlerFuncs enqueue the bucket of a ScyllaDBBackupEntry when the counts in its status change: the entry
// appears, starts being deleted, or is gone. Other updates (the entry controller's status writes during a purge) and
// resyncs enqueue nothing.
func (c *Controller) entryHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		entry, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupEntry](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.queue.Add(entry.Spec.BucketRef)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldEntry, oldOK := oldObj.(*scyllav1alpha1.ScyllaDBBackupEntry)
			newEntry, newOK := newObj.(*scyllav1alpha1.ScyllaDBBackupEntry)
			if oldOK && newOK && (oldEntry.DeletionTimestamp == nil) == (newEntry.DeletionTimestamp == nil) {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}

// Run waits for the informer caches, then syncs ScyllaDBBackupBuckets with workers workers until ctx is done.
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

// now returns the time conditions that change status get as lastTransitionTime.
func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock().Truncate(time.Second))
}
