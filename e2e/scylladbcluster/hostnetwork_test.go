//go:build e2e

package scylladbcluster

import (
	"context"
	"fmt"
	"slices"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

const (
	// scyllaVersion and agentVersion are those of deploy/examples/scyllacluster-basic.yaml.
	scyllaVersion = "2025.1.2"
	agentVersion  = "3.5.0"
)

// newHostNetworkScyllaCluster returns a host-networking ScyllaCluster of one rack with one small node of datacenter
// dc, seeding from externalSeeds.
func newHostNetworkScyllaCluster(namespace, name, dc string, externalSeeds []string) *scyllav1.ScyllaCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	return &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: scyllav1.ScyllaClusterSpec{
			Version:         scyllaVersion,
			AgentVersion:    agentVersion,
			MinReadySeconds: ptr.To[int32](0),
			Network:         scyllav1.Network{HostNetworking: true},
			ExternalSeeds:   externalSeeds,
			Datacenter: scyllav1.DatacenterSpec{
				Name: dc,
				Racks: []scyllav1.RackSpec{{
					Name:      "a",
					Members:   1,
					Storage:   scyllav1.Storage{Capacity: "1Gi"},
					Resources: corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
				}},
			},
		},
	}
}

// TestHostNetworkScyllaClustersJoinedByExternalSeeds runs one datacenter of a cluster per worker, as the manual
// multi-datacenter procedure does (multi-dc-early.md, external-seeds.md): two host-networking ScyllaClusters with the
// same name, the second seeding from the first's node IP. Host-network nodes are reached at their Kubernetes nodes'
// InternalIPs, which differ across workers, so both datacenters form one ring with distinct node addresses.
func TestHostNetworkScyllaClustersJoinedByExternalSeeds(t *testing.T) {
	e := newEnv(t)
	e.startWorkers()
	const clusterName = "hostnet"
	dcs := []string{"dc1", "dc2"}

	var podIPs []string
	for i, w := range e.workers {
		var seeds []string
		if i > 0 {
			seeds = []string{podIPs[0]}
		}
		t.Logf("Datacenter %s on %s, external seeds %q", dcs[i], w.name(), seeds)
		sc := newHostNetworkScyllaCluster(w.c.Namespace, clusterName, dcs[i], seeds)
		if _, err := w.scylla.ScyllaV1().ScyllaClusters(sc.Namespace).Create(t.Context(), sc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("can't create ScyllaCluster %s/%s on %s: %v", sc.Namespace, sc.Name, w.name(), err)
		}
		e.waitFor(rolloutTimeout, fmt.Sprintf("ScyllaCluster %s/%s on %s to roll out", sc.Namespace, sc.Name, w.name()), func(ctx context.Context) (bool, error) {
			got, err := w.scylla.ScyllaV1().ScyllaClusters(sc.Namespace).Get(ctx, sc.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if err := conditionsProblem(got.Status.Conditions, got.Generation, rolledOut); err != nil {
				return false, err
			}
			return ptr.Deref(got.Status.ReadyMembers, 0) == 1, fmt.Errorf("readyMembers %d, want 1", ptr.Deref(got.Status.ReadyMembers, 0))
		})
		podIPs = append(podIPs, e.hostNetworkPodIP(w))
	}
	if podIPs[0] == podIPs[1] {
		t.Fatalf("the nodes of both datacenters have address %s", podIPs[0])
	}

	t.Log("Both datacenters form one ring, each node at its Kubernetes node's address")
	var ring fakescylladb.Ring
	e.waitFor(stepTimeout, fmt.Sprintf("one ring of cluster %q with a node of each datacenter", clusterName), func(context.Context) (bool, error) {
		var err error
		ring, err = e.oneRing(clusterName, dcs...)
		return err == nil, err
	})
	for _, m := range ring.Members {
		want := podIPs[slices.Index(dcs, m.Datacenter)]
		if m.BroadcastAddress != want {
			t.Errorf("the node of datacenter %s broadcasts %s, want its Kubernetes node's InternalIP %s", m.Datacenter, m.BroadcastAddress, want)
		}
	}

	t.Log("The second datacenter started with the first's node as a seed; the first never with the second's")
	first := e.records(e.workers[1], e.onlyNode(e.workers[1], e.workers[1].c.Namespace))[0]
	if first.Invocation == nil || !slices.Contains(first.Invocation.Settings.Seeds, podIPs[0]) {
		t.Errorf("the first start of datacenter %s's ScyllaDB did not seed from %s: %+v", dcs[1], podIPs[0], first)
	}
	for _, r := range e.records(e.workers[0], e.onlyNode(e.workers[0], e.workers[0].c.Namespace)) {
		if r.Invocation != nil && slices.Contains(r.Invocation.Settings.Seeds, podIPs[1]) {
			t.Errorf("datacenter %s's ScyllaDB started with datacenter %s's node %s as a seed: %q", dcs[0], dcs[1], podIPs[1], r.Invocation.Settings.Seeds)
		}
	}
}

// hostNetworkPodIP checks that the one ScyllaDB Pod of worker w's test namespace uses the host's network and has its
// Kubernetes node's InternalIP, and returns that address.
func (e *env) hostNetworkPodIP(w *plane) string {
	e.t.Helper()
	ctx := e.t.Context()
	pods, err := podsOf(ctx, w, w.c.Namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(pods) != 1 {
		e.t.Fatalf("want one ScyllaDB Pod in namespace %q of %s, got %d", w.c.Namespace, w.name(), len(pods))
	}
	pod := pods[0]
	if !pod.Spec.HostNetwork {
		e.t.Errorf("Pod %s/%s of a host-networking ScyllaCluster does not use the host's network", pod.Namespace, pod.Name)
	}
	node, err := w.c.Clients.Kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var internalIP string
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			internalIP = a.Address
		}
	}
	if internalIP == "" || pod.Status.PodIP != internalIP {
		e.t.Fatalf("host-network Pod %s/%s on node %s has IP %q, want the node's InternalIP %q", pod.Namespace, pod.Name, node.Name, pod.Status.PodIP, internalIP)
	}
	return internalIP
}
