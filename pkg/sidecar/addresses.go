package sidecar

import (
	"errors"
	"fmt"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ErrNotYetAvailable marks an address that is missing for now but can appear later (a Pod IP before the Pod runs,
// a LoadBalancer ingress before the cloud provisions it). The sidecar waits for it; every other error is final.
var ErrNotYetAvailable = errors.New("not available yet")

// ErrInterfaceNotFound is returned by an InterfaceAddressLister for a name that is not an interface.
var ErrInterfaceNotFound = errors.New("interface does not exist")

// InterfaceAddressLister lists the IP addresses of a network interface inside the Pod.
type InterfaceAddressLister interface {
	InterfaceAddresses(name string) ([]net.IP, error)
}

// LocalInterfaces reads the interfaces of the network namespace the sidecar runs in.
type LocalInterfaces struct{}

var _ InterfaceAddressLister = LocalInterfaces{}

// InterfaceAddresses implements InterfaceAddressLister.
func (LocalInterfaces) InterfaceAddresses(name string) ([]net.IP, error) {
	iface, err := net.InterfaceByName(name)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (%v)", name, ErrInterfaceNotFound, err)
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return nil, fmt.Errorf("can't list addresses of interface %q: %w", name, err)
	}
	var ips []net.IP
	for _, a := range addrs {
		if ipNet, ok := a.(*net.IPNet); ok {
			ips = append(ips, ipNet.IP)
		}
	}
	return ips, nil
}

// Addresses are the four addresses ScyllaDB is configured with.
type Addresses struct {
	BroadcastAddress    string
	BroadcastRPCAddress string
	ListenAddress       string
	RPCAddress          string
}

func isFamily(ip net.IP, family IPFamily) bool {
	if family == IPv4 {
		return ip.To4() != nil
	}
	return ip.To4() == nil && ip.To16() != nil
}

// parseFamily returns the canonical form of s when it is an IP of family.
func parseFamily(s string, family IPFamily) (string, bool) {
	ip := net.ParseIP(s)
	if ip == nil || !isFamily(ip, family) {
		return "", false
	}
	return ip.String(), true
}

// WildcardAddress is the address that binds every interface of the family.
func WildcardAddress(family IPFamily) string {
	if family == IPv6 {
		return "::"
	}
	return "0.0.0.0"
}

// podStatusIP returns the Pod's IP of the family from status.podIPs (or status.podIP when podIPs is empty).
func podStatusIP(pod *corev1.Pod, family IPFamily) (string, error) {
	var all []string
	for _, p := range pod.Status.PodIPs {
		all = append(all, p.IP)
	}
	if len(all) == 0 && pod.Status.PodIP != "" {
		all = []string{pod.Status.PodIP}
	}
	if len(all) == 0 {
		return "", fmt.Errorf("Pod %q has no IP in its status: %w", pod.Namespace+"/"+pod.Name, ErrNotYetAvailable)
	}
	for _, s := range all {
		if ip, ok := parseFamily(s, family); ok {
			return ip, nil
		}
	}
	return "", fmt.Errorf("Pod %q has no %s address in status.podIPs %v", pod.Namespace+"/"+pod.Name, family, all)
}

func interfaceIP(ifaces InterfaceAddressLister, name string, family IPFamily) (string, error) {
	ips, err := ifaces.InterfaceAddresses(name)
	if err != nil {
		return "", err
	}
	var matching, all []string
	for _, ip := range ips {
		all = append(all, ip.String())
		// A link-local IPv6 address exists on every interface; it isn't the Pod's address.
		if isFamily(ip, family) && !ip.IsLinkLocalUnicast() {
			matching = append(matching, ip.String())
		}
	}
	switch len(matching) {
	case 0:
		return "", fmt.Errorf("interface %q has no %s address (it has %v)", name, family, all)
	case 1:
		return matching[0], nil
	default:
		return "", fmt.Errorf("interface %q has %d %s addresses %v; only interfaces with one are supported", name, len(matching), family, matching)
	}
}

func podIP(pod *corev1.Pod, opts PodIPOptions, family IPFamily, ifaces InterfaceAddressLister) (string, error) {
	switch opts.Source {
	case PodIPSourceStatus:
		return podStatusIP(pod, family)
	case PodIPSourceInterface:
		if opts.InterfaceName == "" {
			return "", fmt.Errorf("podIP source %s needs an interface name", PodIPSourceInterface)
		}
		return interfaceIP(ifaces, opts.InterfaceName, family)
	default:
		return "", fmt.Errorf("unknown podIP source %q", opts.Source)
	}
}

func serviceName(svc *corev1.Service) string {
	return svc.Namespace + "/" + svc.Name
}

// serviceClusterIP returns the Service's ClusterIP of the family; a headless Service has none.
func serviceClusterIP(svc *corev1.Service, family IPFamily) (string, error) {
	if svc.Spec.ClusterIP == corev1.ClusterIPNone {
		return "", fmt.Errorf("Service %q is headless (clusterIP None) and has no ClusterIP", serviceName(svc))
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	if len(ips) == 0 {
		return "", fmt.Errorf("Service %q has no ClusterIP", serviceName(svc))
	}
	for _, s := range ips {
		if ip, ok := parseFamily(s, family); ok {
			return ip, nil
		}
	}
	return "", fmt.Errorf("Service %q has no %s ClusterIP in spec.clusterIPs %v", serviceName(svc), family, ips)
}

// serviceIngressIP returns the first LoadBalancer ingress IP of the family (expose-options.md: ingress[0].ip). A
// hostname is never used: ScyllaDB's broadcast addresses must be IPs. A load balancer with no ingress or only
// hostnames is waited for; one whose IPs are all of the other family is an error.
func serviceIngressIP(svc *corev1.Service, family IPFamily) (string, error) {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return "", fmt.Errorf("Service %q is of type %q, not LoadBalancer, so it has no load balancer ingress", serviceName(svc), svc.Spec.Type)
	}
	ingress := svc.Status.LoadBalancer.Ingress
	if len(ingress) == 0 {
		return "", fmt.Errorf("Service %q has no load balancer ingress: %w", serviceName(svc), ErrNotYetAvailable)
	}
	var seen, hostnames []string
	for _, in := range ingress {
		if in.IP == "" {
			seen = append(seen, "hostname "+in.Hostname)
			hostnames = append(hostnames, in.Hostname)
			continue
		}
		if ip, ok := parseFamily(in.IP, family); ok {
			return ip, nil
		}
		seen = append(seen, in.IP)
	}
	if len(hostnames) == len(ingress) {
		// Load balancers such as AWS ELB publish a hostname only; some get an IP later, and the wait is bounded.
		return "", fmt.Errorf("Service %q has only hostnames (%s) in status.loadBalancer.ingress; this type takes status.loadBalancer.ingress[].ip and never uses a hostname, so it waits for the load balancer to get an IP: %w",
			serviceName(svc), strings.Join(hostnames, ", "), ErrNotYetAvailable)
	}
	return "", fmt.Errorf("Service %q has no %s load balancer ingress IP (ingress: %s)", serviceName(svc), family, strings.Join(seen, ", "))
}

func broadcastAddress(f addressField, opts BroadcastOptions, family IPFamily, pod *corev1.Pod, svc *corev1.Service, ifaces InterfaceAddressLister) (string, error) {
	var ip string
	var err error
	switch opts.Type {
	case BroadcastPodIP:
		ip, err = podIP(pod, opts.PodIP, family, ifaces)
	case BroadcastServiceClusterIP:
		ip, err = serviceClusterIP(svc, family)
	case BroadcastServiceLoadBalancerIngressIP:
		ip, err = serviceIngressIP(svc, family)
	default:
		err = fmt.Errorf("unknown type %q", opts.Type)
	}
	if err != nil {
		return "", f.errorf("type %s: %w", opts.Type, err)
	}
	return ip, nil
}

func listenAddress(f addressField, opts ListenOptions, family IPFamily, pod *corev1.Pod, ifaces InterfaceAddressLister) (string, error) {
	switch opts.Type {
	case ListenAny:
		return WildcardAddress(family), nil
	case ListenPodIP:
		ip, err := podIP(pod, opts.PodIP, family, ifaces)
		if err != nil {
			return "", f.errorf("type %s: %w", opts.Type, err)
		}
		return ip, nil
	default:
		return "", f.errorf("unknown type %q", opts.Type)
	}
}

// ComputeAddresses derives broadcast_address, broadcast_rpc_address, listen_address and rpc_address from the
// options, the node's Pod and its member Service, as expose-options.md describes. With host networking the
// node-to-node address must be the Pod IP (the host's address): a Service address would hide the member address
// other datacenters need to reach (multi-dc-early.md). Errors name the ScyllaDB setting and the API field; they wrap
// ErrNotYetAvailable when waiting can fix them.
func ComputeAddresses(opts AddressOptions, pod *corev1.Pod, svc *corev1.Service, ifaces InterfaceAddressLister) (Addresses, error) {
	if opts.IPFamily != IPv4 && opts.IPFamily != IPv6 {
		return Addresses{}, fmt.Errorf("unknown IP family %q", opts.IPFamily)
	}
	if opts.HostNetworking && opts.BroadcastNodes.Type != BroadcastPodIP {
		return Addresses{}, broadcastNodesField.errorf("type %s: with host networking the node-to-node address must be the Pod IP (type %s)", opts.BroadcastNodes.Type, BroadcastPodIP)
	}
	var a Addresses
	var err error
	if a.BroadcastAddress, err = broadcastAddress(broadcastNodesField, opts.BroadcastNodes, opts.IPFamily, pod, svc, ifaces); err != nil {
		return Addresses{}, err
	}
	if a.BroadcastRPCAddress, err = broadcastAddress(broadcastClientsField, opts.BroadcastClients, opts.IPFamily, pod, svc, ifaces); err != nil {
		return Addresses{}, err
	}
	if a.ListenAddress, err = listenAddress(listenNodesField, opts.ListenNodes, opts.IPFamily, pod, ifaces); err != nil {
		return Addresses{}, err
	}
	if a.RPCAddress, err = listenAddress(listenClientsField, opts.ListenClients, opts.IPFamily, pod, ifaces); err != nil {
		return Addresses{}, err
	}
	return a, nil
}

// ServiceAddressChange reports, as an error naming each setting, the broadcast addresses the node runs with (inUse)
// that come from its member Service and that svc now gives differently: a recreated Service has a new ClusterIP, a
// load balancer may get a new IP. An address svc can't give at the moment (a load balancer without ingress) is no
// change: the node keeps the last one it had. Pod IPs don't come from the Service and never change while the Pod
// runs.
func ServiceAddressChange(opts AddressOptions, inUse Addresses, svc *corev1.Service) error {
	var changes []string
	for _, b := range []struct {
		field addressField
		opts  BroadcastOptions
		inUse string
	}{
		{broadcastNodesField, opts.BroadcastNodes, inUse.BroadcastAddress},
		{broadcastClientsField, opts.BroadcastClients, inUse.BroadcastRPCAddress},
	} {
		var now string
		var err error
		switch b.opts.Type {
		case BroadcastServiceClusterIP:
			now, err = serviceClusterIP(svc, opts.IPFamily)
		case BroadcastServiceLoadBalancerIngressIP:
			now, err = serviceIngressIP(svc, opts.IPFamily)
		default:
			continue
		}
		if err == nil && now != b.inUse {
			changes = append(changes, fmt.Sprintf("%s from %s (type %s) is now %s, but the node runs with %s", b.field.configKey, b.field.apiField, b.opts.Type, now, b.inUse))
		}
	}
	if len(changes) == 0 {
		return nil
	}
	return errors.New(strings.Join(changes, "; "))
}
