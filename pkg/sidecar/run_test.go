package sidecar

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

var (
	fakeBinaryOnce sync.Once
	fakeBinaryPath string
	fakeBinaryErr  error
)

// fakeScyllaDBBinary builds e2e/cmd/fake-scylladb once per test binary.
func fakeScyllaDBBinary(t *testing.T) string {
	t.Helper()
	fakeBinaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fake-scylladb-")
		if err != nil {
			fakeBinaryErr = err
			return
		}
		fakeBinaryPath = filepath.Join(dir, "fake-scylladb")
		out, err := exec.Command("go", "build", "-o", fakeBinaryPath, "github.com/scyllakube/scylla-operator/e2e/cmd/fake-scylladb").CombinedOutput()
		if err != nil {
			fakeBinaryErr = fmt.Errorf("can't build fake-scylladb: %v\n%s", err, out)
		}
	})
	if fakeBinaryErr != nil {
		t.Fatal(fakeBinaryErr)
	}
	return fakeBinaryPath
}

// testEnv is a fake API server with a fake ScyllaDB ring registry.
type testEnv struct {
	t           *testing.T
	kube        *fake.Clientset
	registry    *fakescylladb.Registry
	registryURL string
	dir         string
	binary      string
}

func newTestEnv(t *testing.T) *testEnv {
	registry := fakescylladb.NewRegistry(0)
	srv := httptest.NewServer(registry.Handler())
	t.Cleanup(srv.Close)
	return &testEnv{
		t:           t,
		kube:        fake.NewClientset(),
		registry:    registry,
		registryURL: srv.URL,
		dir:         t.TempDir(),
		binary:      fakeScyllaDBBinary(t),
	}
}

type testNodeSpec struct {
	namespace, cluster, datacenter, name string
	created                              time.Time
	clusterIP, podIP                     string
}

// datacenterNodes returns count nodes of cluster "prod" in datacenter dc<index>, in namespace ns<index>, one minute
// apart from created on: node i has ClusterIP 10.96.<index>.1i and Pod IP 10.0.<index>.1i.
func datacenterNodes(index, count int, created time.Time) []testNodeSpec {
	var nodes []testNodeSpec
	for i := range count {
		dc := fmt.Sprintf("dc%d", index)
		nodes = append(nodes, testNodeSpec{
			fmt.Sprintf("ns%d", index), "prod", dc, fmt.Sprintf("prod-%s-rack1-%d", dc, i), created.Add(time.Duration(i) * time.Minute),
			fmt.Sprintf("10.96.%d.1%d", index, i), fmt.Sprintf("10.0.%d.1%d", index, i),
		})
	}
	return nodes
}

func (e *testEnv) addNode(n testNodeSpec) {
	e.t.Helper()
	ctx := context.Background()
	selector := map[string]string{naming.ClusterNameLabel: n.cluster, naming.DatacenterNameLabel: n.datacenter}
	svc := makeService(n.name, clusterIPService, n.created, []string{n.clusterIP}, nil)
	svc.Namespace = n.namespace
	svc.Labels = map[string]string{naming.ScyllaServiceTypeLabel: naming.ScyllaServiceTypeMember}
	for k, v := range selector {
		svc.Labels[k] = v
	}
	if _, err := e.kube.CoreV1().Services(n.namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	pod := makePod(n.name, false, n.podIP)
	pod.Namespace = n.namespace
	pod.Labels = selector
	// The fake API server leaves UIDs empty.
	pod.UID = types.UID("uid-" + n.namespace + "-" + n.name)
	if _, err := e.kube.CoreV1().Pods(n.namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// updateService changes a Service through the API, as the operator or a cloud controller would.
func (e *testEnv) updateService(namespace, name string, change func(*corev1.Service)) {
	e.t.Helper()
	ctx := context.Background()
	svc, err := e.kube.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	change(svc)
	if _, err := e.kube.CoreV1().Services(namespace).Update(ctx, svc, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// updatePodStatus changes a Pod's status through the API, as the kubelet would.
func (e *testEnv) updatePodStatus(namespace, name string, change func(*corev1.Pod)) {
	e.t.Helper()
	ctx := context.Background()
	pod, err := e.kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	change(pod)
	if _, err := e.kube.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// setPodReady does what the kubelet would once the readiness probe passes.
func (e *testEnv) setPodReady(namespace, name string) {
	e.t.Helper()
	e.updatePodStatus(namespace, name, func(pod *corev1.Pod) {
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

type runningSidecar struct {
	options    *Options
	probesURL  string
	recordPath string
	cancel     context.CancelFunc
	finished   chan struct{}
	runErr     error
}

func (e *testEnv) options(n testNodeSpec, externalSeeds []string) *Options {
	nodeDir := filepath.Join(e.dir, n.namespace, n.name)
	o := NewOptions()
	o.kubeClient = e.kube
	o.PodNamespace, o.PodName, o.MemberServiceName = n.namespace, n.name, n.name
	o.ClusterName, o.Datacenter, o.Rack = n.cluster, n.datacenter, "rack1"
	o.ExternalSeeds = externalSeeds
	o.ScyllaDBEntrypoint = e.binary
	o.ScyllaDBConfigDir = filepath.Join(nodeDir, "etc")
	o.ScyllaDBBaseConfigPath = ""
	o.ScyllaDBDataDir = filepath.Join(nodeDir, "data")
	o.ScyllaDBAPIAddress = fmt.Sprintf("127.0.0.1:%d", freePort(e.t))
	o.ScyllaDBExtraArgs = "--overprovisioned --seeds=6.6.6.6"
	o.StartupTimeout = time.Minute
	o.pollInterval = 20 * time.Millisecond
	o.decommissionPollInterval = 20 * time.Millisecond
	o.childStdout, o.childStderr = nil, nil
	o.childEnv = append(os.Environ(),
		fakescylladb.EnvRegistryURL+"="+e.registryURL,
		fakescylladb.EnvRecordPath+"="+filepath.Join(e.dir, n.namespace+"-"+n.name+".json"),
		fakescylladb.EnvHeartbeatInterval+"=50ms",
	)
	return o
}

func (e *testEnv) start(o *Options) *runningSidecar {
	e.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		e.t.Fatal(err)
	}
	o.probesListener = l
	if err := o.Validate(); err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningSidecar{
		options:    o,
		probesURL:  "http://" + l.Addr().String(),
		recordPath: filepath.Join(e.dir, o.PodNamespace+"-"+o.PodName+".json"),
		cancel:     cancel,
		finished:   make(chan struct{}),
	}
	go func() {
		defer close(rs.finished)
		rs.runErr = o.Run(ctx)
	}()
	e.t.Cleanup(func() { _ = rs.stop() })
	return rs
}

func (rs *runningSidecar) stop() error {
	rs.cancel()
	<-rs.finished
	return rs.runErr
}

// wantRunError waits for Run to return by itself and checks its error.
func (rs *runningSidecar) wantRunError(t *testing.T, want string) {
	t.Helper()
	<-rs.finished
	if rs.runErr == nil || rs.runErr.Error() != want {
		t.Errorf("Run() = %v, want %s", rs.runErr, want)
	}
}

// waitFor polls cond until it holds; it fails the test if the sidecar stops first.
func (rs *runningSidecar) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-rs.finished:
			t.Fatalf("sidecar %s stopped while waiting for %s: %v", rs.options.PodName, what, rs.runErr)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// probeClient gives up on a probe that gets no answer: the test owns the probes listener, which accepts connections
// even when Run failed before serving on it.
var probeClient = &http.Client{Timeout: 2 * time.Second}

func (rs *runningSidecar) probe(path string) int {
	resp, err := probeClient.Get(rs.probesURL + path)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func (rs *runningSidecar) waitReady(t *testing.T) {
	t.Helper()
	rs.waitFor(t, "readiness", func() bool { return rs.probe(ReadyzPath) == http.StatusOK })
}

// startOneByOne adds each node and runs its sidecar, configured by configure, then waits for it to be ready and
// marks its Pod Ready before the next one starts, as a StatefulSet with OrderedReady Pod management would.
func (e *testEnv) startOneByOne(t *testing.T, nodes []testNodeSpec, configure func(i int, n testNodeSpec, o *Options)) []*runningSidecar {
	t.Helper()
	var sidecars []*runningSidecar
	for i, n := range nodes {
		e.addNode(n)
		o := e.options(n, nil)
		configure(i, n, o)
		rs := e.start(o)
		rs.waitReady(t)
		e.setPodReady(n.namespace, n.name)
		sidecars = append(sidecars, rs)
	}
	return sidecars
}

func (rs *runningSidecar) seeds(t *testing.T) []string {
	t.Helper()
	records, err := fakescylladb.ReadRecords(rs.recordPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 1 {
		t.Fatalf("%s started %d times, want once", rs.options.PodName, len(records))
	}
	return records[0].Invocation.Settings.Seeds
}

// ringHostIDs returns the sorted host IDs of each ring's members.
func (e *testEnv) ringHostIDs() [][]string {
	var rings [][]string
	for _, r := range e.registry.Rings() {
		var ids []string
		for _, m := range r.Members {
			ids = append(ids, m.HostID)
		}
		slices.Sort(ids)
		rings = append(rings, ids)
	}
	return rings
}

func (e *testEnv) ringSizes() []int {
	var sizes []int
	for _, ids := range e.ringHostIDs() {
		sizes = append(sizes, len(ids))
	}
	return sizes
}

// TestRunFormsOneRingAcrossDatacenters runs the real sidecar with the fake ScyllaDB binary as its child for three
// nodes of one datacenter and two of a second one whose external seeds point at the first, as
// external-seeds.md's test plan describes, then scales the second datacenter down by one node.
func TestRunFormsOneRingAcrossDatacenters(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()

	dc1 := datacenterNodes(1, 3, baseTime)
	dc2 := datacenterNodes(2, 2, baseTime.Add(time.Hour))
	externalSeeds := []string{"10.96.1.10", "10.96.1.11"}

	sidecars := e.startOneByOne(t, append(slices.Clone(dc1), dc2...), func(i int, _ testNodeSpec, o *Options) {
		if i >= len(dc1) {
			o.ExternalSeeds = externalSeeds
		}
	})

	wantSeeds := [][]string{
		{"10.96.1.10"},
		{"10.96.1.10"},
		{"10.96.1.10"},
		{"10.96.1.10", "10.96.1.11"},
		{"10.96.1.10", "10.96.1.11", "10.96.2.10"},
	}
	var gotSeeds [][]string
	for _, rs := range sidecars {
		gotSeeds = append(gotSeeds, rs.seeds(t))
	}
	if diff := cmp.Diff(wantSeeds, gotSeeds); diff != "" {
		t.Errorf("unexpected seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{5}, e.ringSizes()); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}

	// Every sidecar records its node's host ID on its member Service.
	for i, rs := range sidecars {
		n := append(slices.Clone(dc1), dc2...)[i]
		rs.waitFor(t, "the host ID annotation", func() bool {
			svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
			return err == nil && svc.Annotations[naming.HostIDAnnotation] != ""
		})
	}

	// Scale dc2 down by one: the operator asks, the sidecar decommissions.
	last := dc2[1]
	patch := []byte(`{"metadata":{"labels":{"scylla/decommissioned":"false"}}}`)
	if _, err := e.kube.CoreV1().Services(last.namespace).Patch(ctx, last.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	sidecars[4].waitFor(t, "the decommission", func() bool {
		svc, err := e.kube.CoreV1().Services(last.namespace).Get(ctx, last.name, metav1.GetOptions{})
		return err == nil && svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue
	})
	if diff := cmp.Diff([]int{4}, e.ringSizes()); diff != "" {
		t.Errorf("unexpected rings after the decommission (-want +got):\n%s", diff)
	}
	if code := sidecars[4].probe(ReadyzPath); code != http.StatusServiceUnavailable {
		t.Errorf("a decommissioned node's readiness = %d, want 503", code)
	}

	for _, rs := range sidecars {
		if err := rs.stop(); err != nil {
			t.Errorf("sidecar %s: %v", rs.options.PodName, err)
		}
	}
}

func TestRunStartupFailures(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)

	t.Run("a Pod IP that never comes is waited for, then reported", func(t *testing.T) {
		n := testNodeSpec{"ns1", "prod", "dc1", "no-ip-0", baseTime, "10.96.1.10", ""}
		e.addNode(n)
		e.updatePodStatus(n.namespace, n.name, func(pod *corev1.Pod) { pod.Status.PodIP, pod.Status.PodIPs = "", nil })
		o := e.options(n, nil)
		o.BroadcastNodesType = string(BroadcastPodIP)
		o.StartupTimeout = 100 * time.Millisecond
		e.start(o).wantRunError(t, `can't configure ScyllaDB: gave up after 100ms: can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: Pod "ns1/no-ip-0" has no IP in its status: not available yet`)
	})

	t.Run("a LoadBalancer with only a hostname is waited for, then reported", func(t *testing.T) {
		n := testNodeSpec{"ns4", "prod", "dc1", "elb-0", baseTime, "10.96.1.10", "10.0.1.10"}
		e.addNode(n)
		e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "a1b2.elb.example.com"}}
		})
		o := e.options(n, nil)
		o.BroadcastClientsType = string(BroadcastServiceLoadBalancerIngressIP)
		o.StartupTimeout = 100 * time.Millisecond
		e.start(o).wantRunError(t, `can't configure ScyllaDB: gave up after 100ms: can't compute broadcast_rpc_address from exposeOptions.broadcastOptions.clients: type ServiceLoadBalancerIngressIP: Service "ns4/elb-0" has only hostnames (a1b2.elb.example.com) in status.loadBalancer.ingress; this type takes status.loadBalancer.ingress[].ip and never uses a hostname, so it waits for the load balancer to get an IP: not available yet`)
	})

	t.Run("a configuration that can't work fails at once", func(t *testing.T) {
		n := testNodeSpec{"ns2", "prod", "dc1", "lb-0", baseTime, "10.96.1.10", "10.0.1.10"}
		e.addNode(n)
		o := e.options(n, nil)
		o.BroadcastClientsType = string(BroadcastServiceLoadBalancerIngressIP)
		o.StartupTimeout = time.Hour
		e.start(o).wantRunError(t, `can't configure ScyllaDB: can't compute broadcast_rpc_address from exposeOptions.broadcastOptions.clients: type ServiceLoadBalancerIngressIP: Service "ns2/lb-0" is of type "ClusterIP", not LoadBalancer, so it has no load balancer ingress`)
	})

	t.Run("a replacing-node-hostid label that is no host ID fails at once, and ScyllaDB isn't started", func(t *testing.T) {
		n := testNodeSpec{"ns5", "prod", "dc1", "badreplace-0", baseTime, "10.96.1.10", "10.0.1.10"}
		e.addNode(n)
		e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
			svc.Labels[naming.ReplaceLabel] = ""
			svc.Labels[naming.ReplacingNodeHostIDLabel] = "not-a-uuid"
		})
		o := e.options(n, nil)
		o.StartupTimeout = time.Hour
		rs := e.start(o)
		rs.wantRunError(t, `can't configure ScyllaDB: member Service "ns5/badreplace-0" has label internal.scylla-operator.scylladb.com/replacing-node-hostid: "not-a-uuid" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c; ScyllaDB is not started until the label names the host ID of the node to replace or is removed`)
		if _, err := os.Stat(rs.recordPath); !os.IsNotExist(err) {
			t.Errorf("ScyllaDB was started (its record: %v)", err)
		}
	})

	t.Run("a member Service the sidecar may not list is waited for up to the startup timeout, then reported", func(t *testing.T) {
		n := testNodeSpec{"ns6", "prod", "dc1", "forbidden-0", baseTime, "10.96.1.10", "10.0.1.10"}
		e.addNode(n)
		// Only the informer's list and watch, which select the Service by name; the node's configuration is read.
		refuse := func(action k8stesting.Action) (bool, runtime.Object, error) {
			restrictions := action.(interface {
				GetListRestrictions() k8stesting.ListRestrictions
			}).GetListRestrictions()
			if action.GetNamespace() != n.namespace || restrictions.Fields.Empty() {
				return false, nil, nil
			}
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "", fmt.Errorf("RBAC: no list"))
		}
		e.kube.PrependReactor("list", "services", refuse)
		e.kube.PrependWatchReactor("services", func(action k8stesting.Action) (bool, watch.Interface, error) {
			handled, _, err := refuse(action)
			return handled, nil, err
		})
		o := e.options(n, nil)
		o.StartupTimeout = 300 * time.Millisecond
		rs := e.start(o)
		select {
		case <-rs.finished:
		case <-time.After(30 * time.Second):
			t.Fatal("Run() still waits for the member Service's informer 30s after the startup timeout")
		}
		want := `can't watch the member Service: gave up after 300ms waiting to list Service "ns6/forbidden-0": ` +
			`failed to list *v1.Service: services is forbidden: RBAC: no list`
		if rs.runErr == nil || rs.runErr.Error() != want {
			t.Errorf("Run() = %v, want %s", rs.runErr, want)
		}
		if _, err := os.Stat(rs.recordPath); !os.IsNotExist(err) {
			t.Errorf("ScyllaDB was started (its record: %v)", err)
		}
	})

	t.Run("a member Service without datacenter labels fails at once", func(t *testing.T) {
		n := testNodeSpec{"ns3", "prod", "dc1", "nolabels-0", baseTime, "10.96.1.10", "10.0.1.10"}
		e.addNode(n)
		e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
			delete(svc.Labels, naming.DatacenterNameLabel)
		})
		o := e.options(n, nil)
		o.StartupTimeout = time.Hour
		e.start(o).wantRunError(t, `can't configure ScyllaDB: member Service "ns3/nolabels-0" lacks label "scylla/datacenter", which selects the datacenter's nodes`)
	})
}

// TestRunWritesScyllaDBConfig checks what the fake ScyllaDB read: the merged scylla.yaml and the rack properties.
func TestRunWritesScyllaDBConfig(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n := datacenterNodes(1, 1, baseTime)[0]
	e.addNode(n)
	o := e.options(n, nil)
	dir := t.TempDir()
	o.ScyllaDBBaseConfigPath = filepath.Join(dir, "base.yaml")
	o.ScyllaDBCustomConfigPath = filepath.Join(dir, "custom.yaml")
	if err := os.WriteFile(o.ScyllaDBBaseConfigPath, []byte("num_tokens: 256\ncluster_name: Test Cluster\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.ScyllaDBCustomConfigPath, []byte("num_tokens: 16\nlisten_address: 1.2.3.4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.BroadcastClientsType = string(BroadcastPodIP)
	o.ListenNodesType = string(ListenPodIP)
	rs := e.start(o)
	rs.waitReady(t)
	records, err := fakescylladb.ReadRecords(rs.recordPath)
	if err != nil {
		t.Fatal(err)
	}
	inv := records[0].Invocation
	want := fakescylladb.Settings{
		ClusterName: "prod", ListenAddress: "10.0.1.10", RPCAddress: "0.0.0.0", BroadcastAddress: "10.96.1.10",
		BroadcastRPCAddress: "10.0.1.10", Seeds: []string{"10.96.1.10"}, APIAddress: "127.0.0.1", APIPort: o.apiPort,
		EndpointSnitch: "GossipingPropertyFileSnitch", Datacenter: "dc1", Rack: "rack1", Workdir: o.ScyllaDBDataDir,
		DeveloperMode: "0",
	}
	if diff := cmp.Diff(want, inv.Settings); diff != "" {
		t.Errorf("unexpected settings (-want +got):\n%s", diff)
	}
	if got := inv.Config["num_tokens"]; got != float64(16) { // JSON numbers read back as float64
		t.Errorf("num_tokens = %v, want the custom 16", got)
	}
	if got := inv.Config["listen_address"]; got != "10.0.1.10" {
		t.Errorf("scylla.yaml listen_address = %v, want the sidecar's 10.0.1.10", got)
	}
}

// TestRunPrivateVPCWithPublicLoadBalancer runs expose-options.md's "Private VPC + Public LB" setup: nodes broadcast
// their Pod IPs to each other and the load balancer's IP to clients. The local seed is the other node's Pod IP, the
// broadcast address its sidecar recorded.
func TestRunPrivateVPCWithPublicLoadBalancer(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	nodes := datacenterNodes(1, 2, baseTime)
	ingress := []string{"203.0.113.10", "203.0.113.11"}
	sidecars := e.startOneByOne(t, nodes, func(i int, n testNodeSpec, o *Options) {
		e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
			svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ingress[i]}}
		})
		o.BroadcastNodesType = string(BroadcastPodIP)
		o.BroadcastClientsType = "ServiceLoadBalancerIngress"
	})

	var got [][]string
	for _, rs := range sidecars {
		records, err := fakescylladb.ReadRecords(rs.recordPath)
		if err != nil {
			t.Fatal(err)
		}
		s := records[0].Invocation.Settings
		got = append(got, append([]string{s.BroadcastAddress, s.BroadcastRPCAddress}, s.Seeds...))
	}
	want := [][]string{
		{"10.0.1.10", "203.0.113.10", "10.0.1.10"},
		{"10.0.1.11", "203.0.113.11", "10.0.1.10"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected broadcast addresses and seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2}, e.ringSizes()); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
}

// TestRunSeedsFromTheRecordedBroadcastAddress runs nodes whose node-to-node traffic uses a second interface (Pod IP
// source Interface): ScyllaDB listens and broadcasts on eth1 only, so a later node must seed from the first node's
// eth1 address, which the first node's sidecar records on its member Service, not from its Service or Pod status IP.
func TestRunSeedsFromTheRecordedBroadcastAddress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	nodes := datacenterNodes(1, 2, baseTime)
	eth1 := []string{"192.168.1.10", "192.168.1.11"}
	sidecars := e.startOneByOne(t, nodes, func(i int, n testNodeSpec, o *Options) {
		o.BroadcastNodesType = string(BroadcastPodIP)
		o.BroadcastNodesPodIP = PodIPFlags{Source: string(PodIPSourceInterface), InterfaceName: "eth1"}
		o.ListenNodesType = string(ListenPodIP)
		o.ListenNodesPodIP = PodIPFlags{Source: string(PodIPSourceInterface), InterfaceName: "eth1"}
		o.interfaces = fakeInterfaces{"eth0": {n.podIP}, "eth1": {eth1[i]}}
	})

	var gotSeeds [][]string
	for _, rs := range sidecars {
		gotSeeds = append(gotSeeds, rs.seeds(t))
	}
	if diff := cmp.Diff([][]string{{eth1[0]}, {eth1[0]}}, gotSeeds); diff != "" {
		t.Errorf("unexpected seeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2}, e.ringSizes()); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
	for i, n := range nodes {
		svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{naming.BroadcastAddressAnnotation: eth1[i], naming.BroadcastAddressPodUIDAnnotation: "uid-" + n.namespace + "-" + n.name}
		got := map[string]string{}
		for k := range want {
			got[k] = svc.Annotations[k]
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: unexpected recorded broadcast address (-want +got):\n%s", n.name, diff)
		}
	}
}

// TestRunRestartsWhenTheMemberServiceGetsANewAddress recreates a running node's member Service, which gives it a new
// ClusterIP: the sidecar stops ScyllaDB and fails, so that the kubelet restarts the container with the new address.
func TestRunRestartsWhenTheMemberServiceGetsANewAddress(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := context.Background()
	n := datacenterNodes(1, 1, baseTime)[0]
	rs := e.startOneByOne(t, []testNodeSpec{n}, func(int, testNodeSpec, *Options) {})[0]

	svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.kube.CoreV1().Services(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	recreated := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: n.namespace, Name: n.name, Labels: svc.Labels},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, ClusterIP: "10.96.1.99", ClusterIPs: []string{"10.96.1.99"}},
	}
	if _, err := e.kube.CoreV1().Services(n.namespace).Create(ctx, recreated, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs.wantRunError(t, "the node restarts to use its member Service's new address: "+
		"broadcast_address from exposeOptions.broadcastOptions.nodes (type ServiceClusterIP) is now 10.96.1.99, but the node runs with 10.96.1.10; "+
		"broadcast_rpc_address from exposeOptions.broadcastOptions.clients (type ServiceClusterIP) is now 10.96.1.99, but the node runs with 10.96.1.10")
	// ScyllaDB was stopped, not left running: the fake marks itself Down when it stops.
	for _, r := range e.registry.Rings() {
		for _, m := range r.Members {
			if m.Status == fakescylladb.StatusUp {
				t.Errorf("node %s is still Up after the sidecar exited", m.HostID)
			}
		}
	}
}

// TestRunAfterAnInterruptedDecommission restarts a sidecar whose volume says a decommission was started: the
// container stopped after the decommission call, before or after it finished, and before the label was set.
func TestRunAfterAnInterruptedDecommission(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// finished: ScyllaDB's data says the node was decommissioned, so it refuses to start.
		finished bool
		// inProgressMarker: the sidecar wrote it before calling decommission.
		inProgressMarker bool
		wantLabel        string
		wantRunError     string
	}{
		{
			name:             "a finished decommission is confirmed by ScyllaDB's refusal to start",
			finished:         true,
			inProgressMarker: true,
			wantLabel:        naming.DecommissionedLabelTrue,
		},
		{
			name:             "an unfinished decommission is done again",
			inProgressMarker: true,
			wantLabel:        naming.DecommissionedLabelTrue,
		},
		{
			name:         "without the in-progress marker a refusal is only a failure",
			finished:     true,
			wantLabel:    naming.DecommissionedLabelFalse,
			wantRunError: "ScyllaDB exited with code 1",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			n := datacenterNodes(1, 1, baseTime)[0]
			e.addNode(n)
			e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
				svc.Labels[naming.DecommissionedLabel] = naming.DecommissionedLabelFalse
			})
			o := e.options(n, nil)
			if err := os.MkdirAll(o.ScyllaDBDataDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.finished {
				// What the fake keeps in its workdir, the data directory, once decommissioned.
				if err := os.WriteFile(filepath.Join(o.ScyllaDBDataDir, fakescylladb.DecommissionedFile), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.inProgressMarker {
				if err := os.WriteFile(filepath.Join(o.ScyllaDBDataDir, decommissioningMarkerFileName), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rs := e.start(o)
			if tc.wantRunError != "" {
				rs.wantRunError(t, tc.wantRunError)
			} else {
				rs.waitFor(t, "the decommissioned label", func() bool {
					svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
					return err == nil && svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue
				})
				if code := rs.probe(ReadyzPath); code != http.StatusServiceUnavailable {
					t.Errorf("readiness = %d, want 503", code)
				}
				if code := rs.probe(HealthzPath); code != http.StatusOK {
					t.Errorf("liveness = %d, want 200", code)
				}
				if _, err := os.Stat(filepath.Join(o.ScyllaDBDataDir, decommissionedMarkerFileName)); err != nil {
					t.Errorf("no final decommission marker: %v", err)
				}
				if err := rs.stop(); err != nil {
					t.Errorf("Run() = %v, want nil", err)
				}
			}
			svc, err := e.kube.CoreV1().Services(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := svc.Labels[naming.DecommissionedLabel]; got != tc.wantLabel {
				t.Errorf("label %s = %q, want %q", naming.DecommissionedLabel, got, tc.wantLabel)
			}
		})
	}
}

// replaceNode does what the operator does to replace a node whose sidecar has stopped: it labels the node's member
// Service with the host ID to replace, and the node's volume and Pod are gone, so that a new Pod, not Ready, starts
// on an empty data directory.
func (e *testEnv) replaceNode(n testNodeSpec, dataDir, hostID string) {
	e.t.Helper()
	ctx := context.Background()
	e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
		svc.Labels[naming.ReplaceLabel] = ""
		svc.Labels[naming.ReplacingNodeHostIDLabel] = hostID
	})
	if err := os.RemoveAll(dataDir); err != nil {
		e.t.Fatal(err)
	}
	pod, err := e.kube.CoreV1().Pods(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.kube.CoreV1().Pods(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	recreated := makePod(n.name, false, n.podIP)
	recreated.Namespace, recreated.Labels = n.namespace, pod.Labels
	recreated.UID = pod.UID + "-replacement"
	if _, err := e.kube.CoreV1().Pods(n.namespace).Create(ctx, recreated, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// hostIDAnnotation returns the host ID recorded on a node's member Service.
func (e *testEnv) hostIDAnnotation(n testNodeSpec) string {
	e.t.Helper()
	svc, err := e.kube.CoreV1().Services(n.namespace).Get(context.Background(), n.name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return svc.Annotations[naming.HostIDAnnotation]
}

// lastRecord returns what the fake ScyllaDB recorded of its last start.
func (rs *runningSidecar) lastRecord(t *testing.T) fakescylladb.Record {
	t.Helper()
	records, err := fakescylladb.ReadRecords(rs.recordPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) == 0 {
		t.Fatalf("%s never started ScyllaDB", rs.options.PodName)
	}
	return records[len(records)-1]
}

// loseAndReplaceSecondNode runs a datacenter of two nodes, stops the second one's sidecar, which stops ScyllaDB so
// that the ring sees the node Down as it would a node whose Kubernetes node died, and asks for its replacement as the
// operator does. It returns the lost node, its host ID and the first node's host ID.
func (e *testEnv) loseAndReplaceSecondNode(t *testing.T) (lost testNodeSpec, lostHostID, firstHostID string) {
	t.Helper()
	nodes := datacenterNodes(1, 2, baseTime)
	sidecars := e.startOneByOne(t, nodes, func(int, testNodeSpec, *Options) {})
	lost = nodes[1]
	sidecars[1].waitFor(t, "the host ID annotation", func() bool { return e.hostIDAnnotation(lost) != "" })
	lostHostID = e.hostIDAnnotation(lost)
	if err := sidecars[1].stop(); err != nil {
		t.Fatal(err)
	}
	e.replaceNode(lost, sidecars[1].options.ScyllaDBDataDir, lostHostID)
	return lost, lostHostID, sidecars[0].lastRecord(t).HostID
}

// checkReplaced checks that the node's last start replaced lostHostID under a new host ID of its own, passed through
// --replace-node-first-boot, that the sidecar recorded that host ID on the member Service, and that the lost node
// left the ring. It returns the new host ID.
func (e *testEnv) checkReplaced(t *testing.T, rs *runningSidecar, node testNodeSpec, lostHostID, firstHostID string) string {
	t.Helper()
	record := rs.lastRecord(t)
	if wantArg := "--replace-node-first-boot=" + lostHostID; !slices.Contains(record.Args, wantArg) {
		t.Errorf("ScyllaDB was started with %v, want %s among them", record.Args, wantArg)
	}
	if record.ReplaceHostID != lostHostID {
		t.Errorf("ScyllaDB replaced %q, want %q", record.ReplaceHostID, lostHostID)
	}
	newHostID := record.HostID
	if newHostID == "" || newHostID == lostHostID {
		t.Fatalf("the replacing node runs with host ID %q, want a new one", newHostID)
	}
	rs.waitFor(t, "the new host ID annotation", func() bool { return e.hostIDAnnotation(node) == newHostID })
	// Ready means Normal, and the lost node has left the ring for good.
	wantMembers := []string{firstHostID, newHostID}
	slices.Sort(wantMembers)
	if diff := cmp.Diff([][]string{wantMembers}, e.ringHostIDs()); diff != "" {
		t.Errorf("unexpected rings after the replacement (-want +got):\n%s", diff)
	}
	return newHostID
}

// TestRunReplacesANode replaces the second node of a datacenter as the operator does (issue 15): the new node's
// ScyllaDB is started with --replace-node-first-boot naming the lost node's host ID, becomes ready under a host ID of
// its own, and the sidecar records that host ID over the lost node's, and replaces a stale joined marker with its
// own. A sidecar restart while the label is still set passes the option again, and ScyllaDB, which has its identity
// by then, keeps its host ID.
func TestRunReplacesANode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lost, lostHostID, firstHostID := e.loseAndReplaceSecondNode(t)

	// A joined marker of the lost node on the new volume, as if the old one had come back: it is stale.
	o := e.options(lost, nil)
	if err := os.MkdirAll(o.ScyllaDBDataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(o.ScyllaDBDataDir, joinedMarkerFileName), lostHostID+"\n")
	rs := e.start(o)
	rs.waitReady(t)
	newHostID := e.checkReplaced(t, rs, lost, lostHostID, firstHostID)
	// The sidecar removed the stale marker at start and recorded the new node once it was Normal.
	if got := joinedMarkerHostID(t, NewJoinedMarker(o.ScyllaDBDataDir)); got != newHostID {
		t.Errorf("the joined marker holds %q, want the replacing node's %q", got, newHostID)
	}

	// The container restarts before the operator removed the labels.
	if err := rs.stop(); err != nil {
		t.Fatal(err)
	}
	restarted := e.start(e.options(lost, nil))
	restarted.waitReady(t)
	record := restarted.lastRecord(t)
	if wantArg := "--replace-node-first-boot=" + lostHostID; !slices.Contains(record.Args, wantArg) {
		t.Errorf("after a restart ScyllaDB was started with %v, want %s among them", record.Args, wantArg)
	}
	if record.HostID != newHostID || record.ReplaceHostID != "" {
		t.Errorf("after a restart the node runs with host ID %q replacing %q, want its own %q replacing none", record.HostID, record.ReplaceHostID, newHostID)
	}
	if got := e.hostIDAnnotation(lost); got != newHostID {
		t.Errorf("after a restart the member Service records host ID %q, want %q", got, newHostID)
	}
}

// TestRunFinishesAnInterruptedReplacement restarts the replacing node's container while ScyllaDB still bootstraps:
// the sidecar passes the option again, and ScyllaDB, whose data directory says the replacement hasn't finished,
// takes it up again under the same host ID and finishes it.
func TestRunFinishesAnInterruptedReplacement(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	lost, lostHostID, firstHostID := e.loseAndReplaceSecondNode(t)

	o := e.options(lost, nil)
	o.childEnv = append(o.childEnv, fakescylladb.EnvBootstrapDelay+"=1h")
	rs := e.start(o)
	rs.waitFor(t, "the replacing node's host ID annotation", func() bool {
		id := e.hostIDAnnotation(lost)
		return id != "" && id != lostHostID
	})
	if code := rs.probe(ReadyzPath); code != http.StatusServiceUnavailable {
		t.Errorf("readiness of a bootstrapping replacement = %d, want 503", code)
	}
	interruptedHostID := e.hostIDAnnotation(lost)
	if err := rs.stop(); err != nil {
		t.Fatal(err)
	}

	restarted := e.start(e.options(lost, nil))
	restarted.waitReady(t)
	if newHostID := e.checkReplaced(t, restarted, lost, lostHostID, firstHostID); newHostID != interruptedHostID {
		t.Errorf("the resumed replacement runs with host ID %q, want the interrupted one's %q", newHostID, interruptedHostID)
	}
}

// recreatePod replaces a node's Pod with a new one, not Ready, with the given IPs, as after the node's Kubernetes
// node was lost.
func (e *testEnv) recreatePod(n testNodeSpec, uid types.UID, ips ...string) {
	e.t.Helper()
	ctx := context.Background()
	pod, err := e.kube.CoreV1().Pods(n.namespace).Get(ctx, n.name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.kube.CoreV1().Pods(n.namespace).Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatal(err)
	}
	recreated := makePod(n.name, false, ips...)
	recreated.Namespace, recreated.Labels, recreated.UID = n.namespace, pod.Labels, uid
	if _, err := e.kube.CoreV1().Pods(n.namespace).Create(ctx, recreated, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
}

// TestRunAfterAFullOutage runs a datacenter of two nodes that broadcast their Pod IPs through headless member
// Services, stops both, and brings them back as after a full outage: new Pods, none Ready, the first node's Pending
// without an IP. The second node, whose volume records that it joined the ring, seeds from itself and rejoins its
// ring; without the record it waits for the first node's address, which never comes.
func TestRunAfterAFullOutage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		removeMarker bool
		wantRunError string
	}{
		{name: "a node that joined the ring comes back without the first node"},
		{
			name:         "a node without the joined marker waits for the first node",
			removeMarker: true,
			wantRunError: `can't configure ScyllaDB: gave up after 500ms: no node of the datacenter is Ready, so the only safe local seed is its first node "prod-dc1-rack1-0": Pod "ns1/prod-dc1-rack1-0" has no IP in its status: not available yet`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			nodes := datacenterNodes(1, 2, baseTime)
			sidecars := e.startOneByOne(t, nodes, func(_ int, n testNodeSpec, o *Options) {
				e.updateService(n.namespace, n.name, func(svc *corev1.Service) {
					svc.Spec.ClusterIP, svc.Spec.ClusterIPs = corev1.ClusterIPNone, []string{corev1.ClusterIPNone}
				})
				o.BroadcastNodesType = string(BroadcastPodIP)
				o.BroadcastClientsType = string(BroadcastPodIP)
			})
			var hostIDs []string
			for _, rs := range sidecars {
				// Ready means the ring reported the node Up and Normal, which the marker records.
				marker := NewJoinedMarker(rs.options.ScyllaDBDataDir)
				hostID := rs.lastRecord(t).HostID
				if got := joinedMarkerHostID(t, marker); got != hostID {
					t.Fatalf("%s: the joined marker holds %q, want %q", rs.options.PodName, got, hostID)
				}
				hostIDs = append(hostIDs, hostID)
				if err := rs.stop(); err != nil {
					t.Fatal(err)
				}
			}
			slices.Sort(hostIDs)

			e.recreatePod(nodes[0], "uid-pending")
			e.recreatePod(nodes[1], "uid-after-outage", nodes[1].podIP)
			o := e.options(nodes[1], nil)
			o.BroadcastNodesType = string(BroadcastPodIP)
			o.BroadcastClientsType = string(BroadcastPodIP)
			o.StartupTimeout = 500 * time.Millisecond
			if tc.removeMarker {
				if err := os.Remove(filepath.Join(o.ScyllaDBDataDir, joinedMarkerFileName)); err != nil {
					t.Fatal(err)
				}
			}
			rs := e.start(o)
			if tc.wantRunError != "" {
				rs.wantRunError(t, tc.wantRunError)
				records, err := fakescylladb.ReadRecords(rs.recordPath)
				if err != nil {
					t.Fatal(err)
				}
				if len(records) != 1 {
					t.Errorf("ScyllaDB was started %d times, want once, before the outage", len(records))
				}
				return
			}
			rs.waitReady(t)
			if diff := cmp.Diff([]string{nodes[1].podIP}, rs.lastRecord(t).Invocation.Settings.Seeds); diff != "" {
				t.Errorf("unexpected seeds after the outage (-want +got):\n%s", diff)
			}
			// It rejoined its ring under its host ID, beside the first node, which is Down: no second ring.
			if diff := cmp.Diff([][]string{hostIDs}, e.ringHostIDs()); diff != "" {
				t.Errorf("unexpected rings after the outage (-want +got):\n%s", diff)
			}
			if got := rs.lastRecord(t).HostID; got != hostIDs[0] && got != hostIDs[1] {
				t.Errorf("the node came back with host ID %q, want its own", got)
			}
		})
	}
}

func TestProbesHandlerServesProfilesOnlyWithProfiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		profiling bool
		wantCode  int
	}{
		{name: "off by default: no profiles on the Pod IP", wantCode: http.StatusNotFound},
		{name: "on: profiles served beside the probes", profiling: true, wantCode: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewOptions()
			o.Profiling = tc.profiling
			// In maintenance /healthz answers without asking ScyllaDB.
			lister := serviceLister(t, memberServiceWithLabels(map[string]string{naming.NodeMaintenanceLabel: ""}))
			h := o.probesHandler(NewProber(lister, testNamespace, selfName, nil, &atomic.Bool{}, NewRestart(), NewJoinedMarker(t.TempDir())))
			get := func(path string) int {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				return rec.Code
			}
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap"} {
				if code := get(path); code != tc.wantCode {
					t.Errorf("GET %s = %d, want %d", path, code, tc.wantCode)
				}
			}
			if code := get(HealthzPath); code != http.StatusOK {
				t.Errorf("GET %s = %d, want 200 whatever --profiling says", HealthzPath, code)
			}
		})
	}
}

func TestWaitForMemberServiceCacheSaysWhyItGaveUp(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tt := []struct {
		name    string
		ctx     context.Context
		synced  bool
		lastErr error
		want    string
	}{
		{name: "a synced cache ends the wait", ctx: context.Background(), synced: true},
		{
			name:    "the last list error is the reason",
			ctx:     context.Background(),
			lastErr: fmt.Errorf("dial tcp 10.96.0.1:443: connect: connection refused"),
			want:    `can't watch the member Service: gave up after 50ms waiting to list Service "ns/node-0": dial tcp 10.96.0.1:443: connect: connection refused`,
		},
		{
			name: "no error reported is said so",
			ctx:  context.Background(),
			want: `can't watch the member Service: gave up after 50ms waiting to list Service "ns/node-0": the API server neither answered nor reported an error`,
		},
		{name: "a cancelled wait returns the context's error", ctx: cancelled, want: context.Canceled.Error()},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := &Options{PodNamespace: "ns", MemberServiceName: "node-0", StartupTimeout: 50 * time.Millisecond}
			watchErrors := &lastWatchError{err: tc.lastErr}
			err := o.waitForMemberServiceCache(tc.ctx, func() bool { return tc.synced }, watchErrors)
			var got string
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("waitForMemberServiceCache() = %q, want %q", got, tc.want)
			}
		})
	}
}
