// Package managerregistration holds the manager-controller's controllers that register ScyllaDB clusters with
// ScyllaDB Manager (manager-integration.md, "Registration of ScyllaDB clusters with ScyllaDB Manager"). A registrar
// reconciles the cluster one object asks for, whatever its kind; a controller per kind (ScyllaDBDatacenter here)
// watches its objects and tells the registrar what each one asks for.
package managerregistration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ScyllaDBDatacenterControllerName names the ScyllaDBDatacenter registration controller in logs, events, metrics and
// its workqueue.
const ScyllaDBDatacenterControllerName = "ScyllaDBDatacenterManagerRegistrationController"

var (
	scyllaDBDatacenterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter")
	scyllaClusterGVK      = scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster")
)

// ScyllaDBDatacenterController registers with ScyllaDB Manager every ScyllaDBDatacenter labelled
// naming.RegisterWithScyllaDBManagerLabel once it is rolled out, keeps the registration in line with the datacenter
// (name, host, agent auth token), and deregisters it when the datacenter is deleted or unlabelled.
type ScyllaDBDatacenterController struct {
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface

	scyllaDBDatacenterLister scyllav1alpha1listers.ScyllaDBDatacenterLister
	// scyllaDBDatacenters is what a sync reads its datacenter from: the informer's copy, or the one the controller's
	// last write returned while the informer has not caught up with it, so that a sync does not write again what the
	// previous sync of the same datacenter wrote.
	scyllaDBDatacenters *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBDatacenter]
	secretLister        corev1listers.SecretLister
	cachesToSync        []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBDatacenter]

	registrar *registrar[*scyllav1alpha1.ScyllaDBDatacenter]
}

// NewScyllaDBDatacenterController returns a ScyllaDBDatacenterController that reads through the given informers and
// writes through the clients. secretInformer only needs to hold the operator's Secrets (naming.ManagedObjectsSelector),
// among them the agent auth-token Secrets. The caller starts the informers (after every controller registered its
// handlers) and then calls Run.
func NewScyllaDBDatacenterController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	managerClient *managerclient.Client,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	secretInformer corev1informers.SecretInformer,
) (*ScyllaDBDatacenterController, error) {
	if managerClient == nil {
		return nil, fmt.Errorf("can't create %s: the ScyllaDB Manager client is nil", ScyllaDBDatacenterControllerName)
	}

	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.ManagerControllerProgramName, ScyllaDBDatacenterControllerName))
	if err != nil {
		return nil, err
	}

	scyllaDBDatacenters := controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBDatacenter](
		scyllaDBDatacenterInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbdatacenters"))
	c := &ScyllaDBDatacenterController{
		kubeClient:   kubeClient,
		scyllaClient: scyllaClient,

		scyllaDBDatacenterLister: scyllaDBDatacenterInformer.Lister(),
		scyllaDBDatacenters:      scyllaDBDatacenters,
		secretLister:             secretInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			scyllaDBDatacenterInformer.Informer().HasSynced,
			secretInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,

		queue: controllerhelpers.NewQueue(ScyllaDBDatacenterControllerName),

		registrar: &registrar[*scyllav1alpha1.ScyllaDBDatacenter]{
			kind: targetKind[*scyllav1alpha1.ScyllaDBDatacenter]{
				kind: scyllaDBDatacenterGVK.Kind,
				client: func(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBDatacenter] {
					return scyllaDBDatacenters.Patcher(scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(namespace))
				},
				conditions: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) []metav1.Condition {
					return sdc.Status.Conditions
				},
				applyConditions: func(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
					applied, err := applyScyllaDBDatacenterConditions(ctx, scyllaClient, sdc, conditions)
					if err == nil {
						scyllaDBDatacenters.Written(applied)
					}
					return applied, err
				},
			},
			managerClient: managerClient,
			recorder:      eventRecorder,
			clock:         time.Now,
		},
	}

	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(ScyllaDBDatacenterControllerName), c.queue, scyllaDBDatacenterGVK, c.getScyllaDBDatacenter)
	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{"ScyllaDBDatacenter", scyllaDBDatacenterInformer.Informer(), c.scyllaDBDatacenterHandlerFuncs()},
		{"Secret", secretInformer.Informer(), c.secretHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}

	return c, nil
}

func (c *ScyllaDBDatacenterController) getScyllaDBDatacenter(namespace, name string) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
	return c.scyllaDBDatacenterLister.ScyllaDBDatacenters(namespace).Get(name)
}

// scyllaDBDatacenterHandlerFuncs enqueue a ScyllaDBDatacenter on every add, delete and resync, and on an update only
// when scyllaDBDatacenterUpdateMatters: each sync reads the cluster from ScyllaDB Manager, so the operator's status
// writes and this controller's own condition writes must not each cost a ScyllaDB Manager request.
func (c *ScyllaDBDatacenterController) scyllaDBDatacenterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: c.handlers.Enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldSDC, oldOK := oldObj.(*scyllav1alpha1.ScyllaDBDatacenter)
			newSDC, newOK := newObj.(*scyllav1alpha1.ScyllaDBDatacenter)
			if oldOK && newOK && !scyllaDBDatacenterUpdateMatters(oldSDC, newSDC) {
				return
			}
			c.handlers.Enqueue(newObj)
		},
		DeleteFunc: c.handlers.Enqueue,
	}
}

// scyllaDBDatacenterUpdateMatters tells whether the update from oldSDC to newSDC can change what the registration of
// newSDC does. A resync (the same resourceVersion) always matters: it is the periodic check of ScyllaDB Manager. Of
// the status, only what scyllaDBDatacenterRollout reads matters; other status fields and this controller's own
// conditions do not.
func scyllaDBDatacenterUpdateMatters(oldSDC, newSDC *scyllav1alpha1.ScyllaDBDatacenter) bool {
	if oldSDC.ResourceVersion == newSDC.ResourceVersion {
		return true
	}
	if oldSDC.UID != newSDC.UID ||
		oldSDC.Generation != newSDC.Generation ||
		!oldSDC.DeletionTimestamp.Equal(newSDC.DeletionTimestamp) ||
		!maps.Equal(oldSDC.Labels, newSDC.Labels) ||
		!maps.Equal(oldSDC.Annotations, newSDC.Annotations) ||
		!slices.Equal(oldSDC.Finalizers, newSDC.Finalizers) ||
		// The controllerRef gives the previous owner of the cluster (scyllaDBDatacenterPreviousOwners).
		!apiequality.Semantic.DeepEqual(oldSDC.OwnerReferences, newSDC.OwnerReferences) {
		return true
	}
	if !equalInt64Pointers(oldSDC.Status.ObservedGeneration, newSDC.Status.ObservedGeneration) {
		return true
	}
	oldAvailable := meta.FindStatusCondition(oldSDC.Status.Conditions, controllerhelpers.AvailableCondition)
	newAvailable := meta.FindStatusCondition(newSDC.Status.Conditions, controllerhelpers.AvailableCondition)
	if (oldAvailable == nil) != (newAvailable == nil) {
		return true
	}
	return oldAvailable != nil &&
		(oldAvailable.Status != newAvailable.Status || oldAvailable.ObservedGeneration != newAvailable.ObservedGeneration)
}

func equalInt64Pointers(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// secretHandlerFuncs enqueue the ScyllaDBDatacenter whose agent auth-token Secret changed: a new token must reach
// ScyllaDB Manager, and a datacenter waiting for its first token registers once it appears. Resyncs enqueue nothing;
// the ScyllaDBDatacenters' own resync covers them.
func (c *ScyllaDBDatacenterController) secretHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueScyllaDBDatacenterOfSecret,
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr == nil && newErr == nil && oldAccessor.GetResourceVersion() == newAccessor.GetResourceVersion() {
				return
			}
			c.enqueueScyllaDBDatacenterOfSecret(newObj)
		},
		DeleteFunc: c.enqueueScyllaDBDatacenterOfSecret,
	}
}

// enqueueScyllaDBDatacenterOfSecret enqueues the ScyllaDBDatacenter whose agent auth-token Secret obj (a Secret or a
// tombstone of one) is, found by name: the name may carry a hash suffix (naming.AgentAuthTokenSecretName), so it is
// matched against every datacenter of the namespace rather than parsed.
func (c *ScyllaDBDatacenterController) enqueueScyllaDBDatacenterOfSecret(obj any) {
	secret, err := controllerhelpers.ObjectFromDeleteEvent[*corev1.Secret](obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	sdcs, err := c.scyllaDBDatacenterLister.ScyllaDBDatacenters(secret.Namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't list ScyllaDBDatacenters in namespace %q: %w", secret.Namespace, err))
		return
	}
	for _, sdc := range sdcs {
		if naming.AgentAuthTokenSecretName(sdc.Name) == secret.Name {
			c.handlers.Enqueue(sdc)
		}
	}
}

// Run waits for the informer caches, then syncs ScyllaDBDatacenters with workers workers until ctx is done. On
// shutdown each worker finishes the item it is syncing and takes no other; Run returns once all have stopped.
func (c *ScyllaDBDatacenterController) Run(ctx context.Context, workers int) {
	controllerhelpers.RunWorkers(ctx, workers, controllerhelpers.Loop{
		Name:             ScyllaDBDatacenterControllerName,
		Queue:            c.queue,
		CachesToSync:     c.cachesToSync,
		Sync:             c.sync,
		EventBroadcaster: c.eventBroadcaster,
		KubeClient:       c.kubeClient,
	})
}
