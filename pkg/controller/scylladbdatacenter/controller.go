// Package scylladbdatacenter holds the controller that runs a ScyllaDBDatacenter: per rack a StatefulSet of ScyllaDB
// pods, a member Service per node, the datacenter's client Service, PodDisruptionBudget, member ServiceAccount and
// RoleBinding, managed scylla.yaml ConfigMap and agent auth-token Secret, whose agent configuration also carries the
// credentials of the ScyllaDBBackupBuckets its backup tasks store into (backup.go), and, with CQL ingress on, the
// Ingresses an SNI-routing ingress controller brings CQL through (resource_ingress.go). It scales racks up, scales them
// down by decommissioning one node at a time, replaces nodes on request or when their Kubernetes node is gone with their
// data (replace.go, orphan.go), and reports the datacenter's state in its status.
package scylladbdatacenter

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	appsv1informers "k8s.io/client-go/informers/apps/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	networkingv1informers "k8s.io/client-go/informers/networking/v1"
	policyv1informers "k8s.io/client-go/informers/policy/v1"
	rbacv1informers "k8s.io/client-go/informers/rbac/v1"
	"k8s.io/client-go/kubernetes"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	networkingv1listers "k8s.io/client-go/listers/networking/v1"
	policyv1listers "k8s.io/client-go/listers/policy/v1"
	rbacv1listers "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// ControllerName names the controller in logs, events, metrics and its workqueue.
const ControllerName = "ScyllaDBDatacenterController"

// Controller reconciles ScyllaDBDatacenters.
type Controller struct {
	kubeClient    kubernetes.Interface
	scyllaClient  scyllaclientset.Interface
	operatorImage string

	sdcLister scyllav1alpha1listers.ScyllaDBDatacenterLister
	// scyllaDBDatacenters serves a sync the datacenter as the operator's last status write returned it while the
	// informer is behind, so that the sync compares its status with that write rather than write it again.
	scyllaDBDatacenters  *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBDatacenter]
	statefulSetLister    appsv1listers.StatefulSetLister
	serviceLister        corev1listers.ServiceLister
	secretLister         corev1listers.SecretLister
	configMapLister      corev1listers.ConfigMapLister
	serviceAccountLister corev1listers.ServiceAccountLister
	roleBindingLister    rbacv1listers.RoleBindingLister
	pdbLister            policyv1listers.PodDisruptionBudgetLister
	ingressLister        networkingv1listers.IngressLister
	podLister            corev1listers.PodLister
	pvcLister            corev1listers.PersistentVolumeClaimLister
	// nodeIndexer, pvLister and pvIndexer tell which nodes are orphaned: their data volume is pinned to a Kubernetes
	// node that is gone (orphan.go). The indexers have the indexes orphan detection adds.
	nodeIndexer cache.Indexer
	pvLister    corev1listers.PersistentVolumeLister
	pvIndexer   cache.Indexer
	// replacementServices serves a sync the member Services as node replacement last patched them while the
	// informer is behind, so that a replacement never takes a step twice.
	replacementServices *controllerhelpers.MutationCache[*corev1.Service]
	// taskLister and bucketLister tell which backup buckets a datacenter's agents must reach (backup.go).
	taskLister   scyllav1alpha1listers.ScyllaDBManagerTaskLister
	bucketLister scyllav1alpha1listers.ScyllaDBBackupBucketLister

	cachesToSync []cache.InformerSynced

	eventBroadcaster record.EventBroadcaster
	eventRecorder    record.EventRecorder

	queue    workqueue.TypedRateLimitingInterface[string]
	handlers *controllerhelpers.Handlers[*scyllav1alpha1.ScyllaDBDatacenter]

	// expectations are the writes the caches may not show yet.
	expectations *expectations
	// conflicts are the objects in the way of the ones datacenters need.
	conflicts *ownershipConflicts
	// serviceApplies are the Services Apply last found as required (syncServices).
	serviceApplies *noOpApplies[serviceInputs]
	// statusBatcher spaces out the status writes of each datacenter.
	statusBatcher *controllerhelpers.StatusBatcher
	// recheckInterval is how often a datacenter that depends on objects outside the informer caches (the user's
	// Secrets and ConfigMaps it reads, objects in the way of its own) is synced again: their changes never enqueue it.
	recheckInterval time.Duration

	// generateAuthToken makes a new agent auth token; tests replace it.
	generateAuthToken func() (string, error)
	// generateAuthTokenHMACKey makes a new key for the HMAC of the auth token pods carry; tests replace it.
	generateAuthTokenHMACKey func() ([]byte, error)
	// now is the clock of condition transitions; tests replace it.
	now func() metav1.Time
	// certOptions turn on automatic TLS (SetCertificateOptions); nil leaves it off.
	certOptions *CertificateOptions
	// certDecisions spare a steady datacenter's syncs the certificates' parsing and signature checks.
	certDecisions *certificateDecisions
}

// NewController returns a controller for the ScyllaDBDatacenters of sdcInformer and the objects they own, watched
// through the other informers. operatorImage is the image whose scylla-operator binary runs as the sidecar in ScyllaDB
// pods. The caller starts the informers after creating every controller and then calls Run.
func NewController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	sdcInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	statefulSetInformer appsv1informers.StatefulSetInformer,
	serviceInformer corev1informers.ServiceInformer,
	secretInformer corev1informers.SecretInformer,
	configMapInformer corev1informers.ConfigMapInformer,
	serviceAccountInformer corev1informers.ServiceAccountInformer,
	roleBindingInformer rbacv1informers.RoleBindingInformer,
	pdbInformer policyv1informers.PodDisruptionBudgetInformer,
	ingressInformer networkingv1informers.IngressInformer,
	podInformer corev1informers.PodInformer,
	pvcInformer corev1informers.PersistentVolumeClaimInformer,
	nodeInformer corev1informers.NodeInformer,
	pvInformer corev1informers.PersistentVolumeInformer,
	taskInformer scyllav1alpha1informers.ScyllaDBManagerTaskInformer,
	bucketInformer scyllav1alpha1informers.ScyllaDBBackupBucketInformer,
	operatorImage string,
) (*Controller, error) {
	if len(operatorImage) == 0 {
		return nil, errors.New("can't create the ScyllaDBDatacenter controller: the operator image is empty")
	}
	eventBroadcaster, eventRecorder, err := controllerhelpers.NewEventRecorder(naming.EventSourceComponent(naming.OperatorProgramName, ControllerName))
	if err != nil {
		return nil, err
	}
	c := &Controller{
		kubeClient:    kubeClient,
		scyllaClient:  scyllaClient,
		operatorImage: operatorImage,

		sdcLister: sdcInformer.Lister(),
		scyllaDBDatacenters: controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBDatacenter](
			sdcInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbdatacenters")),
		statefulSetLister:    statefulSetInformer.Lister(),
		serviceLister:        serviceInformer.Lister(),
		secretLister:         secretInformer.Lister(),
		configMapLister:      configMapInformer.Lister(),
		serviceAccountLister: serviceAccountInformer.Lister(),
		roleBindingLister:    roleBindingInformer.Lister(),
		pdbLister:            pdbInformer.Lister(),
		ingressLister:        ingressInformer.Lister(),
		podLister:            podInformer.Lister(),
		pvcLister:            pvcInformer.Lister(),
		nodeIndexer:          nodeInformer.Informer().GetIndexer(),
		pvLister:             pvInformer.Lister(),
		pvIndexer:            pvInformer.Informer().GetIndexer(),
		replacementServices: controllerhelpers.NewMutationCache[*corev1.Service](
			serviceInformer.Informer().GetStore(), corev1.Resource("services")),
		taskLister:   taskInformer.Lister(),
		bucketLister: bucketInformer.Lister(),

		cachesToSync: []cache.InformerSynced{
			sdcInformer.Informer().HasSynced,
			statefulSetInformer.Informer().HasSynced,
			serviceInformer.Informer().HasSynced,
			secretInformer.Informer().HasSynced,
			configMapInformer.Informer().HasSynced,
			serviceAccountInformer.Informer().HasSynced,
			roleBindingInformer.Informer().HasSynced,
			pdbInformer.Informer().HasSynced,
			ingressInformer.Informer().HasSynced,
			podInformer.Informer().HasSynced,
			pvcInformer.Informer().HasSynced,
			nodeInformer.Informer().HasSynced,
			pvInformer.Informer().HasSynced,
			taskInformer.Informer().HasSynced,
			bucketInformer.Informer().HasSynced,
		},

		eventBroadcaster: eventBroadcaster,
		eventRecorder:    eventRecorder,

		queue:           controllerhelpers.NewQueue(ControllerName),
		expectations:    newExpectations(time.Now),
		conflicts:       newOwnershipConflicts(),
		serviceApplies:  newNoOpApplies[serviceInputs](),
		statusBatcher:   controllerhelpers.NewStatusBatcher(controllerhelpers.DefaultStatusBatchPeriod),
		recheckInterval: defaultRecheckInterval,

		generateAuthToken:        scyllaagent.GenerateAuthToken,
		generateAuthTokenHMACKey: generateAuthTokenHMACKey,
		now:                      metav1.Now,
	}
	if err := addOrphanDetectionIndexers(nodeInformer.Informer(), pvInformer.Informer()); err != nil {
		return nil, err
	}
	c.handlers = controllerhelpers.NewHandlers(klog.Background(), c.queue, scyllaDBDatacenterGVK,
		func(namespace, name string) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
			return c.sdcLister.ScyllaDBDatacenters(namespace).Get(name)
		})

	type informer interface {
		AddEventHandler(handler cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
	}
	registrations := []struct {
		name     string
		informer informer
		handler  cache.ResourceEventHandler
	}{
		// The status of a datacenter is computed, never read back but for what the operator wrote (scyllaDBDatacenters),
		// and the manager-controller's conditions are none of its business: status writes need no sync.
		{"ScyllaDBDatacenter", sdcInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.handlers.ControllerHandlerFuncs())},
		{"StatefulSet", statefulSetInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"Service", serviceInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"Secret", secretInformer.Informer(), c.readerHandlerFuncs(readsSecret)},
		{"ConfigMap", configMapInformer.Informer(), c.readerHandlerFuncs(readsConfigMap)},
		{"ServiceAccount", serviceAccountInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		{"RoleBinding", roleBindingInformer.Informer(), c.handlers.OwnedHandlerFuncs()},
		// The disruption controller updates a PodDisruptionBudget's status at every change of its pods; the operator
		// never reads it.
		{"PodDisruptionBudget", pdbInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.handlers.OwnedHandlerFuncs())},
		// An ingress controller writes an Ingress's status (its load balancer addresses), which the operator never reads.
		{"Ingress", ingressInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.handlers.OwnedHandlerFuncs())},
		// Removing a node waits for its pod and data claim to be gone; a rack's bootstrap follows its pods' readiness;
		// a pod's new IPs may be serving certificate names.
		{"Pod", podInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueByClusterLabel, UpdateFunc: c.enqueueOnPodChange}},
		{"PersistentVolumeClaim", pvcInformer.Informer(), cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueByClusterLabel}},
		// A node whose data volume is pinned to a Kubernetes node that is gone is orphaned.
		{"Node", nodeInformer.Informer(), c.nodeHandlerFuncs()},
		{"PersistentVolume", pvInformer.Informer(), c.persistentVolumeHandlerFuncs()},
		// Backup tasks and buckets decide the s3 section of the agent configuration (backup.go); the
		// manager-controller's status writes to either change nothing of it.
		{"ScyllaDBManagerTask", taskInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.taskHandlerFuncs())},
		{"ScyllaDBBackupBucket", bucketInformer.Informer(), controllerhelpers.IgnoringStatusUpdates(c.bucketHandlerFuncs())},
	}
	for _, r := range registrations {
		if _, err := r.informer.AddEventHandler(r.handler); err != nil {
			return nil, fmt.Errorf("can't add the %s event handler: %w", r.name, err)
		}
	}

	return c, nil
}

// readerHandlerFuncs handle ConfigMaps or Secrets: each event enqueues the object's controller, and the datacenters
// that reads says read the object without owning it.
func (c *Controller) readerHandlerFuncs(reads func(sdc *scyllav1alpha1.ScyllaDBDatacenter, name string) bool) cache.ResourceEventHandlerFuncs {
	owned := c.handlers.OwnedHandlerFuncs()
	enqueueReaders := func(obj any) {
		accessor, err := accessorOf(obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		sdcs, err := c.sdcLister.ScyllaDBDatacenters(accessor.GetNamespace()).List(labels.Everything())
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("can't list ScyllaDBDatacenters: %w", err))
			return
		}
		for _, sdc := range sdcs {
			if reads(sdc, accessor.GetName()) {
				c.handlers.Enqueue(sdc)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			owned.OnAdd(obj, false)
			enqueueReaders(obj)
		},
		UpdateFunc: func(oldObj, newObj any) {
			owned.OnUpdate(oldObj, newObj)
			oldAccessor, oldErr := meta.Accessor(oldObj)
			newAccessor, newErr := meta.Accessor(newObj)
			if oldErr != nil || newErr != nil || oldAccessor.GetResourceVersion() != newAccessor.GetResourceVersion() {
				enqueueReaders(newObj)
			}
		},
		DeleteFunc: func(obj any) {
			owned.OnDelete(obj)
			enqueueReaders(obj)
		},
	}
}

// readsSecret tells whether sdc reads the Secret named name without owning it: as a custom agent config or as the
// agent auth-token override.
func readsSecret(sdc *scyllav1alpha1.ScyllaDBDatacenter, name string) bool {
	if sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot] == name {
		return true
	}
	for i := range sdc.Spec.Racks {
		if agentCustomConfigSecretRef(rackReferences(sdc.Spec.RackTemplate, &sdc.Spec.Racks[i])) == name {
			return true
		}
	}
	return false
}

// readsUserObjects tells whether sdc reads Secrets or ConfigMaps it does not own (readsSecret, readsConfigMap):
// they carry no operator label, so the informer caches do not hold them, and they are read from the API server.
func readsUserObjects(sdc *scyllav1alpha1.ScyllaDBDatacenter) bool {
	if _, ok := sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot]; ok {
		return true
	}
	for i := range sdc.Spec.Racks {
		rack := rackReferences(sdc.Spec.RackTemplate, &sdc.Spec.Racks[i])
		if len(agentCustomConfigSecretRef(rack)) != 0 || len(customConfigMapRef(rack)) != 0 {
			return true
		}
	}
	return false
}

// readsConfigMap tells whether sdc reads the ConfigMap named name without owning it, as a custom scylla.yaml.
func readsConfigMap(sdc *scyllav1alpha1.ScyllaDBDatacenter, name string) bool {
	for i := range sdc.Spec.Racks {
		if customConfigMapRef(rackReferences(sdc.Spec.RackTemplate, &sdc.Spec.Racks[i])) == name {
			return true
		}
	}
	return false
}

// taskHandlerFuncs enqueue the datacenter a backup ScyllaDBManagerTask targets, before and after a change.
func (c *Controller) taskHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return beforeAndAfterHandlerFuncs("ScyllaDBManagerTask", func(task *scyllav1alpha1.ScyllaDBManagerTask) {
		if isBackupTaskOf(task, task.Namespace, task.Spec.ScyllaDBClusterRef.Name) {
			c.queue.Add(cache.NewObjectName(task.Namespace, task.Spec.ScyllaDBClusterRef.Name).String())
		}
	})
}

// beforeAndAfterHandlerFuncs call enqueue with the object of every event, a T of kind (from a tombstone too), and
// with both the old and the new object of an update.
func beforeAndAfterHandlerFuncs[T any](kind string, enqueue func(T)) cache.ResourceEventHandlerFuncs {
	handle := func(obj any) {
		if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tombstone.Obj
		}
		typed, ok := obj.(T)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("expected a %s, got %T", kind, obj))
			return
		}
		enqueue(typed)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { handle(obj) },
		UpdateFunc: func(oldObj, newObj any) {
			handle(oldObj)
			handle(newObj)
		},
		DeleteFunc: handle,
	}
}

// bucketHandlerFuncs enqueue the datacenters whose backup tasks store into a ScyllaDBBackupBucket's bucket, before and
// after a change.
func (c *Controller) bucketHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(objs ...any) {
		var bucketNames []string
		for _, obj := range objs {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			bucket, ok := obj.(*scyllav1alpha1.ScyllaDBBackupBucket)
			if !ok {
				utilruntime.HandleError(fmt.Errorf("expected a ScyllaDBBackupBucket, got %T", obj))
				return
			}
			bucketNames = append(bucketNames, bucket.Spec.BucketName)
		}
		tasks, err := c.taskLister.List(labels.Everything())
		if err != nil {
			utilruntime.HandleError(fmt.Errorf("can't list ScyllaDBManagerTasks: %w", err))
			return
		}
		for _, task := range tasks {
			if !isBackupTaskOf(task, task.Namespace, task.Spec.ScyllaDBClusterRef.Name) {
				continue
			}
			// Whatever datacenter a location names: the sync tells whether it applies.
			if slices.ContainsFunc(task.Spec.Backup.Location, func(location string) bool {
				_, bucket, ok := parseS3Location(location)
				return ok && slices.Contains(bucketNames, bucket)
			}) {
				c.queue.Add(cache.NewObjectName(task.Namespace, task.Spec.ScyllaDBClusterRef.Name).String())
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { enqueue(obj) },
		UpdateFunc: func(oldObj, newObj any) { enqueue(oldObj, newObj) },
		DeleteFunc: func(obj any) { enqueue(obj) },
	}
}

// enqueueByClusterLabel enqueues the datacenter a pod or claim belongs to by its naming.ClusterNameLabel; neither is
// owned by the datacenter directly.
func (c *Controller) enqueueByClusterLabel(obj any) {
	accessor, err := accessorOf(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	objLabels := accessor.GetLabels()
	name, ok := objLabels[naming.ClusterNameLabel]
	if !ok || objLabels[naming.ManagedByLabel] != naming.ManagedByLabelValue {
		return
	}
	sdc, err := c.sdcLister.ScyllaDBDatacenters(accessor.GetNamespace()).Get(name)
	if err != nil {
		return
	}
	c.handlers.Enqueue(sdc)
}

// enqueueOnPodChange enqueues the datacenter of a pod whose readiness changed: the next rack's bootstrap follows
// its nodes' readiness as the pods tell it (rackObjects.ready), not seconds later, when the StatefulSet controller,
// busy with every StatefulSet of the cluster, gets to writing it into the StatefulSet's status. A kubelet reports a
// container's readiness in a status update of its own, after the one that gives the pod its IPs. While automatic
// TLS is on, it also enqueues it for a pod whose IPs changed: with PodIP broadcasting they are names of the serving
// certificate, which must cover them as soon as clients may use them.
func (c *Controller) enqueueOnPodChange(oldObj, newObj any) {
	oldPod, oldOK := oldObj.(*corev1.Pod)
	newPod, newOK := newObj.(*corev1.Pod)
	if !oldOK || !newOK {
		return
	}
	readinessChanged := controllerhelpers.IsPodReady(oldPod) != controllerhelpers.IsPodReady(newPod)
	ipsChanged := c.tlsEnabled() && !slices.Equal(oldPod.Status.PodIPs, newPod.Status.PodIPs)
	if readinessChanged || ipsChanged {
		c.enqueueByClusterLabel(newObj)
	}
}

// accessorOf returns the metadata of an informer event's object, or of the object a tombstone holds.
func accessorOf(obj any) (metav1.Object, error) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	return meta.Accessor(obj)
}

// Run starts workers that sync ScyllaDBDatacenters until ctx is done, then waits for them to finish their current
// item.
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

// authTokenHMACKeyLength is the length in bytes of the key of the auth token's HMAC.
const authTokenHMACKeyLength = 32

// generateAuthTokenHMACKey returns a new random key for the HMAC of the agent auth token.
func generateAuthTokenHMACKey() ([]byte, error) {
	key := make([]byte, authTokenHMACKeyLength)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("can't read random bytes: %w", err)
	}
	return key, nil
}
