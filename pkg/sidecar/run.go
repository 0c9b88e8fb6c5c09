package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/profiling"
	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

// readNodeConfigInput reads the node's Pod and member Service and the datacenter's member Services and Pods; joined
// is what the node's volume says (JoinedMarker). API errors are worth retrying and wrap ErrNotYetAvailable.
func (o *Options) readNodeConfigInput(ctx context.Context, joined bool) (NodeConfigInput, error) {
	core := o.kubeClient.CoreV1()
	pod, err := core.Pods(o.PodNamespace).Get(ctx, o.PodName, metav1.GetOptions{})
	if err != nil {
		return NodeConfigInput{}, fmt.Errorf("can't get Pod %q: %w (%w)", o.PodNamespace+"/"+o.PodName, err, ErrNotYetAvailable)
	}
	svc, err := core.Services(o.PodNamespace).Get(ctx, o.MemberServiceName, metav1.GetOptions{})
	if err != nil {
		return NodeConfigInput{}, fmt.Errorf("can't get Service %q: %w (%w)", o.PodNamespace+"/"+o.MemberServiceName, err, ErrNotYetAvailable)
	}
	selector := labels.Set{}
	for _, key := range []string{naming.ClusterNameLabel, naming.DatacenterNameLabel} {
		v, ok := svc.Labels[key]
		if !ok {
			return NodeConfigInput{}, fmt.Errorf("member Service %q lacks label %q, which selects the datacenter's nodes", o.PodNamespace+"/"+o.MemberServiceName, key)
		}
		selector[key] = v
	}
	pods, err := core.Pods(o.PodNamespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return NodeConfigInput{}, fmt.Errorf("can't list Pods: %w (%w)", err, ErrNotYetAvailable)
	}
	serviceSelector := labels.Merge(selector, labels.Set{naming.ScyllaServiceTypeLabel: naming.ScyllaServiceTypeMember})
	services, err := core.Services(o.PodNamespace).List(ctx, metav1.ListOptions{LabelSelector: serviceSelector.String()})
	if err != nil {
		return NodeConfigInput{}, fmt.Errorf("can't list Services: %w (%w)", err, ErrNotYetAvailable)
	}
	in := NodeConfigInput{
		Options:       o.addressOptions,
		ExternalSeeds: o.ExternalSeeds,
		Pod:           pod,
		Service:       svc,
		Interfaces:    o.interfaces,
		Joined:        joined,
	}
	for i := range services.Items {
		in.Services = append(in.Services, &services.Items[i])
	}
	for i := range pods.Items {
		in.Pods = append(in.Pods, &pods.Items[i])
	}
	return in, nil
}

// waitForNodeConfig computes the node's addresses and seeds, waiting up to --startup-timeout for what may still
// appear. Final errors end the wait at once. It also returns the UID of the node's Pod.
func (o *Options) waitForNodeConfig(ctx context.Context, joined bool) (NodeConfig, types.UID, error) {
	logger := klog.FromContext(ctx)
	var nc NodeConfig
	var podUID types.UID
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, o.pollInterval, o.StartupTimeout, true, func(ctx context.Context) (bool, error) {
		in, err := o.readNodeConfigInput(ctx, joined)
		if err == nil {
			podUID = in.Pod.UID
			nc, err = ComputeNodeConfig(in)
		}
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, ErrNotYetAvailable):
			logger.Info("Waiting for the node's configuration", "reason", err.Error())
			lastErr = err
			return false, nil
		default:
			return false, err
		}
	})
	if err != nil && wait.Interrupted(err) && lastErr != nil {
		return NodeConfig{}, "", fmt.Errorf("gave up after %v: %w", o.StartupTimeout, lastErr)
	}
	return nc, podUID, err
}

// waitForBroadcastAddressRecord waits up to --startup-timeout until the member Service controller has recorded the
// node's broadcast address, so that other nodes can seed from it before this node can become Ready.
func (o *Options) waitForBroadcastAddressRecord(ctx context.Context, lister corev1listers.ServiceLister, c *MemberServiceController) error {
	err := wait.PollUntilContextTimeout(ctx, o.pollInterval, o.StartupTimeout, true, func(context.Context) (bool, error) {
		if reason := c.Restart.Reason(); reason != nil {
			// The Service changed since the addresses were computed; they are not worth recording.
			return false, restartError(reason)
		}
		svc, err := lister.Services(o.PodNamespace).Get(o.MemberServiceName)
		return err == nil && c.BroadcastAddressRecorded(svc), nil
	})
	if err != nil && wait.Interrupted(err) && ctx.Err() == nil {
		return fmt.Errorf("gave up after %v waiting to record the broadcast address on Service %q", o.StartupTimeout, o.PodNamespace+"/"+o.MemberServiceName)
	}
	return err
}

// lastWatchError keeps the last error an informer's reflector reported: why its cache has not synced yet.
type lastWatchError struct {
	mu  sync.Mutex
	err error
}

// handle is a cache.WatchErrorHandlerWithContext; it logs like the default handler.
func (l *lastWatchError) handle(ctx context.Context, r *cache.Reflector, err error) {
	l.mu.Lock()
	l.err = err
	l.mu.Unlock()
	cache.DefaultWatchErrorHandler(ctx, r, err)
}

func (l *lastWatchError) get() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// waitForMemberServiceCache waits up to --startup-timeout for the member Service informer's first list: without it
// the sidecar can't record the broadcast address or serve /readyz. A list or watch the API server refuses, or an API
// server out of reach, would otherwise keep the sidecar waiting until the kubelet's startup probe kills it, without
// saying why. It returns ctx's error when ctx ends first.
func (o *Options) waitForMemberServiceCache(ctx context.Context, synced cache.InformerSynced, watchErrors *lastWatchError) error {
	syncCtx, cancel := context.WithTimeout(ctx, o.StartupTimeout)
	defer cancel()
	if cache.WaitForCacheSync(syncCtx.Done(), synced) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	service := o.PodNamespace + "/" + o.MemberServiceName
	if err := watchErrors.get(); err != nil {
		return fmt.Errorf("can't watch the member Service: gave up after %v waiting to list Service %q: %w", o.StartupTimeout, service, err)
	}
	return fmt.Errorf("can't watch the member Service: gave up after %v waiting to list Service %q: the API server neither answered nor reported an error", o.StartupTimeout, service)
}

func (o *Options) settings(nc NodeConfig) ScyllaDBSettings {
	return ScyllaDBSettings{
		ClusterName:          o.ClusterName,
		Datacenter:           o.Datacenter,
		Rack:                 o.Rack,
		Addresses:            nc.Addresses,
		Seeds:                nc.Seeds.Seeds,
		APIAddress:           o.apiHost,
		APIPort:              o.apiPort,
		Workdir:              o.ScyllaDBDataDir,
		IPFamily:             o.addressOptions.IPFamily,
		CPUCount:             o.CPUCount,
		DeveloperMode:        o.DeveloperMode,
		TLS:                  o.tlsSettings,
		ReplaceNodeFirstBoot: nc.ReplaceNodeHostID,
	}
}

func readOptionalFile(path, what string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("can't read the %s: %w", what, err)
	}
	return data, nil
}

func writeFileAtomically(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("can't write %q: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("can't replace %q: %w", path, err)
	}
	return nil
}

// writeScyllaDBConfig writes scylla.yaml and cassandra-rackdc.properties into the config directory.
func (o *Options) writeScyllaDBConfig(ctx context.Context, s ScyllaDBSettings) error {
	logger := klog.FromContext(ctx)
	base, err := readOptionalFile(o.ScyllaDBBaseConfigPath, "base ScyllaDB config")
	if err != nil {
		return err
	}
	custom, err := readOptionalFile(o.ScyllaDBCustomConfigPath, "custom ScyllaDB config")
	if err != nil {
		return err
	}
	merged, ignored, err := MergeConfig(base, custom, s)
	if err != nil {
		return err
	}
	for _, key := range ignored {
		logger.Info("Ignoring a key of the custom ScyllaDB config that the sidecar owns", "key", key, "path", o.ScyllaDBCustomConfigPath)
	}
	if err := os.MkdirAll(o.ScyllaDBConfigDir, 0o755); err != nil {
		return fmt.Errorf("can't create the ScyllaDB config directory: %w", err)
	}
	if err := writeFileAtomically(filepath.Join(o.ScyllaDBConfigDir, scyllaDBConfigFileName), merged); err != nil {
		return err
	}
	return writeFileAtomically(filepath.Join(o.ScyllaDBConfigDir, scyllaDBRackDCPropertiesName), RackDCProperties(s))
}

// terminating reports whether sig asks the sidecar to stop.
func terminating(sig os.Signal) bool {
	return sig == syscall.SIGTERM || sig == syscall.SIGINT
}

// contextCancelledBySignal cancels the returned context when a terminating signal arrives, until stop is called.
// Once stop returns, no signal is taken any more: a terminating signal taken until then has cancelled the context,
// and any later one is left in signals for whoever reads them next (ScyllaDB's forwarding).
func contextCancelledBySignal(ctx context.Context, signals <-chan os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case sig := <-signals:
				if terminating(sig) {
					klog.FromContext(ctx).Info("Received a signal while ScyllaDB isn't running; stopping", "signal", sig)
					cancel()
					return
				}
			case <-stop:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	var stopped bool
	return ctx, func() {
		if !stopped {
			stopped = true
			close(stop)
			<-done
		}
	}
}

// Run configures and starts ScyllaDB, serves the probes and keeps the member Service in step until ScyllaDB exits.
// It returns an *ExitError when ScyllaDB exits unsuccessfully.
func (o *Options) Run(ctx context.Context) error {
	logger := klog.FromContext(ctx)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var reaper *orphanReaper
	if o.reapOrphans {
		reaper = newOrphanReaper()
		reaperDone := make(chan struct{})
		go func() {
			defer close(reaperDone)
			reaper.run(ctx)
		}()
		defer func() {
			cancel()
			<-reaperDone
		}()
	}

	scylla, err := scyllaclient.NewClient(o.ScyllaDBAPIAddress, nil)
	if err != nil {
		return err
	}
	decommissionScylla, err := scyllaclient.NewClient(o.ScyllaDBAPIAddress, &http.Client{})
	if err != nil {
		return err
	}
	markerPath := filepath.Join(o.ScyllaDBDataDir, decommissionedMarkerFileName)
	wasDecommissioned, err := markerExists(markerPath)
	if err != nil {
		return err
	}
	// Shared with the controller and the prober: ScyllaDB isn't running because the node was decommissioned.
	decommissioned := &atomic.Bool{}
	decommissioned.Store(wasDecommissioned)
	decommissionStarted, err := markerExists(filepath.Join(o.ScyllaDBDataDir, decommissioningMarkerFileName))
	if err != nil {
		return err
	}
	if decommissionStarted && !wasDecommissioned {
		logger.Info("A decommission was started before the sidecar last stopped; ScyllaDB's start tells whether it finished: it refuses to start a decommissioned node, and otherwise the decommission is done again")
	}

	startCtx, stopWatchingSignals := contextCancelledBySignal(ctx, o.signals)
	defer stopWatchingSignals()

	var nc NodeConfig
	var podUID types.UID
	joined := NewJoinedMarker(o.ScyllaDBDataDir)
	if !wasDecommissioned {
		nc, podUID, err = o.waitForNodeConfig(startCtx, joined.Joined(ctx))
		if err != nil {
			if startCtx.Err() != nil && ctx.Err() == nil {
				// A signal asked to stop.
				return nil
			}
			return fmt.Errorf("can't configure ScyllaDB: %w", err)
		}
		logger.Info("Computed the node's configuration",
			"broadcastAddress", nc.BroadcastAddress, "broadcastRPCAddress", nc.BroadcastRPCAddress,
			"listenAddress", nc.ListenAddress, "rpcAddress", nc.RPCAddress,
			"seeds", nc.Seeds.Seeds, "firstInDatacenter", nc.First, "localSeed", nc.LocalSeed)
		if nc.SkippedWait != "" {
			logger.Info("The node joined the ring before, so it seeds from its own broadcast address instead of waiting",
				"marker", joined.Path(), "insteadOfWaitingFor", nc.SkippedWait)
		}
		if nc.ReplaceNodeHostID != "" {
			joined.Remove(ctx)
			logger.Info("The member Service asks this node to replace another; ScyllaDB is started with --replace-node-first-boot, which it honours on the node's first boot only and ignores once the node has its own host ID",
				"replacedHostID", nc.ReplaceNodeHostID, "label", naming.ReplacingNodeHostIDLabel)
		}
	}

	factory := informers.NewSharedInformerFactoryWithOptions(o.kubeClient, 12*time.Hour,
		informers.WithNamespace(o.PodNamespace),
		informers.WithTweakListOptions(func(opts *metav1.ListOptions) {
			opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", o.MemberServiceName).String()
		}),
	)
	serviceInformer := factory.Core().V1().Services()
	watchErrors := &lastWatchError{}
	if err := serviceInformer.Informer().SetWatchErrorHandlerWithContext(watchErrors.handle); err != nil {
		return fmt.Errorf("can't watch the member Service: %w", err)
	}
	restart := NewRestart()
	controller, err := NewMemberServiceController(o.kubeClient, serviceInformer, MemberServiceControllerConfig{
		Namespace:          o.PodNamespace,
		Name:               o.MemberServiceName,
		Scylla:             scylla,
		DecommissionScylla: decommissionScylla,
		DataDir:            o.ScyllaDBDataDir,
		Decommissioned:     decommissioned,
		BroadcastAddress:   nc.BroadcastAddress,
		PodUID:             podUID,
		PollInterval:       o.decommissionPollInterval,
		RetryCap:           o.decommissionRetryCap,
		AddressOptions:     o.addressOptions,
		Addresses:          nc.Addresses,
		Restart:            restart,
	})
	if err != nil {
		return err
	}
	prober := NewProber(serviceInformer.Lister(), o.PodNamespace, o.MemberServiceName, scylla, decommissioned, restart, joined)

	listener := o.probesListener
	if listener == nil {
		listener, err = net.Listen("tcp", o.ProbesAddress)
		if err != nil {
			return fmt.Errorf("can't serve probes on %q: %w", o.ProbesAddress, err)
		}
	}
	probes := &http.Server{Handler: o.probesHandler(prober), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := probes.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(err, "Probe server failed")
		}
	}()
	defer probes.Close()

	factory.Start(ctx.Done())
	defer factory.Shutdown()
	controllerDone := make(chan struct{})
	go func() {
		defer close(controllerDone)
		controller.Run(ctx)
	}()
	defer func() {
		cancel()
		<-controllerDone
	}()
	if err := o.waitForMemberServiceCache(startCtx, serviceInformer.Informer().HasSynced, watchErrors); err != nil {
		if startCtx.Err() != nil {
			// A signal or the caller asked to stop.
			return nil
		}
		return err
	}

	if wasDecommissioned {
		logger.Info("The node was decommissioned; not starting ScyllaDB", "marker", markerPath)
		<-startCtx.Done()
		return nil
	}

	if err := o.waitForBroadcastAddressRecord(startCtx, serviceInformer.Lister(), controller); err != nil {
		if startCtx.Err() != nil && ctx.Err() == nil {
			return nil
		}
		return fmt.Errorf("can't configure ScyllaDB: %w", err)
	}

	s := o.settings(nc)
	if err := o.writeScyllaDBConfig(ctx, s); err != nil {
		return err
	}
	args, ignored := ScyllaDBArgs(s, o.extraArgs)
	for _, a := range ignored {
		logger.Info("Ignoring a user argument that overrides a setting the sidecar owns", "argument", a)
	}
	// A signal that came before the watch stopped has cancelled startCtx; every later one is forwarded to ScyllaDB.
	stopWatchingSignals()
	if startCtx.Err() != nil {
		return nil
	}

	// A restart request, or ScyllaDB's refusal to start after a decommission, stops ScyllaDB like the end of ctx.
	childCtx, stopChild := context.WithCancel(ctx)
	defer stopChild()
	var refused atomic.Bool
	watcher := newOutputWatcher(DecommissionRefusal, func() {
		confirms, err := refusalConfirmsDecommission(o.ScyllaDBDataDir, serviceInformer.Lister(), o.PodNamespace, o.MemberServiceName)
		switch {
		case err != nil:
			logger.Error(err, "Can't tell whether ScyllaDB's refusal to start confirms a decommission")
		case !confirms:
			logger.Info("ScyllaDB refuses to start a decommissioned node, but no decommission started by the sidecar is pending; leaving it to a human")
		default:
			logger.Info("ScyllaDB refuses to start a decommissioned node: the decommission started before the sidecar last stopped has finished")
			refused.Store(true)
			stopChild()
		}
	})

	cmd := exec.Command(o.ScyllaDBEntrypoint, args...)
	cmd.Stdout = teeTo(o.childStdout, watcher)
	cmd.Stderr = teeTo(o.childStderr, watcher)
	cmd.Env = append(append([]string{}, o.childEnv...), scyllaDBConfigDirEnv+"="+o.ScyllaDBConfigDir)
	// ScyllaDB must not outlive a sidecar that is killed outright: in a container the kubelet would take both down,
	// but outside one (tests, the local demo) nothing else would.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	// ScyllaDB's output goes through pipes (the watcher), which its descendants inherit: without a bound, Wait would
	// wait for the last of them to exit, and a sidecar whose ScyllaDB died before the daemons it started would neither
	// exit nor restart.
	cmd.WaitDelay = childOutputWaitDelay
	go func() {
		select {
		case <-restart.Requested():
			stopChild()
		case <-childCtx.Done():
		}
	}()
	code, err := runChild(childCtx, cmd, o.signals, reaper)
	if err != nil {
		return err
	}
	if reason := restart.Reason(); reason != nil {
		// Exiting unsuccessfully makes the kubelet restart the container, and the sidecar computes the addresses anew.
		return restartError(reason)
	}
	if refused.Load() {
		if err := writeMarker(markerPath); err != nil {
			return err
		}
		decommissioned.Store(true)
		controller.Enqueue()
		logger.Info("The node was decommissioned; waiting to be stopped", "marker", markerPath)
		waitCtx, stopWaiting := contextCancelledBySignal(ctx, o.signals)
		defer stopWaiting()
		<-waitCtx.Done()
		return nil
	}
	if code != 0 {
		return &ExitError{Code: code}
	}
	return nil
}

// probesHandler serves the probes and, with --profiling, the profiles under profiling.Path.
func (o *Options) probesHandler(prober *Prober) http.Handler {
	if !o.Profiling {
		return prober.Handler()
	}
	mux := http.NewServeMux()
	mux.Handle("/", prober.Handler())
	profiling.Register(mux)
	return mux
}
