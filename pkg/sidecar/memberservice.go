package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

// MemberServiceController keeps the node's member Service in step with the node: it records the node's broadcast
// address and host ID as annotations, over what an earlier node recorded (a replaced node's host ID), and, when the
// Service carries scylla/decommissioned="false", decommissions the node and sets the label to "true". Finishing is
// recorded in a marker file on the node's volume first, so a restart after the decommission only sets the label
// (ScyllaDB refuses to start once decommissioned).
type MemberServiceController struct {
	kubeClient kubernetes.Interface
	lister     corev1listers.ServiceLister
	// services serves the Service a patch returned while the informer is older, so that a sync queued before the
	// informer shows this controller's own write (by the event of an earlier write, a retry, another writer's change)
	// doesn't write the same again.
	services *controllerhelpers.MutationCache[*corev1.Service]
	synced   cache.InformerSynced
	MemberServiceControllerConfig

	queue           workqueue.TypedRateLimitingInterface[string]
	decommissioning atomic.Bool
	// labeled is set once this process has set the decommissioned label to "true". The label is final, and a sync
	// that runs before the informer shows the write must not write it again.
	labeled atomic.Bool

	clock clock.PassiveClock
	// retryLock guards the back-off of failed decommission calls.
	retryLock   sync.Mutex
	failures    int
	nextAttempt time.Time
}

// MemberServiceControllerConfig is what the MemberServiceController knows about its node.
type MemberServiceControllerConfig struct {
	// Namespace and Name are the member Service's.
	Namespace, Name string
	// Scylla is the node's REST API. DecommissionScylla has no timeout: ScyllaDB answers a decommission only when
	// it is done.
	Scylla, DecommissionScylla *scyllaclient.Client
	// DataDir is ScyllaDB's data directory, on the node's volume, where the decommission markers are kept.
	DataDir string
	// Decommissioned is set when ScyllaDB isn't running because the node was decommissioned: the sidecar found the
	// final marker at start, or ScyllaDB refused to start after a decommission the sidecar had started.
	Decommissioned *atomic.Bool
	// BroadcastAddress is the broadcast_address ScyllaDB was started with, recorded on the Service with PodUID, the
	// UID of the sidecar's Pod. Unused when ScyllaDB isn't running.
	BroadcastAddress string
	PodUID           types.UID
	// PollInterval is how often a decommission in progress is checked, and the first delay before a failed
	// decommission call is made again; each further failure doubles the delay, up to RetryCap.
	PollInterval time.Duration
	RetryCap     time.Duration
	// AddressOptions and Addresses are how the node's addresses are computed and the ones ScyllaDB runs with.
	// When the Service gives a broadcast address other than the one in use, the controller requests Restart.
	AddressOptions AddressOptions
	Addresses      Addresses
	Restart        *Restart
}

// NewMemberServiceController watches the member Service through informer, which must be limited to it.
func NewMemberServiceController(kubeClient kubernetes.Interface, informer corev1informers.ServiceInformer, config MemberServiceControllerConfig) (*MemberServiceController, error) {
	c := &MemberServiceController{
		kubeClient:                    kubeClient,
		lister:                        informer.Lister(),
		services:                      controllerhelpers.NewMutationCache[*corev1.Service](informer.Informer().GetStore(), corev1.Resource("services")),
		synced:                        informer.Informer().HasSynced,
		MemberServiceControllerConfig: config,
		clock:                         clock.RealClock{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](500*time.Millisecond, 30*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "member-service"},
		),
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { c.enqueue(obj) },
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("can't add the member Service event handler: %w", err)
	}
	return c, nil
}

func (c *MemberServiceController) key() string { return c.Namespace + "/" + c.Name }

func (c *MemberServiceController) enqueue(obj any) {
	if svc, ok := obj.(*corev1.Service); ok && svc.Namespace == c.Namespace && svc.Name == c.Name {
		c.queue.Add(c.key())
	}
}

// Run processes the member Service until ctx is done.
func (c *MemberServiceController) Run(ctx context.Context) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	if !cache.WaitForNamedCacheSync("member-service", ctx.Done(), c.synced) {
		return
	}
	// Recording the host ID needs ScyllaDB's API even when the Service never changes.
	c.queue.Add(c.key())
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for c.processNextWorkItem(ctx) {
	}
	logger.V(2).Info("Member Service controller stopped")
}

func (c *MemberServiceController) processNextWorkItem(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	requeueAfter, err := c.sync(ctx)
	switch {
	case err != nil:
		klog.FromContext(ctx).Info("Can't sync the member Service, will retry", "service", key, "err", err)
		c.queue.AddRateLimited(key)
	case requeueAfter > 0:
		c.queue.Forget(key)
		c.queue.AddAfter(key, requeueAfter)
	default:
		c.queue.Forget(key)
	}
	return true
}

// sync returns how soon to look again while an operation is in progress.
func (c *MemberServiceController) sync(ctx context.Context) (time.Duration, error) {
	logger := klog.FromContext(ctx)
	svc, err := c.services.Get(c.Namespace, c.Name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	decommission := svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelFalse

	if c.Decommissioned.Load() {
		if decommission {
			return 0, c.markDecommissioned(ctx, svc)
		}
		return 0, nil
	}

	if c.Restart.Reason() != nil {
		// ScyllaDB is stopping; what it runs with is no longer worth recording.
		return 0, nil
	}
	if err := ServiceAddressChange(c.AddressOptions, c.Addresses, svc); err != nil {
		if _, maintenance := svc.Labels[naming.NodeMaintenanceLabel]; !maintenance {
			logger.Info("An address the node runs with has changed on the member Service; restarting to use it", "service", c.key(), "change", err.Error())
			c.Restart.Request(err)
			return 0, nil
		}
		// The node was put in maintenance to be handled by hand; it restarts once maintenance ends.
		logger.Info("An address the node runs with has changed on the member Service; restarting once maintenance ends", "service", c.key(), "change", err.Error())
	}
	if err := c.recordBroadcastAddress(ctx, svc); err != nil {
		return 0, err
	}
	hostID, err := c.Scylla.LocalHostID(ctx)
	if err != nil {
		return 0, fmt.Errorf("can't get the host ID: %w", err)
	}
	// The operator takes the annotation for the node's identity (the host ID a replacement names, and the sign
	// that a replacement is done once it changes), so only a real host ID is recorded.
	hostID, err = ParseHostID(hostID)
	if err != nil {
		return 0, fmt.Errorf("ScyllaDB reports a host ID that can't be recorded: %w", err)
	}
	// A node that replaced another starts with the Service recording the replaced node's host ID: any other
	// recorded value is overwritten.
	if svc.Annotations[naming.HostIDAnnotation] != hostID {
		if err := c.patchMetadata(ctx, "annotations", map[string]string{naming.HostIDAnnotation: hostID}); err != nil {
			return 0, err
		}
		logger.Info("Recorded the host ID on the member Service", "service", c.key(), "hostID", hostID)
	}

	if !decommission {
		return 0, nil
	}
	mode, err := c.Scylla.OperationMode(ctx)
	if err != nil {
		return 0, fmt.Errorf("can't get the operation mode: %w", err)
	}
	switch mode {
	case scyllaclient.OperationModeDecommissioned:
		return 0, c.markDecommissioned(ctx, svc)
	case scyllaclient.OperationModeNormal:
		if c.decommissioning.Load() {
			break
		}
		if wait := c.retryWait(); wait > 0 {
			logger.V(2).Info("Waiting before calling decommission again", "after", wait)
			return wait, nil
		}
		// A restart that finds this marker knows that ScyllaDB's refusal to start may mean the call succeeded.
		if err := writeMarker(filepath.Join(c.DataDir, decommissioningMarkerFileName)); err != nil {
			return 0, err
		}
		if c.decommissioning.CompareAndSwap(false, true) {
			logger.Info("Decommissioning the node", "service", c.key())
			go c.decommission(ctx)
		}
	default:
		logger.V(2).Info("Waiting for the node to decommission", "mode", mode)
	}
	return c.PollInterval, nil
}

// BroadcastAddressRecorded reports whether svc records the node's broadcast address, written by this Pod.
func (c *MemberServiceController) BroadcastAddressRecorded(svc *corev1.Service) bool {
	return svc.Annotations[naming.BroadcastAddressAnnotation] == c.BroadcastAddress &&
		svc.Annotations[naming.BroadcastAddressPodUIDAnnotation] == string(c.PodUID)
}

// recordBroadcastAddress records the node's broadcast address for the other nodes to seed from.
func (c *MemberServiceController) recordBroadcastAddress(ctx context.Context, svc *corev1.Service) error {
	if c.BroadcastAddressRecorded(svc) {
		return nil
	}
	if err := c.patchMetadata(ctx, "annotations", map[string]string{
		naming.BroadcastAddressAnnotation:       c.BroadcastAddress,
		naming.BroadcastAddressPodUIDAnnotation: string(c.PodUID),
	}); err != nil {
		return err
	}
	klog.FromContext(ctx).Info("Recorded the broadcast address on the member Service", "service", c.key(), "broadcastAddress", c.BroadcastAddress, "podUID", c.PodUID)
	return nil
}

// Enqueue asks the controller to look at the member Service again.
func (c *MemberServiceController) Enqueue() {
	c.queue.Add(c.key())
}

// decommissionRetryDelay is how long to wait after the failures-th failed decommission call in a row: base, doubled
// for each further failure, at most limit.
func decommissionRetryDelay(failures int, base, limit time.Duration) time.Duration {
	delay := base
	for i := 1; i < failures && delay < limit; i++ {
		delay *= 2
	}
	return min(delay, limit)
}

// retryWait is how long to wait before calling decommission again after failures; 0 when it may be called.
func (c *MemberServiceController) retryWait() time.Duration {
	c.retryLock.Lock()
	defer c.retryLock.Unlock()
	return max(c.nextAttempt.Sub(c.clock.Now()), 0)
}

func (c *MemberServiceController) decommission(ctx context.Context) {
	logger := klog.FromContext(ctx)
	err := c.DecommissionScylla.Decommission(ctx)
	c.retryLock.Lock()
	if err != nil {
		// The operation mode tells whether it went on regardless; if not, the call is made again after a delay
		// that grows with each failure in a row.
		c.failures++
		delay := decommissionRetryDelay(c.failures, c.PollInterval, c.RetryCap)
		c.nextAttempt = c.clock.Now().Add(delay)
		logger.Info("Decommission call failed", "err", err, "failures", c.failures, "retryAfter", delay)
	} else {
		c.failures, c.nextAttempt = 0, time.Time{}
	}
	c.retryLock.Unlock()
	c.decommissioning.Store(false)
	c.Enqueue()
}

// markDecommissioned records the finished decommission on the volume, then on the Service.
func (c *MemberServiceController) markDecommissioned(ctx context.Context, svc *corev1.Service) error {
	if err := writeMarker(filepath.Join(c.DataDir, decommissionedMarkerFileName)); err != nil {
		return err
	}
	if svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue || c.labeled.Load() {
		return nil
	}
	if err := c.patchMetadata(ctx, "labels", map[string]string{naming.DecommissionedLabel: naming.DecommissionedLabelTrue}); err != nil {
		return err
	}
	c.labeled.Store(true)
	klog.FromContext(ctx).Info("Node decommissioned", "service", c.key())
	return nil
}

func (c *MemberServiceController) patchMetadata(ctx context.Context, field string, values map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{field: values}})
	if err != nil {
		return err
	}
	_, err = c.services.Patcher(c.kubeClient.CoreV1().Services(c.Namespace)).Patch(ctx, c.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("can't patch Service %q: %w", c.key(), err)
	}
	return nil
}

// writeMarker writes a decommission marker file, with the time, and flushes it and its directory to the volume.
func writeMarker(path string) error {
	if err := writeFileDurably(path, []byte(time.Now().UTC().Format(time.RFC3339)+"\n")); err != nil {
		return fmt.Errorf("can't write the decommission marker %q: %w", path, err)
	}
	return nil
}

func writeFileDurably(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// markerExists reports whether a decommission marker is on the node's volume.
func markerExists(path string) (bool, error) {
	_, err := os.Stat(path)
	if err == nil {
		return true, nil
	}
	if os.IsNotExist(err) {
		return false, nil
	}
	return false, fmt.Errorf("can't check the decommission marker %q: %w", path, err)
}
