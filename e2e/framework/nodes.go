package framework

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeSpec describes one simulated node.
type NodeSpec struct {
	// Name of the Node.
	Name string
	// Region and Zone become the topology.kubernetes.io labels.
	Region, Zone string
	// Labels are added to the standard ones.
	Labels map[string]string
	// Capacity is both the capacity and the allocatable resources. Defaults to DefaultNodeCapacity.
	Capacity corev1.ResourceList
	// InternalIP is the address the node reports, and its host-network pods get. Empty: the control plane gives
	// each node its own (ControlPlaneOptions.NodeIP, then the next addresses).
	InternalIP string
	// Taints keep pods that don't tolerate them off the node.
	Taints []corev1.Taint
}

// DefaultNodeCapacity is large enough for several ScyllaDB pods per node.
func DefaultNodeCapacity() corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("64"),
		corev1.ResourceMemory:           resource.MustParse("256Gi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("1Ti"),
	}
}

// DefaultNodes returns three nodes in each zone of region us-east-1, the region of the single-datacenter
// examples in deploy/examples/.
func DefaultNodes() []NodeSpec {
	return RegionNodes("us-east-1", 3)
}

// RegionNodes returns perZone nodes in each of the zones <region>a, <region>b and <region>c, as cloud
// providers name them.
func RegionNodes(region string, perZone int) []NodeSpec {
	return ZonedNodes(region, []string{region + "a", region + "b", region + "c"}, perZone)
}

// ZonedNodes returns perZone nodes with the default capacity in each zone of a region.
func ZonedNodes(region string, zones []string, perZone int) []NodeSpec {
	nodes := make([]NodeSpec, 0, len(zones)*perZone)
	for _, zone := range zones {
		for i := range perZone {
			nodes = append(nodes, NodeSpec{Name: naming.KwokNodeName(zone, i), Region: region, Zone: zone})
		}
	}
	return nodes
}

// makeNode returns the Node object kwok simulates for spec.
func makeNode(spec NodeSpec) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   spec.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: "amd64",
		"type":                 "kwok",
		// The placement of the examples in deploy/examples/ requires it.
		naming.ExampleNodeTypeLabel: naming.ExampleNodeTypeLabelValue,
	}
	if spec.Region != "" {
		labels[corev1.LabelTopologyRegion] = spec.Region
	}
	if spec.Zone != "" {
		labels[corev1.LabelTopologyZone] = spec.Zone
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	capacity := spec.Capacity
	if capacity == nil {
		capacity = DefaultNodeCapacity()
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        spec.Name,
			Labels:      labels,
			Annotations: map[string]string{naming.KwokNodeAnnotation: naming.KwokNodeAnnotationValue, naming.KwokNodeInternalIPAnnotation: spec.InternalIP},
		},
		Spec: corev1.NodeSpec{Taints: spec.Taints},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: capacity.DeepCopy(),
		},
	}
}

// nodeInternalIPs returns the InternalIP of every node: its own, or else first, and the addresses after it, in order,
// skipping those nodes already have, so that no two nodes share one.
func nodeInternalIPs(first string, nodes []NodeSpec) ([]string, error) {
	ip, err := netip.ParseAddr(first)
	if err != nil {
		return nil, fmt.Errorf("can't parse node IP %q: %w", first, err)
	}
	taken := map[string]string{}
	for _, spec := range nodes {
		if spec.InternalIP == "" {
			continue
		}
		if _, err := netip.ParseAddr(spec.InternalIP); err != nil {
			return nil, fmt.Errorf("can't parse the InternalIP %q of node %q: %w", spec.InternalIP, spec.Name, err)
		}
		if other, ok := taken[spec.InternalIP]; ok {
			return nil, fmt.Errorf("nodes %q and %q have the same InternalIP %s", other, spec.Name, spec.InternalIP)
		}
		taken[spec.InternalIP] = spec.Name
	}
	ips := make([]string, 0, len(nodes))
	for _, spec := range nodes {
		if spec.InternalIP != "" {
			ips = append(ips, spec.InternalIP)
			continue
		}
		for _, ok := taken[ip.String()]; ok; _, ok = taken[ip.String()] {
			ip = ip.Next()
		}
		if !ip.IsValid() {
			return nil, fmt.Errorf("no address left after %s for node %q", first, spec.Name)
		}
		ips = append(ips, ip.String())
		taken[ip.String()] = spec.Name
		ip = ip.Next()
	}
	return ips, nil
}

func createNodes(ctx context.Context, kube kubernetes.Interface, firstIP string, nodes []NodeSpec) error {
	ips, err := nodeInternalIPs(firstIP, nodes)
	if err != nil {
		return err
	}
	for i, spec := range nodes {
		spec.InternalIP = ips[i]
		_, err := kube.CoreV1().Nodes().Create(ctx, makeNode(spec), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("can't create Node %q: %w", spec.Name, err)
		}
	}
	return nil
}

func nodesReady(ctx context.Context, kube kubernetes.Interface, nodes []NodeSpec) (bool, error) {
	for _, spec := range nodes {
		node, err := kube.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !nodeReady(node) {
			return false, fmt.Errorf("node %q is not Ready", spec.Name)
		}
	}
	return true, nil
}

func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
