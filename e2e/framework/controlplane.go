package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ControlPlaneOptions configures StartControlPlane.
type ControlPlaneOptions struct {
	// Name identifies the control plane (kubeconfig context, logs). Defaults to "kcp".
	Name string
	// Dir holds everything the control plane writes: certificates, etcd data, logs, the audit log, the kubeconfig
	// and the PID file. Required; created if missing.
	Dir string
	// BinDir holds kcp, its component symlinks and kwok (see EnsureControlPlaneBinaries). Required.
	BinDir string
	// KwokStagesPath is the kwok stage configuration, normally hack/kwok/stages.yaml. Required.
	KwokStagesPath string
	// ClusterFakesBinary is the built e2e/cmd/cluster-fakes; empty starts no LoadBalancer controller and no
	// volume provisioner.
	ClusterFakesBinary string
	// Nodes are the simulated nodes to create. Defaults to DefaultNodes().
	Nodes []NodeSpec
	// ServiceCIDR is the Service cluster IP range. Defaults to 10.96.0.0/16.
	ServiceCIDR string
	// PodCIDR is the range kwok gives pod IPs from. Defaults to 10.244.0.0/16. Control planes that stand for
	// different datacenters should use different ranges.
	PodCIDR string
	// NodeIP is the InternalIP of the first simulated node; the others get the next addresses, unless their NodeSpec
	// names one. Defaults to 10.0.0.1.
	NodeIP string
	// LoadBalancerCIDR is the range cluster-fakes takes LoadBalancer ingress addresses from. Defaults to
	// 192.0.2.0/24, a documentation range nothing routes to.
	LoadBalancerCIDR string
	// StartTimeout bounds the whole start-up. Defaults to 2 minutes.
	StartTimeout time.Duration
	// StopGracePeriod is how long each process gets after SIGTERM before SIGKILL. Defaults to 5 seconds.
	StopGracePeriod time.Duration
	// Logf receives progress messages. Defaults to discarding them.
	Logf func(format string, args ...any)
}

func (o *ControlPlaneOptions) complete() error {
	if o.Dir == "" || o.BinDir == "" || o.KwokStagesPath == "" {
		return errors.New("control plane options need Dir, BinDir and KwokStagesPath")
	}
	defaults := []struct {
		field *string
		value string
	}{
		{&o.Name, "kcp"},
		{&o.ServiceCIDR, "10.96.0.0/16"},
		{&o.PodCIDR, "10.244.0.0/16"},
		{&o.NodeIP, "10.0.0.1"},
		{&o.LoadBalancerCIDR, "192.0.2.0/24"},
	}
	for _, d := range defaults {
		if *d.field == "" {
			*d.field = d.value
		}
	}
	if o.Nodes == nil {
		o.Nodes = DefaultNodes()
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	if o.StopGracePeriod == 0 {
		o.StopGracePeriod = 5 * time.Second
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	for _, cidr := range []string{o.ServiceCIDR, o.PodCIDR, o.LoadBalancerCIDR} {
		if _, _, err := net.ParseCIDR(cidr); err != nil {
			return fmt.Errorf("can't parse CIDR %q: %w", cidr, err)
		}
	}
	if net.ParseIP(o.NodeIP) == nil {
		return fmt.Errorf("can't parse node IP %q", o.NodeIP)
	}
	return nil
}

// Ports are the loopback TCP ports a control plane listens on.
type Ports struct {
	EtcdClient, EtcdPeer, APIServer, ControllerManager, Scheduler, Kwok int
}

// ControlPlane is a running Kubernetes control plane on 127.0.0.1: etcd, kube-apiserver (with an audit log at
// Metadata level), kube-controller-manager, kube-scheduler, kwok with simulated nodes, and optionally
// cluster-fakes.
type ControlPlane struct {
	// Name is ControlPlaneOptions.Name.
	Name string
	// Dir is ControlPlaneOptions.Dir.
	Dir string
	// Ports the components listen on.
	Ports Ports
	// KubeconfigPath is an admin (system:masters) kubeconfig.
	KubeconfigPath string
	// Audit reads the API server's audit log.
	Audit *AuditLog
	// Options are the options it was started with, defaults filled in.
	Options ControlPlaneOptions

	adminConfig *rest.Config
	stopGrace   time.Duration
	pidFile     string

	mu        sync.Mutex
	processes []*Process
}

// StartControlPlane starts a control plane and waits until it serves, its simulated nodes are Ready and (if
// configured) cluster-fakes runs. On failure everything started is stopped and the error carries the log tail of
// the process at fault.
func StartControlPlane(ctx context.Context, opts ControlPlaneOptions) (cp *ControlPlane, err error) {
	if err := opts.complete(); err != nil {
		return nil, err
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()

	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("can't create control plane directory: %w", err)
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	cp = &ControlPlane{
		Name:           opts.Name,
		Dir:            opts.Dir,
		Ports:          Ports{ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]},
		KubeconfigPath: filepath.Join(opts.Dir, "admin.kubeconfig"),
		Audit:          &AuditLog{Path: filepath.Join(opts.Dir, "audit.log")},
		Options:        opts,
		stopGrace:      opts.StopGracePeriod,
		pidFile:        filepath.Join(opts.Dir, "pids"),
	}
	defer func() {
		if err != nil {
			_ = cp.Stop()
			err = fmt.Errorf("can't start control plane %q in %s: %w", opts.Name, opts.Dir, err)
		}
	}()

	_, serviceNet, _ := net.ParseCIDR(opts.ServiceCIDR)
	firstServiceIP := append(net.IP(nil), serviceNet.IP.To4()...)
	firstServiceIP[3]++
	pki, err := generatePKI(filepath.Join(opts.Dir, "pki"), firstServiceIP)
	if err != nil {
		return cp, err
	}
	if err := cp.writeKubeconfig(pki); err != nil {
		return cp, err
	}
	policyPath := filepath.Join(opts.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policyPath, []byte(auditPolicy), 0o644); err != nil {
		return cp, fmt.Errorf("can't write audit policy: %w", err)
	}
	kube, err := kubernetes.NewForConfig(cp.AdminConfig("local-control-plane"))
	if err != nil {
		return cp, fmt.Errorf("can't create admin client: %w", err)
	}

	bin := func(name string) string { return filepath.Join(opts.BinDir, name) }
	localURL := func(port int) string { return "http://127.0.0.1:" + strconv.Itoa(port) }
	etcdURL := localURL(cp.Ports.EtcdClient)

	etcd, err := cp.StartProcess(ProcessSpec{Name: "etcd", Path: bin("etcd"), Args: []string{
		"--name=" + opts.Name,
		"--data-dir=" + filepath.Join(opts.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + localURL(cp.Ports.EtcdPeer),
		"--initial-advertise-peer-urls=" + localURL(cp.Ports.EtcdPeer),
		"--initial-cluster=" + opts.Name + "=" + localURL(cp.Ports.EtcdPeer),
		"--unsafe-no-fsync",
		"--quota-backend-bytes=4294967296",
		"--log-level=warn",
	}})
	if err != nil {
		return cp, err
	}
	if err := waitForProcesses(ctx, "etcd to be healthy", []*Process{etcd}, func(ctx context.Context) (bool, error) {
		return etcdHealthy(ctx, etcdURL)
	}); err != nil {
		return cp, err
	}
	opts.Logf("%s: etcd is healthy after %v", opts.Name, time.Since(start).Round(time.Millisecond))

	apiserver, err := cp.StartProcess(ProcessSpec{Name: "kube-apiserver", Path: bin("kube-apiserver"), Args: []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(cp.Ports.APIServer),
		"--tls-cert-file=" + pki.ServingCert,
		"--tls-private-key-file=" + pki.ServingKey,
		"--client-ca-file=" + pki.CACert,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.ServiceAccountPub,
		"--service-account-signing-key-file=" + pki.ServiceAccountKey,
		"--service-cluster-ip-range=" + opts.ServiceCIDR,
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		// The loopback advertise address can't be written into the kubernetes Endpoints.
		"--endpoint-reconciler-type=none",
		"--audit-policy-file=" + policyPath,
		"--audit-log-path=" + cp.Audit.Path,
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--profiling=false",
	}})
	if err != nil {
		return cp, err
	}
	if err := waitForProcesses(ctx, "kube-apiserver to be ready", []*Process{etcd, apiserver}, func(ctx context.Context) (bool, error) {
		body, err := kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, fmt.Errorf("%w: %s", err, body)
		}
		return true, nil
	}); err != nil {
		return cp, err
	}
	opts.Logf("%s: kube-apiserver is ready at https://127.0.0.1:%d after %v", opts.Name, cp.Ports.APIServer, time.Since(start).Round(time.Millisecond))

	// kube-controller-manager and kube-scheduler talk to the API server as cluster-admin and serve their own
	// health endpoints on loopback; a single instance of each needs no leader election.
	componentArgs := func(port int) []string {
		return []string{
			"--kubeconfig=" + cp.KubeconfigPath,
			"--authentication-kubeconfig=" + cp.KubeconfigPath,
			"--authorization-kubeconfig=" + cp.KubeconfigPath,
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--leader-elect=false",
			"--profiling=false",
		}
	}
	kcm, err := cp.StartProcess(ProcessSpec{Name: "kube-controller-manager", Path: bin("kube-controller-manager"), Args: append(componentArgs(cp.Ports.ControllerManager),
		"--use-service-account-credentials=false",
		"--service-account-private-key-file="+pki.ServiceAccountKey,
		"--root-ca-file="+pki.CACert,
		"--cluster-signing-cert-file="+pki.CACert,
		"--cluster-signing-key-file="+pki.CAKey,
		"--allocate-node-cidrs=false",
	)})
	if err != nil {
		return cp, err
	}
	scheduler, err := cp.StartProcess(ProcessSpec{Name: "kube-scheduler", Path: bin("kube-scheduler"), Args: componentArgs(cp.Ports.Scheduler)})
	if err != nil {
		return cp, err
	}
	kwok, err := cp.StartProcess(ProcessSpec{Name: "kwok", Path: bin("kwok"), Args: []string{
		"--kubeconfig=" + cp.KubeconfigPath,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=" + naming.KwokNodeAnnotation + "=" + naming.KwokNodeAnnotationValue,
		"--manage-nodes-with-label-selector=",
		"--config=" + opts.KwokStagesPath,
		"--node-lease-duration-seconds=40",
		"--cidr=" + opts.PodCIDR,
		"--node-ip=" + opts.NodeIP,
		"--server-address=127.0.0.1:" + strconv.Itoa(cp.Ports.Kwok),
	}})
	if err != nil {
		return cp, err
	}
	core := []*Process{etcd, apiserver, kcm, scheduler, kwok}

	if err := createNodes(ctx, kube, opts.NodeIP, opts.Nodes); err != nil {
		return cp, err
	}
	if err := waitForProcesses(ctx, "the simulated nodes to be Ready", core, func(ctx context.Context) (bool, error) {
		return nodesReady(ctx, kube, opts.Nodes)
	}); err != nil {
		return cp, err
	}
	// The service account controller of kube-controller-manager creates "default" in every namespace; pods
	// can't be created before it exists.
	if err := waitForProcesses(ctx, "kube-controller-manager to create the default ServiceAccount", core, func(ctx context.Context) (bool, error) {
		_, err := kube.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		return cp, err
	}
	opts.Logf("%s: %d simulated nodes are Ready after %v", opts.Name, len(opts.Nodes), time.Since(start).Round(time.Millisecond))

	if opts.ClusterFakesBinary != "" {
		fakes, err := cp.StartProcess(ProcessSpec{Name: "cluster-fakes", Path: opts.ClusterFakesBinary, Args: []string{
			"--kubeconfig=" + cp.KubeconfigPath,
			"--load-balancer-cidr=" + opts.LoadBalancerCIDR,
			"--storage-classes=" + naming.FakeStorageClassName + "," + naming.ExampleStorageClassName,
		}})
		if err != nil {
			return cp, err
		}
		if err := waitForProcesses(ctx, "cluster-fakes to create its StorageClass", append(core, fakes), func(ctx context.Context) (bool, error) {
			_, err := kube.StorageV1().StorageClasses().Get(ctx, naming.FakeStorageClassName, metav1.GetOptions{})
			return err == nil, err
		}); err != nil {
			return cp, err
		}
	}
	opts.Logf("%s: control plane is up after %v (kubeconfig %s)", opts.Name, time.Since(start).Round(time.Millisecond), cp.KubeconfigPath)
	return cp, nil
}

// auditPolicy logs every request at Metadata level (who, what, verb, user agent; no bodies). RequestReceived is
// left out so that each finished request yields one event.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`

// freePorts returns n distinct TCP ports that were free on 127.0.0.1 a moment ago. They are picked below the
// kernel's ephemeral port range: a port from that range (what listening on port 0 hands out) can be taken as the
// source port of any outgoing connection between this check and the component's bind, and on a busy machine it was
// ("bind: address already in use"). Below the range only another listener can take a port, and that is what the
// check sees.
func freePorts(n int) ([]int, error) {
	low, high := freePortRange()
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempt := 0; len(ports) < n; attempt++ {
		if attempt == 1000 {
			return nil, fmt.Errorf("can't find %d free ports on 127.0.0.1 in [%d, %d)", n, low, high)
		}
		port := low + rand.IntN(high-low)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		listeners = append(listeners, l)
		ports = append(ports, port)
	}
	return ports, nil
}

// freePortRange is where freePorts picks ports: from 10000 up to the first port of the kernel's ephemeral range
// (net.ipv4.ip_local_port_range, 32768 by default).
func freePortRange() (int, int) {
	const low, defaultHigh = 10000, 32768
	high := defaultHigh
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if fields := strings.Fields(string(b)); len(fields) == 2 {
			if first, err := strconv.Atoi(fields[0]); err == nil && first > low+1000 {
				high = first
			}
		}
	}
	return low, high
}

func etcdHealthy(ctx context.Context, url string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	if err != nil {
		return false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"true"`) {
		return false, fmt.Errorf("etcd health: %d %s", resp.StatusCode, body)
	}
	return true, nil
}

// waitForProcesses polls cond until it holds, failing early with a log tail if one of procs exits and with the
// last condition error and log tails when ctx ends.
func waitForProcesses(ctx context.Context, what string, procs []*Process, cond Condition) error {
	err := Poll(ctx, func(ctx context.Context) (bool, error) {
		for _, p := range procs {
			if exited, err := p.Exited(); exited {
				return false, StopPolling(fmt.Errorf("%s exited (%v) while waiting for %s\n%s", p.Name, err, what, formatLogTail(p, 40)))
			}
		}
		return cond(ctx)
	})
	if err == nil || ctx.Err() == nil {
		return err
	}
	tails := make([]string, 0, len(procs))
	for _, p := range procs {
		tails = append(tails, formatLogTail(p, 15))
	}
	return fmt.Errorf("timed out waiting for %s: %w\n%s", what, err, strings.Join(tails, "\n"))
}

func (cp *ControlPlane) writeKubeconfig(p *pki) error {
	caData, err := os.ReadFile(p.CACert)
	if err != nil {
		return fmt.Errorf("can't read CA certificate: %w", err)
	}
	certData, err := os.ReadFile(p.AdminCert)
	if err != nil {
		return fmt.Errorf("can't read admin certificate: %w", err)
	}
	keyData, err := os.ReadFile(p.AdminKey)
	if err != nil {
		return fmt.Errorf("can't read admin key: %w", err)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters[cp.Name] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", cp.Ports.APIServer),
		CertificateAuthorityData: caData,
	}
	config.AuthInfos[cp.Name+"-admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: certData, ClientKeyData: keyData}
	config.Contexts[cp.Name] = &clientcmdapi.Context{Cluster: cp.Name, AuthInfo: cp.Name + "-admin"}
	config.CurrentContext = cp.Name
	if err := clientcmd.WriteToFile(*config, cp.KubeconfigPath); err != nil {
		return fmt.Errorf("can't write kubeconfig: %w", err)
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*config, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("can't build REST config: %w", err)
	}
	// Tests create many objects quickly; the client-side defaults (5 QPS) would throttle them.
	restConfig.QPS = 200
	restConfig.Burst = 400
	cp.adminConfig = restConfig
	return nil
}

// AdminConfig returns a fresh copy of the cluster-admin REST config with the given user agent, which is how the
// audit log tells programs apart.
func (cp *ControlPlane) AdminConfig(userAgent string) *rest.Config {
	config := rest.CopyConfig(cp.adminConfig)
	config.UserAgent = userAgent
	return config
}

// Clients returns cluster-admin clients that identify themselves with userAgent.
func (cp *ControlPlane) Clients(userAgent string) (*Clients, error) {
	return NewClients(cp.AdminConfig(userAgent))
}

// StartProcess starts a process that belongs to this control plane: it is listed in the PID file
// (hack/local-down.sh reads it) and stopped by Stop, in reverse start order.
func (cp *ControlPlane) StartProcess(spec ProcessSpec) (*Process, error) {
	if spec.LogPath == "" {
		spec.LogPath = filepath.Join(cp.Dir, spec.Name+".log")
	}
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for _, p := range cp.processes {
		if p.Name == spec.Name {
			return nil, fmt.Errorf("control plane %q already has a process named %q", cp.Name, spec.Name)
		}
	}
	p, err := StartProcess(spec)
	if err != nil {
		return nil, err
	}
	cp.processes = append(cp.processes, p)
	return p, cp.writePIDFileLocked()
}

// writePIDFileLocked writes "<pid> <name>" per process, in start order.
func (cp *ControlPlane) writePIDFileLocked() error {
	var b strings.Builder
	for _, p := range cp.processes {
		if exited, _ := p.Exited(); !exited {
			fmt.Fprintf(&b, "%d %s\n", p.PID(), p.Name)
		}
	}
	tmp := cp.pidFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("can't write PID file: %w", err)
	}
	if err := os.Rename(tmp, cp.pidFile); err != nil {
		return fmt.Errorf("can't write PID file: %w", err)
	}
	return nil
}

// StopProcess stops the named process and forgets it.
func (cp *ControlPlane) StopProcess(name string) error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	for i, p := range cp.processes {
		if p.Name != name {
			continue
		}
		err := p.Stop(cp.stopGrace)
		cp.processes = append(cp.processes[:i], cp.processes[i+1:]...)
		return errors.Join(err, cp.writePIDFileLocked())
	}
	return fmt.Errorf("control plane %q has no process named %q", cp.Name, name)
}

// Processes returns the running and exited processes of the control plane, in start order.
func (cp *ControlPlane) Processes() []*Process {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]*Process(nil), cp.processes...)
}

// Process returns the named process, or nil.
func (cp *ControlPlane) Process(name string) *Process {
	for _, p := range cp.Processes() {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// CheckProcesses returns an error, with log tails, naming every process that has exited.
func (cp *ControlPlane) CheckProcesses() error {
	var errs []error
	for _, p := range cp.Processes() {
		if exited, err := p.Exited(); exited {
			errs = append(errs, fmt.Errorf("%s exited unexpectedly (%v)\n%s", p.Name, err, formatLogTail(p, 30)))
		}
	}
	return errors.Join(errs...)
}

// Stop stops every process in reverse start order (so the API server goes before etcd) and removes the PID file.
func (cp *ControlPlane) Stop() error {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	var errs []error
	for i := len(cp.processes) - 1; i >= 0; i-- {
		if err := cp.processes[i].Stop(cp.stopGrace); err != nil {
			errs = append(errs, err)
		}
	}
	cp.processes = nil
	if err := os.Remove(cp.pidFile); err != nil && !os.IsNotExist(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
