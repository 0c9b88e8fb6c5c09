// Package remotekubernetescluster holds the operator's RemoteKubernetesCluster controller: it keeps, in a
// remoteclient.Pool, the clients of the remote cluster each RemoteKubernetesCluster's kubeconfig Secret reaches,
// health-checks them every spec.clientHealthcheckProbes.periodSeconds, reports both as conditions, and keeps a
// RemoteKubernetesCluster that ScyllaDBClusters still use from being deleted (naming.RemoteKubernetesClusterFinalizer).
package remotekubernetescluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "RemoteKubernetesClusterController"

// defaultProbeTimeout bounds one health check of a remote API server.
const defaultProbeTimeout = 10 * time.Second

var remoteKubernetesClusterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("RemoteKubernetesCluster")

// Controller reconciles RemoteKubernetesClusters into the clients of a remoteclient.Pool.
//
// The kubeconfig Secrets are users' Secrets in any namespace: the operator's Secret informers hold only the objects
// it manages (naming.ManagedObjectsSelector), so each sync reads its Secret from the API server, and every
// RemoteKubernetesCluster is synced again at least every probe period, which picks up a changed Secret.
type Controller struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface

	remoteKubernetesClusterLister scyllav1alpha1listers.RemoteKubernetesClusterLister
	// remoteKubernetesClusters is what a sync reads its object from: the informer's copy or the one the
	// controller's last write returned, whichever is newer, so that a sync does not write again what the previous
	// one did.
	remoteKubernetesClusters *controllerhelpers.MutationCache[*scyllav1alpha1.RemoteKubernetesCluster]
	scyllaDBClusterLister    scyllav1alpha1listers.ScyllaDBClusterLister
	cachesToSync             []cache.InformerSynced

	pool *remoteclient.Pool

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.RemoteKubernetesCluster]

	now          func() time.Time
	probeTimeout time.Duration
}

// NewController returns a Controller that reads through the given informers, writes through the clients and keeps
// the remote clients in pool. The caller starts the informers (after every controller registered its handlers) and
// then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	remoteKubernetesClusterInformer scyllav1alpha1informers.RemoteKubernetesClusterInformer,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	pool *remoteclient.Pool,
) (*Controller, error) {
	if pool == nil {
		return nil, fmt.Errorf("can't create %s: the remote client pool is nil", ControllerName)
	}
	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.OperatorProgramName, ControllerName))
	if err != nil {
		return nil, err
	}

	c := &Controller{
		kubeClient:   kubeClient,
		scyllaClient: scyllaClient,

		remoteKubernetesClusterLister: remoteKubernetesClusterInformer.Lister(),
		remoteKubernetesClusters: controllerhelpers.NewMutationCache[*scyllav1alpha1.RemoteKubernetesCluster](
			remoteKubernetesClusterInformer.Informer().GetStore(), scyllav1alpha1.Resource("remotekubernetesclusters")),
		scyllaDBClusterLister: scyllaDBClusterInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			remoteKubernetesClusterInformer.Informer().HasSynced,
			scyllaDBClusterInformer.Informer().HasSynced,
		},

		pool: pool,

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue: controllerhelpers.NewQueue(ControllerName),

		now:          time.Now,
		probeTimeout: defaultProbeTimeout,
	}
	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue, remoteKubernetesClusterGVK, c.getRemoteKubernetesCluster)

	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		// Its own status writes do not matter to it: the health check is timed by AddAfter, not by events.
		{"RemoteKubernetesCluster", remoteKubernetesClusterInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.handlers.ControllerHandlerFuncs())},
		{"ScyllaDBCluster", scyllaDBClusterInformer.Informer(), c.scyllaDBClusterHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}
	// A RemoteKubernetesCluster being deleted also waits for the namespaces ScyllaDBClusters still have in its remote
	// cluster (scyllaDBClustersUsing): one going is a reason to look again.
	if err := pool.AddHandler(remoteclient.InformerHandler{
		Kind: "Namespace",
		Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().Namespaces().Informer()
		},
		Handler: func(rkcName string) cache.ResourceEventHandler {
			return cache.ResourceEventHandlerFuncs{DeleteFunc: func(any) { c.queue.Add(rkcName) }}
		},
	}); err != nil {
		return nil, err
	}
	// A RemoteKubernetesCluster being deleted right after the operator started waits for its remote caches to sync
	// (sync); a remote cluster may hold no namespace whose event would tell.
	pool.OnChange(func(rkcName string) { c.queue.Add(rkcName) })
	return c, nil
}

func (c *Controller) getRemoteKubernetesCluster(_, name string) (*scyllav1alpha1.RemoteKubernetesCluster, error) {
	return c.remoteKubernetesClusterLister.Get(name)
}

// scyllaDBClusterHandlerFuncs enqueue the RemoteKubernetesClusters a ScyllaDBCluster uses when it appears or goes,
// and, on an update, those it started or stopped using: a RemoteKubernetesCluster being deleted waits for them.
// Updates that change neither (status writes, resyncs) enqueue nothing.
func (c *Controller) scyllaDBClusterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueRemoteKubernetesClustersOf,
		UpdateFunc: func(oldObj, newObj any) {
			oldSC, oldOK := oldObj.(*scyllav1alpha1.ScyllaDBCluster)
			newSC, newOK := newObj.(*scyllav1alpha1.ScyllaDBCluster)
			if !oldOK || !newOK {
				utilruntime.HandleError(fmt.Errorf("can't handle a ScyllaDBCluster update of %T to %T", oldObj, newObj))
				return
			}
			oldNames, newNames := remoteKubernetesClusterNames(oldSC), remoteKubernetesClusterNames(newSC)
			for _, name := range sets.List(oldNames.Difference(newNames).Union(newNames.Difference(oldNames))) {
				c.queue.Add(name)
			}
		},
		DeleteFunc: c.enqueueRemoteKubernetesClustersOf,
	}
}

// enqueueRemoteKubernetesClustersOf enqueues the RemoteKubernetesClusters obj, a ScyllaDBCluster or a tombstone of
// one, uses.
func (c *Controller) enqueueRemoteKubernetesClustersOf(obj any) {
	sc, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBCluster](obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	for _, name := range sets.List(remoteKubernetesClusterNames(sc)) {
		c.queue.Add(name)
	}
}

// remoteKubernetesClusterNames returns the names of the RemoteKubernetesClusters sc's datacenters run in.
func remoteKubernetesClusterNames(sc *scyllav1alpha1.ScyllaDBCluster) sets.Set[string] {
	names := sets.New[string]()
	for _, dc := range sc.Spec.Datacenters {
		if len(dc.RemoteKubernetesClusterName) != 0 {
			names.Insert(dc.RemoteKubernetesClusterName)
		}
	}
	return names
}

// Run waits for the informer caches, then syncs RemoteKubernetesClusters with workers workers until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) {
	controllerhelpers.RunWorkers(ctx, workers, controllerhelpers.Loop{
		Name:             ControllerName,
		Queue:            c.queue,
		CachesToSync:     slices.Clone(c.cachesToSync),
		Sync:             c.sync,
		EventBroadcaster: c.eventBroadcaster,
		KubeClient:       c.kubeClient,
	})
}
