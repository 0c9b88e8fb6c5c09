//go:build e2e

package scylladbcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// scyllaDBManagerToken is the bearer token the fake ScyllaDB Manager requires and the manager-controller sends.
const scyllaDBManagerToken = "e2e-scylladb-manager-token"

// startManager runs, until the test ends, a fake ScyllaDB Manager and the manager-controller on the meta plane, as
// manager-integration.md deploys them beside the ScyllaDBClusters, and returns the fake.
func (e *env) startManager() *framework.FakeScyllaDBManager {
	e.t.Helper()
	c := e.meta.c
	tokenFile := filepath.Join(c.ControlPlane.Dir, "manager-controller-"+c.Namespace+".token")
	if err := os.WriteFile(tokenFile, []byte(scyllaDBManagerToken+"\n"), 0o600); err != nil {
		e.t.Fatal(err)
	}
	fake := e.f.StartFakeScyllaDBManagerWithArgs(c, "fake-scylladb-manager-"+c.Namespace, "--bearer-token="+scyllaDBManagerToken)
	e.f.StartProgram(c, framework.Program{
		Name:    "manager-controller-" + c.Namespace,
		Package: "./cmd/scylla-operator",
		Args: []string{
			"manager-controller",
			"--kubeconfig=" + e.f.ProgramKubeconfig(c, framework.ManagerControllerSubcommand, "manager-controller-"+c.Namespace).KubeconfigPath,
			"--scylladb-manager-url=" + fake.URL,
			"--scylladb-manager-auth-token-file=" + tokenFile,
			"--resync-period=" + resyncPeriod.String(),
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
			"-v=2",
		},
	})
	e.t.Cleanup(func() {
		if e.t.Failed() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e.t.Log(describeManager(ctx, fake))
		}
	})
	return fake
}

// managerRequests returns the ScyllaDB Manager API requests the fake got, its own endpoints left out.
func managerRequests(ctx context.Context, fake *framework.FakeScyllaDBManager) ([]fakescyllamanager.Request, error) {
	reqs, err := fake.Requests(ctx)
	if err != nil {
		return nil, err
	}
	return framework.ManagerAPIRequests(reqs), nil
}

// successful returns the requests of reqs to endpoint that succeeded.
func successful(reqs []fakescyllamanager.Request, endpoint fakescyllamanager.Endpoint) []fakescyllamanager.Request {
	var out []fakescyllamanager.Request
	for _, r := range reqs {
		if r.Endpoint == endpoint && r.Status >= 200 && r.Status <= 299 {
			out = append(out, r)
		}
	}
	return out
}

// clusterByID returns the fake's cluster with ID id, or nil.
func clusterByID(st fakescyllamanager.State, id string) *fakescyllamanager.ClusterState {
	for i := range st.Clusters {
		if st.Clusters[i].ID == id {
			return &st.Clusters[i]
		}
	}
	return nil
}

// liveTasks returns the cluster's tasks of type typ that are not deleted.
func liveTasks(st fakescyllamanager.State, clusterID, typ string) []fakescyllamanager.TaskState {
	var out []fakescyllamanager.TaskState
	for _, t := range st.Tasks {
		if t.ClusterID == clusterID && t.Type == typ && !t.Deleted {
			out = append(out, t)
		}
	}
	return out
}

// describeManager lists what the fake holds and its last API requests, for failure messages.
func describeManager(ctx context.Context, fake *framework.FakeScyllaDBManager) string {
	st, err := fake.State(ctx)
	if err != nil {
		return fmt.Sprintf("(can't read the fake ScyllaDB Manager's state: %v)", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "===== fake ScyllaDB Manager (%s) =====\n", fake.URL)
	for _, c := range st.Clusters {
		fmt.Fprintf(&b, "cluster %s %q host %s labels %v\n", c.ID, c.Name, c.Host, c.Labels)
	}
	for _, t := range st.Tasks {
		fmt.Fprintf(&b, "  task %s of cluster %s: %s/%s enabled=%v deleted=%v cron=%q properties=%s\n", t.ID, t.ClusterID, t.Type, t.Name, t.Enabled, t.Deleted, t.Schedule.Cron, t.Properties)
	}
	reqs, err := managerRequests(ctx, fake)
	if err != nil {
		fmt.Fprintf(&b, "(can't read the requests: %v)\n", err)
		return b.String()
	}
	if len(reqs) > 40 {
		reqs = reqs[len(reqs)-40:]
	}
	fmt.Fprintf(&b, "----- last %d API requests -----\n%s", len(reqs), framework.DescribeScyllaDBManagerRequests(reqs))
	return b.String()
}
