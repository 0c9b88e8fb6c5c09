package main

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// fakeVolumeRoot is the directory the fake volumes claim to live in. Nothing creates it: no kubelet mounts them.
const fakeVolumeRoot = "/var/lib/cluster-fakes/volumes"

// ensureStorageClass creates a StorageClass of the fake provisioner unless it exists. It binds volumes when the
// first consumer is scheduled, as local disks do, so volumes follow the scheduler's choice of node.
func ensureStorageClass(ctx context.Context, client kubernetes.Interface, name string, isDefault bool) error {
	if name == "" {
		return fmt.Errorf("StorageClass name must not be empty")
	}
	bindingMode := storagev1.VolumeBindingWaitForFirstConsumer
	reclaimPolicy := corev1.PersistentVolumeReclaimDelete
	allowExpansion := true
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{naming.DefaultStorageClassAnnotation: strconv.FormatBool(isDefault)},
		},
		Provisioner:          naming.FakeVolumeProvisioner,
		ReclaimPolicy:        &reclaimPolicy,
		VolumeBindingMode:    &bindingMode,
		AllowVolumeExpansion: &allowExpansion,
	}
	_, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("can't create StorageClass %q: %w", name, err)
	}
	return nil
}

// provisioner creates a PersistentVolume for every pending claim that the PersistentVolume controller hands to it
// (through the storage-provisioner annotation), pre-bound to the claim, and deletes released volumes it made.
type provisioner struct {
	client       kubernetes.Interface
	name         string
	claimLister  corelisters.PersistentVolumeClaimLister
	volumeLister corelisters.PersistentVolumeLister
	classLister  storagelisters.StorageClassLister
	cachesSynced []cache.InformerSynced
	claimQueue   workqueue.TypedRateLimitingInterface[string]
	volumeQueue  workqueue.TypedRateLimitingInterface[string]
}

func newProvisioner(
	client kubernetes.Interface,
	name string,
	claimInformer coreinformers.PersistentVolumeClaimInformer,
	volumeInformer coreinformers.PersistentVolumeInformer,
	classInformer storageinformers.StorageClassInformer,
) *provisioner {
	p := &provisioner{
		client:       client,
		name:         name,
		claimLister:  claimInformer.Lister(),
		volumeLister: volumeInformer.Lister(),
		classLister:  classInformer.Lister(),
		cachesSynced: []cache.InformerSynced{
			claimInformer.Informer().HasSynced,
			volumeInformer.Informer().HasSynced,
			classInformer.Informer().HasSynced,
		},
		claimQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "fake-provisioner-claims"},
		),
		volumeQueue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "fake-provisioner-volumes"},
		),
	}
	_, _ = claimInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { enqueueKey(p.claimQueue, obj) },
		UpdateFunc: func(_, obj interface{}) { enqueueKey(p.claimQueue, obj) },
	})
	_, _ = volumeInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj interface{}) { enqueueKey(p.volumeQueue, obj) },
		UpdateFunc: func(_, obj interface{}) { enqueueKey(p.volumeQueue, obj) },
	})
	return p
}

func enqueueKey(queue workqueue.TypedRateLimitingInterface[string], obj interface{}) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	queue.Add(key)
}

// Run processes claims and volumes until ctx is done.
func (p *provisioner) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrash()
	defer p.claimQueue.ShutDown()
	defer p.volumeQueue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", "fake-provisioner")
	logger.Info("Starting", "provisioner", p.name)
	defer logger.Info("Shutting down")
	if !cache.WaitForNamedCacheSync("fake-provisioner", ctx.Done(), p.cachesSynced...) {
		return
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for processNextWorkItem(ctx, p.claimQueue, p.syncClaim) {
				}
			}, time.Second)
		})
		wg.Go(func() {
			wait.UntilWithContext(ctx, func(ctx context.Context) {
				for processNextWorkItem(ctx, p.volumeQueue, p.syncVolume) {
				}
			}, time.Second)
		})
	}
	<-ctx.Done()
	p.claimQueue.ShutDown()
	p.volumeQueue.ShutDown()
	wg.Wait()
}

// provisionerOf returns the provisioner the PersistentVolume controller asked to provision the claim.
func provisionerOf(pvc *corev1.PersistentVolumeClaim) string {
	if name, ok := pvc.Annotations[naming.StorageProvisionerAnnotation]; ok {
		return name
	}
	return pvc.Annotations[naming.BetaStorageProvisionerAnnotation]
}

func (p *provisioner) syncClaim(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	pvc, err := p.claimLister.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil || provisionerOf(pvc) != p.name {
		return nil
	}
	if pvc.Spec.StorageClassName == nil {
		return nil
	}
	class, err := p.classLister.Get(*pvc.Spec.StorageClassName)
	if apierrors.IsNotFound(err) {
		return nil // The claim is re-queued when it changes; a class created later is picked up then.
	}
	if err != nil {
		return err
	}
	selectedNode := pvc.Annotations[naming.SelectedNodeAnnotation]
	if class.VolumeBindingMode != nil && *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer && selectedNode == "" {
		return nil // The scheduler has not picked a node yet.
	}
	if _, err := p.volumeLister.Get(naming.FakeVolumeName(pvc.UID)); err == nil {
		return nil
	} else if !apierrors.IsNotFound(err) {
		return err
	}

	pv, err := makePersistentVolume(pvc, class, p.name, selectedNode)
	if err != nil {
		klog.FromContext(ctx).Info("Can't provision claim", "claim", key, "error", err)
		return nil // Permanently bad claim: retrying can't help until it changes.
	}
	_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("can't create PersistentVolume %q: %w", pv.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Provisioned volume", "claim", key, "volume", pv.Name, "node", selectedNode)
	return nil
}

// syncVolume deletes a volume this provisioner made once its claim is gone and its reclaim policy says Delete.
func (p *provisioner) syncVolume(ctx context.Context, name string) error {
	pv, err := p.volumeLister.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if pv.Annotations[naming.ProvisionedByAnnotation] != p.name ||
		pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete ||
		pv.DeletionTimestamp != nil {
		return nil
	}
	err = p.client.CoreV1().PersistentVolumes().Delete(ctx, name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &pv.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("can't delete PersistentVolume %q: %w", name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted released volume", "volume", name)
	return nil
}

// makePersistentVolume returns the volume that satisfies the claim, pre-bound to it and, when the scheduler chose
// a node, pinned to that node.
func makePersistentVolume(pvc *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, provisionerName, selectedNode string) (*corev1.PersistentVolume, error) {
	size, ok := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if !ok || size.IsZero() {
		return nil, fmt.Errorf("claim %s/%s requests no storage", pvc.Namespace, pvc.Name)
	}
	if len(pvc.Spec.AccessModes) == 0 {
		return nil, fmt.Errorf("claim %s/%s has no access modes", pvc.Namespace, pvc.Name)
	}
	reclaimPolicy := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaimPolicy = *class.ReclaimPolicy
	}
	name := naming.FakeVolumeName(pvc.UID)
	hostPathType := corev1.HostPathDirectoryOrCreate
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{naming.ProvisionedByAnnotation: provisionerName},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes: append([]corev1.PersistentVolumeAccessMode(nil), pvc.Spec.AccessModes...),
			ClaimRef: &corev1.ObjectReference{
				Kind:       "PersistentVolumeClaim",
				APIVersion: "v1",
				Namespace:  pvc.Namespace,
				Name:       pvc.Name,
				UID:        pvc.UID,
			},
			PersistentVolumeReclaimPolicy: reclaimPolicy,
			StorageClassName:              class.Name,
			MountOptions:                  append([]string(nil), class.MountOptions...),
			VolumeMode:                    pvc.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path.Join(fakeVolumeRoot, name), Type: &hostPathType},
			},
		},
	}
	if selectedNode != "" {
		pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{
			Required: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key:      corev1.LabelHostname,
						Operator: corev1.NodeSelectorOpIn,
						Values:   []string{selectedNode},
					}},
				}},
			},
		}
	}
	return pv, nil
}
