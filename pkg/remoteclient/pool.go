// Package remoteclient keeps the clients and informers of the remote Kubernetes clusters RemoteKubernetesClusters
// describe: per RemoteKubernetesCluster name, one Kubernetes and one scylla.scylladb.com clientset built from the
// kubeconfig in its Secret, and shared informer factories started on demand. The RemoteKubernetesCluster controller
// (re)builds and removes the entries as RemoteKubernetesClusters and their Secrets change; the controllers that work
// in remote clusters (ScyllaDBCluster's) read clients with Get and register their informers' event handlers once,
// with AddHandler, for every remote cluster present and to come.
package remoteclient

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"k8s.io/client-go/discovery"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// NewClientsFunc builds the clients of a remote cluster from its REST configuration.
type NewClientsFunc func(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error)

// NewClients is the NewClientsFunc of real clusters.
func NewClients(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("can't build the Kubernetes client: %w", err)
	}
	scyllaClient, err := scyllaclientset.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("can't build the scylla.scylladb.com client: %w", err)
	}
	return kubeClient, scyllaClient, nil
}

// Options configure the clients and informers of every remote cluster of a Pool.
type Options struct {
	// QPS, Burst and UserAgent are set on every remote cluster's REST configuration, overriding the kubeconfig's.
	QPS       float32
	Burst     int
	UserAgent string

	// ResyncPeriod is the resync period of the remote informer factories.
	ResyncPeriod time.Duration
	// KubeInformerOptions and ScyllaInformerOptions are applied to the remote informer factories (a label selector,
	// a transform).
	KubeInformerOptions   []kubeinformers.SharedInformerOption
	ScyllaInformerOptions []scyllainformers.SharedInformerOption

	// NewClients builds the clients; nil means NewClients. Tests inject fake clientsets here.
	NewClients NewClientsFunc
	// Clock tells the time of probes; nil means time.Now.
	Clock func() time.Time
}

// InformerHandler is an event handler for one kind in every remote cluster (AddHandler).
type InformerHandler struct {
	// Kind names the kind in errors, such as "ScyllaDBDatacenter".
	Kind string
	// Informer returns the informer of the kind in a remote cluster, from the cluster's informer factories, such as
	// c.ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Informer().
	Informer func(c *Cluster) cache.SharedIndexInformer
	// Handler returns the handler of the events of the remote cluster named clusterName, the name of its
	// RemoteKubernetesCluster, so that a controller can tell which cluster an object is from.
	Handler func(clusterName string) cache.ResourceEventHandler
}

// Pool holds the clients and informers of the remote clusters by RemoteKubernetesCluster name. It is safe for
// concurrent use.
type Pool struct {
	opts Options

	lock     sync.RWMutex
	clusters map[string]*Cluster
	// known are the names the pool was told about since it was made: their clients were built (Update), or they
	// have none (Delete).
	known    map[string]bool
	handlers []InformerHandler
	// onChange are called, outside the lock, with the name of a cluster whose clients were built, rebuilt or removed.
	onChange []func(name string)
	shutdown bool
}

// NewPool returns an empty Pool.
func NewPool(opts Options) *Pool {
	if opts.NewClients == nil {
		opts.NewClients = NewClients
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	return &Pool{opts: opts, clusters: map[string]*Cluster{}, known: map[string]bool{}}
}

// Get returns the remote cluster of the RemoteKubernetesCluster name, if it has one: its Secret holds a usable
// kubeconfig. The cluster stays usable until its Done channel is closed; Get again for its replacement.
func (p *Pool) Get(name string) (*Cluster, bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	c, ok := p.clusters[name]
	return c, ok
}

// Known tells whether the pool was told about the remote cluster of the RemoteKubernetesCluster name since it was
// made: its clients were built, or it was found to have none (Delete). Until then, right after the program started,
// a cluster missing from the pool may have clients soon: what it holds is unknown, not absent.
func (p *Pool) Known(name string) bool {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return p.known[name]
}

// Names returns the names of the remote clusters, sorted.
func (p *Pool) Names() []string {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return sortedKeys(p.clusters)
}

// AddHandler registers h in every remote cluster, present and to come: the informer it names is created and started
// in each, with h's handler. Register handlers before the clusters' caches are needed, typically when a controller is
// built.
func (p *Pool) AddHandler(h InformerHandler) error {
	if h.Informer == nil || h.Handler == nil {
		return fmt.Errorf("can't add the remote handler of %s: it needs an Informer and a Handler", h.Kind)
	}
	p.lock.Lock()
	defer p.lock.Unlock()
	var errs []error
	for _, name := range sortedKeys(p.clusters) {
		c := p.clusters[name]
		if err := c.register(h); err != nil {
			errs = append(errs, err)
			continue
		}
		c.start()
	}
	p.handlers = append(p.handlers, h)
	return errors.Join(errs...)
}

// OnChange registers f, called with the name of a remote cluster every time its clients are built, rebuilt or
// removed, and once the caches of new clients have synced: a controller waiting for a cluster enqueues what works in
// it. The informers' events alone would not tell it that the caches synced: a remote cluster may hold none of the
// objects they select.
func (p *Pool) OnChange(f func(name string)) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.onChange = append(p.onChange, f)
}

// Update makes the clients of the remote cluster name those of kubeconfig. When kubeconfig is the one the cluster
// has (KubeconfigHash), nothing changes; otherwise new clients and informers are built, the handlers registered
// and their informers started, and the previous ones stopped. It returns whether it built new clients, and an error,
// changing nothing, when kubeconfig is not usable (ParseKubeconfig) or the clients can't be built.
func (p *Pool) Update(name string, kubeconfig []byte) (bool, error) {
	hash := KubeconfigHash(kubeconfig)
	if c, ok := p.Get(name); ok && c.hash == hash {
		return false, nil
	}

	config, err := ParseKubeconfig(kubeconfig)
	if err != nil {
		return false, err
	}
	config.QPS = p.opts.QPS
	config.Burst = p.opts.Burst
	config.UserAgent = p.opts.UserAgent
	kubeClient, scyllaClient, err := p.opts.NewClients(config)
	if err != nil {
		return false, err
	}

	c := &Cluster{
		name:            name,
		hash:            hash,
		kubeClient:      kubeClient,
		scyllaClient:    scyllaClient,
		kubeInformers:   kubeinformers.NewSharedInformerFactoryWithOptions(kubeClient, p.opts.ResyncPeriod, p.opts.KubeInformerOptions...),
		scyllaInformers: scyllainformers.NewSharedInformerFactoryWithOptions(scyllaClient, p.opts.ResyncPeriod, p.opts.ScyllaInformerOptions...),
		stopCh:          make(chan struct{}),
		clock:           p.opts.Clock,
		built:           p.opts.Clock(),
		listErrors:      map[cache.SharedIndexInformer]listError{},
	}

	p.lock.Lock()
	if p.shutdown {
		p.lock.Unlock()
		return false, fmt.Errorf("can't build the clients of remote cluster %q: the pool is shut down", name)
	}
	var errs []error
	for _, h := range p.handlers {
		errs = append(errs, c.register(h))
	}
	if err := errors.Join(errs...); err != nil {
		p.lock.Unlock()
		c.stop()
		return false, err
	}
	previous := p.clusters[name]
	if previous != nil && previous.hash == hash {
		// A concurrent Update got there first.
		p.lock.Unlock()
		c.stop()
		return false, nil
	}
	p.clusters[name] = c
	p.known[name] = true
	c.start()
	onChange := slices.Clone(p.onChange)
	p.lock.Unlock()

	if previous != nil {
		previous.stop()
	}
	klog.Background().V(2).Info("Built the clients of a remote cluster", "remoteKubernetesCluster", name, "replaced", previous != nil)
	for _, f := range onChange {
		f(name)
	}
	go notifyWhenSynced(c, onChange)
	return true, nil
}

// notifyWhenSynced calls onChange with c's name once c's informers have synced, unless c is stopped first.
func notifyWhenSynced(c *Cluster, onChange []func(name string)) {
	if !cache.WaitForCacheSync(c.stopCh, c.HasSynced) {
		return
	}
	select {
	case <-c.stopCh:
		// Replaced or removed meanwhile: that change was notified.
		return
	default:
	}
	for _, f := range onChange {
		f(c.name)
	}
}

// Delete stops and forgets the remote cluster name, if there is one, and returns whether there was. Either way the
// name is Known from then on; the first Delete of a name the pool had no clients of also calls the OnChange
// functions: a controller waiting for the cluster to be Known looks again.
func (p *Pool) Delete(name string) bool {
	p.lock.Lock()
	c, ok := p.clusters[name]
	delete(p.clusters, name)
	newlyKnown := !p.known[name]
	p.known[name] = true
	onChange := slices.Clone(p.onChange)
	p.lock.Unlock()
	if !ok {
		if newlyKnown {
			for _, f := range onChange {
				f(name)
			}
		}
		return false
	}
	c.stop()
	klog.Background().V(2).Info("Stopped the clients of a remote cluster", "remoteKubernetesCluster", name)
	for _, f := range onChange {
		f(name)
	}
	return true
}

// Start does nothing: the informers of each remote cluster start with it. It makes a Pool one of the informer
// factories a program starts and shuts down.
func (p *Pool) Start(<-chan struct{}) {}

// WaitForCacheSync returns at once, with nothing: an unreachable remote cluster must not hold up the program's own
// controllers. Whoever reads a remote cluster's caches checks Cluster.HasSynced.
func (p *Pool) WaitForCacheSync(<-chan struct{}) map[reflect.Type]bool {
	return nil
}

// Shutdown stops every remote cluster's informers; the Pool builds no clients afterwards.
func (p *Pool) Shutdown() {
	p.lock.Lock()
	clusters := p.clusters
	p.clusters = map[string]*Cluster{}
	p.shutdown = true
	p.lock.Unlock()
	for _, c := range clusters {
		c.stop()
	}
}

// Cluster is the clients and informer factories of one remote cluster, built from one kubeconfig.
type Cluster struct {
	name            string
	hash            string
	kubeClient      kubernetes.Interface
	scyllaClient    scyllaclientset.Interface
	kubeInformers   kubeinformers.SharedInformerFactory
	scyllaInformers scyllainformers.SharedInformerFactory
	stopCh          chan struct{}
	stopOnce        sync.Once
	clock           func() time.Time
	// built is when the clients were built, and the informers started loading.
	built time.Time

	lock      sync.Mutex
	informers []cache.SharedIndexInformer
	// listErrors are the last list or watch error of each informer, as its reflector reported it, and when.
	listErrors map[cache.SharedIndexInformer]listError
	lastProbe  *ProbeResult
}

// listError is an informer's list or watch error and the time its reflector reported it.
type listError struct {
	err error
	at  time.Time
}

// recentListErrorAge is how old a list error SyncError still reports: twice the longest back-off of a reflector's
// retries (30 seconds).
const recentListErrorAge = time.Minute

// Name is the name of the cluster's RemoteKubernetesCluster.
func (c *Cluster) Name() string { return c.name }

// KubeconfigHash is the KubeconfigHash of the kubeconfig the clients were built from.
func (c *Cluster) KubeconfigHash() string { return c.hash }

// KubeClient is the cluster's Kubernetes clientset.
func (c *Cluster) KubeClient() kubernetes.Interface { return c.kubeClient }

// ScyllaClient is the cluster's scylla.scylladb.com clientset.
func (c *Cluster) ScyllaClient() scyllaclientset.Interface { return c.scyllaClient }

// KubeInformers is the cluster's Kubernetes informer factory. Informers are best created through Pool.AddHandler,
// which starts them in every cluster.
func (c *Cluster) KubeInformers() kubeinformers.SharedInformerFactory { return c.kubeInformers }

// ScyllaInformers is the cluster's scylla.scylladb.com informer factory, see KubeInformers.
func (c *Cluster) ScyllaInformers() scyllainformers.SharedInformerFactory { return c.scyllaInformers }

// Done is closed once the cluster's clients are replaced or removed and its informers stopped.
func (c *Cluster) Done() <-chan struct{} { return c.stopCh }

// HasSynced tells whether every informer registered through Pool.AddHandler has synced.
func (c *Cluster) HasSynced() bool {
	c.lock.Lock()
	defer c.lock.Unlock()
	for _, informer := range c.informers {
		if !informer.HasSynced() {
			return false
		}
	}
	return true
}

// Built is when the cluster's clients were built: its informers have been loading their caches since, until
// HasSynced.
func (c *Cluster) Built() time.Time { return c.built }

// SyncError returns why the informers registered through Pool.AddHandler that have not synced yet could not list,
// nil when none of them reported an error: the last error of the first of them in registration order, e.g. that the
// kubeconfig's user may not list the kind (RBAC missing in the remote cluster). The informers keep retrying.
//
// An error older than recentListErrorAge is not reported: a reflector retries a failed list within 30 seconds, so a
// retry has run since and has not failed, and a list that is only slow (large caches) is not refused.
func (c *Cluster) SyncError() error {
	c.lock.Lock()
	defer c.lock.Unlock()
	var first error
	more := 0
	for _, informer := range c.informers {
		last := c.listErrors[informer]
		err := last.err
		if err == nil || informer.HasSynced() || c.clock().Sub(last.at) > recentListErrorAge {
			continue
		}
		if first == nil {
			first = err
			continue
		}
		more++
	}
	if more != 0 {
		return fmt.Errorf("%w (and %d more kinds)", first, more)
	}
	return first
}

// ProbeResult is the outcome of a health check of a remote cluster's API server.
type ProbeResult struct {
	// Time is when the probe started.
	Time time.Time
	// Duration is how long it took.
	Duration time.Duration
	// Err is why it failed; nil when the API server answered.
	Err error
}

// Probe asks the cluster's API server for its version (GET /version, which every authenticated client may read),
// within ctx, records the result for LastProbe and returns it.
func (c *Cluster) Probe(ctx context.Context) ProbeResult {
	start := c.clock()
	_, err := discovery.ToServerVersionInterfaceWithContext(c.kubeClient.Discovery()).ServerVersionWithContext(ctx)
	result := ProbeResult{Time: start, Duration: c.clock().Sub(start), Err: err}
	if err != nil {
		result.Err = fmt.Errorf("can't get the version of the API server: %w", err)
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	c.lastProbe = &result
	return result
}

// LastProbe returns the result of the last Probe, if there was one.
func (c *Cluster) LastProbe() (ProbeResult, bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.lastProbe == nil {
		return ProbeResult{}, false
	}
	return *c.lastProbe, true
}

// register creates h's informer in the cluster and adds h's handler to it. The informer's list and watch errors are
// kept for SyncError, and logged as client-go does by default.
func (c *Cluster) register(h InformerHandler) error {
	informer := h.Informer(c)
	if _, err := informer.AddEventHandler(h.Handler(c.name)); err != nil {
		return fmt.Errorf("can't add the %s event handler in remote cluster %q: %w", h.Kind, c.name, err)
	}
	c.lock.Lock()
	defer c.lock.Unlock()
	if slices.Contains(c.informers, informer) {
		return nil
	}
	// Set before the informer starts: it can't be set afterwards.
	err := informer.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		c.lock.Lock()
		c.listErrors[informer] = listError{err: err, at: c.clock()}
		c.lock.Unlock()
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	if err != nil {
		return fmt.Errorf("can't watch the list errors of the %s informer in remote cluster %q: %w", h.Kind, c.name, err)
	}
	c.informers = append(c.informers, informer)
	return nil
}

// start starts the informers created since the last start; the factories start each informer once.
func (c *Cluster) start() {
	c.kubeInformers.Start(c.stopCh)
	c.scyllaInformers.Start(c.stopCh)
}

// stop stops the informers and waits for them to return.
func (c *Cluster) stop() {
	c.stopOnce.Do(func() {
		close(c.stopCh)
		c.kubeInformers.Shutdown()
		c.scyllaInformers.Shutdown()
	})
}
