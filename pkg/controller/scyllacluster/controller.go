// Package scyllacluster holds the controller that translates every ScyllaCluster (scylla.scylladb.com/v1) into the
// ScyllaDBDatacenter that runs it and into a ScyllaDBManagerTask per backup and repair, and writes their state back
// into the ScyllaCluster's status.
package scyllacluster

import (
	"context"
	"fmt"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1listers "github.com/scyllakube/client/scylla/listers/scylla/v1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaClusterController"

// Controller reconciles ScyllaClusters: each one becomes a ScyllaDBDatacenter of the same name and a
// ScyllaDBManagerTask per backup and repair, all controlled by the ScyllaCluster.
type Controller struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface

	scyllaClusterLister scyllav1listers.ScyllaClusterLister
	// scyllaClusters serves a sync the ScyllaCluster as the controller's last status update returned it while the
	// informer is behind: an update built on the older copy would conflict, or repeat that write.
	scyllaClusters            *controllerhelpers.MutationCache[*scyllav1.ScyllaCluster]
	scyllaDBDatacenterLister  scyllav1alpha1listers.ScyllaDBDatacenterLister
	scyllaDBManagerTaskLister scyllav1alpha1listers.ScyllaDBManagerTaskLister
	cachesToSync              []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue workqueue.TypedRateLimitingInterface[string]
	// handlers map events of ScyllaClusters and the objects they control to queue keys.
	handlers *controllerhelpers.Handlers[*scyllav1.ScyllaCluster]

	// statusBatcher spaces out the status writes of each ScyllaCluster.
	statusBatcher *controllerhelpers.StatusBatcher
	// createdTasks are the ScyllaDBManagerTasks created that the cache may not show yet.
	createdTasks *createExpectations
	// refusals are the writes the API server refused, not sent again until what it judged changes.
	refusals *refusals

	// clock is the time source of condition transitions; tests replace it.
	clock func() time.Time
}

// NewController returns a Controller that reads through the given informers and writes through the clients. The
// caller starts the informers (after every controller registered its handlers) and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	scyllaClusterInformer scyllav1informers.ScyllaClusterInformer,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	scyllaDBManagerTaskInformer scyllav1alpha1informers.ScyllaDBManagerTaskInformer,
) (*Controller, error) {
	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.OperatorProgramName, ControllerName))
	if err != nil {
		return nil, err
	}

	c := &Controller{
		kubeClient:   kubeClient,
		scyllaClient: scyllaClient,

		scyllaClusterLister: scyllaClusterInformer.Lister(),
		scyllaClusters: controllerhelpers.NewMutationCache[*scyllav1.ScyllaCluster](
			scyllaClusterInformer.Informer().GetStore(), scyllav1.Resource("scyllaclusters")),
		scyllaDBDatacenterLister:  scyllaDBDatacenterInformer.Lister(),
		scyllaDBManagerTaskLister: scyllaDBManagerTaskInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			scyllaClusterInformer.Informer().HasSynced,
			scyllaDBDatacenterInformer.Informer().HasSynced,
			scyllaDBManagerTaskInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue:         controllerhelpers.NewQueue(ControllerName),
		statusBatcher: controllerhelpers.NewStatusBatcher(controllerhelpers.DefaultStatusBatchPeriod),
		clock:         time.Now,
		createdTasks:  newCreateExpectations(time.Now),
		refusals:      controllerhelpers.NewKeyedMemory[refusal](),
	}

	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue, scyllaClusterGVK, c.getScyllaCluster)
	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"ScyllaCluster", scyllaClusterInformer.Informer(), c.handlers.ControllerHandlerFuncs()},
		{"ScyllaDBDatacenter", scyllaDBDatacenterInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"ScyllaDBDatacenter", scyllaDBDatacenterInformer.Informer(), c.blockingScyllaDBDatacenterHandlerFuncs()},
		{"ScyllaDBDatacenter", scyllaDBDatacenterInformer.Informer(), c.previousScyllaClusterHandlerFuncs()},
		{"ScyllaDBManagerTask", scyllaDBManagerTaskInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"ScyllaDBManagerTask", scyllaDBManagerTaskInformer.Informer(), c.previousScyllaClusterHandlerFuncs()},
		{"ScyllaDBManagerTask", scyllaDBManagerTaskInformer.Informer(), c.blockingScyllaDBManagerTaskHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}

	return c, nil
}

func (c *Controller) getScyllaCluster(namespace, name string) (*scyllav1.ScyllaCluster, error) {
	return c.scyllaClusterLister.ScyllaClusters(namespace).Get(name)
}

// blockingScyllaDBDatacenterHandlerFuncs enqueue the ScyllaCluster of the same name as a ScyllaDBDatacenter it does
// not control (another controller's, an orphan, another ScyllaCluster's): such an object blocks the ScyllaCluster
// from creating its own, and the ScyllaCluster must be synced again when it changes or goes away. Objects that
// ScyllaClusters control reach their controller through OwnedHandlerFuncs.
func (c *Controller) blockingScyllaDBDatacenterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return c.handlers.RelatedHandlerFuncs(func(obj metav1.Object) (cache.ObjectName, bool) {
		sc, err := c.getScyllaCluster(obj.GetNamespace(), obj.GetName())
		if err != nil || isControlledBy(obj, sc) {
			return cache.ObjectName{}, false
		}
		return cache.MetaObjectToName(sc), true
	})
}

// blockingScyllaDBManagerTaskHandlerFuncs enqueue the ScyllaCluster that a ScyllaDBManagerTask it does not control is
// labelled with (naming.ClusterNameLabel, which every translated task carries): such a task, orphaned by a deletion
// with --cascade=orphan or copied from another namespace's manifest, blocks the ScyllaCluster's task of the same name,
// which is reported and not retried, and the ScyllaCluster must be synced again when it changes or goes away. Tasks
// that ScyllaClusters control reach the queue through OwnedHandlerFuncs.
func (c *Controller) blockingScyllaDBManagerTaskHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return c.handlers.RelatedHandlerFuncs(func(obj metav1.Object) (cache.ObjectName, bool) {
		name, ok := obj.GetLabels()[naming.ClusterNameLabel]
		if !ok {
			return cache.ObjectName{}, false
		}
		sc, err := c.getScyllaCluster(obj.GetNamespace(), name)
		if err != nil || isControlledBy(obj, sc) {
			return cache.ObjectName{}, false
		}
		return cache.MetaObjectToName(sc), true
	})
}

// previousScyllaClusterHandlerFuncs enqueue the ScyllaCluster that an object's controller, a ScyllaCluster that was
// deleted, was recreated as: same name, another UID. The objects of the deleted one block the new one's of the same
// names until the garbage collector (and the finalizers of the ScyllaDB Manager integration) have removed them, and
// the new one must be synced again when they change or go away. OwnedHandlerFuncs don't enqueue it: it does not own
// them.
func (c *Controller) previousScyllaClusterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return c.handlers.RelatedHandlerFuncs(func(obj metav1.Object) (cache.ObjectName, bool) {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || ref.Kind != scyllaClusterGVK.Kind {
			return cache.ObjectName{}, false
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err != nil || gv.Group != scyllaClusterGVK.Group {
			return cache.ObjectName{}, false
		}
		sc, err := c.getScyllaCluster(obj.GetNamespace(), ref.Name)
		if err != nil || sc.UID == ref.UID {
			return cache.ObjectName{}, false
		}
		return cache.MetaObjectToName(sc), true
	})
}

// Run waits for the informer caches, then syncs ScyllaClusters with workers workers until ctx is done. On shutdown
// each worker finishes the item it is syncing and takes no other; Run returns once all have stopped.
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

// isOfPreviousScyllaCluster tells whether obj's controller is a ScyllaCluster named like sc that is not sc: one that
// was deleted, whose objects the garbage collector removes.
func isOfPreviousScyllaCluster(obj metav1.Object, sc *scyllav1.ScyllaCluster) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != scyllaClusterGVK.Kind || ref.Name != sc.Name || ref.UID == sc.UID {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == scyllaClusterGVK.Group
}

// isControlledBy tells whether obj's controller is sc (same UID, kind and group).
func isControlledBy(obj metav1.Object, sc *scyllav1.ScyllaCluster) bool {
	return controllerhelpers.SameController(metav1.GetControllerOfNoCopy(obj), metav1.NewControllerRef(sc, scyllaClusterGVK))
}
