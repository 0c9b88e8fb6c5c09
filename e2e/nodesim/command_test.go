package nodesim

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuildSidecarCommandKeepsThePodsArgumentsAndOverridesWhatTheHostChanges(t *testing.T) {
	t.Parallel()
	fs := &containerFS{rootfs: "/sim/pod/rootfs", mounts: []fsMount{
		{containerPath: "/var/run/configmaps/managed", hostPath: "/sim/pod/volumes/managed"},
		{containerPath: "/var/lib/scylla", hostPath: "/sim/claims/uid-7"},
		{containerPath: "/mnt/hostpath"},
	}}
	env := []envVar{{"POD_NAME", "dc-a-0"}, {"POD_NAMESPACE", "ns1"}}
	base := commandInput{
		Command:            []string{"/mnt/shared/scylla-operator", "sidecar", "--pod-name=$(POD_NAME)", "--member-service-name=$(POD_NAME)", "--probes-address=:8080"},
		Args:               []string{"--scylladb-data-dir=/var/lib/scylla", "--scylladb-custom-config-path", "/var/run/configmaps/managed/scylla.yaml"},
		Env:                env,
		FS:                 fs,
		SidecarBinary:      "/bin/scylla-operator",
		FakeScyllaDBBinary: "/bin/fake-scylladb",
		Kubeconfig:         "/sim/pod/kubeconfig",
		ProbesAddress:      "127.0.0.1:4001",
		APIAddress:         "127.0.0.1:4002",
	}
	podArgs := []string{"sidecar", "--pod-name=dc-a-0", "--member-service-name=dc-a-0", "--probes-address=:8080",
		"--scylladb-data-dir=/var/lib/scylla", "--scylladb-custom-config-path", "/var/run/configmaps/managed/scylla.yaml"}
	overrides := []string{
		"--kubeconfig=/sim/pod/kubeconfig",
		"--probes-address=127.0.0.1:4001",
		"--scylladb-api-address=127.0.0.1:4002",
		"--scylladb-entrypoint=/bin/fake-scylladb",
		"--scylladb-config-dir=/sim/pod/rootfs/etc/scylla",
		"--scylladb-base-config-path=/sim/pod/rootfs/etc/scylla/scylla.yaml",
		"--scylladb-custom-config-path=/sim/pod/volumes/managed/scylla.yaml",
		"--scylladb-data-dir=/sim/claims/uid-7",
	}

	tests := []struct {
		name              string
		modify            func(*commandInput)
		wantArgs          []string
		wantMemberService string
		wantErr           string
	}{
		{
			name:              "operator's container",
			wantArgs:          append(append([]string{}, podArgs...), overrides...),
			wantMemberService: "dc-a-0",
		},
		{
			name: "path from the environment is mapped",
			modify: func(in *commandInput) {
				in.Args = nil
				in.Env = append(append([]envVar{}, env...), envVar{"SCYLLA_OPERATOR_SCYLLADB_DATA_DIR", "/var/lib/scylla/sub"},
					envVar{"SCYLLA_OPERATOR_MEMBER_SERVICE_NAME", "from-env"})
				in.Command = []string{"/mnt/shared/scylla-operator", "sidecar", "--pod-name=$(POD_NAME)", "--pod-namespace=$(POD_NAMESPACE)", "--probes-address=:8080"}
			},
			wantMemberService: "from-env",
			wantArgs: append([]string{"sidecar", "--pod-name=dc-a-0", "--pod-namespace=ns1", "--probes-address=:8080"},
				"--kubeconfig=/sim/pod/kubeconfig", "--probes-address=127.0.0.1:4001", "--scylladb-api-address=127.0.0.1:4002",
				"--scylladb-entrypoint=/bin/fake-scylladb", "--scylladb-config-dir=/sim/pod/rootfs/etc/scylla",
				"--scylladb-base-config-path=/sim/pod/rootfs/etc/scylla/scylla.yaml", "--scylladb-data-dir=/sim/claims/uid-7/sub"),
		},
		{
			name: "empty base config stays empty and no kubeconfig keeps the Pod's",
			modify: func(in *commandInput) {
				in.Command = append(append([]string{}, in.Command...), "--scylladb-base-config-path=", "--v=2")
				in.Args = nil
				in.Kubeconfig = ""
			},
			wantArgs: append(append([]string{}, podArgs[:4]...), "--scylladb-base-config-path=", "--v=2",
				"--probes-address=127.0.0.1:4001", "--scylladb-api-address=127.0.0.1:4002",
				"--scylladb-entrypoint=/bin/fake-scylladb", "--scylladb-config-dir=/sim/pod/rootfs/etc/scylla",
				"--scylladb-data-dir=/sim/claims/uid-7"),
			wantMemberService: "dc-a-0",
		},
		{
			name: "command and args split differently",
			modify: func(in *commandInput) {
				in.Command = []string{"/mnt/shared/scylla-operator"}
				in.Args = append([]string{"sidecar"}, base.Command[2:]...)
			},
			wantArgs: append(append([]string{}, podArgs[:4]...), "--kubeconfig=/sim/pod/kubeconfig", "--probes-address=127.0.0.1:4001",
				"--scylladb-api-address=127.0.0.1:4002", "--scylladb-entrypoint=/bin/fake-scylladb",
				"--scylladb-config-dir=/sim/pod/rootfs/etc/scylla", "--scylladb-base-config-path=/sim/pod/rootfs/etc/scylla/scylla.yaml",
				"--scylladb-data-dir=/sim/claims/uid-7"),
			wantMemberService: "dc-a-0",
		},
		{
			name:    "another program",
			modify:  func(in *commandInput) { in.Command = []string{"/docker-entrypoint.py"}; in.Args = nil },
			wantErr: `the container runs ["/docker-entrypoint.py"], not "scylla-operator sidecar ..."`,
		},
		{
			name:    "another subcommand",
			modify:  func(in *commandInput) { in.Command = []string{"/mnt/shared/scylla-operator", "operator"} },
			wantErr: `the container runs ["/mnt/shared/scylla-operator" "operator"`,
		},
		{
			name:    "bad flag value",
			modify:  func(in *commandInput) { in.Args = []string{"--cpu-count=many"} },
			wantErr: `can't parse the sidecar's arguments ["--pod-name=dc-a-0" "--member-service-name=dc-a-0" "--probes-address=:8080" "--cpu-count=many"]: invalid argument "many"`,
		},
		{
			name:    "path on a volume the simulator can't provide",
			modify:  func(in *commandInput) { in.Args = []string{"--scylladb-data-dir=/mnt/hostpath/data"} },
			wantErr: `--scylladb-data-dir: path "/mnt/hostpath/data" is on the volume mounted at "/mnt/hostpath", which the node simulator can't provide`,
		},
		{
			name:    "relative path",
			modify:  func(in *commandInput) { in.Args = []string{"--scylladb-config-dir=etc"} },
			wantErr: `--scylladb-config-dir: path "etc" is not absolute`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := base
			in.Command = append([]string{}, base.Command...)
			if tc.modify != nil {
				tc.modify(&in)
			}
			got, err := buildSidecarCommand(in)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("want error starting with %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.MemberServiceName != tc.wantMemberService {
				t.Errorf("member Service: want %q, got %q", tc.wantMemberService, got.MemberServiceName)
			}
			if got.Path != "/bin/scylla-operator" {
				t.Errorf("want the built sidecar binary, got %q", got.Path)
			}
			if diff := cmp.Diff(tc.wantArgs, got.Args); diff != "" {
				t.Errorf("arguments differ (-want +got):\n%s", diff)
			}
		})
	}
}
