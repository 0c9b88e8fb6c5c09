//go:build e2e

package sidecar

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

const (
	// rolloutTimeout bounds a wait for a datacenter's nodes to start one after another and become Ready.
	rolloutTimeout = 3 * time.Minute
	// stepTimeout bounds a wait for one reaction of the sidecar, the operator or Kubernetes.
	stepTimeout = 90 * time.Second

	// sidecarUserAgentPrefix selects the sidecars' requests in the audit log.
	sidecarUserAgentPrefix = "scylla-operator-sidecar/"
	// scyllaVersion is the ScyllaDB version of deploy/examples/scyllacluster-basic.yaml.
	scyllaVersion = "2025.1.2"
)

// shared is what every test of the suite uses: the one operator's control plane and the node simulator.
type shared struct {
	sim *nodesim.Simulator
}

// testEnv is one test's view: its framework (namespaces, waits) and clients.
type testEnv struct {
	t      *testing.T
	f      *framework.Framework
	c      *framework.Cluster
	sim    *nodesim.Simulator
	scylla scyllaclientset.Interface
}

func (s *shared) newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	f := framework.NewFramework(t)
	c := f.Cluster()
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Fatalf("can't create the scylla.scylladb.com client: %v", err)
	}
	return &testEnv{t: t, f: f, c: c, sim: s.sim, scylla: scylla}
}

// newNamespace creates one more namespace for the test, deleted when it ends.
func (e *testEnv) newNamespace(suffix string) string {
	e.t.Helper()
	ns, err := e.c.Clients.Kube.CoreV1().Namespaces().Create(e.t.Context(), &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: e.c.Namespace + "-" + suffix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatalf("can't create a namespace: %v", err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.c.Clients.Kube.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
			e.t.Errorf("can't delete namespace %q: %v", ns.Name, err)
		}
	})
	return ns.Name
}

// newScyllaCluster returns a ScyllaCluster of one rack with members small nodes that start without waiting
// (minReadySeconds 0).
func newScyllaCluster(namespace, name, datacenter string, members int32) *scyllav1.ScyllaCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	return &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: scyllav1.ScyllaClusterSpec{
			Version:         scyllaVersion,
			AgentVersion:    "3.5.0",
			MinReadySeconds: ptr.To[int32](0),
			Datacenter: scyllav1.DatacenterSpec{
				Name: datacenter,
				Racks: []scyllav1.RackSpec{{
					Name:      "a",
					Members:   members,
					Storage:   scyllav1.Storage{Capacity: "1Gi"},
					Resources: corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
				}},
			},
		},
	}
}

func (e *testEnv) createScyllaCluster(sc *scyllav1.ScyllaCluster) {
	e.t.Helper()
	if _, err := e.scylla.ScyllaV1().ScyllaClusters(sc.Namespace).Create(e.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("can't create ScyllaCluster %q: %v", sc.Namespace+"/"+sc.Name, err)
	}
}

// setMembers changes the members of the ScyllaCluster's first rack.
func (e *testEnv) setMembers(namespace, name string, members int32) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := e.scylla.ScyllaV1().ScyllaClusters(namespace).Get(e.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		sc.Spec.Datacenter.Racks[0].Members = members
		_, err = e.scylla.ScyllaV1().ScyllaClusters(namespace).Update(e.t.Context(), sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("can't scale ScyllaCluster %q: %v", namespace+"/"+name, err)
	}
}

// scyllaNode is one node of a datacenter as the test sees it: its Pod and member Service from the API, and what its
// ScyllaDB was last started with, from the fake's record.
type scyllaNode struct {
	pod        *corev1.Pod
	service    *corev1.Service
	invocation *fakescylladb.Invocation
}

func (n scyllaNode) String() string { return n.pod.Namespace + "/" + n.pod.Name }

// podIP is the Pod's IP from its status.
func (n scyllaNode) podIP() string { return n.pod.Status.PodIP }

// hostID is what the sidecar recorded on the member Service.
func (n scyllaNode) hostID() string { return n.service.Annotations[naming.HostIDAnnotation] }

// waitForNodes waits until the ScyllaCluster's datacenter has exactly members Pods, all Ready, whose ScyllaDB
// started, and returns them by name (ordinal).
func (e *testEnv) waitForNodes(namespace, cluster string, members int) []scyllaNode {
	e.t.Helper()
	var nodes []scyllaNode
	e.f.WaitFor(rolloutTimeout, fmt.Sprintf("%d Ready nodes of ScyllaCluster %s/%s", members, namespace, cluster), func(ctx context.Context) (bool, error) {
		var err error
		nodes, err = e.currentNodes(ctx, namespace, cluster)
		if err != nil {
			return false, err
		}
		if len(nodes) != members {
			return false, fmt.Errorf("%d nodes started", len(nodes))
		}
		for _, n := range nodes {
			if !isPodReady(n.pod) {
				return false, fmt.Errorf("Pod %s isn't Ready", n)
			}
			if n.hostID() == "" {
				return false, fmt.Errorf("the sidecar of %s didn't record the host ID yet", n)
			}
		}
		return true, nil
	})
	return nodes
}

// currentNodes returns the datacenter's Pods with a started ScyllaDB, by name.
func (e *testEnv) currentNodes(ctx context.Context, namespace, cluster string) ([]scyllaNode, error) {
	kube := e.c.Clients.Kube.CoreV1()
	selector := labels.SelectorFromSet(labels.Set{naming.ClusterNameLabel: cluster}).String()
	pods, err := kube.Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	var nodes []scyllaNode
	for i := range pods.Items {
		pod := &pods.Items[i]
		svc, err := kube.Services(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("member Service of %s/%s: %w", namespace, pod.Name, err)
		}
		simulated, ok := e.sim.Node(namespace, pod.Name)
		if !ok || simulated.UID != pod.UID {
			return nil, fmt.Errorf("the simulator doesn't run Pod %s/%s (uid %s) yet", namespace, pod.Name, pod.UID)
		}
		inv, err := e.sim.LastInvocation(namespace, pod.Name)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, scyllaNode{pod: pod, service: svc, invocation: inv})
	}
	return nodes, nil
}

func isPodReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitForPodReady waits for the named Pod's Ready condition to be want, and returns the Pod.
func (e *testEnv) waitForPodReady(namespace, name string, want bool, why string) *corev1.Pod {
	e.t.Helper()
	var pod *corev1.Pod
	e.f.WaitFor(stepTimeout, fmt.Sprintf("Pod %s/%s to be Ready=%v (%s)", namespace, name, want, why), func(ctx context.Context) (bool, error) {
		var err error
		pod, err = e.c.Clients.Kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if got := isPodReady(pod); got != want {
			n, _ := e.sim.Node(namespace, name)
			return false, fmt.Errorf("Ready=%v; the simulator's last /readyz: ready=%v %q", got, n.Ready, n.ReadinessMessage)
		}
		return true, nil
	})
	return pod
}

// addresses are the four addresses of expose-options.md as ScyllaDB got them.
type addresses struct {
	Broadcast, BroadcastRPC, Listen, RPC string
}

// recordedAddresses returns the addresses ScyllaDB runs with (its command line over scylla.yaml), and checks that
// the sidecar wrote the same ones into scylla.yaml.
func recordedAddresses(t *testing.T, n scyllaNode) addresses {
	t.Helper()
	s := n.invocation.Settings
	got := addresses{Broadcast: s.BroadcastAddress, BroadcastRPC: s.BroadcastRPCAddress, Listen: s.ListenAddress, RPC: s.RPCAddress}
	config := n.invocation.Config
	inConfig := addresses{
		Broadcast: fmt.Sprint(config["broadcast_address"]), BroadcastRPC: fmt.Sprint(config["broadcast_rpc_address"]),
		Listen: fmt.Sprint(config["listen_address"]), RPC: fmt.Sprint(config["rpc_address"]),
	}
	if got != inConfig {
		t.Errorf("%s: the command line says %+v, scylla.yaml says %+v", n, got, inConfig)
	}
	return got
}

// recordedSeeds returns the seeds ScyllaDB runs with, and checks that scylla.yaml's seed_provider has the same.
func recordedSeeds(t *testing.T, n scyllaNode) []string {
	t.Helper()
	seeds := n.invocation.Settings.Seeds
	if got := configSeeds(n.invocation.Config); got != strings.Join(seeds, ",") {
		t.Errorf("%s: the command line has seeds %q, scylla.yaml's seed_provider has %q", n, seeds, got)
	}
	return seeds
}

func configSeeds(config map[string]any) string {
	providers, _ := config["seed_provider"].([]any)
	if len(providers) == 0 {
		return ""
	}
	provider, _ := providers[0].(map[string]any)
	params, _ := provider["parameters"].([]any)
	if len(params) == 0 {
		return ""
	}
	p, _ := params[0].(map[string]any)
	seeds, _ := p["seeds"].(string)
	return seeds
}

// ringSummary describes a ring's members by datacenter, broadcast address and state.
func ringSummary(r fakescylladb.Ring) string {
	var parts []string
	for _, m := range r.Members {
		parts = append(parts, fmt.Sprintf("%s:%s(%s,%s/%s)", m.Datacenter, m.BroadcastAddress, m.HostID, m.Status, m.State))
	}
	slices.Sort(parts)
	return fmt.Sprintf("%s[%s]", r.ID, strings.Join(parts, " "))
}

// waitForOneRing waits until the registry has exactly one ring of the cluster name, with exactly the given host IDs,
// all Up and Normal, and returns it.
func (e *testEnv) waitForOneRing(clusterName string, hostIDs []string) fakescylladb.Ring {
	e.t.Helper()
	want := slices.Sorted(slices.Values(hostIDs))
	var ring fakescylladb.Ring
	e.f.WaitFor(stepTimeout, fmt.Sprintf("one ring of cluster %q with nodes %v", clusterName, want), func(context.Context) (bool, error) {
		rings := e.sim.RingsOf(clusterName)
		if len(rings) != 1 {
			var all []string
			for _, r := range rings {
				all = append(all, ringSummary(r))
			}
			return false, fmt.Errorf("%d rings: %v", len(rings), all)
		}
		ring = rings[0]
		var got []string
		for _, m := range ring.Members {
			if m.Status != fakescylladb.StatusUp || m.State != fakescylladb.StateNormal {
				return false, fmt.Errorf("member %s is %s/%s", m.HostID, m.Status, m.State)
			}
			got = append(got, m.HostID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("ring %s", ringSummary(ring))
		}
		return true, nil
	})
	return ring
}

func hostIDs(nodes []scyllaNode) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.hostID())
	}
	return out
}
