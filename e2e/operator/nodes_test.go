//go:build e2e

package operator

import (
	"context"
	"sync"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
	corev1 "k8s.io/api/core/v1"
)

// decommissionDelay keeps every simulated node Leaving this long once asked to decommission, so that a test sees
// the decommission in progress (see scaleRackDown).
const decommissionDelay = "2s"

// memberClusterRole installs, once per suite, the ClusterRole the operator binds every datacenter's member
// ServiceAccount to; the simulated sidecars run with their pod's ServiceAccount.
var memberClusterRole struct {
	once sync.Once
	err  error
}

// startNodeSimulator runs the real sidecar with a fake ScyllaDB for every ScyllaDB pod of the test's namespace
// (e2e/nodesim), until the test ends: the sidecars make the pods Ready and decommission nodes when the operator asks.
func startNodeSimulator(t testing.TB, f *framework.Framework, c *framework.Cluster) *nodesim.Simulator {
	t.Helper()
	memberClusterRole.once.Do(func() {
		memberClusterRole.err = nodesim.InstallMemberClusterRole(context.Background(), c.Clients, f.Suite().RepoRoot, "e2e-operator-suite")
	})
	if memberClusterRole.err != nil {
		t.Fatal(memberClusterRole.err)
	}
	return nodesim.StartForTest(t, f, c, nodesim.Options{
		Namespaces: []string{c.Namespace},
		FakeEnv: func(*corev1.Pod) []string {
			return []string{fakescylladb.EnvDecommissionDelay + "=" + decommissionDelay}
		},
	})
}
