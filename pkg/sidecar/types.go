package sidecar

import (
	"fmt"
	"strings"
)

// IPFamily is the IP family ScyllaDB uses for all its addresses.
type IPFamily string

// IP families, spelled as corev1.IPFamily.
const (
	IPv4 IPFamily = "IPv4"
	IPv6 IPFamily = "IPv6"
)

// BroadcastAddressType says where a broadcast address comes from (expose-options.md).
type BroadcastAddressType string

const (
	// BroadcastPodIP takes the Pod's IP, from its status or from a network interface.
	BroadcastPodIP BroadcastAddressType = "PodIP"
	// BroadcastServiceClusterIP takes the member Service's spec.clusterIPs.
	BroadcastServiceClusterIP BroadcastAddressType = "ServiceClusterIP"
	// BroadcastServiceLoadBalancerIngressIP takes the member Service's status.loadBalancer.ingress[].ip.
	BroadcastServiceLoadBalancerIngressIP BroadcastAddressType = "ServiceLoadBalancerIngressIP"
	// broadcastServiceLoadBalancerIngressAlias is the established operator's spelling, accepted for existing manifests.
	broadcastServiceLoadBalancerIngressAlias BroadcastAddressType = "ServiceLoadBalancerIngress"
)

// ListenAddressType says which address a ScyllaDB socket binds to.
type ListenAddressType string

const (
	// ListenAny binds to the wildcard address of the IP family.
	ListenAny ListenAddressType = "Any"
	// ListenPodIP binds to the Pod's IP, from its status or from a network interface.
	ListenPodIP ListenAddressType = "PodIP"
)

// PodIPSource says where the Pod's IP is read from.
type PodIPSource string

const (
	// PodIPSourceStatus reads status.podIPs.
	PodIPSourceStatus PodIPSource = "Status"
	// PodIPSourceInterface reads the address of a named network interface inside the Pod.
	PodIPSourceInterface PodIPSource = "Interface"
)

// PodIPOptions say how to find the Pod IP.
type PodIPOptions struct {
	Source        PodIPSource
	InterfaceName string
}

// BroadcastOptions configure one broadcast address.
type BroadcastOptions struct {
	Type  BroadcastAddressType
	PodIP PodIPOptions
}

// ListenOptions configure one listen address.
type ListenOptions struct {
	Type  ListenAddressType
	PodIP PodIPOptions
}

// AddressOptions hold everything that decides the node's four addresses.
type AddressOptions struct {
	BroadcastNodes   BroadcastOptions
	BroadcastClients BroadcastOptions
	ListenNodes      ListenOptions
	ListenClients    ListenOptions
	IPFamily         IPFamily
	HostNetworking   bool
}

// addressField names one of ScyllaDB's address settings, the API field it comes from and the sidecar's flag prefix,
// so errors tell the user what to fix.
type addressField struct {
	configKey string
	apiField  string
	flag      string
}

var (
	broadcastNodesField   = addressField{"broadcast_address", "exposeOptions.broadcastOptions.nodes", "--broadcast-nodes"}
	broadcastClientsField = addressField{"broadcast_rpc_address", "exposeOptions.broadcastOptions.clients", "--broadcast-clients"}
	listenNodesField      = addressField{"listen_address", "exposeOptions.listenOptions.nodes", "--listen-nodes"}
	listenClientsField    = addressField{"rpc_address", "exposeOptions.listenOptions.clients", "--listen-clients"}
)

func (f addressField) errorf(format string, args ...any) error {
	return fmt.Errorf("can't compute %s from %s: %w", f.configKey, f.apiField, fmt.Errorf(format, args...))
}

// ParseIPFamily accepts IPv4 or IPv6.
func ParseIPFamily(s string) (IPFamily, error) {
	switch f := IPFamily(s); f {
	case IPv4, IPv6:
		return f, nil
	}
	return "", fmt.Errorf("must be %s or %s, got %q", IPv4, IPv6, s)
}

// ParseBroadcastAddressType accepts the broadcast types, including the established operator's
// ServiceLoadBalancerIngress as an alias of ServiceLoadBalancerIngressIP.
func ParseBroadcastAddressType(s string) (BroadcastAddressType, error) {
	switch t := BroadcastAddressType(s); t {
	case BroadcastPodIP, BroadcastServiceClusterIP, BroadcastServiceLoadBalancerIngressIP:
		return t, nil
	case broadcastServiceLoadBalancerIngressAlias:
		return BroadcastServiceLoadBalancerIngressIP, nil
	}
	return "", fmt.Errorf("must be one of %s, got %q", strings.Join([]string{
		string(BroadcastPodIP), string(BroadcastServiceClusterIP), string(BroadcastServiceLoadBalancerIngressIP),
		string(broadcastServiceLoadBalancerIngressAlias),
	}, ", "), s)
}

// ParseListenAddressType accepts Any or PodIP.
func ParseListenAddressType(s string) (ListenAddressType, error) {
	switch t := ListenAddressType(s); t {
	case ListenAny, ListenPodIP:
		return t, nil
	}
	return "", fmt.Errorf("must be %s or %s, got %q", ListenAny, ListenPodIP, s)
}

// ParsePodIPSource accepts Status or Interface.
func ParsePodIPSource(s string) (PodIPSource, error) {
	switch src := PodIPSource(s); src {
	case PodIPSourceStatus, PodIPSourceInterface:
		return src, nil
	}
	return "", fmt.Errorf("must be %s or %s, got %q", PodIPSourceStatus, PodIPSourceInterface, s)
}
