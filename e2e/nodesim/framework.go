package nodesim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

// Packages the simulator runs, relative to the repository root.
const (
	SidecarPackage      = "./cmd/scylla-operator"
	FakeScyllaDBPackage = "./e2e/cmd/fake-scylladb"
)

// MemberClusterRoleManifest is the manifest, relative to the repository root, of the ClusterRole the operator binds
// every datacenter's member ServiceAccount to. It ships with the operator's deploy manifests; a control plane whose
// operator runs outside it still needs it for sidecars that use their ServiceAccount (IdentityServiceAccount).
const MemberClusterRoleManifest = "deploy/operator/20-member-clusterrole.yaml"

// InstallMemberClusterRole applies MemberClusterRoleManifest of the working tree at repoRoot.
func InstallMemberClusterRole(ctx context.Context, clients *framework.Clients, repoRoot, fieldManager string) error {
	_, err := clients.ApplyManifestFile(ctx, filepath.Join(repoRoot, filepath.FromSlash(MemberClusterRoleManifest)), fieldManager, "")
	if err != nil {
		return fmt.Errorf("can't install the sidecars' ClusterRole: %w", err)
	}
	return nil
}

// StartForControlPlane builds the sidecar and the fake ScyllaDB with builder and starts a simulator for cp. Unset
// options default to cp's: its admin config (with the simulator's user agent) and Dir <cp.Dir>/nodesim.
func StartForControlPlane(ctx context.Context, builder *framework.GoBuilder, cp *framework.ControlPlane, opts Options) (*Simulator, error) {
	var err error
	if opts.SidecarBinary == "" {
		if opts.SidecarBinary, err = builder.Build(ctx, SidecarPackage); err != nil {
			return nil, err
		}
	}
	if opts.FakeScyllaDBBinary == "" {
		if opts.FakeScyllaDBBinary, err = builder.Build(ctx, FakeScyllaDBPackage); err != nil {
			return nil, err
		}
	}
	if opts.Config == nil {
		opts.Config = cp.AdminConfig(UserAgent)
	}
	if opts.AdminKubeconfig == "" {
		opts.AdminKubeconfig = cp.KubeconfigPath
	}
	if opts.Dir == "" {
		opts.Dir = filepath.Join(cp.Dir, "nodesim")
	}
	return Start(ctx, opts)
}

// StartForTest starts a simulator for cluster c that the test stops when it ends, with its state and its log
// (simulator.log) in the suite's directory. When the test fails, the simulated nodes and the tails of their
// container logs are logged first.
func StartForTest(t testing.TB, f *framework.Framework, c *framework.Cluster, opts Options) *Simulator {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = filepath.Join(f.Suite().Dir, "nodesim", fileName(t.Name()))
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		t.Fatalf("can't create the node simulator's directory: %v", err)
	}
	logFile, err := os.Create(filepath.Join(opts.Dir, "simulator.log"))
	if err != nil {
		t.Fatalf("can't create the node simulator's log: %v", err)
	}
	if opts.Logger.GetSink() == nil {
		opts.Logger = funcr.New(func(prefix, args string) {
			fmt.Fprintln(logFile, prefix, args)
		}, funcr.Options{LogTimestamp: true, Verbosity: 2})
	}
	sim, err := StartForControlPlane(t.Context(), f.Suite().Builder, c.ControlPlane, opts)
	if err != nil {
		_ = logFile.Close()
		t.Fatalf("can't start the node simulator: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(sim.Summary(30))
		}
		if err := sim.Stop(); err != nil {
			t.Errorf("can't stop the node simulator: %v", err)
		}
		_ = logFile.Close()
	})
	return sim
}

// Summary describes every simulated node, the rings, and the last lines of each container log.
func (s *Simulator) Summary(logLines int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "===== node simulator (%s) =====\n", s.opts.Dir)
	for _, r := range s.Rings() {
		fmt.Fprintf(&b, "ring %s (cluster %q):", r.ID, r.ClusterName)
		for _, m := range r.Members {
			fmt.Fprintf(&b, " %s/%s %s %s/%s;", m.Datacenter, m.Rack, m.BroadcastAddress, m.Status, m.State)
		}
		b.WriteString("\n")
	}
	for _, n := range s.Nodes() {
		fmt.Fprintf(&b, "--- %s/%s uid=%s pid=%d ready=%v (%s) restarts=%d probes=%s api=%s\n", n.Namespace, n.Name, n.UID,
			n.PID, n.Ready, n.ReadinessMessage, n.Restarts, n.ProbesAddress, n.APIAddress)
		fmt.Fprintf(&b, "%s\n", framework.FileTail(n.LogPath, logLines))
	}
	return b.String()
}

// fileName makes a directory name out of a test name.
func fileName(name string) string {
	return strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(name)
}
