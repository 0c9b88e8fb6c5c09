//go:build e2e

package backups

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
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

	// name tells the stack's processes and logs apart from other tests' (the bucket's name).
	name      string
	t         *testing.T
	f         *framework.Framework
	c         *framework.Cluster
	tokenFile string

	mu sync.Mutex
	// managerController is the current manager-controller replica, nil between a kill and the next start.
	managerController *framework.Process
	replicas          int
}

// startStack runs, until the test ends, the operator and the node simulator, versitygw, a fake ScyllaDB Manager that
// uploads backups of "s3:<bucket>" to versitygw, and a manager-controller; their names and logs carry the bucket's
// name, so that the suite's tests do not overwrite each other's logs.
func startStack(t *testing.T, f *framework.Framework, c *framework.Cluster, bucket string) *stack {
	t.Helper()
	ctx := t.Context()
	if err := nodesim.InstallMemberClusterRole(ctx, c.Clients, f.Suite().RepoRoot, f.UserAgent); err != nil {
		t.Fatal(err)
	}
	f.StartProgram(c, framework.Program{
		Name:    "operator-" + bucket,
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + f.ProgramKubeconfig(c, framework.OperatorSubcommand, "operator-"+bucket).KubeconfigPath,
			"--image=" + operatorImage,
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
		},
	})
	nodesim.StartForTest(t, f, c, nodesim.Options{})

	s := &stack{s3: f.StartS3Server()}
	t.Logf("versitygw serves %s (data %s, access log %s)", s.s3.Endpoint, s.s3.DataDir, s.s3.AccessLogPath)

	s.fake = f.StartFakeScyllaDBManagerWithArgs(c, "fake-scylladb-manager-"+bucket, "--bearer-token="+scyllaDBManagerToken)
	knobs := fakescyllamanager.Knobs{S3Endpoints: map[string]fakescyllamanager.S3Endpoint{"s3:" + bucket: s.s3.FakeManagerEndpoint()}}
	if err := s.fake.SetKnobs(ctx, knobs); err != nil {
		t.Fatal(err)
	}
	var err error
	s.manager, err = managerclient.New(managerclient.Options{URL: s.fake.URL, Token: scyllaDBManagerToken, UserAgent: "e2e-test"})
	if err != nil {
		t.Fatal(err)
	}

	s.t, s.f, s.c = t, f, c
	s.name = bucket
	s.tokenFile = filepath.Join(c.ControlPlane.Dir, "manager-controller-"+bucket+".token")
	if err := os.WriteFile(s.tokenFile, []byte(scyllaDBManagerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.managerController == nil {
			return
		}
		if t.Failed() {
			t.Logf("%s\n%s", s.managerController.Describe(), s.managerController.LogTail(60))
		}
		if err := s.managerController.Stop(10 * time.Second); err != nil {
			t.Errorf("can't stop %s: %v", s.managerController.Name, err)
		}
	})
	s.startManagerController()
	return s
}

// startManagerController starts a new manager-controller replica; the previous one must be gone. Replicas run
// with framework.StartProcess, not as programs of the control plane, so that the test can SIGKILL one without
// failing its waits; stack.waitFor checks the current replica instead.
func (s *stack) startManagerController() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.managerController != nil {
		s.t.Fatalf("%s still runs", s.managerController.Name)
	}
	path, err := s.f.Suite().Builder.Build(s.t.Context(), "./cmd/scylla-operator")
	if err != nil {
		s.t.Fatal(err)
	}
	name := fmt.Sprintf("manager-controller-%s-%d", s.name, s.replicas)
	s.replicas++
	kubeconfig := s.f.ProgramKubeconfig(s.c, framework.ManagerControllerSubcommand, name).KubeconfigPath
	p, err := framework.StartProcess(framework.ProcessSpec{
		Name: name,
		Path: path,
		Args: []string{
			"manager-controller",
			"--kubeconfig=" + kubeconfig,
			"--scylladb-manager-url=" + s.fake.URL,
			"--scylladb-manager-auth-token-file=" + s.tokenFile,
			"--resync-period=" + resyncPeriod.String(),
			"--serving-address=127.0.0.1:0",
			"--leader-elect=false",
			"-v=4",
		},
		LogPath: filepath.Join(s.c.ControlPlane.Dir, name+".log"),
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.managerController = p
	s.t.Logf("started %s", p.Describe())
}

// killManagerController SIGKILLs the current replica, which gets no chance to finish anything, and waits until it
// is gone.
func (s *stack) killManagerController() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.managerController
	if p == nil {
		s.t.Fatal("no manager-controller runs")
	}
	if err := syscall.Kill(p.PID(), syscall.SIGKILL); err != nil {
		s.t.Fatalf("can't kill %s: %v", p.Name, err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		s.t.Fatalf("%s did not exit after SIGKILL", p.Name)
	}
	s.managerController = nil
	s.t.Logf("killed %s (log %s)", p.Name, p.LogPath)
}

// waitFor waits like Framework.WaitFor and fails at once if the current manager-controller replica exited on its
// own.
func (s *stack) waitFor(timeout time.Duration, what string, cond framework.Condition) {
	s.t.Helper()
	s.f.WaitFor(timeout, what, func(ctx context.Context) (bool, error) {
		s.mu.Lock()
		p := s.managerController
		s.mu.Unlock()
		if p != nil {
			if exited, err := p.Exited(); exited {
				return false, framework.StopPolling(fmt.Errorf("%s exited unexpectedly (%v)\n%s", p.Name, err, p.LogTail(40)))
			}
		}
		return cond(ctx)
	})
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
