package managerregistration

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// defaultRejectedRetryDelay is how long a registration or deregistration ScyllaDB Manager rejected (400), or a
// registration that found a cluster of another object under its name, waits before it is sent again. Some of those
// 400s heal without any change to the object (its connectivity check of every live agent, "no live nodes" while the
// nodes restart), the other cluster may be deleted in ScyllaDB Manager, and the next resync is hours away; the task
// controller retries its rejected tasks after as long (its status refresh interval).
const defaultRejectedRetryDelay = 5 * time.Minute

// registrationController is what the registration controllers of every kind share: the queue and its workers, the
// handlers of the registered objects and of their agent auth-token Secrets, and the registrar. A kind's controller
// embeds it and supplies the functions that depend on the kind.
type registrationController[T kubeinterfaces.ObjectInterface] struct {
	name         string
	kubeClient   kubernetes.Interface
	secretLister corev1listers.SecretLister
	cachesToSync []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[T]

	registrar *registrar[T]

	// objects is what a sync reads its object from: the informer's copy, or the one the controller's last write
	// returned while the informer has not caught up with it, so that a sync does not write again what the previous
	// sync of the same object wrote.
	objects *controllerhelpers.MutationCache[T]

	// rejectedRetryDelay is how long after ScyllaDB Manager rejected (400) an object's registration or deregistration,
	// or held a cluster of another object under its name, the object is synced again, when nothing changes it
	// meanwhile.
	rejectedRetryDelay time.Duration

	// clusterMissingReports limits the syncs that the task controller's reports of lost clusters start
	// (ClusterMissing) to one per clusterMissingInterval per object, and none while a retry is scheduled.
	clusterMissingReports  *clusterMissingReports
	clusterMissingInterval time.Duration
	// clock is the time source of clusterMissingReports; tests replace it.
	clock func() time.Time

	// list returns the cached objects of the kind in namespace.
	list func(namespace string) ([]T, error)
	// authTokenSecretName returns the name of the agent auth-token Secret of the object named name.
	authTokenSecretName func(name string) string
	// observedGeneration returns the status.observedGeneration of obj.
	observedGeneration func(obj T) *int64
	// target returns what obj asks the registrar for, given its agent auth-token Secret (nil when it does not exist).
	target func(obj T, authTokenSecret *corev1.Secret) *registrationTarget[T]
}

// objectHandlerFuncs enqueue an object on every add, delete and resync, and on an update only when
// registrationUpdateMatters: each sync reads the cluster from ScyllaDB Manager, so the operator's status writes and
// this controller's own condition writes must not each cost a ScyllaDB Manager request.
func (c *registrationController[T]) objectHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: c.handlers.Enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldTyped, oldOK := oldObj.(T)
			newTyped, newOK := newObj.(T)
			if oldOK && newOK && !registrationUpdateMatters(oldTyped, newTyped, c.observedGeneration, c.registrar.kind.conditions) {
				return
			}
			c.handlers.Enqueue(newObj)
		},
		DeleteFunc: c.handlers.Enqueue,
	}
}

// registrationUpdateMatters tells whether the update from oldObj to newObj can change what the registration of newObj
// does. A resync (the same resourceVersion) always matters: it is the periodic check of ScyllaDB Manager. Of the
// status, only what rollout reads (observedGeneration and the Available condition) matters; other status fields and
// this controller's own conditions do not.
func registrationUpdateMatters[T kubeinterfaces.ObjectInterface](oldObj, newObj T, observedGeneration func(T) *int64, conditions func(T) []metav1.Condition) bool {
	if oldObj.GetResourceVersion() == newObj.GetResourceVersion() {
		return true
	}
	if oldObj.GetUID() != newObj.GetUID() ||
		oldObj.GetGeneration() != newObj.GetGeneration() ||
		!oldObj.GetDeletionTimestamp().Equal(newObj.GetDeletionTimestamp()) ||
		!maps.Equal(oldObj.GetLabels(), newObj.GetLabels()) ||
		!maps.Equal(oldObj.GetAnnotations(), newObj.GetAnnotations()) ||
		!slices.Equal(oldObj.GetFinalizers(), newObj.GetFinalizers()) ||
		// The controllerRef gives the previous owner of the cluster (scyllaDBDatacenterPreviousOwners).
		!apiequality.Semantic.DeepEqual(oldObj.GetOwnerReferences(), newObj.GetOwnerReferences()) {
		return true
	}
	if !equalInt64Pointers(observedGeneration(oldObj), observedGeneration(newObj)) {
		return true
	}
	oldAvailable := meta.FindStatusCondition(conditions(oldObj), controllerhelpers.AvailableCondition)
	newAvailable := meta.FindStatusCondition(conditions(newObj), controllerhelpers.AvailableCondition)
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

// secretHandlerFuncs enqueue the object whose agent auth-token Secret changed: a new token must reach ScyllaDB
// Manager, and an object waiting for its first token registers once it appears. Resyncs enqueue nothing; the objects'
// own resync covers them.
func (c *registrationController[T]) secretHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc: c.enqueueObjectOfSecret,
		UpdateFunc: func(oldObj, newObj any) {
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr == nil && newErr == nil && oldAccessor.GetResourceVersion() == newAccessor.GetResourceVersion() {
				return
			}
			c.enqueueObjectOfSecret(newObj)
		},
		DeleteFunc: c.enqueueObjectOfSecret,
	}
}

// enqueueObjectOfSecret enqueues the object whose agent auth-token Secret obj (a Secret or a tombstone of one) is,
// found by name: the name may carry a hash suffix, so it is matched against every object of the namespace rather
// than parsed.
func (c *registrationController[T]) enqueueObjectOfSecret(obj any) {
	secret, err := controllerhelpers.ObjectFromDeleteEvent[*corev1.Secret](obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	objs, err := c.list(secret.Namespace)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't list %ss in namespace %q: %w", c.registrar.kind.kind, secret.Namespace, err))
		return
	}
	for _, o := range objs {
		if c.authTokenSecretName(o.GetName()) == secret.Name {
			c.handlers.Enqueue(o)
		}
	}
}

// sync reconciles the ScyllaDB Manager cluster of the object named by key.
func (c *registrationController[T]) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	kind := c.registrar.kind.kind

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	obj, err := c.objects.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		// Its finalizer kept it until its cluster was deregistered, unless it never had one.
		logger.V(4).Info("Object is gone", "kind", kind, "object", klog.KRef(namespace, name))
		c.clusterMissingReports.forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get %s %q: %w", kind, key, err)
	}

	authTokenSecret, err := c.authTokenSecret(obj)
	if err != nil {
		return err
	}

	ctx = klog.NewContext(ctx, logger.WithValues(strings.ToLower(kind[:1])+kind[1:], klog.KObj(obj)))
	target := c.target(obj, authTokenSecret)
	err = c.registrar.sync(ctx, target)
	var retryLaterUntil time.Time
	if target.retryLater {
		c.queue.AddAfter(key, c.rejectedRetryDelay)
		retryLaterUntil = c.clock().Add(c.rejectedRetryDelay)
	}
	c.clusterMissingReports.synced(key, retryLaterUntil)
	return err
}

// authTokenSecret returns the cached agent auth-token Secret of obj, or nil when it does not exist: its creation
// enqueues obj (enqueueObjectOfSecret).
func (c *registrationController[T]) authTokenSecret(obj T) (*corev1.Secret, error) {
	name := c.authTokenSecretName(obj.GetName())
	secret, err := c.secretLister.Secrets(obj.GetNamespace()).Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("can't get Secret %q: %w", klog.KRef(obj.GetNamespace(), name), err)
	}
	return secret, nil
}

// Run waits for the informer caches, then syncs objects with workers workers until ctx is done. On shutdown each
// worker finishes the item it is syncing and takes no other; Run returns once all have stopped.
func (c *registrationController[T]) Run(ctx context.Context, workers int) {
	controllerhelpers.RunWorkers(ctx, workers, controllerhelpers.Loop{
		Name:             c.name,
		Queue:            c.queue,
		CachesToSync:     c.cachesToSync,
		Sync:             c.sync,
		EventBroadcaster: c.eventBroadcaster,
		KubeClient:       c.kubeClient,
	})
}

// registrationControllerConfig is what a kind's controller tells newRegistrationController: everything that depends
// on the kind's Go type.
type registrationControllerConfig[T kubeinterfaces.ObjectInterface] struct {
	name     string
	gvk      schema.GroupVersionKind
	resource schema.GroupResource
	informer cache.SharedIndexInformer
	// client returns the typed client of the kind in namespace.
	client func(namespace string) kubeinterfaces.PatcherInterface[T]
	// applyConditions is targetKind's applyConditions, through the API.
	applyConditions func(ctx context.Context, obj T, conditions []metav1.Condition) (T, error)
	conditions      func(obj T) []metav1.Condition
	// get and list read the informer's lister.
	get                 func(namespace, name string) (T, error)
	list                func(namespace string) ([]T, error)
	authTokenSecretName func(name string) string
	observedGeneration  func(obj T) *int64
	target              func(obj T, authTokenSecret *corev1.Secret) *registrationTarget[T]
}

// newRegistrationController returns a registration controller of the kind config describes, with its handlers
// registered on the kind's and the Secret informers. Its writes go through a mutation cache of the kind, which its
// syncs read.
func newRegistrationController[T kubeinterfaces.ObjectInterface](
	kubeClient kubernetes.Interface,
	managerClient *managerclient.Client,
	secretInformer corev1informers.SecretInformer,
	config registrationControllerConfig[T],
) (*registrationController[T], error) {
	if managerClient == nil {
		return nil, fmt.Errorf("can't create %s: the ScyllaDB Manager client is nil", config.name)
	}

	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.ManagerControllerProgramName, config.name))
	if err != nil {
		return nil, err
	}

	objects := controllerhelpers.NewMutationCache[T](config.informer.GetStore(), config.resource)
	c := &registrationController[T]{
		name:         config.name,
		kubeClient:   kubeClient,
		secretLister: secretInformer.Lister(),
		cachesToSync: []cache.InformerSynced{
			config.informer.HasSynced,
			secretInformer.Informer().HasSynced,
		},
		eventBroadcaster: eventBroadcaster,
		queue:            controllerhelpers.NewQueue(config.name),
		registrar: &registrar[T]{
			kind: targetKind[T]{
				kind: config.gvk.Kind,
				client: func(namespace string) kubeinterfaces.PatcherInterface[T] {
					return objects.Patcher(config.client(namespace))
				},
				conditions: config.conditions,
				applyConditions: func(ctx context.Context, obj T, conditions []metav1.Condition) (T, error) {
					applied, err := config.applyConditions(ctx, obj, conditions)
					if err == nil {
						objects.Written(applied)
					}
					return applied, err
				},
			},
			managerClient: managerClient,
			recorder:      eventRecorder,
			clock:         time.Now,
		},
		objects:                objects,
		rejectedRetryDelay:     defaultRejectedRetryDelay,
		clusterMissingReports:  newClusterMissingReports(),
		clusterMissingInterval: defaultClusterMissingInterval,
		clock:                  time.Now,
		list:                   config.list,
		authTokenSecretName:    config.authTokenSecretName,
		observedGeneration:     config.observedGeneration,
		target:                 config.target,
	}
	c.handlers = controllerhelpers.NewHandlers(klog.Background().WithName(config.name), c.queue, config.gvk, config.get)

	registrations := []struct {
		kind     string
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{config.gvk.Kind, config.informer, c.objectHandlerFuncs()},
		{"Secret", secretInformer.Informer(), c.secretHandlerFuncs()},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add %s event handler: %w", r.kind, err)
		}
	}
	return c, nil
}
