// Package scylladbmanagertask holds the manager-controller's controller that schedules the backup and repair of each
// ScyllaDBManagerTask with ScyllaDB Manager, in the cluster its ScyllaDBDatacenter or ScyllaDBCluster is registered
// as, and reflects ScyllaDB Manager's view of the task in the object's status and status annotation.
package scylladbmanagertask

import (
	"context"
	"errors"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaDBManagerTaskController"

// Kinds a ScyllaDBManagerTask may reference in spec.scyllaDBClusterRef.
const (
	scyllaDBDatacenterKind = "ScyllaDBDatacenter"
	scyllaDBClusterKind    = "ScyllaDBCluster"
)

const (
	// defaultStatusRefreshInterval is how often every ScyllaDBManagerTask is synced to refresh the run state in its
	// status (lastRunStatus, nextActivation, ...), which changes in ScyllaDB Manager without any Kubernetes event.
	// All tasks are enqueued at once, so this costs one task list read per cluster per interval. With a
	// --resync-period longer than this (the default is 12h) it is also what finds tasks changed or deleted in
	// ScyllaDB Manager by hand: those are restored at most min(--resync-period, defaultStatusRefreshInterval) after
	// the change, as defaultTaskListTTL is shorter than both.
	defaultStatusRefreshInterval = 5 * time.Minute
	// defaultClusterMissingRequeueDelay is how long a task whose cluster ScyllaDB Manager does not know waits before
	// it looks again: the registration controller registers the cluster again under the same ID, which changes
	// nothing the informers would notice.
	defaultClusterMissingRequeueDelay = 30 * time.Second
)

// managerClient is the part of ScyllaDB Manager's API the controller uses; *managerclient.Client implements it.
type managerClient interface {
	ListTasks(ctx context.Context, clusterID string, opts managerclient.ListTasksOptions) ([]managerclient.TaskListItem, error)
	CreateTask(ctx context.Context, clusterID string, task *managerclient.TaskUpdate) (string, error)
	UpdateTask(ctx context.Context, clusterID string, taskType managerclient.TaskType, taskID string, task *managerclient.TaskUpdate) (*managerclient.Task, error)
	DeleteTask(ctx context.Context, clusterID string, taskType managerclient.TaskType, taskID string) error
	GetCluster(ctx context.Context, idOrName string) (*managerclient.Cluster, error)
}

var _ managerClient = &managerclient.Client{}

// ClusterMissingReporter is how the controller hands a lost cluster to the registration controllers, which run in the
// same process: a task of a registered object whose cluster ScyllaDB Manager does not hold waits for the cluster to be
// registered again, and without the report that happens only at the object's next resync.
type ClusterMissingReporter interface {
	// ReportClusterMissing says that ScyllaDB Manager answered 404 for clusterID, the cluster ID annotation of the
	// object of kind (ScyllaDBDatacenter or ScyllaDBCluster) named name in namespace. It must not block: it is called
	// from the controller's syncs, once for each sync of each of the cluster's tasks that finds it missing; the
	// receiver limits what the reports start.
	ReportClusterMissing(kind, namespace, name, clusterID string)
}

// Controller schedules ScyllaDBManagerTasks with ScyllaDB Manager.
type Controller struct {
	kubeClient    kubernetes.Interface
	scyllaClient  scyllaclientset.Interface
	managerClient managerClient
	// clusterMissingReporter is told about registered objects whose cluster ScyllaDB Manager does not hold.
	clusterMissingReporter ClusterMissingReporter

	scyllaDBManagerTaskLister scyllav1alpha1listers.ScyllaDBManagerTaskLister
	// scyllaDBManagerTasks is what a sync reads its task from: the informer's copy, or the one the controller's last
	// write returned while the informer has not caught up with it, so that a sync does not write again what the
	// previous sync of the same task wrote.
	scyllaDBManagerTasks       *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBManagerTask]
	scyllaDBManagerTaskIndexer cache.Indexer
	scyllaDBDatacenterLister   scyllav1alpha1listers.ScyllaDBDatacenterLister
	scyllaDBClusterLister      scyllav1alpha1listers.ScyllaDBClusterLister
	// Backups to a declared ScyllaDBBackupBucket wait for the cluster's ScyllaDBBackupEntry in it.
	scyllaDBBackupBucketLister  scyllav1alpha1listers.ScyllaDBBackupBucketLister
	scyllaDBBackupBucketIndexer cache.Indexer
	scyllaDBBackupEntryLister   scyllav1alpha1listers.ScyllaDBBackupEntryLister
	scyllaDBBackupEntryIndexer  cache.Indexer
	cachesToSync                []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBManagerTask]

	// taskLists memoises ScyllaDB Manager's task list per cluster.
	taskLists *taskLists
	// rejections remembers the tasks ScyllaDB Manager answered 400 to.
	rejections *rejections
	// clusterOwners remembers the clusters found labelled with their object's UID.
	clusterOwners *clusterOwners
	// createdBackupEntries remembers the ScyllaDBBackupEntries created and not yet observed.
	createdBackupEntries *createdBackupEntries

	// clock is the time source of start dates, the task list memo and condition transitions; tests replace it.
	clock                      func() time.Time
	statusRefreshInterval      time.Duration
	clusterMissingRequeueDelay time.Duration
}

// NewController returns a Controller that reads through the given informers and writes through the clients, and tells
// clusterMissingReporter (the registration controllers) about registered objects whose cluster ScyllaDB Manager does
// not hold. The caller starts the informers (after every controller registered its handlers) and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	managerClient *managerclient.Client,
	clusterMissingReporter ClusterMissingReporter,
	scyllaDBManagerTaskInformer scyllav1alpha1informers.ScyllaDBManagerTaskInformer,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	scyllaDBBackupBucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer,
	scyllaDBBackupEntryInformer scyllav1alpha1informers.ScyllaDBBackupEntryInformer,
) (*Controller, error) {
	if managerClient == nil {
		return nil, errors.New("can't create the ScyllaDBManagerTask controller without a ScyllaDB Manager client")
	}
	if clusterMissingReporter == nil {
		return nil, errors.New("can't create the ScyllaDBManagerTask controller without a reporter of missing ScyllaDB Manager clusters: a lost cluster would be registered again only at the next resync")
	}
	return newController(kubeClient, scyllaClient, managerClient, clusterMissingReporter, scyllaDBManagerTaskInformer, scyllaDBDatacenterInformer, scyllaDBClusterInformer, scyllaDBBackupBucketInformer, scyllaDBBackupEntryInformer)
}

func newController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	managerClient managerClient,
	clusterMissingReporter ClusterMissingReporter,
	scyllaDBManagerTaskInformer scyllav1alpha1informers.ScyllaDBManagerTaskInformer,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	scyllaDBBackupBucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer,
	scyllaDBBackupEntryInformer scyllav1alpha1informers.ScyllaDBBackupEntryInformer,
) (*Controller, error) {
	// The index lets a change of a ScyllaDBDatacenter or ScyllaDBCluster reach the tasks that reference it.
	if err := scyllaDBManagerTaskInformer.Informer().AddIndexers(cache.Indexers{
		naming.ScyllaDBManagerTaskClusterRefIndex: clusterRefIndexFunc,
	}); err != nil {
		return nil, fmt.Errorf("can't add the ScyllaDBManagerTask index %q: %w", naming.ScyllaDBManagerTaskClusterRefIndex, err)
	}
	// These find the declared bucket a location names, count the entries of a bucket against its quota, find a
	// cluster's entry by the directory it records, and bring back the tasks a bucket or entry change concerns.
	indexes := []struct {
		kind      string
		informer  cache.SharedIndexInformer
		name      string
		indexFunc cache.IndexFunc
	}{
		{"ScyllaDBManagerTask", scyllaDBManagerTaskInformer.Informer(), taskLocationBucketIndex, taskLocationBucketIndexFunc},
		{"ScyllaDBBackupBucket", scyllaDBBackupBucketInformer.Informer(), backupBucketNameIndex, backupBucketNameIndexFunc},
		{"ScyllaDBBackupEntry", scyllaDBBackupEntryInformer.Informer(), backupstorage.EntryBucketRefIndex, backupstorage.EntryBucketRefIndexFunc},
		{"ScyllaDBBackupEntry", scyllaDBBackupEntryInformer.Informer(), backupstorage.EntryDirectoryIndex, backupstorage.EntryDirectoryIndexFunc},
	}
	for _, i := range indexes {
		if err := controllerhelpers.AddIndexerIfAbsent(i.informer, i.name, i.indexFunc); err != nil {
			return nil, fmt.Errorf("can't index %ss: %w", i.kind, err)
		}
	}

	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.ManagerControllerProgramName, ControllerName))
	if err != nil {
		return nil, err
	}
	c := &Controller{
		kubeClient:    kubeClient,
		scyllaClient:  scyllaClient,
		managerClient: managerClient,

		clusterMissingReporter: clusterMissingReporter,

		scyllaDBManagerTaskLister: scyllaDBManagerTaskInformer.Lister(),
		scyllaDBManagerTasks: controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBManagerTask](
			scyllaDBManagerTaskInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbmanagertasks")),
		scyllaDBManagerTaskIndexer:  scyllaDBManagerTaskInformer.Informer().GetIndexer(),
		scyllaDBDatacenterLister:    scyllaDBDatacenterInformer.Lister(),
		scyllaDBClusterLister:       scyllaDBClusterInformer.Lister(),
		scyllaDBBackupBucketLister:  scyllaDBBackupBucketInformer.Lister(),
		scyllaDBBackupBucketIndexer: scyllaDBBackupBucketInformer.Informer().GetIndexer(),
		scyllaDBBackupEntryLister:   scyllaDBBackupEntryInformer.Lister(),
		scyllaDBBackupEntryIndexer:  scyllaDBBackupEntryInformer.Informer().GetIndexer(),
		cachesToSync: []cache.InformerSynced{
			scyllaDBManagerTaskInformer.Informer().HasSynced,
			scyllaDBDatacenterInformer.Informer().HasSynced,
			scyllaDBClusterInformer.Informer().HasSynced,
			scyllaDBBackupBucketInformer.Informer().HasSynced,
			scyllaDBBackupEntryInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue:         controllerhelpers.NewQueue(ControllerName),
		rejections:    newRejections(),
		clusterOwners: newClusterOwners(),

		clock:                      time.Now,
		statusRefreshInterval:      defaultStatusRefreshInterval,
		clusterMissingRequeueDelay: defaultClusterMissingRequeueDelay,
	}
	c.createdBackupEntries = newCreatedBackupEntries(func() time.Time { return c.clock() })
	c.taskLists = newTaskLists(defaultTaskListTTL, func() time.Time { return c.clock() }, func(ctx context.Context, clusterID string) ([]managerclient.TaskListItem, error) {
		return c.managerClient.ListTasks(ctx, clusterID, managerclient.ListTasksOptions{All: true})
	})

	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue,
		scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBManagerTask"), c.getScyllaDBManagerTask)
	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"ScyllaDBManagerTask", scyllaDBManagerTaskInformer.Informer(), c.taskHandlerFuncs()},
		{scyllaDBDatacenterKind, scyllaDBDatacenterInformer.Informer(), c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind)},
		{scyllaDBClusterKind, scyllaDBClusterInformer.Informer(), c.referencedClusterHandlerFuncs(scyllaDBClusterKind)},
		{"ScyllaDBBackupBucket", scyllaDBBackupBucketInformer.Informer(), c.backupBucketsHandlerFuncs()},
		{"ScyllaDBBackupEntry", scyllaDBBackupEntryInformer.Informer(), c.backupEntriesHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}

	return c, nil
}

func (c *Controller) getScyllaDBManagerTask(namespace, name string) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
	return c.scyllaDBManagerTaskLister.ScyllaDBManagerTasks(namespace).Get(name)
}

// clusterRefIndexFunc indexes a ScyllaDBManagerTask by the cluster object it references.
func clusterRefIndexFunc(obj any) ([]string, error) {
	task, ok := obj.(*scyllav1alpha1.ScyllaDBManagerTask)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBManagerTask", obj)
	}
	ref := task.Spec.ScyllaDBClusterRef
	return []string{naming.ScyllaDBManagerTaskClusterRefIndexKey(task.Namespace, ref.Kind, ref.Name)}, nil
}

// taskHandlerFuncs handle the events of ScyllaDBManagerTasks. A task's status-only updates, the controller's own
// status writes, queue nothing: a failure whose message changes on every attempt (a connection reset names its
// local port) would otherwise be retried at once, skipping the queue's back-off, with a ScyllaDB Manager request and
// a status write each time.
func (c *Controller) taskHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return controllerhelpers.IgnoringStatusUpdates(c.handlers.ControllerHandlerFuncs())
}

// referencedClusterHandlerFuncs enqueue the ScyllaDBManagerTasks that reference a ScyllaDBDatacenter or
// ScyllaDBCluster (kind) when it appears, goes away, or its registration with ScyllaDB Manager changes. Other updates
// (its status, mostly) and resyncs enqueue nothing: the tasks do not depend on them.
func (c *Controller) referencedClusterHandlerFuncs(kind string) cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		accessor, err := controllerhelpers.ObjectFromDeleteEvent[metav1.Object](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueTasksOfCluster(accessor.GetNamespace(), kind, accessor.GetName())
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { enqueue(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr == nil && newErr == nil && !registrationChanged(oldAccessor, newAccessor) {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}

// enqueueTasksOfCluster enqueues the ScyllaDBManagerTasks that reference the cluster object of kind named name in
// namespace.
func (c *Controller) enqueueTasksOfCluster(namespace, kind, name string) {
	tasks, err := c.scyllaDBManagerTaskIndexer.ByIndex(naming.ScyllaDBManagerTaskClusterRefIndex,
		naming.ScyllaDBManagerTaskClusterRefIndexKey(namespace, kind, name))
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't look up the ScyllaDBManagerTasks of %s %q: %w", kind, klog.KRef(namespace, name), err))
		return
	}
	for _, task := range tasks {
		c.handlers.Enqueue(task)
	}
}

// registrationChanged tells whether anything the registration of a cluster object depends on differs between two of
// its versions.
func registrationChanged(oldObj, newObj metav1.Object) bool {
	if oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
		return false
	}
	_, oldLabelled := oldObj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]
	_, newLabelled := newObj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]
	return oldObj.GetUID() != newObj.GetUID() ||
		oldLabelled != newLabelled ||
		oldObj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] != newObj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] ||
		(oldObj.GetDeletionTimestamp() == nil) != (newObj.GetDeletionTimestamp() == nil)
}

// Run waits for the informer caches, then syncs ScyllaDBManagerTasks with workers workers until ctx is done. Every
// statusRefreshInterval it enqueues every ScyllaDBManagerTask to refresh their run state. On shutdown each worker
// finishes the item it is syncing and takes no other; Run returns once all have stopped.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllerhelpers.RunWorkers(ctx, workers, controllerhelpers.Loop{
		Name:             ControllerName,
		Queue:            c.queue,
		CachesToSync:     c.cachesToSync,
		Sync:             c.sync,
		EventBroadcaster: c.eventBroadcaster,
		KubeClient:       c.kubeClient,
		Background:       []func(ctx context.Context){c.refreshStatuses},
	})
}

// refreshStatuses enqueues every ScyllaDBManagerTask every statusRefreshInterval until ctx is done. ScyllaDB Manager
// has no push API, so the run state it reports is pulled; enqueuing all tasks at once lets the syncs of a cluster's
// tasks share one task list read.
func (c *Controller) refreshStatuses(ctx context.Context) {
	ticker := time.NewTicker(c.statusRefreshInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			c.enqueueAll(ctx)
		}
	}
}

func (c *Controller) enqueueAll(ctx context.Context) {
	tasks, err := c.scyllaDBManagerTaskLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Can't list ScyllaDBManagerTasks to refresh their status")
		return
	}
	for _, task := range tasks {
		c.handlers.Enqueue(task)
	}
}

// now returns the time conditions that change status get as lastTransitionTime.
func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock().Truncate(time.Second))
}
