package main

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// addressPool hands out addresses of one IPv4 prefix, skipping its network and broadcast addresses. Each address
// belongs to at most one key.
type addressPool struct {
	prefix netip.Prefix

	mu      sync.Mutex
	byKey   map[string]netip.Addr
	byOwner map[netip.Addr]string
}

func newAddressPool(prefix netip.Prefix) *addressPool {
	return &addressPool{
		prefix:  prefix.Masked(),
		byKey:   map[string]netip.Addr{},
		byOwner: map[netip.Addr]string{},
	}
}

// usable reports whether addr is in the pool's prefix and is neither its network nor its broadcast address.
func (p *addressPool) usable(addr netip.Addr) bool {
	if !p.prefix.Contains(addr) || addr == p.prefix.Addr() {
		return false
	}
	return p.prefix.Contains(addr.Next())
}

// Record notes that key already holds addr (for example, after a restart). It fails when another key holds it.
func (p *addressPool) Record(key string, addr netip.Addr) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if owner, ok := p.byOwner[addr]; ok && owner != key {
		return fmt.Errorf("address %s is already assigned to %q", addr, owner)
	}
	if old, ok := p.byKey[key]; ok && old != addr {
		delete(p.byOwner, old)
	}
	p.byKey[key] = addr
	p.byOwner[addr] = key
	return nil
}

// Allocate returns the address key holds, or assigns it the lowest free one.
func (p *addressPool) Allocate(key string) (netip.Addr, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr, ok := p.byKey[key]; ok {
		return addr, nil
	}
	for addr := p.prefix.Addr().Next(); p.usable(addr); addr = addr.Next() {
		if _, taken := p.byOwner[addr]; taken {
			continue
		}
		p.byKey[key] = addr
		p.byOwner[addr] = key
		return addr, nil
	}
	return netip.Addr{}, fmt.Errorf("address pool %s is exhausted", p.prefix)
}

// Release frees the address key holds, if any.
func (p *addressPool) Release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if addr, ok := p.byKey[key]; ok {
		delete(p.byOwner, addr)
		delete(p.byKey, key)
	}
}

// loadBalancerController gives every LoadBalancer Service without a load balancer class an ingress address from
// its pool, as a cloud provider's service controller would. The address is freed when the Service is deleted or
// stops being a LoadBalancer (the API server then drops its load balancer status).
type loadBalancerController struct {
	client         kubernetes.Interface
	serviceLister  corelisters.ServiceLister
	servicesSynced cache.InformerSynced
	queue          workqueue.TypedRateLimitingInterface[string]
	pool           *addressPool
}

func newLoadBalancerController(client kubernetes.Interface, serviceInformer coreinformers.ServiceInformer, pool *addressPool) *loadBalancerController {
	c := &loadBalancerController{
		client:         client,
		serviceLister:  serviceInformer.Lister(),
		servicesSynced: serviceInformer.Informer().HasSynced,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "fake-load-balancer"},
		),
		pool: pool,
	}
	_, _ = serviceInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj interface{}) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	})
	return c
}

func (c *loadBalancerController) enqueue(obj interface{}) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// Run processes Services until ctx is done.
func (c *loadBalancerController) Run(ctx context.Context, workers int) {
	defer utilruntime.HandleCrash()
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx).WithValues("controller", "fake-load-balancer")
	logger.Info("Starting")
	defer logger.Info("Shutting down")
	if !cache.WaitForNamedCacheSync("fake-load-balancer", ctx.Done(), c.servicesSynced) {
		return
	}
	// Learn the addresses already handed out before giving out new ones.
	services, err := c.serviceLister.List(everything)
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't list Services: %w", err))
		return
	}
	for _, svc := range services {
		c.recordIngress(ctx, svc)
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { wait.UntilWithContext(ctx, c.runWorker, time.Second) })
	}
	<-ctx.Done()
	c.queue.ShutDown()
	wg.Wait()
}

func (c *loadBalancerController) runWorker(ctx context.Context) {
	for processNextWorkItem(ctx, c.queue, c.sync) {
	}
}

// recordIngress tells the pool about the addresses a Service already has.
func (c *loadBalancerController) recordIngress(ctx context.Context, svc *corev1.Service) {
	key := cache.MetaObjectToName(svc).String()
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		addr, err := netip.ParseAddr(ing.IP)
		if err != nil || !c.pool.usable(addr) {
			continue
		}
		if err := c.pool.Record(key, addr); err != nil {
			klog.FromContext(ctx).Info("Service holds an address assigned elsewhere", "service", key, "error", err)
		}
	}
}

// managesService reports whether svc is a Service this controller gives an address.
func managesService(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

func (c *loadBalancerController) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	svc, err := c.serviceLister.Services(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.pool.Release(key)
		return nil
	}
	if err != nil {
		return err
	}

	if !managesService(svc) {
		c.pool.Release(key)
		return nil
	}

	if len(svc.Status.LoadBalancer.Ingress) != 0 {
		c.recordIngress(ctx, svc)
		return nil
	}
	addr, err := c.pool.Allocate(key)
	if err != nil {
		return fmt.Errorf("can't allocate an address for Service %q: %w", key, err)
	}
	svcCopy := svc.DeepCopy()
	svcCopy.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: addr.String()}}
	if _, err := c.client.CoreV1().Services(namespace).UpdateStatus(ctx, svcCopy, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("can't set load balancer status of Service %q: %w", key, err)
	}
	klog.FromContext(ctx).V(2).Info("Assigned load balancer address", "service", key, "address", addr)
	return nil
}
