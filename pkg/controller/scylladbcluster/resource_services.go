package scylladbcluster

import (
	"fmt"
	"net"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Ports of a ScyllaDB node that the seed and client Services name. They are the ScyllaDBDatacenter's pods' ports.
const (
	interNodePort = 7000
	cqlPort       = 9042
	agentAPIPort  = 10001
)

// endpoint is one address of a ScyllaDB node, as other datacenters or ScyllaDB Manager reach it.
type endpoint struct {
	address string
	// ready is the readiness of the node's pod: cluster DNS returns only ready addresses of a headless Service.
	ready bool
}

// seedPorts and clientPorts are the ports of the seed and client Services.
var (
	seedPorts = []corev1.ServicePort{
		{Name: "inter-node", Protocol: corev1.ProtocolTCP, Port: interNodePort},
	}
	clientPorts = []corev1.ServicePort{
		{Name: "cql", Protocol: corev1.ProtocolTCP, Port: cqlPort},
		{Name: "agent-api", Protocol: corev1.ProtocolTCP, Port: agentAPIPort},
	}
)

// makeSeedService returns the seed Service, in dc's remote namespace, through which dc's nodes reach the nodes of
// datacenter s.datacenterName (seeds.go): headless and without selector, so that its DNS name resolves to the
// addresses of its EndpointSlices (makeSeedEndpointSlices).
func makeSeedService(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, s seedService) (*corev1.Service, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	return makeHeadlessService(remoteObjectMeta(sc, dc, s.name), seedPorts), nil
}

// makeSeedEndpointSlices returns the EndpointSlices of the seed Service s in dc's remote namespace: the addresses of
// s, with the readiness endpoints tells (an address it does not list is taken as ready).
func makeSeedEndpointSlices(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter, s seedService, endpoints map[string]bool) ([]*discoveryv1.EndpointSlice, error) {
	if _, err := validateDatacenter(sc, dc); err != nil {
		return nil, err
	}
	eps := make([]endpoint, 0, len(s.addresses))
	for _, a := range s.addresses {
		ready, ok := endpoints[a]
		eps = append(eps, endpoint{address: a, ready: ready || !ok})
	}
	return makeEndpointSlices(remoteObjectMeta(sc, dc, s.name), s.name, familySliceName(s.name), seedPorts, eps)
}

// makeClientService returns sc's client Service in the meta cluster: headless and without selector, its
// EndpointSlices (makeClientEndpointSlices) list the client addresses of every datacenter's nodes, so that ScyllaDB
// Manager, beside sc, reaches the agents of all of them by one name
// (naming.ScyllaDBManagerClusterHostForScyllaDBCluster).
func makeClientService(sc *scyllav1alpha1.ScyllaDBCluster) *corev1.Service {
	return makeHeadlessService(metaObjectMeta(sc, naming.ScyllaDBClusterClientServiceName(sc.Name)), clientPorts)
}

// makeClientEndpointSlices returns the EndpointSlices of sc's client Service that list the endpoints of datacenter
// dcName's nodes: one per address family, named by naming.ScyllaDBClusterClientEndpointSliceName and labelled with
// the datacenter's name, so that each datacenter's addresses are replaced only by what its own remote cluster tells.
func makeClientEndpointSlices(sc *scyllav1alpha1.ScyllaDBCluster, dcName string, endpoints []endpoint) ([]*discoveryv1.EndpointSlice, error) {
	serviceName := naming.ScyllaDBClusterClientServiceName(sc.Name)
	meta := metaObjectMeta(sc, serviceName)
	meta.Labels[naming.ScyllaDBClusterDatacenterNameLabel] = dcName
	return makeEndpointSlices(meta, serviceName, func(family discoveryv1.AddressType) string {
		return naming.ScyllaDBClusterClientEndpointSliceName(sc.Name, dcName, family)
	}, clientPorts, endpoints)
}

// metaObjectMeta returns the metadata of an object named name that sc controls in its own namespace.
func metaObjectMeta(sc *scyllav1alpha1.ScyllaDBCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Namespace: sc.Namespace,
		Name:      name,
		Labels: map[string]string{
			naming.ScyllaDBClusterNameLabel: sc.Name,
			naming.ManagedByLabel:           naming.ManagedByLabelValue,
		},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(sc, scyllaDBClusterGVK)},
	}
}

func makeHeadlessService(meta metav1.ObjectMeta, ports []corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: meta,
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Ports:     slices.Clone(ports),
			// Seeds must resolve while nodes start: a node is not ready before it joined.
			PublishNotReadyAddresses: false,
		},
	}
}

// familySliceName returns a function naming the EndpointSlices of Service serviceName "<service>-ipv4" and
// "<service>-ipv6".
func familySliceName(serviceName string) func(discoveryv1.AddressType) string {
	return func(family discoveryv1.AddressType) string {
		return serviceName + "-" + strings.ToLower(string(family))
	}
}

// makeEndpointSlices returns the EndpointSlices of the Service serviceName with meta's namespace, labels and owner:
// one per address family that endpoints have, named by sliceName, endpoints sorted by address. An address that is not
// an IP (a load balancer's hostname) can't be an endpoint and is an error.
func makeEndpointSlices(meta metav1.ObjectMeta, serviceName string, sliceName func(discoveryv1.AddressType) string, ports []corev1.ServicePort, endpoints []endpoint) ([]*discoveryv1.EndpointSlice, error) {
	byFamily := map[discoveryv1.AddressType][]discoveryv1.Endpoint{}
	sorted := slices.SortedFunc(slices.Values(endpoints), func(a, b endpoint) int { return strings.Compare(a.address, b.address) })
	sorted = slices.CompactFunc(sorted, func(a, b endpoint) bool { return a.address == b.address })
	for _, e := range sorted {
		ip := net.ParseIP(e.address)
		if ip == nil {
			return nil, fmt.Errorf("can't make the EndpointSlices of Service %q: address %q is not an IP address", serviceName, e.address)
		}
		family := discoveryv1.AddressTypeIPv6
		if ip.To4() != nil {
			family = discoveryv1.AddressTypeIPv4
		}
		byFamily[family] = append(byFamily[family], discoveryv1.Endpoint{
			Addresses:  []string{e.address},
			Conditions: discoveryv1.EndpointConditions{Ready: new(e.ready)},
		})
	}

	slicePorts := make([]discoveryv1.EndpointPort, 0, len(ports))
	for _, p := range ports {
		slicePorts = append(slicePorts, discoveryv1.EndpointPort{Name: new(p.Name), Protocol: new(p.Protocol), Port: new(p.Port)})
	}
	var out []*discoveryv1.EndpointSlice
	for _, family := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		eps, ok := byFamily[family]
		if !ok {
			continue
		}
		m := *meta.DeepCopy()
		m.Name = sliceName(family)
		m.Labels = merge.Maps(m.Labels, map[string]string{
			discoveryv1.LabelServiceName: serviceName,
			discoveryv1.LabelManagedBy:   naming.EndpointSliceManagedByValue,
		})
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta:  m,
			AddressType: family,
			Endpoints:   eps,
			Ports:       slicePorts,
		})
	}
	return out, nil
}
