package sidecar

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testSettings() ScyllaDBSettings {
	return ScyllaDBSettings{
		ClusterName: "prod",
		Datacenter:  "dc1",
		Rack:        "r1",
		Addresses: Addresses{
			BroadcastAddress: "10.96.0.1", BroadcastRPCAddress: "203.0.113.1", ListenAddress: "0.0.0.0", RPCAddress: "10.0.0.1",
		},
		Seeds:      []string{"x.example.com", "10.96.0.2"},
		APIAddress: "127.0.0.1",
		APIPort:    10000,
		Workdir:    "/var/lib/scylla",
		IPFamily:   IPv4,
	}
}

func TestMergeConfig(t *testing.T) {
	t.Parallel()
	base := []byte(`
cluster_name: Test Cluster
num_tokens: 256
commitlog_sync: periodic
listen_address: localhost
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "127.0.0.1"
`)
	custom := []byte(`
num_tokens: 16
read_request_timeout_in_ms: 10000
broadcast_address: 1.2.3.4
rpc_interface: eth0
alternator_port: 8000
`)
	got, ignored := mergeParsedConfig(t, base, custom, testSettings())
	want := map[string]any{
		"cluster_name":               "prod",
		"num_tokens":                 16,
		"commitlog_sync":             "periodic",
		"read_request_timeout_in_ms": 10000,
		"alternator_port":            8000,
		"endpoint_snitch":            "GossipingPropertyFileSnitch",
		"listen_address":             "0.0.0.0",
		"rpc_address":                "10.0.0.1",
		"broadcast_address":          "10.96.0.1",
		"broadcast_rpc_address":      "203.0.113.1",
		"seed_provider": []any{map[string]any{
			"class_name": "org.apache.cassandra.locator.SimpleSeedProvider",
			"parameters": []any{map[string]any{"seeds": "x.example.com,10.96.0.2"}},
		}},
		"api_address":            "127.0.0.1",
		"api_port":               10000,
		"workdir":                "/var/lib/scylla",
		"enable_ipv6_dns_lookup": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected merged config (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"broadcast_address", "rpc_interface"}, ignored); diff != "" {
		t.Errorf("unexpected ignored keys (-want +got):\n%s", diff)
	}
}

// TestMergeConfigOwnsTheReplaceOptions drops the replace options of the image's and the user's scylla.yaml: the
// sidecar passes the replaced host ID on the command line, and the datacenter's shared config would apply to every
// new node.
func TestMergeConfigOwnsTheReplaceOptions(t *testing.T) {
	t.Parallel()
	base := []byte("replace_address: 10.96.0.8\nnum_tokens: 256\n")
	custom := []byte("replace_node_first_boot: " + replacedHostID + "\nreplace_address_first_boot: 10.96.0.9\nnum_tokens: 16\n")
	s := testSettings()
	s.ReplaceNodeFirstBoot = replacedHostID
	got, ignored := mergeParsedConfig(t, base, custom, s)
	for _, key := range []string{"replace_address", "replace_address_first_boot", "replace_node_first_boot"} {
		if v, ok := got[key]; ok {
			t.Errorf("scylla.yaml has %s: %v, want none", key, v)
		}
	}
	if got["num_tokens"] != 16 {
		t.Errorf("num_tokens = %v, want the custom 16", got["num_tokens"])
	}
	if diff := cmp.Diff([]string{"replace_address_first_boot", "replace_node_first_boot"}, ignored); diff != "" {
		t.Errorf("unexpected ignored keys (-want +got):\n%s", diff)
	}
}

func TestMergeConfigWithoutBaseOrCustom(t *testing.T) {
	t.Parallel()
	s := testSettings()
	s.IPFamily = IPv6
	got, ignored := mergeParsedConfig(t, nil, nil, s)
	if len(ignored) != 0 {
		t.Errorf("ignored %v with no custom config", ignored)
	}
	// The owned keys and alternator_address, which IPv6 needs (TestMergeConfigServesAlternatorOnTheIPFamily).
	if len(got) != len(OwnedConfig(s))+1 || got["enable_ipv6_dns_lookup"] != true {
		t.Errorf("unexpected config %v", got)
	}
}

// TestMergeConfigServesAlternatorOnTheIPFamily checks alternator_address, whose ScyllaDB default is 0.0.0.0: an IPv6
// Pod can't be reached on it, so with IPv6 Alternator listens on :: unless the custom config says where.
func TestMergeConfigServesAlternatorOnTheIPFamily(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		family       IPFamily
		base, custom string
		want         any
	}{
		{name: "IPv4 keeps ScyllaDB's default", family: IPv4, custom: "alternator_port: 8000\n"},
		{name: "IPv6 listens on IPv6's wildcard", family: IPv6, custom: "alternator_port: 8000\n", want: "::"},
		{name: "IPv6 overrides the image's IPv4 wildcard", family: IPv6, base: "alternator_address: 0.0.0.0\n", want: "::"},
		{name: "IPv6 keeps the custom config's address", family: IPv6, custom: "alternator_address: fd00::5\n", want: "fd00::5"},
		{name: "IPv4 keeps the custom config's address", family: IPv4, custom: "alternator_address: 10.0.0.5\n", want: "10.0.0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testSettings()
			s.IPFamily = tc.family
			got, ignored := mergeParsedConfig(t, []byte(tc.base), []byte(tc.custom), s)
			if diff := cmp.Diff(tc.want, got["alternator_address"]); diff != "" {
				t.Errorf("unexpected alternator_address (-want +got):\n%s", diff)
			}
			if len(ignored) != 0 {
				t.Errorf("ignored %v, want nothing", ignored)
			}
		})
	}
}

func TestMergeConfigRejectsNonMaps(t *testing.T) {
	t.Parallel()
	if _, _, err := MergeConfig(nil, []byte("- a\n- b\n"), testSettings()); err == nil {
		t.Error("a custom config that is a list should fail")
	}
	if _, _, err := MergeConfig([]byte("a: [\n"), nil, testSettings()); err == nil {
		t.Error("a malformed base config should fail")
	}
}

func TestRackDCProperties(t *testing.T) {
	t.Parallel()
	if got, want := string(RackDCProperties(testSettings())), "dc=dc1\nrack=r1\nprefer_local=false\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestScyllaDBArgs(t *testing.T) {
	t.Parallel()
	sidecarArgs := []string{
		"--listen-address=0.0.0.0",
		"--rpc-address=10.0.0.1",
		"--broadcast-address=10.96.0.1",
		"--broadcast-rpc-address=203.0.113.1",
		"--seeds=x.example.com,10.96.0.2",
		"--api-address=127.0.0.1",
		"--api-port=10000",
		"--developer-mode=0",
	}
	tt := []struct {
		name        string
		cpus        int
		developer   bool
		replace     string
		tls         TLSSettings
		extra       []string
		wantArgs    []string
		wantIgnored []string
	}{
		{
			name:     "no extra arguments",
			wantArgs: sidecarArgs,
		},
		{
			name:     "user arguments that own nothing pass through in order",
			extra:    []string{"--smp", "2", "--overprovisioned", "--memory=4G", "--abort-on-seastar-bad-alloc"},
			wantArgs: append(append([]string{}, sidecarArgs...), "--smp", "2", "--overprovisioned", "--memory=4G", "--abort-on-seastar-bad-alloc"),
		},
		{
			name:        "owned options are dropped in every spelling with their values",
			extra:       []string{"--seeds", "1.1.1.1", "--memory=4G", "--broadcast_address=1.2.3.4", "-listen-address", "5.6.7.8", "--developer-mode", "--api-port=1"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--memory=4G"),
			wantIgnored: []string{"--seeds 1.1.1.1", "--broadcast_address=1.2.3.4", "-listen-address 5.6.7.8", "--developer-mode", "--api-port=1"},
		},
		{
			name: "abbreviated owned options are dropped, as the entrypoint's argparse and ScyllaDB's option parser accept them",
			extra: []string{"--seed=1.1.1.1", "--listen", "5.6.7.8", "--broadcast-rpc=1.2.3.4", "--developer", "--work=/tmp",
				"--api-ui-dir=/ui", "--memory", "4G"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--api-ui-dir=/ui", "--memory", "4G"),
			wantIgnored: []string{"--seed=1.1.1.1", "--listen 5.6.7.8", "--broadcast-rpc=1.2.3.4", "--developer", "--work=/tmp"},
		},
		{
			name:        "short spellings of owned options are dropped",
			cpus:        4,
			extra:       []string{"-c", "2", "-c2", "-W", "/tmp", "-W/tmp", "-m", "4G"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--smp=4", "-m", "4G"),
			wantIgnored: []string{"-c 2", "-c2", "-W /tmp", "-W/tmp"},
		},
		{
			name:     "a node that replaces another is started with the replaced host ID",
			replace:  replacedHostID,
			extra:    []string{"--overprovisioned"},
			wantArgs: append(append([]string{}, sidecarArgs...), "--replace-node-first-boot="+replacedHostID, "--overprovisioned"),
		},
		{
			name:        "the replace options are owned, whether or not the node replaces another",
			extra:       []string{"--replace-node-first-boot=" + replacedHostID, "--replace_address_first_boot", "10.96.0.9", "--replace-address=10.96.0.9", "--replace", "x", "--memory=4G"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--memory=4G"),
			wantIgnored: []string{"--replace-node-first-boot=" + replacedHostID, "--replace_address_first_boot 10.96.0.9", "--replace-address=10.96.0.9", "--replace x"},
		},
		{
			name:        "a user's replace option can't override the replaced host ID",
			replace:     replacedHostID,
			extra:       []string{"--replace-node-first-boot", "11111111-2222-3333-4444-555555555555"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--replace-node-first-boot="+replacedHostID),
			wantIgnored: []string{"--replace-node-first-boot 11111111-2222-3333-4444-555555555555"},
		},
		{
			name: "the TLS settings of the endpoints served over TLS are owned, so the ports the Pods expose are the ones served",
			tls: TLSSettings{
				CQL:        &CQLTLS{CertificateFile: "/tls/tls.crt", KeyFile: "/tls/tls.key", ClientCAFile: "/ca/ca.crt"},
				Alternator: &AlternatorTLS{CertificateFile: "/alternator/tls.crt", KeyFile: "/alternator/tls.key"},
			},
			extra: []string{"--native-transport-port-ssl=9999", "--native_shard_aware_transport_port_ssl", "29999", "--alternator-https-port", "8443",
				"--client-encryption-options=enabled=false", "--alternator-encryption-opt", "certificate=/x", "--memory=4G",
				"--native-transport-port=9043", "--native-shard-aware-transport-port", "19043"},
			wantArgs: append(append([]string{}, sidecarArgs...), "--memory=4G", "--native-transport-port=9043", "--native-shard-aware-transport-port", "19043"),
			wantIgnored: []string{"--native-transport-port-ssl=9999", "--native_shard_aware_transport_port_ssl 29999", "--alternator-https-port 8443",
				"--client-encryption-options=enabled=false", "--alternator-encryption-opt certificate=/x"},
		},
		{
			name:        "the TLS settings of an endpoint not served over TLS stay the user's",
			tls:         TLSSettings{Alternator: &AlternatorTLS{CertificateFile: "/alternator/tls.crt", KeyFile: "/alternator/tls.key"}},
			extra:       []string{"--native-transport-port-ssl=9999", "--client-encryption-options=enabled=true", "--alternator-https-port=8443"},
			wantArgs:    append(append([]string{}, sidecarArgs...), "--native-transport-port-ssl=9999", "--client-encryption-options=enabled=true"),
			wantIgnored: []string{"--alternator-https-port=8443"},
		},
		{
			name:     "-c is the user's while the CPU count is unset",
			extra:    []string{"-c", "2"},
			wantArgs: append(append([]string{}, sidecarArgs...), "-c", "2"),
		},
		{
			name:        "--smp is owned once the CPU count is set",
			cpus:        4,
			developer:   true,
			extra:       []string{"--smp", "2", "--overprovisioned"},
			wantArgs:    append(append(append([]string{}, sidecarArgs[:7]...), "--developer-mode=1", "--smp=4"), "--overprovisioned"),
			wantIgnored: []string{"--smp 2"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := testSettings()
			s.CPUCount = tc.cpus
			s.DeveloperMode = tc.developer
			s.ReplaceNodeFirstBoot = tc.replace
			s.TLS = tc.tls
			args, ignored := ScyllaDBArgs(s, tc.extra)
			if diff := cmp.Diff(tc.wantArgs, args); diff != "" {
				t.Errorf("unexpected args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantIgnored, ignored); diff != "" {
				t.Errorf("unexpected ignored args (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSplitArgs(t *testing.T) {
	t.Parallel()
	tt := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: "  --smp 2\t--memory=4G \n", want: []string{"--smp", "2", "--memory=4G"}},
		{in: `--a='x y' --b="p \"q\" \\ r" --c=\ z`, want: []string{"--a=x y", `--b=p "q" \ r`, "--c= z"}},
		{in: `''`, want: []string{""}},
		{in: `--a='x`, wantErr: "unterminated single quote at offset 4"},
		{in: `--a="x`, wantErr: "unterminated double quote at offset 4"},
		{in: `--a\`, wantErr: "trailing backslash"},
	}
	for _, tc := range tt {
		got, err := SplitArgs(tc.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tc.wantErr {
			t.Errorf("SplitArgs(%q) error = %q, want %q", tc.in, gotErr, tc.wantErr)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("SplitArgs(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestValidateSeedAcceptsIPsAndDNSNamesOnly(t *testing.T) {
	t.Parallel()
	notAHost := func(s string) string { return fmt.Sprintf("%q is neither an IP address nor a DNS name", s) }
	for _, tc := range []struct {
		seed    string
		wantErr string
	}{
		{seed: "10.0.0.1"},
		{seed: "fd00::1"},
		{seed: "::ffff:10.0.0.1"},
		{seed: "seed.example.com"},
		{seed: "Seed-1.Example.COM"},
		{seed: "scylla-0.ns.svc.cluster.local."},
		{seed: "localhost"},
		{seed: strings.Repeat("a", 63) + ".example.com"},
		{seed: "", wantErr: "a seed must not be empty"},
		{seed: "-x.example.com", wantErr: notAHost("-x.example.com")},
		{seed: "x-.example.com", wantErr: notAHost("x-.example.com")},
		{seed: "a..b", wantErr: notAHost("a..b")},
		{seed: ".", wantErr: notAHost(".")},
		{seed: "http://x", wantErr: notAHost("http://x")},
		{seed: "x y", wantErr: notAHost("x y")},
		{seed: " 10.0.0.1", wantErr: notAHost(" 10.0.0.1")},
		{seed: "under_score.example.com", wantErr: notAHost("under_score.example.com")},
		{seed: strings.Repeat("a", 64) + ".example.com", wantErr: notAHost(strings.Repeat("a", 64) + ".example.com")},
		{seed: strings.Repeat("a.", 127) + "ab", wantErr: notAHost(strings.Repeat("a.", 127) + "ab")},
		{seed: "10.0.0.1:7000", wantErr: notAHost("10.0.0.1:7000")},
		{seed: "[fd00::1]", wantErr: notAHost("[fd00::1]")},
		{seed: "fe80::1%eth0", wantErr: notAHost("fe80::1%eth0")},
		{seed: "10.0.0.300", wantErr: `"10.0.0.300" is neither an IP address nor a DNS name: its last label is numeric, so it looks like a malformed IP address`},
		{seed: "10.0.0", wantErr: `"10.0.0" is neither an IP address nor a DNS name: its last label is numeric, so it looks like a malformed IP address`},
	} {
		t.Run(fmt.Sprintf("%q", tc.seed), func(t *testing.T) {
			t.Parallel()
			gotErr := ""
			if err := ValidateSeed(tc.seed); err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("ValidateSeed(%q) error (-want +got):\n%s", tc.seed, diff)
			}
		})
	}
}
