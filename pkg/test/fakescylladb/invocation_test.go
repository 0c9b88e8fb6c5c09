package fakescylladb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeConfig(t *testing.T, yaml, rackdc string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scylla.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if rackdc != "" {
		if err := os.WriteFile(filepath.Join(dir, "cassandra-rackdc.properties"), []byte(rackdc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// defaultSettingsReplacing returns the settings of an empty scylla.yaml with replace_node_first_boot set to hostID.
func defaultSettingsReplacing(hostID string) Settings {
	return Settings{
		ClusterName: "Test Cluster", ListenAddress: "localhost", RPCAddress: "localhost", BroadcastAddress: "localhost",
		BroadcastRPCAddress: "localhost", APIAddress: "localhost", APIPort: 10000, EndpointSnitch: "SimpleSnitch",
		Workdir: "/var/lib/scylla", ReplaceNodeFirstBoot: hostID,
	}
}

func TestParseInvocation(t *testing.T) {
	t.Parallel()
	const yamlConfig = `cluster_name: prod
listen_address: 10.0.0.1
rpc_address: 10.0.0.1
broadcast_address: 10.0.0.1
endpoint_snitch: GossipingPropertyFileSnitch
workdir: /data
api_port: 10001
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "10.0.0.5, 10.0.0.6"
`
	tt := []struct {
		name    string
		yaml    string
		rackdc  string
		args    []string
		want    Settings
		wantErr string
	}{
		{
			name:   "scylla.yaml alone",
			yaml:   yamlConfig,
			rackdc: "# comment\ndc=dc1\nrack = r1\n",
			want: Settings{
				ClusterName: "prod", ListenAddress: "10.0.0.1", RPCAddress: "10.0.0.1", BroadcastAddress: "10.0.0.1",
				BroadcastRPCAddress: "10.0.0.1", Seeds: []string{"10.0.0.5", "10.0.0.6"}, APIAddress: "localhost",
				APIPort: 10001, EndpointSnitch: "GossipingPropertyFileSnitch", Datacenter: "dc1", Rack: "r1", Workdir: "/data",
			},
		},
		{
			name:   "the command line overrides scylla.yaml in every spelling",
			yaml:   yamlConfig,
			rackdc: "dc=dc1\nrack=r1\n",
			args: []string{
				"--seeds=10.0.0.7", "--broadcast-address", "10.0.0.2", "--broadcast_rpc_address=10.0.0.3",
				"--api-address=127.0.0.2", "--smp", "2", "--overprovisioned", "--developer-mode=1",
			},
			want: Settings{
				ClusterName: "prod", ListenAddress: "10.0.0.1", RPCAddress: "10.0.0.1", BroadcastAddress: "10.0.0.2",
				BroadcastRPCAddress: "10.0.0.3", Seeds: []string{"10.0.0.7"}, APIAddress: "127.0.0.2",
				APIPort: 10001, EndpointSnitch: "GossipingPropertyFileSnitch", Datacenter: "dc1", Rack: "r1", Workdir: "/data",
				SMP: "2", DeveloperMode: "1",
			},
		},
		{
			name:    "GossipingPropertyFileSnitch without rack properties fails",
			yaml:    yamlConfig,
			wantErr: "GossipingPropertyFileSnitch needs dc and rack in cassandra-rackdc.properties, got map[]",
		},
		{
			name:    "a positional argument fails",
			yaml:    "{}",
			args:    []string{"scylla"},
			wantErr: `unexpected positional argument "scylla"`,
		},
		{
			name:    "a bad seed provider fails",
			yaml:    "seed_provider: 3\n",
			wantErr: "seed_provider must be a non-empty list, got 3",
		},
		{
			name:    "a bad API port fails",
			yaml:    "api_port: http\n",
			wantErr: `invalid api_port "http"`,
		},
		{
			name: "replace_node_first_boot from scylla.yaml",
			yaml: "replace_node_first_boot: 7F1D0A6C-2B9E-4C55-9D0A-3E1B2C4D5E6F\n",
			want: defaultSettingsReplacing("7f1d0a6c-2b9e-4c55-9d0a-3e1b2c4d5e6f"),
		},
		{
			name: "--replace-node-first-boot overrides scylla.yaml",
			yaml: "replace_node_first_boot: 7f1d0a6c-2b9e-4c55-9d0a-3e1b2c4d5e6f\n",
			args: []string{"--replace-node-first-boot", "0b8e3c1a-5d4f-4e2b-8a7c-9f6e5d4c3b2a"},
			want: defaultSettingsReplacing("0b8e3c1a-5d4f-4e2b-8a7c-9f6e5d4c3b2a"),
		},
		{
			name: "--replace_node_first_boot with underscores",
			yaml: "{}",
			args: []string{"--replace_node_first_boot=0b8e3c1a-5d4f-4e2b-8a7c-9f6e5d4c3b2a"},
			want: defaultSettingsReplacing("0b8e3c1a-5d4f-4e2b-8a7c-9f6e5d4c3b2a"),
		},
		{
			name: "an empty --replace-node-first-boot replaces nothing",
			yaml: "replace_node_first_boot: 7f1d0a6c-2b9e-4c55-9d0a-3e1b2c4d5e6f\n",
			args: []string{"--replace-node-first-boot="},
			want: defaultSettingsReplacing(""),
		},
		{
			name:    "a replace_node_first_boot that isn't a host ID fails",
			yaml:    "{}",
			args:    []string{"--replace-node-first-boot=10.0.0.3"},
			wantErr: `invalid replace_node_first_boot "10.0.0.3": it must be the host ID (a UUID) of the node to replace: invalid UUID length: 8`,
		},
		{
			name:    "replace_address_first_boot is refused rather than ignored",
			yaml:    "replace_address_first_boot: 10.0.0.3\n",
			wantErr: `replace_address_first_boot="10.0.0.3": the fake ScyllaDB replaces nodes by host ID only; use replace_node_first_boot`,
		},
		{
			name:    "--replace-address is refused rather than ignored",
			yaml:    "{}",
			args:    []string{"--replace-address", "10.0.0.3"},
			wantErr: `replace_address="10.0.0.3": the fake ScyllaDB replaces nodes by host ID only; use replace_node_first_boot`,
		},
		{
			name:    "a bad properties line fails",
			yaml:    "{}",
			rackdc:  "dc\n",
			wantErr: ":1: expected key=value, got \"dc\"",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeConfig(t, tc.yaml, tc.rackdc)
			inv, err := ParseInvocation(tc.args, dir)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("expected error %q, got none", tc.wantErr)
				}
				if got := err.Error(); !strings.HasSuffix(got, tc.wantErr) {
					t.Fatalf("error = %q, want it to end with %q", got, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, inv.Settings); diff != "" {
				t.Errorf("unexpected settings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseInvocationNeedsScyllaYAML(t *testing.T) {
	t.Parallel()
	if _, err := ParseInvocation(nil, t.TempDir()); err == nil {
		t.Error("expected an error without scylla.yaml")
	}
}

func TestKnobsFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		EnvStartupDelay: "2s", EnvDown: "true", EnvAPIFailure: "false", EnvExitCode: "3",
	}
	k, err := KnobsFromEnv(func(s string) string { return env[s] })
	if err != nil {
		t.Fatal(err)
	}
	code := 3
	want := Knobs{StartupDelay: Duration(2e9), Down: true, ExitCode: &code}
	if diff := cmp.Diff(want, k); diff != "" {
		t.Errorf("unexpected knobs (-want +got):\n%s", diff)
	}
	for name, bad := range map[string]string{EnvBootstrapDelay: "-1s", EnvDown: "yes please", EnvExitCode: "300"} {
		if _, err := KnobsFromEnv(func(s string) string {
			if s == name {
				return bad
			}
			return ""
		}); err == nil {
			t.Errorf("%s=%q: expected an error", name, bad)
		}
	}
}
