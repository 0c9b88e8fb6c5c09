package sidecar

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

func validOptions() *Options {
	o := NewOptions()
	o.PodNamespace, o.PodName, o.MemberServiceName = "ns", "sc-dc-r-0", "sc-dc-r-0"
	o.ClusterName, o.Datacenter, o.Rack = "sc", "dc", "r"
	return o
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		modify  func(*Options)
		wantErr string
		check   func(*testing.T, *Options)
	}{
		{
			name: "defaults with identity are valid",
			check: func(t *testing.T, o *Options) {
				want := AddressOptions{
					BroadcastNodes:   BroadcastOptions{Type: BroadcastServiceClusterIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					BroadcastClients: BroadcastOptions{Type: BroadcastServiceClusterIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					ListenNodes:      ListenOptions{Type: ListenAny, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					ListenClients:    ListenOptions{Type: ListenAny, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					IPFamily:         IPv4,
				}
				if diff := cmp.Diff(want, o.addressOptions); diff != "" {
					t.Errorf("unexpected address options (-want +got):\n%s", diff)
				}
				if o.apiHost != "localhost" || o.apiPort != 10000 {
					t.Errorf("API address parsed as %q, %d", o.apiHost, o.apiPort)
				}
			},
		},
		{
			name: "the established operator's ServiceLoadBalancerIngress is an alias",
			modify: func(o *Options) {
				o.BroadcastClientsType = "ServiceLoadBalancerIngress"
			},
			check: func(t *testing.T, o *Options) {
				if got := o.addressOptions.BroadcastClients.Type; got != BroadcastServiceLoadBalancerIngressIP {
					t.Errorf("type = %q", got)
				}
			},
		},
		{
			name: "interface sources and extra args parse",
			modify: func(o *Options) {
				o.BroadcastNodesType = "PodIP"
				o.BroadcastNodesPodIP = PodIPFlags{Source: "Interface", InterfaceName: "eth1"}
				o.ListenClientsType = "PodIP"
				o.IPFamily = "IPv6"
				o.HostNetworking = true
				o.ScyllaDBExtraArgs = `--memory 4G --abc='x y'`
			},
			check: func(t *testing.T, o *Options) {
				if diff := cmp.Diff(BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceInterface, InterfaceName: "eth1"}}, o.addressOptions.BroadcastNodes); diff != "" {
					t.Errorf("unexpected broadcast nodes (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"--memory", "4G", "--abc=x y"}, o.extraArgs); diff != "" {
					t.Errorf("unexpected extra args (-want +got):\n%s", diff)
				}
			},
		},
		{
			name:    "identity flags are required",
			modify:  func(o *Options) { o.PodNamespace, o.PodName, o.MemberServiceName, o.ClusterName = "", "", " ", "" },
			wantErr: "--cluster-name is required, --member-service-name is required, --pod-name is required, --pod-namespace is required",
		},
		{
			name:    "datacenter and rack can't break the properties file",
			modify:  func(o *Options) { o.Datacenter, o.Rack = "dc\nrack=x", "" },
			wantErr: `--datacenter "dc\nrack=x" must not contain whitespace or any of = : \ # !, --rack is required`,
		},
		{
			name:    "bad external seeds",
			modify:  func(o *Options) { o.ExternalSeeds = []string{"10.0.0.1", "not a host"} },
			wantErr: `--external-seeds: "not a host" is neither an IP address nor a DNS name`,
		},
		{
			name: "unknown types and family",
			modify: func(o *Options) {
				o.BroadcastNodesType, o.ListenClientsType, o.IPFamily = "NodeIP", "Everything", "IPv5"
			},
			wantErr: `--broadcast-nodes-type must be one of PodIP, ServiceClusterIP, ServiceLoadBalancerIngressIP, ServiceLoadBalancerIngress, got "NodeIP", --ip-family must be IPv4 or IPv6, got "IPv5", --listen-clients-type must be Any or PodIP, got "Everything"`,
		},
		{
			name:    "an interface needs its name",
			modify:  func(o *Options) { o.ListenNodesType, o.ListenNodesPodIP.Source = "PodIP", "Interface" },
			wantErr: "--listen-nodes-pod-ip-interface-name is required with --listen-nodes-pod-ip-source=Interface",
		},
		{
			name:    "Pod IP flags are refused for other types",
			modify:  func(o *Options) { o.BroadcastClientsPodIP = PodIPFlags{Source: "Interface", InterfaceName: "eth0"} },
			wantErr: "--broadcast-clients-pod-ip-source and --broadcast-clients-pod-ip-interface-name apply only to --broadcast-clients-type=PodIP",
		},
		{
			name: "an interface name with the Status source is refused",
			modify: func(o *Options) {
				o.BroadcastNodesType = "PodIP"
				o.BroadcastNodesPodIP.InterfaceName = "eth0"
			},
			wantErr: "--broadcast-nodes-pod-ip-interface-name applies only to --broadcast-nodes-pod-ip-source=Interface",
		},
		{
			name: "an invalid interface name is refused",
			modify: func(o *Options) {
				o.BroadcastNodesType = "PodIP"
				o.BroadcastNodesPodIP = PodIPFlags{Source: "Interface", InterfaceName: "averyveryverylongname"}
			},
			wantErr: `--broadcast-nodes-pod-ip-interface-name "averyveryverylongname" is not a valid interface name`,
		},
		{
			name:    "bad source",
			modify:  func(o *Options) { o.BroadcastNodesPodIP.Source = "Magic" },
			wantErr: `--broadcast-nodes-pod-ip-source must be Status or Interface, got "Magic"`,
		},
		{
			name:    "host networking needs Pod IPs between nodes",
			modify:  func(o *Options) { o.HostNetworking = true },
			wantErr: `--broadcast-nodes-type must be PodIP with --host-networking, got "ServiceClusterIP"`,
		},
		{
			name: "numbers, addresses, args and timeout",
			modify: func(o *Options) {
				o.CPUCount = -1
				o.ScyllaDBExtraArgs = `--a "b`
				o.ScyllaDBAPIAddress = ":10000"
				o.ProbesAddress = "8080"
				o.StartupTimeout = 0
			},
			wantErr: `--cpu-count must not be negative, got -1, --probes-address must be host:port, got "8080": address 8080: missing port in address, --scylladb-api-address needs a host, got ":10000", --scylladb-extra-args: unterminated double quote at offset 4, --startup-timeout must be positive, got 0s`,
		},
		{
			name:    "the probes need a fixed port",
			modify:  func(o *Options) { o.ProbesAddress = ":0" },
			wantErr: `--probes-address has an invalid port "0"`,
		},
		{
			name:    "the member Service is named after the Pod",
			modify:  func(o *Options) { o.MemberServiceName = "sc-dc-r-1" },
			wantErr: `--member-service-name "sc-dc-r-1" must be the Pod's name, --pod-name "sc-dc-r-0": a node's member Service is named after its Pod`,
		},
		{
			name:    "paths are required",
			modify:  func(o *Options) { o.ScyllaDBEntrypoint, o.ScyllaDBConfigDir, o.ScyllaDBDataDir = "", "", "" },
			wantErr: "--scylladb-config-dir is required, --scylladb-data-dir is required, --scylladb-entrypoint is required",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := validOptions()
			if tc.modify != nil {
				tc.modify(o)
			}
			err := o.Validate()
			got := ""
			if err != nil {
				got = sortedAggregate(err.Error())
			}
			if got != tc.wantErr {
				t.Fatalf("Validate():\n got: %s\nwant: %s", got, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

// sortedAggregate sorts an aggregate error's "[a, b]" parts, which come from map iteration in places.
func sortedAggregate(s string) string {
	if !strings.HasPrefix(s, "[") {
		return s
	}
	parts := strings.Split(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), ", --")
	for i := 1; i < len(parts); i++ {
		parts[i] = "--" + parts[i]
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// TestFlagsFromEnvironment checks the contract that every flag can come from SCYLLA_OPERATOR_<FLAG>.
func TestFlagsFromEnvironment(t *testing.T) {
	env := map[string]string{
		"SCYLLA_OPERATOR_POD_NAMESPACE":                         "ns",
		"SCYLLA_OPERATOR_POD_NAME":                              "p",
		"SCYLLA_OPERATOR_MEMBER_SERVICE_NAME":                   "p",
		"SCYLLA_OPERATOR_CLUSTER_NAME":                          "c",
		"SCYLLA_OPERATOR_DATACENTER":                            "dc",
		"SCYLLA_OPERATOR_RACK":                                  "r",
		"SCYLLA_OPERATOR_EXTERNAL_SEEDS":                        "a.example.com,10.0.0.1",
		"SCYLLA_OPERATOR_BROADCAST_NODES_TYPE":                  "PodIP",
		"SCYLLA_OPERATOR_BROADCAST_NODES_POD_IP_SOURCE":         "Interface",
		"SCYLLA_OPERATOR_BROADCAST_NODES_POD_IP_INTERFACE_NAME": "eth1",
		"SCYLLA_OPERATOR_HOST_NETWORKING":                       "true",
		"SCYLLA_OPERATOR_CPU_COUNT":                             "3",
		"SCYLLA_OPERATOR_STARTUP_TIMEOUT":                       "30s",
		"SCYLLA_OPERATOR_SCYLLADB_API_ADDRESS":                  "127.0.0.1:10001",
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	o := NewOptions()
	cmd := &cobra.Command{Use: "sidecar", RunE: func(*cobra.Command, []string) error { return nil }}
	o.AddFlags(cmd)
	if err := cmd.ParseFlags([]string{"--rack=from-flag"}); err != nil {
		t.Fatal(err)
	}
	if err := genericclioptions.ReadFlagsFromEnv(cmd); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []any{o.PodNamespace, o.PodName, o.MemberServiceName, o.ClusterName, o.Datacenter, o.Rack, o.ExternalSeeds,
		o.addressOptions.BroadcastNodes, o.HostNetworking, o.CPUCount, o.StartupTimeout, o.apiPort}
	want := []any{"ns", "p", "p", "c", "dc", "from-flag", []string{"a.example.com", "10.0.0.1"},
		BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceInterface, InterfaceName: "eth1"}},
		true, 3, 30 * time.Second, 10001}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected options (-want +got):\n%s", diff)
	}
	// Every flag has an environment variable of the documented shape.
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if name := genericclioptions.EnvVarName(f.Name); !strings.HasPrefix(name, "SCYLLA_OPERATOR_") || strings.Contains(name, "-") {
			t.Errorf("flag --%s maps to %q", f.Name, name)
		}
	})
}
