package sidecar

import (
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// fakeInterfaces is an InterfaceAddressLister with fixed interfaces.
type fakeInterfaces map[string][]string

func (f fakeInterfaces) InterfaceAddresses(name string) ([]net.IP, error) {
	addrs, ok := f[name]
	if !ok {
		return nil, fmt.Errorf("%q: %w", name, ErrInterfaceNotFound)
	}
	var ips []net.IP
	for _, a := range addrs {
		ips = append(ips, net.ParseIP(a))
	}
	return ips, nil
}

type serviceKind string

const (
	clusterIPService    serviceKind = "ClusterIP"
	headlessService     serviceKind = "Headless"
	loadBalancerService serviceKind = "LoadBalancer"
)

const (
	testNamespace = "ns"
	selfName      = "sc-dc-r-1"
	otherName     = "sc-dc-r-0"
)

var baseTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Every address of the fixtures, per family. The node under test is ".11", the other node ".10".
var fixtureIPs = map[IPFamily]struct {
	selfPod, selfClusterIP, selfIngress, selfInterface     string
	otherPod, otherClusterIP, otherIngress, otherInterface string
}{
	IPv4: {"10.0.0.11", "10.96.0.11", "203.0.113.11", "192.168.1.11", "10.0.0.10", "10.96.0.10", "203.0.113.10", "192.168.1.10"},
	IPv6: {"fd00::11", "fd96::11", "2001:db8::11", "2001:db8:1::11", "fd00::10", "fd96::10", "2001:db8::10", "2001:db8:1::10"},
}

func makeService(name string, kind serviceKind, created time.Time, clusterIPs []string, ingressIPs []string) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name, CreationTimestamp: metav1.NewTime(created)},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP},
	}
	switch kind {
	case headlessService:
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
	case clusterIPService, loadBalancerService:
		svc.Spec.ClusterIP = clusterIPs[0]
		svc.Spec.ClusterIPs = clusterIPs
	}
	if kind == loadBalancerService {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer
		svc.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{Hostname: "lb.example.com"}}
		for _, ip := range ingressIPs {
			svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
		}
	}
	return svc
}

func makePod(name string, ready bool, ips ...string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name}}
	if len(ips) > 0 {
		pod.Status.PodIP = ips[0]
	}
	for _, ip := range ips {
		pod.Status.PodIPs = append(pod.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status}}
	return pod
}

// reversed returns a deep copy of the input with every list whose order carries no meaning reversed.
func reversed(in NodeConfigInput) NodeConfigInput {
	out := in
	out.Services = nil
	for _, s := range slices.Backward(in.Services) {
		c := s.DeepCopy()
		slices.Reverse(c.Spec.ClusterIPs)
		slices.Reverse(c.Status.LoadBalancer.Ingress)
		out.Services = append(out.Services, c)
		if s == in.Service {
			out.Service = c
		}
	}
	out.Pods = nil
	for _, p := range slices.Backward(in.Pods) {
		c := p.DeepCopy()
		slices.Reverse(c.Status.PodIPs)
		out.Pods = append(out.Pods, c)
		if p == in.Pod {
			out.Pod = c
		}
	}
	ifaces := fakeInterfaces{}
	for name, addrs := range in.Interfaces.(fakeInterfaces) {
		ifaces[name] = slices.Clone(addrs)
		slices.Reverse(ifaces[name])
	}
	out.Interfaces = ifaces
	return out
}

type addressChoice struct {
	name   string
	podIP  *PodIPOptions
	btype  BroadcastAddressType
	ltype  ListenAddressType
	expect func(f IPFamily, kind serviceKind) (string, string)
	// other is the other node's address of this choice, which its sidecar records on its Service.
	other func(f IPFamily) string
}

var (
	statusSource    = &PodIPOptions{Source: PodIPSourceStatus}
	interfaceSource = &PodIPOptions{Source: PodIPSourceInterface, InterfaceName: "eth1"}
)

func podStatusExpect(f IPFamily, _ serviceKind) (string, string) { return fixtureIPs[f].selfPod, "" }
func interfaceExpect(f IPFamily, _ serviceKind) (string, string) {
	return fixtureIPs[f].selfInterface, ""
}

var broadcastChoices = []addressChoice{
	{name: "PodIP/Status", btype: BroadcastPodIP, podIP: statusSource, expect: podStatusExpect,
		other: func(f IPFamily) string { return fixtureIPs[f].otherPod }},
	{name: "PodIP/Interface", btype: BroadcastPodIP, podIP: interfaceSource, expect: interfaceExpect,
		other: func(f IPFamily) string { return fixtureIPs[f].otherInterface }},
	{name: "ServiceClusterIP", btype: BroadcastServiceClusterIP, expect: func(f IPFamily, kind serviceKind) (string, string) {
		if kind == headlessService {
			return "", `type ServiceClusterIP: Service "ns/sc-dc-r-1" is headless (clusterIP None) and has no ClusterIP`
		}
		return fixtureIPs[f].selfClusterIP, ""
	}, other: func(f IPFamily) string { return fixtureIPs[f].otherClusterIP }},
	{name: "ServiceLoadBalancerIngressIP", btype: BroadcastServiceLoadBalancerIngressIP, expect: func(f IPFamily, kind serviceKind) (string, string) {
		if kind != loadBalancerService {
			return "", `type ServiceLoadBalancerIngressIP: Service "ns/sc-dc-r-1" is of type "ClusterIP", not LoadBalancer, so it has no load balancer ingress`
		}
		return fixtureIPs[f].selfIngress, ""
	}, other: func(f IPFamily) string { return fixtureIPs[f].otherIngress }},
}

var listenChoices = []addressChoice{
	{name: "Any", ltype: ListenAny, expect: func(f IPFamily, _ serviceKind) (string, string) { return WildcardAddress(f), "" }},
	{name: "PodIP/Status", ltype: ListenPodIP, podIP: statusSource, expect: podStatusExpect},
	{name: "PodIP/Interface", ltype: ListenPodIP, podIP: interfaceSource, expect: interfaceExpect},
}

func (c addressChoice) podIPOptions() PodIPOptions {
	if c.podIP == nil {
		return PodIPOptions{Source: PodIPSourceStatus}
	}
	return *c.podIP
}

// TestComputeNodeConfigMatrix covers every combination of first or later node, external seeds or none, broadcast
// type for nodes and for clients, listen type for nodes and for clients, IP family, host networking and member
// Service kind. Each case asserts the exact addresses and seeds or the exact error, for the input as given and
// reversed.
func TestComputeNodeConfigMatrix(t *testing.T) {
	t.Parallel()
	externalSeeds := []string{"dc1-seed.example.com", "198.51.100.7"}
	cases := 0
	for _, first := range []bool{true, false} {
		for _, withExternal := range []bool{false, true} {
			for _, family := range []IPFamily{IPv4, IPv6} {
				for _, hostNetworking := range []bool{false, true} {
					for _, kind := range []serviceKind{clusterIPService, headlessService, loadBalancerService} {
						for _, bn := range broadcastChoices {
							for _, bc := range broadcastChoices {
								for _, ln := range listenChoices {
									for _, lc := range listenChoices {
										name := fmt.Sprintf("first=%v/external=%v/%s/hostNetworking=%v/%sService/broadcastNodes=%s/broadcastClients=%s/listenNodes=%s/listenClients=%s",
											first, withExternal, family, hostNetworking, kind, bn.name, bc.name, ln.name, lc.name)
										cases++
										t.Run(name, func(t *testing.T) {
											runMatrixCase(t, first, withExternal, externalSeeds, family, hostNetworking, kind, bn, bc, ln, lc)
										})
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if cases != 2*2*2*2*3*4*4*3*3 {
		t.Errorf("the matrix has %d cases", cases)
	}
}

func runMatrixCase(t *testing.T, first, withExternal bool, externalSeeds []string, family IPFamily, hostNetworking bool, kind serviceKind, bn, bc, ln, lc addressChoice) {
	ips := fixtureIPs[family]
	v4, v6 := fixtureIPs[IPv4], fixtureIPs[IPv6]
	self := makeService(selfName, kind, baseTime, []string{ips.selfClusterIP, otherFamily(family, v4.selfClusterIP, v6.selfClusterIP)},
		[]string{otherFamily(family, v4.selfIngress, v6.selfIngress), ips.selfIngress})
	otherCreated := baseTime.Add(time.Minute)
	other := makeService(otherName, kind, otherCreated, []string{ips.otherClusterIP, otherFamily(family, v4.otherClusterIP, v6.otherClusterIP)},
		[]string{otherFamily(family, v4.otherIngress, v6.otherIngress), ips.otherIngress})
	// The other node's sidecar recorded its broadcast address, computed with the same options as this node's.
	other.Annotations = map[string]string{naming.BroadcastAddressAnnotation: bn.other(family), naming.BroadcastAddressPodUIDAnnotation: "uid-other"}
	selfPod := makePod(selfName, false, ips.selfPod, otherFamily(family, v4.selfPod, v6.selfPod))
	// A later node sees the other node Ready; Ready nodes come first whatever their age.
	otherPod := makePod(otherName, !first, ips.otherPod, otherFamily(family, v4.otherPod, v6.otherPod))
	otherPod.UID = "uid-other"

	in := NodeConfigInput{
		Options: AddressOptions{
			BroadcastNodes:   BroadcastOptions{Type: bn.btype, PodIP: bn.podIPOptions()},
			BroadcastClients: BroadcastOptions{Type: bc.btype, PodIP: bc.podIPOptions()},
			ListenNodes:      ListenOptions{Type: ln.ltype, PodIP: ln.podIPOptions()},
			ListenClients:    ListenOptions{Type: lc.ltype, PodIP: lc.podIPOptions()},
			IPFamily:         family,
			HostNetworking:   hostNetworking,
		},
		Pod:      selfPod,
		Service:  self,
		Services: []*corev1.Service{self, other},
		Pods:     []*corev1.Pod{selfPod, otherPod},
		Interfaces: fakeInterfaces{
			"lo":   {"127.0.0.1", "::1"},
			"eth1": {"192.168.1.11", "fe80::1", "2001:db8:1::11"},
		},
	}
	if withExternal {
		in.ExternalSeeds = externalSeeds
	}

	var want NodeConfig
	var wantErr string
	type part struct {
		field addressField
		addr  *string
		pick  func(IPFamily, serviceKind) (string, string)
	}
	if hostNetworking && bn.btype != BroadcastPodIP {
		wantErr = fmt.Sprintf("can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type %s: with host networking the node-to-node address must be the Pod IP (type PodIP)", bn.btype)
	}
	for _, p := range []part{
		{broadcastNodesField, &want.BroadcastAddress, bn.expect},
		{broadcastClientsField, &want.BroadcastRPCAddress, bc.expect},
		{listenNodesField, &want.ListenAddress, ln.expect},
		{listenClientsField, &want.RPCAddress, lc.expect},
	} {
		addr, errMsg := p.pick(family, kind)
		if errMsg != "" && wantErr == "" {
			wantErr = fmt.Sprintf("can't compute %s from %s: %s", p.field.configKey, p.field.apiField, errMsg)
		}
		*p.addr = addr
	}
	if wantErr != "" {
		want = NodeConfig{}
	} else {
		localSeed := bn.other(family)
		switch {
		case first && withExternal:
			want.Seeds = Seeds{Seeds: externalSeeds, First: true}
		case first:
			want.Seeds = Seeds{Seeds: []string{want.BroadcastAddress}, First: true}
		default:
			want.Seeds = Seeds{Seeds: append(slices.Clone(in.ExternalSeeds), localSeed), LocalSeed: otherName}
		}
	}

	for _, input := range []NodeConfigInput{in, reversed(in)} {
		got, err := ComputeNodeConfig(input)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != wantErr {
			t.Fatalf("error:\n got: %s\nwant: %s", gotErr, wantErr)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("unexpected node config (-want +got):\n%s", diff)
		}
	}
}

func otherFamily(f IPFamily, v4, v6 string) string {
	if f == IPv4 {
		return v6
	}
	return v4
}
