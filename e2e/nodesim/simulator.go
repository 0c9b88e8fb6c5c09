package nodesim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// UserAgent identifies the simulator's own requests in the audit log. The sidecars use their own.
const UserAgent = "scylladb-node-simulator"

// Identity is whose credentials the sidecars use.
type Identity string

const (
	// IdentityServiceAccount gives each sidecar a token of its Pod's ServiceAccount, bound to the Pod, as a real Pod
	// gets: the operator's RBAC for the sidecar is exercised.
	IdentityServiceAccount Identity = "ServiceAccount"
	// IdentityAdmin gives every sidecar Options.AdminKubeconfig.
	IdentityAdmin Identity = "Admin"
)

// Options configure a Simulator.
type Options struct {
	// Config is the REST config of the simulator's own requests: watching Pods, writing their status and events,
	// requesting ServiceAccount tokens, reading ConfigMaps, Secrets, claims and Services. Its host and CA are
	// also the sidecars'. Required.
	Config *rest.Config
	// SidecarBinary is scylla-operator built from the working tree. Required.
	SidecarBinary string
	// FakeScyllaDBBinary is e2e/cmd/fake-scylladb built from the working tree. Required.
	FakeScyllaDBBinary string
	// Dir holds the state of the simulated nodes (see the package documentation). Required; created if missing.
	Dir string
	// Namespaces limits the simulation to Pods of these namespaces; empty means every namespace.
	Namespaces []string
	// Identity is whose credentials the sidecars use. Defaults to IdentityServiceAccount.
	Identity Identity
	// AdminKubeconfig is the kubeconfig of IdentityAdmin.
	AdminKubeconfig string
	// ProbeInterval is how often each sidecar's /readyz is probed. Defaults to 500ms.
	ProbeInterval time.Duration
	// StopGracePeriod bounds the time a sidecar gets between SIGTERM and SIGKILL; a shorter grace period of the
	// Pod's applies. Defaults to 10s.
	StopGracePeriod time.Duration
	// RestartBackoff is the delay before restarting an exited container; it doubles with each restart up to
	// MaxRestartBackoff and starts over after a container ran for twice that. Default 1s and 16s.
	RestartBackoff, MaxRestartBackoff time.Duration
	// RegistryTTL is how long a fake ScyllaDB that stopped heartbeating still reads as Up. Defaults to 5s; unused
	// with Registry.
	RegistryTTL time.Duration
	// Registry, if set, is the ring registry the fake ScyllaDB nodes join, in place of one of the simulator's own.
	// Simulators of several control planes given one Registry let their nodes form one ring, as the datacenters of
	// one cluster in several Kubernetes clusters do; those control planes need Pod, Service and LoadBalancer ranges
	// that don't overlap, as the registry knows nodes by address. Each simulator still serves it on its own
	// listener (RegistryURL); Rings and RingsOf read it, so they see the nodes of every simulator sharing it.
	Registry *fakescylladb.Registry
	// FakeEnv, if set, returns extra KEY=VALUE pairs for a Pod's sidecar and fake ScyllaDB, such as the
	// FAKE_SCYLLADB_* knobs the fake reads at start.
	FakeEnv func(pod *corev1.Pod) []string
	// Logger receives the simulator's log. Defaults to discarding it.
	Logger logr.Logger
}

func (o *Options) complete() error {
	var errs []error
	if o.Config == nil {
		errs = append(errs, errors.New("options need a REST Config"))
	}
	for _, b := range []struct{ name, path string }{{"SidecarBinary", o.SidecarBinary}, {"FakeScyllaDBBinary", o.FakeScyllaDBBinary}} {
		if b.path == "" {
			errs = append(errs, fmt.Errorf("options need %s", b.name))
			continue
		}
		if _, err := os.Stat(b.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", b.name, err))
		}
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("options need a Dir"))
	}
	switch o.Identity {
	case "":
		o.Identity = IdentityServiceAccount
	case IdentityServiceAccount:
	case IdentityAdmin:
		if o.AdminKubeconfig == "" {
			errs = append(errs, errors.New("identity Admin needs AdminKubeconfig"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown identity %q: want %q or %q", o.Identity, IdentityServiceAccount, IdentityAdmin))
	}
	for _, d := range []struct {
		field *time.Duration
		name  string
		def   time.Duration
	}{
		{&o.ProbeInterval, "ProbeInterval", 500 * time.Millisecond},
		{&o.StopGracePeriod, "StopGracePeriod", 10 * time.Second},
		{&o.RestartBackoff, "RestartBackoff", time.Second},
		{&o.MaxRestartBackoff, "MaxRestartBackoff", 16 * time.Second},
		{&o.RegistryTTL, "RegistryTTL", 5 * time.Second},
	} {
		switch {
		case *d.field == 0:
			*d.field = d.def
		case *d.field < 0:
			errs = append(errs, fmt.Errorf("%s must be positive, got %v", d.name, *d.field))
		}
	}
	if o.MaxRestartBackoff < o.RestartBackoff {
		errs = append(errs, fmt.Errorf("MaxRestartBackoff %v is shorter than RestartBackoff %v", o.MaxRestartBackoff, o.RestartBackoff))
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	return errors.Join(errs...)
}

// Simulator runs the sidecars of the ScyllaDB Pods of one control plane and keeps their Pods' readiness in step.
type Simulator struct {
	opts         Options
	logger       logr.Logger
	client       kubernetes.Interface
	registry     *fakescylladb.Registry
	dns          *clusterDNS
	registryURL  string
	registrySrv  *http.Server
	podLister    corev1listers.PodLister
	nodeLister   corev1listers.NodeLister
	queue        workqueue.TypedRateLimitingInterface[string]
	broadcaster  record.EventBroadcaster
	recorder     record.EventRecorder
	startProcess processStarter
	// readyz probes a sidecar's /readyz at a host:port; tests replace it.
	readyz     func(ctx context.Context, address string) (bool, string)
	namespaces sets.Set[string]
	now        func() time.Time
	factories  []informers.SharedInformerFactory
	cancel     context.CancelFunc
	workers    sync.WaitGroup
	stopOnce   sync.Once
	stopErr    error

	mu    sync.Mutex
	nodes map[string]*node
}

// workers is how many Pods are synced at once.
const workers = 4

// Start starts a simulator with its ring registry (or Options.Registry) and cluster DNS resolver, and runs until Stop.
func Start(ctx context.Context, opts Options) (*Simulator, error) {
	if err := opts.complete(); err != nil {
		return nil, fmt.Errorf("can't start the node simulator: %w", err)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("can't create the node simulator's directory: %w", err)
	}
	config := rest.CopyConfig(opts.Config)
	config.UserAgent = UserAgent
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("can't create the node simulator's client: %w", err)
	}
	return start(ctx, opts, client, startContainerProcess, newReadyzProber())
}

// start runs a simulator with completed options and the given seams.
func start(ctx context.Context, opts Options, client kubernetes.Interface, starter processStarter, readyz func(context.Context, string) (bool, string)) (*Simulator, error) {
	s := &Simulator{
		opts:         opts,
		logger:       opts.Logger,
		client:       client,
		registry:     opts.Registry,
		dns:          &clusterDNS{client: client},
		startProcess: starter,
		readyz:       readyz,
		namespaces:   sets.New(opts.Namespaces...),
		now:          time.Now,
		nodes:        map[string]*node{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](200*time.Millisecond, 10*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: UserAgent},
		),
	}
	if s.registry == nil {
		s.registry = fakescylladb.NewRegistry(opts.RegistryTTL)
	}
	ctx, s.cancel = context.WithCancel(ctx)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("can't listen for the ring registry: %w", err)
	}
	s.registryURL = "http://" + l.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/", s.registry.Handler())
	mux.Handle("GET "+resolverPathPrefix+"{namespace}", s.dns.handler())
	s.registrySrv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.registrySrv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.logger.Error(err, "Ring registry stopped")
		}
	}()

	s.broadcaster = record.NewBroadcaster(record.WithContext(ctx))
	s.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	s.recorder = s.broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: UserAgent})

	selector := labels.SelectorFromSet(labels.Set{naming.PodTypeLabel: naming.PodTypeScyllaDBNode}).String()
	podFactory := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = selector
	}))
	nodeFactory := informers.NewSharedInformerFactory(client, 0)
	podInformer := podFactory.Core().V1().Pods()
	nodeInformer := nodeFactory.Core().V1().Nodes()
	s.podLister = podInformer.Lister()
	s.nodeLister = nodeInformer.Lister()
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueue,
		UpdateFunc: func(_, obj any) { s.enqueue(obj) },
		DeleteFunc: s.enqueue,
	}); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("can't watch Pods: %w", err)
	}
	podFactory.Start(ctx.Done())
	nodeFactory.Start(ctx.Done())
	s.factories = []informers.SharedInformerFactory{podFactory, nodeFactory}
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced, nodeInformer.Informer().HasSynced) {
		_ = s.Stop()
		return nil, errors.New("can't start the node simulator: its caches didn't sync")
	}
	for range workers {
		s.workers.Go(func() {
			for s.processNextWorkItem(ctx) {
			}
		})
	}
	s.logger.Info("Started the node simulator", "registry", s.registryURL, "dir", opts.Dir, "namespaces", opts.Namespaces)
	return s, nil
}

func (s *Simulator) enqueue(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if s.namespaces.Len() > 0 && !s.namespaces.Has(pod.Namespace) {
		return
	}
	s.queue.Add(pod.Namespace + "/" + pod.Name)
}

func (s *Simulator) processNextWorkItem(ctx context.Context) bool {
	key, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(key)
	after, err := s.sync(ctx, key)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.logger.Error(err, "Syncing a Pod failed; retrying", "pod", key)
		}
		s.queue.AddRateLimited(key)
	case after > 0:
		s.queue.Forget(key)
		s.queue.AddAfter(key, after)
	default:
		s.queue.Forget(key)
	}
	return true
}

// Stop stops every sidecar, the server of the ring registry and the resolver, and the watches. A shared
// Options.Registry keeps its state. It is safe to call more than once.
func (s *Simulator) Stop() error {
	s.stopOnce.Do(func() {
		s.cancel()
		s.queue.ShutDown()
		s.workers.Wait()
		for _, f := range s.factories {
			f.Shutdown()
		}
		s.mu.Lock()
		nodes := make([]*node, 0, len(s.nodes))
		for _, n := range s.nodes {
			nodes = append(nodes, n)
		}
		s.nodes = map[string]*node{}
		s.mu.Unlock()
		errs := make([]error, len(nodes))
		var wg sync.WaitGroup
		for i, n := range nodes {
			wg.Go(func() { errs[i] = s.stopNode(n, s.opts.StopGracePeriod, "the node simulator stops") })
		}
		wg.Wait()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		errs = append(errs, s.registrySrv.Shutdown(shutdownCtx))
		s.broadcaster.Shutdown()
		s.stopErr = errors.Join(errs...)
		s.logger.Info("Stopped the node simulator")
	})
	return s.stopErr
}

// RegistryURL is the base URL of the ring registry the fake ScyllaDB nodes join.
func (s *Simulator) RegistryURL() string {
	return s.registryURL
}

// ResolverURL is the URL of the cluster DNS resolver that the fake ScyllaDB nodes of Pods in namespace get as
// FAKE_SCYLLADB_RESOLVER_URL: GET <ResolverURL>?name=<name> answers {"addresses": [...]}, or 404 for an unknown
// name.
func (s *Simulator) ResolverURL(namespace string) string {
	return resolverURL(s.registryURL, namespace)
}

// Resolve returns the addresses of name as a Pod in namespace would resolve it through cluster DNS: a headless
// Service's ready EndpointSlice addresses, another Service's cluster IPs, an ExternalName Service's target. An
// unknown name is an error wrapping fakescylladb.ErrNotFound.
func (s *Simulator) Resolve(ctx context.Context, namespace, name string) ([]string, error) {
	return s.dns.resolve(ctx, namespace, name)
}

// Rings returns every ring of the registry that has members, sorted by ID. Several rings with one cluster name
// mean that the cluster split.
func (s *Simulator) Rings() []fakescylladb.Ring {
	return s.registry.Rings()
}

// RingsOf returns the rings of one cluster name.
func (s *Simulator) RingsOf(clusterName string) []fakescylladb.Ring {
	var out []fakescylladb.Ring
	for _, r := range s.registry.Rings() {
		if r.ClusterName == clusterName {
			out = append(out, r)
		}
	}
	return out
}

// Node is what the simulator knows about one ScyllaDB Pod it runs.
type Node struct {
	Namespace, Name string
	UID             types.UID
	// PID is the sidecar's process ID, 0 while it doesn't run.
	PID int
	// Ready is the last /readyz result, and ReadinessMessage its body when it failed.
	Ready            bool
	ReadinessMessage string
	// Restarts counts container restarts.
	Restarts int32
	// ProbesAddress and APIAddress are the loopback host:port of the sidecar's probes and the fake's REST API.
	ProbesAddress, APIAddress string
	// Dir is the Pod's directory; DataDir is the host directory of the sidecar's --scylladb-data-dir.
	Dir, DataDir string
	// LogPath holds the output of every start of the sidecar and the fake; RecordPath the fake's records.
	LogPath, RecordPath string
	// Args are the sidecar's arguments, the Pod's followed by the simulator's.
	Args []string
}

// Node returns the simulated node of a Pod, if the simulator runs one.
func (s *Simulator) Node(namespace, name string) (Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.nodes[namespace+"/"+name]
	if !ok {
		return Node{}, false
	}
	return n.snapshotLocked(), true
}

// Nodes returns every simulated node, by namespace and name.
func (s *Simulator) Nodes() []Node {
	s.mu.Lock()
	out := make([]Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		out = append(out, n.snapshotLocked())
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}

// Records returns what the fake ScyllaDB recorded at each start within the Pod's current incarnation, oldest
// first; none before the first start.
func (s *Simulator) Records(namespace, name string) ([]fakescylladb.Record, error) {
	n, ok := s.Node(namespace, name)
	if !ok {
		return nil, fmt.Errorf("no simulated node for Pod %q", namespace+"/"+name)
	}
	records, err := fakescylladb.ReadRecords(n.RecordPath)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return records, err
}

// LastInvocation returns the settings ScyllaDB was last started with in the Pod, or an error when it wasn't
// started or the last start failed.
func (s *Simulator) LastInvocation(namespace, name string) (*fakescylladb.Invocation, error) {
	records, err := s.Records(namespace, name)
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("ScyllaDB of Pod %q wasn't started yet", namespace+"/"+name)
	}
	last := records[len(records)-1]
	if last.Error != "" || last.Invocation == nil {
		return nil, fmt.Errorf("the last start of ScyllaDB of Pod %q failed: %s", namespace+"/"+name, last.Error)
	}
	return last.Invocation, nil
}

// freeLoopbackAddresses returns n distinct 127.0.0.1:port addresses that were free a moment ago.
func freeLoopbackAddresses(n int) ([]string, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("can't find a free port on 127.0.0.1: %w", err)
		}
		listeners = append(listeners, l)
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// podAddresses are the addresses at which a Pod's ScyllaDB would be reachable in a real cluster: its Pod IPs, and
// through kube-proxy its member Service's cluster IPs and load balancer ingress IPs.
func podAddresses(pod *corev1.Pod, svc *corev1.Service) []string {
	var out []string
	add := func(ip string) {
		if ip != "" && ip != corev1.ClusterIPNone && !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	for _, ip := range pod.Status.PodIPs {
		add(ip.IP)
	}
	add(pod.Status.PodIP)
	add(svc.Spec.ClusterIP)
	for _, ip := range svc.Spec.ClusterIPs {
		add(ip)
	}
	for _, ing := range svc.Status.LoadBalancer.Ingress {
		add(ing.IP)
	}
	return out
}

// joinEnv renders resolved variables as KEY=VALUE.
func joinEnv(vars []envVar) []string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		out = append(out, v.Name+"="+v.Value)
	}
	return out
}

// dirName is the directory name of a Pod incarnation.
func dirName(name string, uid types.UID) string {
	return name + "-" + string(uid)
}
