package nodesim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// fakeProcess is a container process the test controls.
type fakeProcess struct {
	spec    processSpec
	pid     int
	started time.Time
	done    chan struct{}
	once    sync.Once
	exit    exitInfo
	log     *eventLog
}

func (p *fakeProcess) PID() int              { return p.pid }
func (p *fakeProcess) StartedAt() time.Time  { return p.started }
func (p *fakeProcess) Done() <-chan struct{} { return p.done }
func (p *fakeProcess) Exit() exitInfo        { return p.exit }

func (p *fakeProcess) Stop(time.Duration) error {
	p.exitWith(143)
	p.log.add(fmt.Sprintf("stop %d", p.pid))
	return nil
}

func (p *fakeProcess) exitWith(code int) {
	p.once.Do(func() {
		p.exit = exitInfo{Code: code, StartedAt: p.started, FinishedAt: time.Now()}
		close(p.done)
	})
}

// eventLog records what happened to processes, in order.
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) add(e string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// fakeStarter starts fakeProcesses and keeps them.
type fakeStarter struct {
	mu    sync.Mutex
	procs []*fakeProcess
	log   eventLog
}

func (f *fakeStarter) start(spec processSpec) (runningProcess, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := &fakeProcess{spec: spec, pid: 1000 + len(f.procs), started: time.Now(), done: make(chan struct{}), log: &f.log}
	f.procs = append(f.procs, p)
	f.log.add(fmt.Sprintf("start %d", p.pid))
	return p, nil
}

func (f *fakeStarter) process(i int) *fakeProcess {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i < len(f.procs) {
		return f.procs[i]
	}
	return nil
}

// readiness is what the fake /readyz answers, per probes address.
type readiness struct {
	mu    sync.Mutex
	ready map[string]bool
}

func (r *readiness) set(address string, ready bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ready[address] = ready
}

func (r *readiness) probe(_ context.Context, address string) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ready[address] {
		return true, ""
	}
	return false, "503: not ready"
}

func scyllaPod(namespace, name string, uid types.UID, node string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace, Name: name, UID: uid,
			Labels: map[string]string{naming.PodTypeLabel: naming.PodTypeScyllaDBNode},
		},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			ServiceAccountName:            "member",
			TerminationGracePeriodSeconds: ptr.To[int64](900),
			Containers: []corev1.Container{{
				Name:    naming.ScyllaDBContainerName,
				Command: []string{"/mnt/shared/scylla-operator", "sidecar", "--pod-name=$(POD_NAME)", "--member-service-name=$(POD_NAME)", "--scylladb-data-dir=/var/lib/scylla"},
				Env:     []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "data", MountPath: "/var/lib/scylla"},
				},
				ReadinessProbe: &corev1.Probe{},
			}},
			Volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
			},
		},
		Status: corev1.PodStatus{
			Phase:  corev1.PodRunning,
			PodIP:  "10.244.0.7",
			PodIPs: []corev1.PodIP{{IP: "10.244.0.7"}},
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionFalse},
				{Type: corev1.ContainersReady, Status: corev1.ConditionFalse},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: naming.ScyllaDBContainerName}},
		},
	}
}

func kwokNode(name string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{naming.KwokNodeAnnotation: naming.KwokNodeAnnotationValue}}}
}

// waitFor polls cond until it holds; the bound only keeps a broken test from hanging.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		ok, why := cond()
		last = why
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; last: %s", what, err, last)
	}
}

func podReady(t *testing.T, client *fake.Clientset, namespace, name string) (corev1.ConditionStatus, *corev1.Pod) {
	t.Helper()
	pod, err := client.CoreV1().Pods(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return "", nil
	}
	if c := podCondition(pod, corev1.PodReady); c != nil {
		return c.Status, pod
	}
	return "", pod
}

func TestSimulatorRunsRestartsAndReplacesTheContainerOfScyllaDBPods(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	binary, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset(
		kwokNode("kwok-0"),
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "real-0"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "dc-a-0"}, Spec: corev1.ServiceSpec{ClusterIP: "10.96.0.9", ClusterIPs: []string{"10.96.0.9"}}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "data-dc-a-0", UID: "claim-1"}},
		scyllaPod("ns", "dc-a-0", "pod-1", "kwok-0"),
		// Ignored: not on a kwok node, and in another namespace.
		scyllaPod("ns", "dc-a-1", "pod-x", "real-0"),
		scyllaPod("other", "dc-a-0", "pod-y", "kwok-0"),
	)
	// Like the API server, refuse a patch that would change a Pod's UID: the simulator's status patches carry the
	// UID of the Pod they were computed for.
	client.PrependReactor("patch", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		patch := action.(k8stesting.PatchAction)
		var body struct {
			Metadata struct {
				UID types.UID `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
			return true, nil, err
		}
		current, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), patch.GetNamespace(), patch.GetName())
		if err != nil {
			return true, nil, err
		}
		if uid := current.(*corev1.Pod).UID; body.Metadata.UID != "" && body.Metadata.UID != uid {
			return true, nil, apierrors.NewConflict(corev1.Resource("pods"), patch.GetName(), fmt.Errorf("UID %s in the patch, %s in the object", body.Metadata.UID, uid))
		}
		return false, nil, nil
	})
	starter := &fakeStarter{}
	ready := &readiness{ready: map[string]bool{}}
	opts := Options{
		Config: &rest.Config{Host: "https://127.0.0.1:1"}, SidecarBinary: binary, FakeScyllaDBBinary: binary, Dir: dir,
		Namespaces: []string{"ns"}, Identity: IdentityAdmin, AdminKubeconfig: "/admin.kubeconfig",
		ProbeInterval: 5 * time.Millisecond, RestartBackoff: 10 * time.Millisecond, MaxRestartBackoff: 20 * time.Millisecond,
		FakeEnv: func(pod *corev1.Pod) []string { return []string{"FAKE_SCYLLADB_BOOTSTRAP_DELAY=1s"} },
	}
	if err := opts.complete(); err != nil {
		t.Fatal(err)
	}
	sim, err := start(ctx, opts, client, starter.start, ready.probe)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	}()

	waitFor(t, "the first container", func() (bool, string) { return starter.process(0) != nil, "not started" })
	first := starter.process(0)
	claimDir := filepath.Join(dir, "claims", "claim-1")
	wantArgs := []string{"sidecar", "--pod-name=dc-a-0", "--member-service-name=dc-a-0", "--scylladb-data-dir=/var/lib/scylla",
		"--kubeconfig=/admin.kubeconfig"}
	if diff := cmp.Diff(wantArgs, first.spec.Args[:len(wantArgs)]); diff != "" {
		t.Errorf("the sidecar's arguments differ (-want +got):\n%s", diff)
	}
	if !slices.Contains(first.spec.Args, "--scylladb-data-dir="+claimDir) {
		t.Errorf("want the data dir on the claim's directory %s, got %q", claimDir, first.spec.Args)
	}
	for _, want := range []string{
		"POD_NAME=dc-a-0", "FAKE_SCYLLADB_ALIAS_ADDRESSES=10.244.0.7,10.96.0.9", "FAKE_SCYLLADB_BOOTSTRAP_DELAY=1s", "HOSTNAME=dc-a-0",
		"FAKE_SCYLLADB_REGISTRY_URL=" + sim.RegistryURL(), "FAKE_SCYLLADB_RESOLVER_URL=" + sim.RegistryURL() + "/fake/dns/ns",
	} {
		if !slices.Contains(first.spec.Env, want) {
			t.Errorf("want %q in the environment, got %q", want, first.spec.Env)
		}
	}
	node, ok := sim.Node("ns", "dc-a-0")
	if !ok || node.PID != first.pid || node.DataDir != claimDir {
		t.Errorf("want node dc-a-0 running pid %d on %s, got %+v", first.pid, claimDir, node)
	}
	if got := len(sim.Nodes()); got != 1 {
		t.Errorf("want only the kwok Pod of namespace ns simulated, got %d nodes", got)
	}

	ready.set(node.ProbesAddress, true)
	waitFor(t, "the Pod to become Ready", func() (bool, string) {
		s, _ := podReady(t, client, "ns", "dc-a-0")
		return s == corev1.ConditionTrue, string(s)
	})
	ready.set(node.ProbesAddress, false)
	waitFor(t, "the Pod to become unready", func() (bool, string) {
		s, _ := podReady(t, client, "ns", "dc-a-0")
		return s == corev1.ConditionFalse, string(s)
	})

	first.exitWith(3)
	waitFor(t, "the container to be restarted", func() (bool, string) { return starter.process(1) != nil, "not restarted" })
	waitFor(t, "the restart in the status", func() (bool, string) {
		_, pod := podReady(t, client, "ns", "dc-a-0")
		if pod == nil {
			return false, "no Pod"
		}
		s := pod.Status.ContainerStatuses[0]
		last := s.LastTerminationState.Terminated
		return s.RestartCount == 1 && last != nil && last.ExitCode == 3 && s.State.Running != nil, fmt.Sprintf("%+v", s)
	})
	if n, _ := sim.Node("ns", "dc-a-0"); n.Restarts != 1 || n.PID != starter.process(1).pid {
		t.Errorf("want one restart and the second process, got %+v", n)
	}

	// The StatefulSet controller replaces the Pod: same name, new UID, same claim.
	if err := client.CoreV1().Pods("ns").Delete(ctx, "dc-a-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Pods("ns").Create(ctx, scyllaPod("ns", "dc-a-0", "pod-2", "kwok-0"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the replacement's container", func() (bool, string) { return starter.process(2) != nil, "not started" })
	if diff := cmp.Diff([]string{"start 1000", "start 1001", "stop 1001", "start 1002"}, starter.log.get()); diff != "" {
		t.Errorf("process events differ (-want +got):\n%s", diff)
	}
	replacement, _ := sim.Node("ns", "dc-a-0")
	if replacement.UID != "pod-2" || replacement.Restarts != 0 || replacement.DataDir != claimDir || replacement.Dir == node.Dir {
		t.Errorf("want a fresh node of Pod pod-2 on the same claim, got %+v (first %+v)", replacement, node)
	}

	// A Pod that failed (evicted, say) runs no container.
	failed, err := client.CoreV1().Pods("ns").Get(ctx, "dc-a-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failed.Status.Phase = corev1.PodFailed
	if _, err := client.CoreV1().Pods("ns").UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the failed Pod's container to stop", func() (bool, string) {
		_, ok := sim.Node("ns", "dc-a-0")
		return !ok, fmt.Sprint(starter.log.get())
	})

	if err := sim.Stop(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"start 1000", "start 1001", "stop 1001", "start 1002", "stop 1002"}, starter.log.get()); diff != "" {
		t.Errorf("process events after Stop differ (-want +got):\n%s", diff)
	}
	if len(sim.Nodes()) != 0 {
		t.Errorf("want no nodes after Stop, got %+v", sim.Nodes())
	}
}

func TestOptionsAreCheckedAndDefaulted(t *testing.T) {
	t.Parallel()
	binary, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	valid := func() Options {
		return Options{Config: &rest.Config{}, SidecarBinary: binary, FakeScyllaDBBinary: binary, Dir: "/tmp/x"}
	}
	tests := []struct {
		name    string
		modify  func(*Options)
		wantErr string
		check   func(t *testing.T, o Options)
	}{
		{
			name: "defaults",
			check: func(t *testing.T, o Options) {
				got := []any{o.Identity, o.ProbeInterval, o.StopGracePeriod, o.RestartBackoff, o.MaxRestartBackoff, o.RegistryTTL}
				want := []any{IdentityServiceAccount, 500 * time.Millisecond, 10 * time.Second, time.Second, 16 * time.Second, 5 * time.Second}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("defaults differ (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "nothing set",
			modify:  func(o *Options) { *o = Options{} },
			wantErr: "options need a REST Config\noptions need SidecarBinary\noptions need FakeScyllaDBBinary\noptions need a Dir",
		},
		{
			name:    "missing binary",
			modify:  func(o *Options) { o.FakeScyllaDBBinary = "/nonexistent/fake" },
			wantErr: "FakeScyllaDBBinary: stat /nonexistent/fake: no such file or directory",
		},
		{
			name:    "admin identity without a kubeconfig",
			modify:  func(o *Options) { o.Identity = IdentityAdmin },
			wantErr: "identity Admin needs AdminKubeconfig",
		},
		{
			name:    "unknown identity",
			modify:  func(o *Options) { o.Identity = "Root" },
			wantErr: `unknown identity "Root": want "ServiceAccount" or "Admin"`,
		},
		{
			name:    "negative and inverted durations",
			modify:  func(o *Options) { o.ProbeInterval = -time.Second; o.RestartBackoff = time.Minute },
			wantErr: "ProbeInterval must be positive, got -1s\nMaxRestartBackoff 16s is shorter than RestartBackoff 1m0s",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := valid()
			if tc.modify != nil {
				tc.modify(&o)
			}
			err := o.complete()
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("want error %q, got none", tc.wantErr)
				}
				if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
					t.Errorf("errors differ (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// startTestSimulator starts a simulator of client's objects that runs no processes.
func startTestSimulator(t *testing.T, client *fake.Clientset, registry *fakescylladb.Registry) *Simulator {
	t.Helper()
	binary, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Config: &rest.Config{Host: "https://127.0.0.1:1"}, SidecarBinary: binary, FakeScyllaDBBinary: binary, Dir: t.TempDir(), Registry: registry}
	if err := opts.complete(); err != nil {
		t.Fatal(err)
	}
	sim, err := start(t.Context(), opts, client, (&fakeStarter{}).start, (&readiness{ready: map[string]bool{}}).probe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sim.Stop(); err != nil {
			t.Error(err)
		}
	})
	return sim
}

func ringMemberIDs(rings []fakescylladb.Ring) [][]string {
	out := [][]string{}
	for _, r := range rings {
		var ids []string
		for _, m := range r.Members {
			ids = append(ids, m.HostID)
		}
		out = append(out, ids)
	}
	return out
}

func TestSimulatorsSharingARegistryFormOneRing(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	shared := fakescylladb.NewRegistry(0)
	dc1 := startTestSimulator(t, fake.NewClientset(), shared)
	dc2 := startTestSimulator(t, fake.NewClientset(), shared)
	alone := startTestSimulator(t, fake.NewClientset(), nil)
	if dc1.RegistryURL() == dc2.RegistryURL() {
		t.Fatalf("want each simulator to serve the registry on its own listener, both serve %s", dc1.RegistryURL())
	}

	join := func(sim *Simulator, hostID, addr string, seeds ...string) {
		t.Helper()
		c, err := fakescylladb.NewRegistryClient(sim.RegistryURL())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Join(ctx, fakescylladb.JoinRequest{NodeInfo: fakescylladb.NodeInfo{
			HostID: hostID, ClusterName: "c", BroadcastAddress: addr, Seeds: seeds,
		}}); err != nil {
			t.Fatalf("joining %s through %s: %v", hostID, sim.RegistryURL(), err)
		}
	}
	join(dc1, "a", "10.1.0.1", "10.1.0.1")
	join(dc2, "b", "10.2.0.1", "10.1.0.1")
	join(alone, "x", "10.3.0.1", "10.3.0.1")

	want := [][]string{{"a", "b"}}
	for _, sim := range []*Simulator{dc1, dc2} {
		if diff := cmp.Diff(want, ringMemberIDs(sim.RingsOf("c"))); diff != "" {
			t.Errorf("rings of %s differ (-want +got):\n%s", sim.RegistryURL(), diff)
		}
	}
	if diff := cmp.Diff(want, ringMemberIDs(shared.Rings())); diff != "" {
		t.Errorf("the shared registry's rings differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]string{{"x"}}, ringMemberIDs(alone.Rings())); diff != "" {
		t.Errorf("a simulator without a shared registry has rings of its own (-want +got):\n%s", diff)
	}
}

func TestSimulatorServesClusterDNSOfItsClientPerPodNamespace(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client := fake.NewClientset(
		headless("db", "seed"),
		service("db", "member", corev1.ServiceSpec{ClusterIP: "10.96.0.5"}),
	)
	sim := startTestSimulator(t, client, nil)
	resolve := func(namespace, name string) ([]string, error) {
		c, err := fakescylladb.NewResolverClient(sim.ResolverURL(namespace))
		if err != nil {
			t.Fatal(err)
		}
		return c.Resolve(ctx, name)
	}

	if got, err := resolve("db", "member"); err != nil || !slices.Equal(got, []string{"10.96.0.5"}) {
		t.Errorf("member in namespace db resolves to %v, %v; want 10.96.0.5", got, err)
	}
	if got, err := resolve("app", "member"); !errors.Is(err, fakescylladb.ErrNotFound) {
		t.Errorf("member in namespace app resolves to %v, %v; want not found", got, err)
	}
	if got, err := resolve("app", "seed.db.svc"); !errors.Is(err, fakescylladb.ErrNotFound) {
		t.Errorf("the seed Service without EndpointSlices resolves to %v, %v; want not found", got, err)
	}

	// Names are resolved at request time: an EndpointSlice written later is seen at once.
	if _, err := client.DiscoveryV1().EndpointSlices("db").Create(ctx, endpointSlice("db", "seed-a", "seed", discoveryv1.AddressTypeIPv4, endpoint{"10.1.0.1", nil}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := resolve("app", "seed.db.svc"); err != nil || !slices.Equal(got, []string{"10.1.0.1"}) {
		t.Errorf("the seed Service resolves to %v, %v; want its new endpoint 10.1.0.1", got, err)
	}
	if got, err := sim.Resolve(ctx, "app", "seed.db.svc"); err != nil || !slices.Equal(got, []string{"10.1.0.1"}) {
		t.Errorf("Resolve() = %v, %v; want 10.1.0.1", got, err)
	}

	// The registry is still served beside the resolver.
	c, err := fakescylladb.NewRegistryClient(sim.RegistryURL())
	if err != nil {
		t.Fatal(err)
	}
	if rings, err := c.Rings(ctx); err != nil || len(rings) != 0 {
		t.Errorf("Rings() = %v, %v; want no rings", rings, err)
	}
}

func TestAFakeScyllaDBJoinsTheRingOfAnotherSimulatorThroughASeedServiceName(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	shared := fakescylladb.NewRegistry(0)
	dc1 := startTestSimulator(t, fake.NewClientset(), shared)
	// The operator gives dc2's nodes a seed Service in their own cluster listing dc1's nodes.
	dc2 := startTestSimulator(t, fake.NewClientset(
		headless("ns-abcde", "mycluster-dc1-seed"),
		endpointSlice("ns-abcde", "mycluster-dc1-seed-a", "mycluster-dc1-seed", discoveryv1.AddressTypeIPv4, endpoint{"10.1.0.1", nil}),
	), shared)
	if _, err := shared.Join(fakescylladb.JoinRequest{NodeInfo: fakescylladb.NodeInfo{
		HostID: "dc1-0", ClusterName: "mycluster", BroadcastAddress: "10.1.0.1", Seeds: []string{"10.1.0.1"},
	}}); err != nil {
		t.Fatal(err)
	}

	confDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(confDir, "scylla.yaml"), []byte("cluster_name: mycluster\napi_address: 127.0.0.1\napi_port: 0\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	recordPath := filepath.Join(t.TempDir(), "records.json")
	env := map[string]string{
		fakescylladb.ConfigDirEnv:   confDir,
		fakescylladb.EnvRecordPath:  recordPath,
		fakescylladb.EnvRegistryURL: dc2.RegistryURL(),
		fakescylladb.EnvResolverURL: dc2.ResolverURL("ns-abcde"),
	}
	seeds := "mycluster-dc1-seed.ns-abcde.svc"
	code := make(chan int, 1)
	go func() {
		code <- fakescylladb.Main(ctx, []string{"--seeds=" + seeds, "--broadcast-address=10.2.0.1"}, func(k string) string { return env[k] }, io.Discard)
	}()
	waitFor(t, "dc2's node to join dc1's ring", func() (bool, string) {
		select {
		case c := <-code:
			t.Fatalf("the fake ScyllaDB exited with %d", c)
		default:
		}
		rings := dc1.RingsOf("mycluster")
		return len(rings) == 1 && len(rings[0].Members) == 2, fmt.Sprint(ringMemberIDs(rings))
	})
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("the fake ScyllaDB exited with %d, want 0", c)
	}
	records, err := fakescylladb.ReadRecords(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{records[0].Invocation.Settings.Seeds, records[0].ResolvedSeeds}
	if diff := cmp.Diff([]any{[]string{seeds}, []string{"10.1.0.1"}}, got); diff != "" {
		t.Errorf("recorded seeds and resolved seeds differ (-want +got):\n%s", diff)
	}
}
