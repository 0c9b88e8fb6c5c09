//go:build e2e

package backups

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scyllakube/managerclient"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	// operatorImage is what the operator is told its image is; pods are simulated and the image is never pulled.
	operatorImage = "localhost/scylla-operator:e2e"

	// resyncPeriod is the manager-controller's --resync-period, the shortest it accepts.
	resyncPeriod = time.Minute

	// scyllaDBManagerToken is the bearer token the fake requires and the manager-controller sends.
	scyllaDBManagerToken = "e2e-scylladb-manager-token"
)

// stack is what the test runs against besides the control plane: the S3 server, the fake ScyllaDB Manager, and a
// client of each.
type stack struct {
	s3      *framework.S3Server
	fake    *framework.FakeScyllaDBManager
	manager *managerclient.Client
	// managerController is the manager-controller process; its log is managerController.LogPath.
	managerController *framework.Process
}

// startStack runs, until the test ends, the operator and the node simulator, versitygw, a fake ScyllaDB Manager that
// uploads backups of "s3:<bucket>" to versitygw, and a manager-controller.
func startStack(t *testing.T, f *framework.Framework, c *framework.Cluster, bucket string) *stack {
	t.Helper()
	ctx := t.Context()
	if err := nodesim.InstallMemberClusterRole(ctx, c.Clients, f.Suite().RepoRoot, f.UserAgent); err != nil {
		t.Fatal(err)
	}
	f.StartProgram(c, framework.Program{
		Name:    "operator",
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + c.ControlPlane.KubeconfigPath,
			"--image=" + operatorImage,
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
		},
	})
	nodesim.StartForTest(t, f, c, nodesim.Options{})

	s := &stack{s3: f.StartS3Server()}
	t.Logf("versitygw serves %s (data %s, access log %s)", s.s3.Endpoint, s.s3.DataDir, s.s3.AccessLogPath)

	s.fake = f.StartFakeScyllaDBManagerWithArgs(c, "fake-scylladb-manager", "--bearer-token="+scyllaDBManagerToken)
	knobs := fakescyllamanager.Knobs{S3Endpoints: map[string]fakescyllamanager.S3Endpoint{"s3:" + bucket: s.s3.FakeManagerEndpoint()}}
	if err := s.fake.SetKnobs(ctx, knobs); err != nil {
		t.Fatal(err)
	}
	var err error
	s.manager, err = managerclient.New(managerclient.Options{URL: s.fake.URL, Token: scyllaDBManagerToken, UserAgent: "e2e-test"})
	if err != nil {
		t.Fatal(err)
	}

	tokenFile := filepath.Join(c.ControlPlane.Dir, "manager-controller.token")
	if err := os.WriteFile(tokenFile, []byte(scyllaDBManagerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.managerController = f.StartProgram(c, framework.Program{
		Name:    "manager-controller",
		Package: "./cmd/scylla-operator",
		Args: []string{
			"manager-controller",
			"--kubeconfig=" + c.ControlPlane.KubeconfigPath,
			"--scylladb-manager-url=" + s.fake.URL,
			"--scylladb-manager-auth-token-file=" + tokenFile,
			"--resync-period=" + resyncPeriod.String(),
			"--serving-address=127.0.0.1:0",
			"--leader-elect=false",
			"-v=4",
		},
	})
	t.Logf("started %s", s.managerController.Describe())
	return s
}

// describeManager summarizes the fake ScyllaDB Manager's clusters, backup tasks and their runs, for failure messages.
func (s *stack) describeManager(ctx context.Context) string {
	st, err := s.fake.State(ctx)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, c := range st.Clusters {
		fmt.Fprintf(&b, "  cluster %s %s\n", c.ID, c.Name)
	}
	for _, t := range st.Tasks {
		if t.Type != managerBackup {
			continue
		}
		fmt.Fprintf(&b, "  task %s/%s %s of cluster %s deleted=%v\n", t.Type, t.Name, t.ID, t.ClusterID, t.Deleted)
		for _, r := range t.Runs {
			fmt.Fprintf(&b, "    run %s %s %s\n", r.ID, r.Status, r.Cause)
			for _, u := range r.Uploads {
				fmt.Fprintf(&b, "      upload to %s: %d keys, %d bytes %s\n", u.Location, len(u.Keys), u.Bytes, u.Error)
			}
		}
	}
	return b.String()
}
