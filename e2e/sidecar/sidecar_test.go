//go:build e2e

package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// operatorImage is what the operator is told its image is; pods are simulated and the image is never pulled.
const operatorImage = "localhost/scylla-operator:e2e"

// TestSidecar starts the operator and the node simulator once, then runs every scenario in parallel.
func TestSidecar(t *testing.T) {
	f := framework.NewFramework(t)
	c := f.Cluster()
	if err := nodesim.InstallMemberClusterRole(t.Context(), c.Clients, f.Suite().RepoRoot, f.UserAgent); err != nil {
		t.Fatal(err)
	}
	f.StartProgram(c, framework.Program{
		Name:    "scylla-operator",
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + f.ProgramKubeconfig(c, framework.OperatorSubcommand, "scylla-operator").KubeconfigPath,
			"--image=" + operatorImage,
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
		},
	})
	s := &shared{sim: nodesim.StartForTest(t, f, c, nodesim.Options{})}

	t.Run("scenarios", func(t *testing.T) {
		t.Run("SecondDatacenterJoinsThroughExternalSeeds", s.testExternalSeeds)
		for _, tc := range exposeCases {
			t.Run("Expose/"+tc.name, func(t *testing.T) { s.testExpose(t, tc) })
		}
		t.Run("ScaleDownIsDecommissionedBySidecar", s.testScaleDown)
		t.Run("ReadinessFollowsScyllaDBAndMaintenanceAndRestarts", s.testReadiness)
	})
}

// testExternalSeeds follows external-seeds.md's procedure: a second ScyllaCluster with the same name in another
// namespace, with a distinct datacenter name and externalSeeds set to the first datacenter's member Service
// addresses, as a user would set them.
func (s *shared) testExternalSeeds(t *testing.T) {
	t.Parallel()
	e := s.newTestEnv(t)
	const cluster = "multidc"
	ns1, ns2 := e.c.Namespace, e.newNamespace("dc2")

	e.createScyllaCluster(newScyllaCluster(ns1, cluster, "dc1", 2))
	dc1 := e.waitForNodes(ns1, cluster, 2)
	// Without external seeds, the first node seeds from itself and the second from the first.
	for i, want := range [][]string{{dc1[0].service.Spec.ClusterIP}, {dc1[0].service.Spec.ClusterIP}} {
		if diff := cmp.Diff(want, recordedSeeds(t, dc1[i])); diff != "" {
			t.Errorf("%s: seeds differ (-want +got):\n%s", dc1[i], diff)
		}
	}
	dc1Ring := e.waitForOneRing(cluster, hostIDs(dc1))

	var externalSeeds []string
	for _, n := range dc1 {
		externalSeeds = append(externalSeeds, n.service.Spec.ClusterIP)
	}
	second := newScyllaCluster(ns2, cluster, "dc2", 3)
	second.Spec.ExternalSeeds = externalSeeds
	e.createScyllaCluster(second)
	dc2 := e.waitForNodes(ns2, cluster, 3)

	// The first node of dc2 seeds from the external seeds only; each later one from them plus the first local node.
	localSeed := dc2[0].service.Spec.ClusterIP
	wantSeeds := [][]string{
		externalSeeds,
		append(slices.Clone(externalSeeds), localSeed),
		append(slices.Clone(externalSeeds), localSeed),
	}
	for i, n := range dc2 {
		if diff := cmp.Diff(wantSeeds[i], recordedSeeds(t, n)); diff != "" {
			t.Errorf("%s: seeds differ (-want +got):\n%s", n, diff)
		}
		if n.invocation.Settings.ClusterName != cluster || n.invocation.Settings.Datacenter != "dc2" {
			t.Errorf("%s: want cluster %q datacenter dc2, got %+v", n, cluster, n.invocation.Settings)
		}
	}

	// Every node of both datacenters is in one ring: the one dc1 founded.
	ring := e.waitForOneRing(cluster, append(hostIDs(dc1), hostIDs(dc2)...))
	if ring.ID != dc1Ring.ID {
		t.Errorf("want dc2 to join dc1's ring %s, got ring %s", dc1Ring.ID, ringSummary(ring))
	}
	perDC := map[string]int{}
	for _, m := range ring.Members {
		perDC[m.Datacenter]++
	}
	if diff := cmp.Diff(map[string]int{"dc1": 2, "dc2": 3}, perDC); diff != "" {
		t.Errorf("ring members per datacenter differ (-want +got):\n%s", diff)
	}
}

// exposeCase is one network configuration of expose-options.md.
type exposeCase struct {
	name   string
	expose *scyllav1.ExposeOptions
	// want computes the expected addresses of a node from its Pod and member Service.
	want func(n scyllaNode) addresses
}

var exposeCases = []exposeCase{
	{
		name: "PrivateKubernetes-ClusterIP-ServiceClusterIP",
		expose: &scyllav1.ExposeOptions{
			NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.ClusterIPServiceType},
			BroadcastOptions: &scyllav1.NodeBroadcastOptions{
				Nodes:   &scyllav1.BroadcastOptions{Type: scyllav1.ServiceClusterIPBroadcastAddressType},
				Clients: &scyllav1.BroadcastOptions{Type: scyllav1.ServiceClusterIPBroadcastAddressType},
			},
		},
		want: func(n scyllaNode) addresses {
			ip := n.service.Spec.ClusterIP
			return addresses{Broadcast: ip, BroadcastRPC: ip, Listen: "0.0.0.0", RPC: "0.0.0.0"}
		},
	},
	{
		name: "PrivateVPC-Headless-PodIP",
		expose: &scyllav1.ExposeOptions{
			NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.HeadlessServiceType},
			BroadcastOptions: &scyllav1.NodeBroadcastOptions{
				Nodes:   &scyllav1.BroadcastOptions{Type: scyllav1.PodIPBroadcastAddressType, PodIP: &scyllav1.PodIPAddressOptions{Source: scyllav1.StatusPodIPSource}},
				Clients: &scyllav1.BroadcastOptions{Type: scyllav1.PodIPBroadcastAddressType},
			},
			ListenOptions: &scyllav1.NodeListenOptions{
				Nodes:   scyllav1.ListenOptions{Type: scyllav1.PodIPListenAddressType},
				Clients: scyllav1.ListenOptions{Type: scyllav1.AnyListenAddressType},
			},
		},
		want: func(n scyllaNode) addresses {
			return addresses{Broadcast: n.podIP(), BroadcastRPC: n.podIP(), Listen: n.podIP(), RPC: "0.0.0.0"}
		},
	},
	{
		name: "PrivateVPCPublicLB-LoadBalancer-PodIPForNodes-IngressIPForClients",
		expose: &scyllav1.ExposeOptions{
			NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.LoadBalancerServiceType},
			BroadcastOptions: &scyllav1.NodeBroadcastOptions{
				Nodes:   &scyllav1.BroadcastOptions{Type: scyllav1.PodIPBroadcastAddressType},
				Clients: &scyllav1.BroadcastOptions{Type: scyllav1.ServiceLoadBalancerIngressIPBroadcastAddressType},
			},
			ListenOptions: &scyllav1.NodeListenOptions{
				Nodes:   scyllav1.ListenOptions{Type: scyllav1.AnyListenAddressType},
				Clients: scyllav1.ListenOptions{Type: scyllav1.PodIPListenAddressType},
			},
		},
		want: func(n scyllaNode) addresses {
			var ingress string
			if in := n.service.Status.LoadBalancer.Ingress; len(in) > 0 {
				ingress = in[0].IP
			}
			return addresses{Broadcast: n.podIP(), BroadcastRPC: ingress, Listen: "0.0.0.0", RPC: n.podIP()}
		},
	},
}

// testExpose checks the addresses each node of a two-node datacenter started with against the Pod IP, Service
// ClusterIP and load balancer ingress IP the API reports, and that both nodes are in one ring.
func (s *shared) testExpose(t *testing.T, tc exposeCase) {
	t.Parallel()
	e := s.newTestEnv(t)
	cluster := "expose-" + fmt.Sprint(slices.IndexFunc(exposeCases, func(c exposeCase) bool { return c.name == tc.name }))
	sc := newScyllaCluster(e.c.Namespace, cluster, "dc", 2)
	sc.Spec.ExposeOptions = tc.expose
	e.createScyllaCluster(sc)
	nodes := e.waitForNodes(e.c.Namespace, cluster, 2)

	for _, n := range nodes {
		want := tc.want(n)
		for field, v := range map[string]string{"broadcast_address": want.Broadcast, "broadcast_rpc_address": want.BroadcastRPC, "listen_address": want.Listen, "rpc_address": want.RPC} {
			if v == "" {
				t.Errorf("%s: the API gives no address for %s (Service %+v, Pod IP %q)", n, field, n.service.Status, n.podIP())
			}
		}
		if diff := cmp.Diff(want, recordedAddresses(t, n)); diff != "" {
			t.Errorf("%s: addresses differ (-want +got):\n%s", n, diff)
		}
	}
	// The first node seeds from itself; the second from the first node's broadcast address, which the first node's
	// sidecar recorded on its member Service before starting ScyllaDB (pkg/sidecar/doc.go, "Seeds").
	wantSeeds := [][]string{{tc.want(nodes[0]).Broadcast}, {tc.want(nodes[0]).Broadcast}}
	for i, n := range nodes {
		if diff := cmp.Diff(wantSeeds[i], recordedSeeds(t, n)); diff != "" {
			t.Errorf("%s: seeds differ (-want +got):\n%s", n, diff)
		}
	}
	if tc.expose.NodeService.Type == scyllav1.HeadlessServiceType && nodes[0].service.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("want a headless member Service, got ClusterIP %q", nodes[0].service.Spec.ClusterIP)
	}
	e.waitForOneRing(cluster, hostIDs(nodes))
}

// testScaleDown scales a two-node datacenter to one: the operator asks for the decommission with the member
// Service's label, the real sidecar decommissions the node through ScyllaDB's API and sets the label to "true",
// and the node leaves the ring. Scaled up again, the ordinal is a fresh node.
func (s *shared) testScaleDown(t *testing.T) {
	t.Parallel()
	e := s.newTestEnv(t)
	const cluster = "scaledown"
	ns := e.c.Namespace
	e.createScyllaCluster(newScyllaCluster(ns, cluster, "dc", 2))
	nodes := e.waitForNodes(ns, cluster, 2)
	e.waitForOneRing(cluster, hostIDs(nodes))
	last := nodes[1]
	simulated, ok := e.sim.Node(ns, last.pod.Name)
	if !ok {
		t.Fatalf("the simulator lost %s", last)
	}

	watcher, err := e.c.Clients.Kube.CoreV1().Services(ns).Watch(t.Context(), metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", last.service.Name).String(),
		ResourceVersion: last.service.ResourceVersion,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	mark, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	e.setMembers(ns, cluster, 1)

	// The label's values in order, as every change of the Service shows them.
	var values []string
	e.f.WaitFor(rolloutTimeout, "the member Service of "+last.String()+" to go through decommission and away", func(ctx context.Context) (bool, error) {
		for {
			select {
			case ev, ok := <-watcher.ResultChan():
				if !ok {
					return false, framework.StopPolling(errors.New("the watch of the member Service ended"))
				}
				switch ev.Type {
				case watch.Deleted:
					return true, nil
				case watch.Added, watch.Modified:
					svc := ev.Object.(*corev1.Service)
					v, has := svc.Labels[naming.DecommissionedLabel]
					if has && (len(values) == 0 || values[len(values)-1] != v) {
						values = append(values, v)
					}
				}
			default:
				return false, fmt.Errorf("label values so far: %q", values)
			}
		}
	})
	if diff := cmp.Diff([]string{naming.DecommissionedLabelFalse, naming.DecommissionedLabelTrue}, values); diff != "" {
		t.Errorf("values of %s differ (-want +got):\n%s", naming.DecommissionedLabel, diff)
	}

	// The "true" came from the sidecar, with its Pod's ServiceAccount.
	events, err := e.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	sidecarPatches := framework.CountRequests(events, framework.UserAgentPrefix(sidecarUserAgentPrefix), framework.Writes(),
		framework.InNamespace(ns), framework.OnResource("services", ""), framework.Succeeded())
	if sidecarPatches.Total() == 0 {
		t.Errorf("want the sidecar to write the member Service, the audit log has: %s", framework.CountRequests(events, framework.InNamespace(ns), framework.Writes()))
	}

	// ScyllaDB was decommissioned, not just stopped: the sidecar's marker is on the node's volume and the registry
	// lets the node go for good.
	if _, err := os.Stat(filepath.Join(simulated.DataDir, "scylla-operator-decommissioned")); err != nil {
		t.Errorf("want the sidecar's decommission marker on the node's volume: %v", err)
	}
	e.waitForOneRing(cluster, hostIDs(nodes[:1]))
	e.f.WaitFor(stepTimeout, "the last Pod to go away", func(ctx context.Context) (bool, error) {
		remaining, err := e.currentNodes(ctx, ns, cluster)
		if err != nil {
			return false, err
		}
		return len(remaining) == 1 && remaining[0].pod.Name == nodes[0].pod.Name, fmt.Errorf("%d nodes", len(remaining))
	})

	// Scaling up again gives the ordinal a new claim, so a fresh node: a new host ID on a new volume, in the ring.
	e.setMembers(ns, cluster, 2)
	again := e.waitForNodes(ns, cluster, 2)
	fresh, ok := e.sim.Node(ns, again[1].pod.Name)
	if !ok {
		t.Fatalf("the simulator lost %s", again[1])
	}
	if again[1].hostID() == last.hostID() || fresh.DataDir == simulated.DataDir {
		t.Errorf("want a fresh node for %s, got host ID %s on %s (the decommissioned one: %s on %s)",
			again[1], again[1].hostID(), fresh.DataDir, last.hostID(), simulated.DataDir)
	}
	e.waitForOneRing(cluster, hostIDs(again))
}

// testReadiness follows one node through ScyllaDB reporting it Down, the maintenance label, a container crash and a
// Pod deletion.
func (s *shared) testReadiness(t *testing.T) {
	t.Parallel()
	e := s.newTestEnv(t)
	const cluster = "readiness"
	ns := e.c.Namespace
	e.createScyllaCluster(newScyllaCluster(ns, cluster, "dc", 1))
	node := e.waitForNodes(ns, cluster, 1)[0]
	name := node.pod.Name
	first, _ := e.sim.Node(ns, name)

	// Once Ready, nobody writes the Pod: not the simulator (no status churn) and not the sidecar.
	mark, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	events, err := e.c.ControlPlane.Audit.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	if writes := framework.CountRequests(events, framework.InNamespace(ns), framework.OnResource("pods", "status"), framework.Writes()); writes.Total() != 0 {
		t.Errorf("want no Pod status writes in steady state, got %s", writes)
	}

	// ScyllaDB reports the node Down: not Ready.
	if err := e.sim.SetKnobs(t.Context(), ns, name, fakescylladb.Knobs{Down: true}); err != nil {
		t.Fatal(err)
	}
	e.waitForPodReady(ns, name, false, "ScyllaDB reports the node Down")
	if n, _ := e.sim.Node(ns, name); n.PID != first.PID {
		t.Errorf("want the same sidecar still running, pid %d became %d", first.PID, n.PID)
	}

	// The maintenance label makes it Ready though ScyllaDB still says Down; removing it makes it unready again.
	e.patchServiceLabel(ns, name, naming.NodeMaintenanceLabel, ptr.To(""))
	e.waitForPodReady(ns, name, true, "the node is in maintenance")
	e.patchServiceLabel(ns, name, naming.NodeMaintenanceLabel, nil)
	e.waitForPodReady(ns, name, false, "maintenance ended and ScyllaDB still reports Down")

	if err := e.sim.SetKnobs(t.Context(), ns, name, fakescylladb.Knobs{}); err != nil {
		t.Fatal(err)
	}
	e.waitForPodReady(ns, name, true, "ScyllaDB reports the node Up again")

	// The container crashes: it is restarted in the same Pod, and ScyllaDB comes back with the same host ID.
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.f.WaitFor(stepTimeout, "the container to be restarted and Ready", func(ctx context.Context) (bool, error) {
		pod, err := e.c.Clients.Kube.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == naming.ScyllaDBContainerName && cs.RestartCount == 1 && isPodReady(pod) {
				return true, nil
			}
		}
		return false, fmt.Errorf("container statuses %+v", pod.Status.ContainerStatuses)
	})
	records, err := e.sim.Records(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || records[1].HostID != node.hostID() {
		t.Errorf("want a second start of ScyllaDB with host ID %s, got %+v", node.hostID(), records)
	}

	// The Pod is deleted: its StatefulSet makes a new one on the same claim, which is the same node.
	if err := e.c.Clients.Kube.CoreV1().Pods(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var replacement scyllaNode
	e.f.WaitFor(rolloutTimeout, "a Ready replacement Pod", func(ctx context.Context) (bool, error) {
		nodes, err := e.currentNodes(ctx, ns, cluster)
		if err != nil {
			return false, err
		}
		if len(nodes) != 1 || nodes[0].pod.UID == node.pod.UID || !isPodReady(nodes[0].pod) {
			return false, fmt.Errorf("no Ready replacement yet (%d nodes)", len(nodes))
		}
		replacement = nodes[0]
		return true, nil
	})
	if got := replacement.invocation.Settings.Workdir; got != first.DataDir {
		t.Errorf("want the replacement on the same claim's directory %s, got %s", first.DataDir, got)
	}
	replacementRecords, err := e.sim.Records(ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(replacementRecords) != 1 || replacementRecords[0].HostID != node.hostID() {
		t.Errorf("want the replacement's ScyllaDB to start once with host ID %s, got %+v", node.hostID(), replacementRecords)
	}
	e.waitForOneRing(cluster, []string{node.hostID()})
}

// patchServiceLabel sets (value non-nil) or removes a label of a member Service.
func (e *testEnv) patchServiceLabel(namespace, name, key string, value *string) {
	e.t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]*string{key: value}}})
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.c.Clients.Kube.CoreV1().Services(namespace).Patch(e.t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		e.t.Fatalf("can't label Service %s/%s: %v", namespace, name, err)
	}
}
