package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// parsedSidecarOptions is what the sidecar made of its arguments, as far as the spec decides it.
type parsedSidecarOptions struct {
	PodNamespace, PodName, MemberServiceName string
	ClusterName, Datacenter, Rack            string
	ExternalSeeds                            []string
	BroadcastNodes, BroadcastClients         string
	ListenNodes, ListenClients               string
	IPFamily                                 string
	HostNetworking                           bool
	CPUCount                                 int
	DeveloperMode                            bool
	ScyllaDBExtraArgs                        string
	CustomConfigPath, DataDir, ProbesAddress string
}

func expectedParsedSidecarOptions() parsedSidecarOptions {
	return parsedSidecarOptions{
		PodNamespace: testNamespace, PodName: "basic-dc1-a-0", MemberServiceName: "basic-dc1-a-0",
		ClusterName: "cluster", Datacenter: "dc1", Rack: "a",
		BroadcastNodes: "ServiceClusterIP/Status/", BroadcastClients: "ServiceClusterIP/Status/",
		ListenNodes: "Any/Status/", ListenClients: "Any/Status/",
		IPFamily:         "IPv4",
		CPUCount:         2,
		CustomConfigPath: "/var/run/configmaps/scylla-operator.scylladb.com/scylladb/managed-config/scylla.yaml",
		DataDir:          "/var/lib/scylla",
		ProbesAddress:    ":8080",
	}
}

// TestMakeSidecarArgs runs every expose, seed and ScyllaDB option combination through the sidecar's own flag
// parsing and validation, so that the operator never starts a pod whose sidecar refuses its arguments.
func TestMakeSidecarArgs(t *testing.T) {
	t.Parallel()

	broadcast := func(t scyllav1alpha1.BroadcastAddressType) *scyllav1alpha1.BroadcastOptions {
		return &scyllav1alpha1.BroadcastOptions{Type: t}
	}
	iface := func(name string) *scyllav1alpha1.PodIPAddressOptions {
		return &scyllav1alpha1.PodIPAddressOptions{Source: scyllav1alpha1.PodIPSourceInterface, InterfaceOptions: &scyllav1alpha1.PodIPInterfaceOptions{InterfaceName: name}}
	}

	tt := []struct {
		name     string
		modify   func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		wantArgs []string
		want     func(o *parsedSidecarOptions)
	}{
		{
			name: "private Kubernetes: ClusterIP Services advertised to nodes and clients",
		},
		{
			name: "private VPC: headless Services, Pod IPs advertised",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService:      &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless},
					BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{},
				}
			},
			wantArgs: []string{"--broadcast-nodes-type=PodIP", "--broadcast-clients-type=PodIP"},
			want: func(o *parsedSidecarOptions) {
				o.BroadcastNodes, o.BroadcastClients = "PodIP/Status/", "PodIP/Status/"
			},
		},
		{
			name: "private VPC and public LB: Pod IPs to nodes, the load balancer to clients (established spelling)",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
					BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
						Nodes:   broadcast(scyllav1alpha1.BroadcastAddressTypePodIP),
						Clients: broadcast(scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngress),
					},
				}
			},
			wantArgs: []string{"--broadcast-nodes-type=PodIP", "--broadcast-clients-type=ServiceLoadBalancerIngress"},
			want: func(o *parsedSidecarOptions) {
				o.BroadcastNodes, o.BroadcastClients = "PodIP/Status/", "ServiceLoadBalancerIngress/Status/"
			},
		},
		{
			name: "multiple interfaces: addresses and sockets from named interfaces",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless},
					BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
						Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP, PodIP: iface("eth1")},
						Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP, PodIP: &scyllav1alpha1.PodIPAddressOptions{Source: scyllav1alpha1.PodIPSourceStatus}},
					},
					ListenOptions: &scyllav1alpha1.NodeListenOptions{
						Nodes:   &scyllav1alpha1.ListenOptions{Type: scyllav1alpha1.ListenAddressTypePodIP, PodIP: iface("eth1")},
						Clients: &scyllav1alpha1.ListenOptions{Type: scyllav1alpha1.ListenAddressTypePodIP},
					},
				}
			},
			wantArgs: []string{
				"--broadcast-nodes-type=PodIP", "--broadcast-nodes-pod-ip-source=Interface", "--broadcast-nodes-pod-ip-interface-name=eth1",
				"--broadcast-clients-type=PodIP", "--broadcast-clients-pod-ip-source=Status",
				"--listen-nodes-type=PodIP", "--listen-nodes-pod-ip-source=Interface", "--listen-nodes-pod-ip-interface-name=eth1",
				"--listen-clients-type=PodIP",
			},
			want: func(o *parsedSidecarOptions) {
				o.BroadcastNodes, o.BroadcastClients = "PodIP/Interface/eth1", "PodIP/Status/"
				o.ListenNodes, o.ListenClients = "PodIP/Interface/eth1", "PodIP/Status/"
			},
		},
		{
			name: "an empty listen entry means Any",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{ListenOptions: &scyllav1alpha1.NodeListenOptions{Nodes: &scyllav1alpha1.ListenOptions{}}}
			},
		},
		{
			name: "IPv6 first",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyPreferDualStack)
				sdc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
			},
			wantArgs: []string{"--ip-family=IPv6"},
			want: func(o *parsedSidecarOptions) {
				o.IPFamily = "IPv6"
			},
		},
		{
			name: "host networking",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
			},
			wantArgs: []string{"--broadcast-nodes-type=PodIP", "--broadcast-clients-type=PodIP", "--host-networking=true"},
			want: func(o *parsedSidecarOptions) {
				o.BroadcastNodes, o.BroadcastClients = "PodIP/Status/", "PodIP/Status/"
				o.HostNetworking = true
			},
		},
		{
			name: "host networking turned off explicitly",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "false"}
			},
		},
		{
			name: "external seeds, in order",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.ExternalSeeds = []string{"10.0.0.1", "dc1-seed.scylla.svc.cluster.local", "fd00::1"}
			},
			wantArgs: []string{"--external-seeds=10.0.0.1,dc1-seed.scylla.svc.cluster.local,fd00::1"},
			want: func(o *parsedSidecarOptions) {
				o.ExternalSeeds = []string{"10.0.0.1", "dc1-seed.scylla.svc.cluster.local", "fd00::1"}
			},
		},
		{
			name: "developer mode, extra arguments and the cluster name defaulting to the object's name",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ClusterName = ""
				sdc.Spec.DatacenterName = nil
				sdc.Spec.ScyllaDB.EnableDeveloperMode = new(true)
				sdc.Spec.ScyllaDB.AdditionalScyllaDBArguments = []string{"--blocked-reactor-notify-ms", "100", "--logger-log-level", "a b=debug"}
			},
			wantArgs: []string{"--cluster-name=basic", "--datacenter=basic", "--developer-mode=true", "--scylladb-extra-args=--blocked-reactor-notify-ms 100 --logger-log-level 'a b=debug'"},
			want: func(o *parsedSidecarOptions) {
				o.ClusterName, o.Datacenter = "basic", "basic"
				o.DeveloperMode = true
				o.ScyllaDBExtraArgs = "--blocked-reactor-notify-ms 100 --logger-log-level 'a b=debug'"
			},
		},
		{
			name: "CPU count from a fractional request rounds up, without a limit",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}}
			},
			wantArgs: []string{"--cpu-count=2"},
		},
		{
			name: "no CPU resources leave the CPU count to ScyllaDB",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Resources = nil
			},
			wantArgs: []string{"--cpu-count="},
			want: func(o *parsedSidecarOptions) {
				o.CPUCount = 0
			},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc, rack := newModifiedSDC(tc.modify)
			args, err := makeSidecarArgs(sdc, rack)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}

			// wantArgs replace the expected arguments of the same flags; "--flag=" removes one.
			wantArgs := expectedSidecarArgs()
			for _, w := range tc.wantArgs {
				wantArgs = replaceFlag(wantArgs, w)
			}
			if diff := cmp.Diff(wantArgs, args); diff != "" {
				t.Errorf("unexpected arguments (-want +got):\n%s", diff)
			}

			o := parseSidecarArgs(t, args)
			got := parsedSidecarOptions{
				PodNamespace: o.PodNamespace, PodName: o.PodName, MemberServiceName: o.MemberServiceName,
				ClusterName: o.ClusterName, Datacenter: o.Datacenter, Rack: o.Rack,
				ExternalSeeds:     o.ExternalSeeds,
				BroadcastNodes:    o.BroadcastNodesType + "/" + o.BroadcastNodesPodIP.Source + "/" + o.BroadcastNodesPodIP.InterfaceName,
				BroadcastClients:  o.BroadcastClientsType + "/" + o.BroadcastClientsPodIP.Source + "/" + o.BroadcastClientsPodIP.InterfaceName,
				ListenNodes:       o.ListenNodesType + "/" + o.ListenNodesPodIP.Source + "/" + o.ListenNodesPodIP.InterfaceName,
				ListenClients:     o.ListenClientsType + "/" + o.ListenClientsPodIP.Source + "/" + o.ListenClientsPodIP.InterfaceName,
				IPFamily:          o.IPFamily,
				HostNetworking:    o.HostNetworking,
				CPUCount:          o.CPUCount,
				DeveloperMode:     o.DeveloperMode,
				ScyllaDBExtraArgs: o.ScyllaDBExtraArgs,
				CustomConfigPath:  o.ScyllaDBCustomConfigPath,
				DataDir:           o.ScyllaDBDataDir,
				ProbesAddress:     o.ProbesAddress,
			}
			want := expectedParsedSidecarOptions()
			if tc.want != nil {
				tc.want(&want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected sidecar options (-want +got):\n%s", diff)
			}
		})
	}
}

// replaceFlag replaces the argument of arg's flag in args, removes it when arg has no value, or inserts arg in the
// order makeSidecarArgs writes flags.
func replaceFlag(args []string, arg string) []string {
	name, value := splitFlag(arg)
	for i, a := range args {
		if n, _ := splitFlag(a); n == name {
			if len(value) == 0 {
				return append(args[:i:i], args[i+1:]...)
			}
			args[i] = arg
			return args
		}
	}
	order := []string{
		"--pod-namespace", "--pod-name", "--member-service-name", "--cluster-name", "--datacenter", "--rack", "--external-seeds", "--broadcast-nodes-type", "--broadcast-nodes-pod-ip-source", "--broadcast-nodes-pod-ip-interface-name",
		"--broadcast-clients-type", "--broadcast-clients-pod-ip-source", "--broadcast-clients-pod-ip-interface-name",
		"--listen-nodes-type", "--listen-nodes-pod-ip-source", "--listen-nodes-pod-ip-interface-name",
		"--listen-clients-type", "--listen-clients-pod-ip-source", "--listen-clients-pod-ip-interface-name",
		"--ip-family", "--host-networking", "--cpu-count", "--developer-mode", "--scylladb-extra-args",
		"--scylladb-custom-config-path", "--scylladb-data-dir", "--probes-address",
	}
	rank := func(flag string) int {
		for i, o := range order {
			if o == flag {
				return i
			}
		}
		panic("unknown sidecar flag " + flag)
	}
	for i, a := range args {
		if n, _ := splitFlag(a); rank(n) > rank(name) {
			return append(args[:i:i], append([]string{arg}, args[i:]...)...)
		}
	}
	return append(args, arg)
}

func splitFlag(arg string) (string, string) {
	for i := range arg {
		if arg[i] == '=' {
			return arg[:i], arg[i+1:]
		}
	}
	return arg, ""
}
