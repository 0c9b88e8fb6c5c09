package scylladbcluster

import (
	"context"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1informers "k8s.io/client-go/informers/core/v1"
	discoveryv1informers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaDBClusterController"

// referencedObjectsPeriod is how often a ScyllaDBCluster whose datacenters reference ConfigMaps or Secrets is synced
// again, so that the copies in the remote clusters follow changes of the originals, which are users' objects the
// operator's informers do not hold.
const referencedObjectsPeriod = time.Minute

var scyllaDBClusterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBCluster")

// Controller reconciles ScyllaDBClusters: for each datacenter, a namespace in the Kubernetes cluster its
// RemoteKubernetesCluster reaches, holding the datacenter's ScyllaDBDatacenter, the copies of what it references, the
// cluster's agent auth token and the seed Services through which it joins the other datacenters; in the meta cluster,
// the agent auth-token Secret and the client Service through which ScyllaDB Manager reaches every datacenter.
//
// The remote clusters are read through the informers of a remoteclient.Pool. A remote cluster that is unreachable or
// not set up degrades its datacenter only: the others are reconciled as usual.
type Controller struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface

	scyllaDBClusterLister scyllav1alpha1listers.ScyllaDBClusterLister
	// scyllaDBClusters serves a sync the ScyllaDBCluster as the controller's last write returned it while the
	// informer is behind.
	scyllaDBClusters    *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBCluster]
	secretLister        corev1listers.SecretLister
	serviceLister       corev1listers.ServiceLister
	endpointSliceLister discoveryv1listers.EndpointSliceLister
	cachesToSync        []cache.InformerSynced

	// remoteKubernetesClusterLister tells which remote clusters exist, also those the pool has no clients of yet.
	remoteKubernetesClusterLister scyllav1alpha1listers.RemoteKubernetesClusterLister

	pool *remoteclient.Pool
	// backups, once WatchBackups is called, tells which declared backup buckets each datacenter's agents must reach
	// (backup.go).
	backups *backupWatch
	// clusterID identifies the meta Kubernetes cluster in naming.ManagedByClusterLabel on remote namespaces; empty
	// leaves the label out.
	clusterID string

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBCluster]

	// statusBatcher spaces out the status writes of each ScyllaDBCluster.
	statusBatcher *controllerhelpers.StatusBatcher

	// generateAuthToken makes a new agent auth token; tests replace it.
	generateAuthToken func() (string, error)
	clock             func() time.Time
}

// NewController returns a Controller that reads the meta cluster through the given informers (Secrets, Services and
// EndpointSlices need only hold the operator's objects, naming.ManagedObjectsSelector), the remote clusters through
// pool, whose informers it registers its handlers with, and writes through the clients. clusterID identifies the
// meta cluster (naming.ManagedByClusterLabel). The caller starts the informers and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	remoteKubernetesClusterInformer scyllav1alpha1informers.RemoteKubernetesClusterInformer,
	secretInformer corev1informers.SecretInformer,
	serviceInformer corev1informers.ServiceInformer,
	endpointSliceInformer discoveryv1informers.EndpointSliceInformer,
	pool *remoteclient.Pool,
	clusterID string,
) (*Controller, error) {
	if pool == nil {
		return nil, fmt.Errorf("can't create %s: the remote client pool is nil", ControllerName)
	}
	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.OperatorProgramName, ControllerName))
	if err != nil {
		return nil, err
	}

	c := &Controller{
		kubeClient:            kubeClient,
		scyllaClient:          scyllaClient,
		scyllaDBClusterLister: scyllaDBClusterInformer.Lister(),
		scyllaDBClusters: controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBCluster](
			scyllaDBClusterInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbclusters")),
		secretLister:        secretInformer.Lister(),
		serviceLister:       serviceInformer.Lister(),
		endpointSliceLister: endpointSliceInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			scyllaDBClusterInformer.Informer().HasSynced,
			remoteKubernetesClusterInformer.Informer().HasSynced,
			secretInformer.Informer().HasSynced,
			serviceInformer.Informer().HasSynced,
			endpointSliceInformer.Informer().HasSynced,
		},
		remoteKubernetesClusterLister: remoteKubernetesClusterInformer.Lister(),

		pool:              pool,
		clusterID:         clusterID,
		eventBroadcaster:  eventBroadcaster,
		eventRecorder:     eventRecorder,
		queue:             controllerhelpers.NewQueue(ControllerName),
		statusBatcher:     controllerhelpers.NewStatusBatcher(controllerhelpers.DefaultStatusBatchPeriod),
		generateAuthToken: scyllaagent.GenerateAuthToken,
		clock:             time.Now,
	}

	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ControllerName), c.queue, scyllaDBClusterGVK, c.getScyllaDBCluster)
	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"ScyllaDBCluster", scyllaDBClusterInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.handlers.ControllerHandlerFuncs())},
		{"RemoteKubernetesCluster", remoteKubernetesClusterInformer.Informer(), c.remoteKubernetesClusterHandlerFuncs()},
		{"Secret", secretInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"Service", serviceInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"EndpointSlice", endpointSliceInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}

	remoteHandlers := []remoteclient.InformerHandler{
		{Kind: "Namespace", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().Namespaces().Informer()
		}},
		{Kind: "ScyllaDBDatacenter", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Informer()
		}},
		{Kind: "Pod", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().Pods().Informer()
		}},
		{Kind: "Service", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().Services().Informer()
		}},
		{Kind: "EndpointSlice", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return controllerhelpers.OperatorEndpointSlices(rc.KubeInformers(), naming.RemoteOperatorEndpointSlicesSelector()).Informer()
		}},
		{Kind: "Secret", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().Secrets().Informer()
		}},
		{Kind: "ConfigMap", Informer: func(rc *remoteclient.Cluster) cache.SharedIndexInformer {
			return rc.KubeInformers().Core().V1().ConfigMaps().Informer()
		}},
	}
	for _, h := range remoteHandlers {
		h.Handler = c.remoteHandlerFuncs
		if err := pool.AddHandler(h); err != nil {
			return nil, err
		}
	}
	pool.OnChange(c.enqueueUsersOf)

	return c, nil
}

func (c *Controller) getScyllaDBCluster(namespace, name string) (*scyllav1alpha1.ScyllaDBCluster, error) {
	return c.scyllaDBClusterLister.ScyllaDBClusters(namespace).Get(name)
}

// Run waits for the informer caches, then syncs ScyllaDBClusters with workers workers until ctx is done.
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

// enqueueUsersOf enqueues every ScyllaDBCluster with a datacenter in the RemoteKubernetesCluster rkcName: its
// clients were built, rebuilt or removed, or its health changed.
func (c *Controller) enqueueUsersOf(rkcName string) {
	scs, err := c.scyllaDBClusterLister.List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't list ScyllaDBClusters: %w", err))
		return
	}
	for _, sc := range scs {
		if usesRemoteKubernetesCluster(sc, rkcName) {
			c.queue.Add(cache.MetaObjectToName(sc).String())
		}
	}
}

// usesRemoteKubernetesCluster tells whether a datacenter of sc is in the RemoteKubernetesCluster rkcName, or, for a
// ScyllaDBCluster being deleted, whether it may still have objects there to remove.
func usesRemoteKubernetesCluster(sc *scyllav1alpha1.ScyllaDBCluster, rkcName string) bool {
	if sc.DeletionTimestamp != nil {
		return true
	}
	for _, dc := range sc.Spec.Datacenters {
		if dc.RemoteKubernetesClusterName == rkcName {
			return true
		}
	}
	return false
}

// remoteKubernetesClusterHandlerFuncs enqueue the ScyllaDBClusters using a RemoteKubernetesCluster when it changes:
// its status tells whether its remote cluster is reachable.
func (c *Controller) remoteKubernetesClusterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		rkc, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.RemoteKubernetesCluster](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueUsersOf(rkc.Name)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, newObj any) { enqueue(newObj) },
		DeleteFunc: enqueue,
	}
}

// remoteHandlerFuncs handle events of objects in the remote cluster of the RemoteKubernetesCluster rkcName: each
// enqueues the ScyllaDBCluster the object, or its namespace, belongs to (naming.ScyllaDBClusterRemoteLabels). Pods
// are enqueued only when what the controller reads of them changes: their address and readiness.
func (c *Controller) remoteHandlerFuncs(rkcName string) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		accessor, err := meta.Accessor(obj)
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("can't read the metadata of %T in remote cluster %q: %w", obj, rkcName, err))
			return
		}
		objLabels := accessor.GetLabels()
		if len(objLabels[naming.ParentScyllaDBClusterNameLabel]) == 0 && len(accessor.GetNamespace()) != 0 {
			rc, ok := c.pool.Get(rkcName)
			if !ok {
				return
			}
			ns, err := rc.KubeInformers().Core().V1().Namespaces().Lister().Get(accessor.GetNamespace())
			if err != nil {
				return
			}
			objLabels = ns.Labels
		}
		name, namespace := objLabels[naming.ParentScyllaDBClusterNameLabel], objLabels[naming.ParentScyllaDBClusterNamespaceLabel]
		if len(name) == 0 || len(namespace) == 0 || objLabels[naming.ManagedByLabel] != naming.RemoteManagedByLabelValue {
			return
		}
		c.queue.Add(cache.NewObjectName(namespace, name).String())
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			if oldPod, ok := oldObj.(*corev1.Pod); ok {
				if newPod, ok := newObj.(*corev1.Pod); ok && oldPod.ResourceVersion != newPod.ResourceVersion &&
					oldPod.Status.PodIP == newPod.Status.PodIP && controllerhelpers.IsPodReady(oldPod) == controllerhelpers.IsPodReady(newPod) {
					return
				}
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}
