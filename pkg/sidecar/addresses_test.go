package sidecar

import (
	"errors"
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestComputeAddressesErrors(t *testing.T) {
	t.Parallel()
	status := PodIPOptions{Source: PodIPSourceStatus}
	iface := func(name string) PodIPOptions { return PodIPOptions{Source: PodIPSourceInterface, InterfaceName: name} }
	opts := func(bn BroadcastOptions, family IPFamily) AddressOptions {
		return AddressOptions{
			BroadcastNodes:   bn,
			BroadcastClients: BroadcastOptions{Type: BroadcastPodIP, PodIP: status},
			ListenNodes:      ListenOptions{Type: ListenAny},
			ListenClients:    ListenOptions{Type: ListenAny},
			IPFamily:         family,
		}
	}
	pod := makePod(selfName, false, "10.0.0.11")
	lb := makeService(selfName, loadBalancerService, baseTime, []string{"10.96.0.11"}, nil)
	lbHostnameOnly := lb.DeepCopy()
	lbNoIngress := lb.DeepCopy()
	lbNoIngress.Status.LoadBalancer.Ingress = nil
	ifaces := fakeInterfaces{
		"eth1":  {"192.168.1.11", "fe80::1"},
		"multi": {"192.168.1.11", "192.168.2.11"},
		"v6":    {"fe80::1", "2001:db8::1"},
	}

	tt := []struct {
		name     string
		opts     AddressOptions
		pod      *corev1.Pod
		svc      *corev1.Service
		want     Addresses
		wantErr  string
		waitable bool
	}{
		{
			name:     "a Pod without an IP yet is waited for",
			opts:     opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: status}, IPv4),
			pod:      makePod(selfName, false),
			svc:      lb,
			wantErr:  `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: Pod "ns/sc-dc-r-1" has no IP in its status: not available yet`,
			waitable: true,
		},
		{
			name:    "a Pod without an IP of the family fails",
			opts:    opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: status}, IPv6),
			pod:     pod,
			svc:     lb,
			wantErr: `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: Pod "ns/sc-dc-r-1" has no IPv6 address in status.podIPs [10.0.0.11]`,
		},
		{
			name: "status.podIP is used when podIPs is empty",
			opts: opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: status}, IPv4),
			pod: func() *corev1.Pod {
				p := makePod(selfName, false)
				p.Status.PodIP = "10.0.0.12"
				return p
			}(),
			svc:  lb,
			want: Addresses{BroadcastAddress: "10.0.0.12", BroadcastRPCAddress: "10.0.0.12", ListenAddress: "0.0.0.0", RPCAddress: "0.0.0.0"},
		},
		{
			name:     "a LoadBalancer without ingress yet is waited for",
			opts:     opts(BroadcastOptions{Type: BroadcastServiceLoadBalancerIngressIP}, IPv4),
			pod:      pod,
			svc:      lbNoIngress,
			wantErr:  `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type ServiceLoadBalancerIngressIP: Service "ns/sc-dc-r-1" has no load balancer ingress: not available yet`,
			waitable: true,
		},
		{
			name:     "a LoadBalancer with only a hostname is waited for, saying the hostname is not used",
			opts:     opts(BroadcastOptions{Type: BroadcastServiceLoadBalancerIngressIP}, IPv4),
			pod:      pod,
			svc:      lbHostnameOnly,
			wantErr:  `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type ServiceLoadBalancerIngressIP: Service "ns/sc-dc-r-1" has only hostnames (lb.example.com) in status.loadBalancer.ingress; this type takes status.loadBalancer.ingress[].ip and never uses a hostname, so it waits for the load balancer to get an IP: not available yet`,
			waitable: true,
		},
		{
			name:    "a LoadBalancer with a hostname and an IP of the other family fails",
			opts:    opts(BroadcastOptions{Type: BroadcastServiceLoadBalancerIngressIP}, IPv6),
			pod:     makePod(selfName, false, "fd00::11"),
			svc:     makeService(selfName, loadBalancerService, baseTime, []string{"fd96::11"}, []string{"203.0.113.11"}),
			wantErr: `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type ServiceLoadBalancerIngressIP: Service "ns/sc-dc-r-1" has no IPv6 load balancer ingress IP (ingress: hostname lb.example.com, 203.0.113.11)`,
		},
		{
			name:    "a missing interface fails naming the field",
			opts:    opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: iface("eth9")}, IPv4),
			pod:     pod,
			svc:     lb,
			wantErr: `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: "eth9": interface does not exist`,
		},
		{
			name:    "an interface with two addresses of the family fails",
			opts:    opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: iface("multi")}, IPv4),
			pod:     pod,
			svc:     lb,
			wantErr: `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: interface "multi" has 2 IPv4 addresses [192.168.1.11 192.168.2.11]; only interfaces with one are supported`,
		},
		{
			name:    "an interface with only a link-local IPv6 address has no IPv6 address",
			opts:    opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: iface("eth1")}, IPv6),
			pod:     makePod(selfName, false, "fd00::11"),
			svc:     lb,
			wantErr: `can't compute broadcast_address from exposeOptions.broadcastOptions.nodes: type PodIP: interface "eth1" has no IPv6 address (it has [192.168.1.11 fe80::1])`,
		},
		{
			name: "the link-local address of an interface is skipped",
			opts: opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: iface("v6")}, IPv6),
			pod:  makePod(selfName, false, "fd00::11"),
			svc:  lb,
			want: Addresses{BroadcastAddress: "2001:db8::1", BroadcastRPCAddress: "fd00::11", ListenAddress: "::", RPCAddress: "::"},
		},
		{
			name: "a listen address error names its field",
			opts: func() AddressOptions {
				o := opts(BroadcastOptions{Type: BroadcastServiceClusterIP}, IPv4)
				o.ListenClients = ListenOptions{Type: ListenPodIP, PodIP: iface("eth9")}
				return o
			}(),
			pod:     pod,
			svc:     lb,
			wantErr: `can't compute rpc_address from exposeOptions.listenOptions.clients: type PodIP: "eth9": interface does not exist`,
		},
		{
			name: "a ServiceClusterIP without an address of the family fails",
			opts: func() AddressOptions {
				o := opts(BroadcastOptions{Type: BroadcastPodIP, PodIP: status}, IPv6)
				o.BroadcastClients = BroadcastOptions{Type: BroadcastServiceClusterIP}
				return o
			}(),
			pod:     makePod(selfName, false, "fd00::11"),
			svc:     lb,
			wantErr: `can't compute broadcast_rpc_address from exposeOptions.broadcastOptions.clients: type ServiceClusterIP: Service "ns/sc-dc-r-1" has no IPv6 ClusterIP in spec.clusterIPs [10.96.0.11]`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ComputeAddresses(tc.opts, tc.pod, tc.svc, ifaces)
			checkError(t, err, tc.wantErr, tc.waitable)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected addresses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLocalInterfacesReadsTheNetworkNamespace(t *testing.T) {
	t.Parallel()
	all, err := net.Interfaces()
	if err != nil || len(all) == 0 {
		t.Fatalf("can't list interfaces: %v", err)
	}
	addrs, err := all[0].Addrs()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, a := range addrs {
		if ipNet, ok := a.(*net.IPNet); ok {
			want = append(want, ipNet.IP.String())
		}
	}
	ips, err := LocalInterfaces{}.InterfaceAddresses(all[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ip := range ips {
		got = append(got, ip.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected addresses of %s (-want +got):\n%s", all[0].Name, diff)
	}
	if _, err := (LocalInterfaces{}).InterfaceAddresses("no-such-if0"); !errors.Is(err, ErrInterfaceNotFound) {
		t.Errorf("a missing interface gave %v, want ErrInterfaceNotFound", err)
	}
}

// checkError fails the test unless err's message is wantErr ("" for no error) and err is ErrNotYetAvailable exactly
// when waitable.
func checkError(t *testing.T, err error, wantErr string, waitable bool) {
	t.Helper()
	gotErr := ""
	if err != nil {
		gotErr = err.Error()
	}
	if gotErr != wantErr {
		t.Fatalf("error:\n got: %s\nwant: %s", gotErr, wantErr)
	}
	if errors.Is(err, ErrNotYetAvailable) != waitable {
		t.Errorf("errors.Is(err, ErrNotYetAvailable) = %v, want %v", !waitable, waitable)
	}
}

func TestServiceAddressChange(t *testing.T) {
	t.Parallel()
	clusterIP := BroadcastOptions{Type: BroadcastServiceClusterIP}
	ingressIP := BroadcastOptions{Type: BroadcastServiceLoadBalancerIngressIP}
	podIP := BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}}
	opts := func(nodes, clients BroadcastOptions) AddressOptions {
		return AddressOptions{BroadcastNodes: nodes, BroadcastClients: clients, ListenNodes: ListenOptions{Type: ListenAny}, ListenClients: ListenOptions{Type: ListenAny}, IPFamily: IPv4}
	}
	inUse := Addresses{BroadcastAddress: "10.96.0.11", BroadcastRPCAddress: "203.0.113.11", ListenAddress: "0.0.0.0", RPCAddress: "0.0.0.0"}
	lb := func(clusterIP string, ingress ...string) *corev1.Service {
		svc := makeService(selfName, loadBalancerService, baseTime, []string{clusterIP}, ingress)
		return svc
	}

	for _, tc := range []struct {
		name    string
		opts    AddressOptions
		svc     *corev1.Service
		wantErr string
	}{
		{
			name: "the same addresses are no change",
			opts: opts(clusterIP, ingressIP),
			svc:  lb("10.96.0.11", "203.0.113.11"),
		},
		{
			name:    "a recreated Service with a new ClusterIP is a change",
			opts:    opts(clusterIP, ingressIP),
			svc:     lb("10.96.0.99", "203.0.113.11"),
			wantErr: `broadcast_address from exposeOptions.broadcastOptions.nodes (type ServiceClusterIP) is now 10.96.0.99, but the node runs with 10.96.0.11`,
		},
		{
			name:    "a new load balancer IP is a change",
			opts:    opts(clusterIP, ingressIP),
			svc:     lb("10.96.0.11", "203.0.113.99"),
			wantErr: `broadcast_rpc_address from exposeOptions.broadcastOptions.clients (type ServiceLoadBalancerIngressIP) is now 203.0.113.99, but the node runs with 203.0.113.11`,
		},
		{
			name:    "both changes are reported",
			opts:    opts(clusterIP, ingressIP),
			svc:     lb("10.96.0.99", "203.0.113.99"),
			wantErr: `broadcast_address from exposeOptions.broadcastOptions.nodes (type ServiceClusterIP) is now 10.96.0.99, but the node runs with 10.96.0.11; broadcast_rpc_address from exposeOptions.broadcastOptions.clients (type ServiceLoadBalancerIngressIP) is now 203.0.113.99, but the node runs with 203.0.113.11`,
		},
		{
			name: "a load balancer that lost its ingress is no change yet",
			opts: opts(clusterIP, ingressIP),
			svc:  lb("10.96.0.11"),
		},
		{
			name: "Pod IPs don't come from the Service",
			opts: opts(podIP, podIP),
			svc:  makeService(selfName, headlessService, baseTime, nil, nil),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gotErr := ""
			if err := ServiceAddressChange(tc.opts, inUse, tc.svc); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("unexpected change (-want +got):\n%s", diff)
			}
		})
	}
}
