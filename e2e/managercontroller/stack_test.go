//go:build e2e

package managercontroller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/scyllakube/managerclient"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
)

const (
	// operatorImage is what the operator is told its image is; pods are simulated and the image is never pulled.
	operatorImage = "localhost/scylla-operator:e2e"

	// resyncPeriod is the manager-controller's --resync-period: the shortest it accepts, so that the scenarios that
	// wait for resyncs (a task deleted by hand, the steady state) stay short.
	resyncPeriod = time.Minute

	// scyllaDBManagerToken is the bearer token the fakes require and the manager-controllers send.
	scyllaDBManagerToken = "e2e-scylladb-manager-token"

	// managerControllerUserAgentPrefix and operatorUserAgentPrefix select the programs' requests in the audit log.
	managerControllerUserAgentPrefix = "scylla-operator-manager-controller/"
	operatorUserAgentPrefix          = "scylla-operator-operator/"
)

// startOperatorAndNodes runs, until the test ends, what makes ScyllaDB datacenters roll out on c's control plane:
// the operator (which also translates ScyllaClusters' backups and repairs into ScyllaDBManagerTasks and labels
// their ScyllaDBDatacenters for registration) and the node simulator for every namespace.
func startOperatorAndNodes(t *testing.T, f *framework.Framework, c *framework.Cluster) {
	t.Helper()
	if err := nodesim.InstallMemberClusterRole(t.Context(), c.Clients, f.Suite().RepoRoot, f.UserAgent); err != nil {
		t.Fatal(err)
	}
	f.StartProgram(c, framework.Program{
		Name:    "operator",
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + f.ProgramKubeconfig(c, framework.OperatorSubcommand, "operator").KubeconfigPath,
			"--image=" + operatorImage,
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
		},
	})
	nodesim.StartForTest(t, f, c, nodesim.Options{})
}

// stackOptions say how a test runs a manager-controller and its fake ScyllaDB Manager.
type stackOptions struct {
	// name tells the stack's processes and files apart from other stacks' on the same control plane.
	name string
	// gate puts an HTTPGate between the manager-controller and the fake, so that the test can hold its requests.
	gate bool
	// leaseName, when set, makes the manager-controller elect a leader on a Lease of that name (in its
	// ServiceAccount's namespace, the only one where its Role lets it write Leases); empty turns leader
	// election off, so that a replica started after a SIGKILL does not wait for the dead one's Lease to expire.
	leaseName string
}

// managerStack is a fake ScyllaDB Manager and the manager-controller replicas a test runs against it, one at a time.
//
// The replicas are started with framework.StartProcess, not as programs of the control plane: a replica the test
// kills on purpose must not fail the waits of tests that run at the same time (Framework.WaitFor fails on any
// control plane process that exited). The stack's own waits check the current replica instead.
type managerStack struct {
	t    testing.TB
	f    *framework.Framework
	c    *framework.Cluster
	opts stackOptions

	fake *framework.FakeScyllaDBManager
	gate *framework.HTTPGate
	// manager calls the fake directly, as a user with sctool would.
	manager *managerclient.Client
	// credential is the manager-controller's ServiceAccount token every replica uses; the audit log tells the
	// stack's requests apart by it.
	credential *framework.ServiceAccountCredential
	tokenFile  string

	mu       sync.Mutex
	current  *framework.Process
	replicas []*framework.Process
}

// startManagerStack starts a fake ScyllaDB Manager and a first manager-controller replica on c's control plane,
// both stopped when the test ends.
func startManagerStack(t testing.TB, f *framework.Framework, c *framework.Cluster, opts stackOptions) *managerStack {
	t.Helper()
	dir := c.ControlPlane.Dir
	s := &managerStack{
		t:          t,
		f:          f,
		c:          c,
		opts:       opts,
		credential: f.ProgramKubeconfig(c, framework.ManagerControllerSubcommand, "manager-controller-"+opts.name),
		tokenFile:  filepath.Join(dir, "manager-controller-"+opts.name+".token"),
	}
	if err := os.WriteFile(s.tokenFile, []byte(scyllaDBManagerToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.fake = f.StartFakeScyllaDBManagerWithArgs(c, "fake-scylladb-manager-"+opts.name, "--bearer-token="+scyllaDBManagerToken)
	var err error
	s.manager, err = managerclient.New(managerclient.Options{URL: s.fake.URL, Token: scyllaDBManagerToken, UserAgent: "e2e-test"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.gate {
		s.gate, err = framework.StartHTTPGate(s.fake.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.gate.Close() })
	}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if t.Failed() && s.current != nil {
			t.Logf("%s\n%s", s.current.Describe(), s.current.LogTail(100))
		}
		if s.current != nil {
			if err := s.current.Stop(10 * time.Second); err != nil {
				t.Errorf("can't stop %s: %v", s.current.Name, err)
			}
		}
	})
	s.start()
	return s
}

// managerURL is where the manager-controller reaches ScyllaDB Manager: through the gate, if the stack has one.
func (s *managerStack) managerURL() string {
	if s.gate != nil {
		return s.gate.URL
	}
	return s.fake.URL
}

// start starts a new manager-controller replica; the previous one must be gone.
func (s *managerStack) start() *framework.Process {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		s.t.Fatalf("manager-controller %s still runs", s.current.Name)
	}
	path, err := s.f.Suite().Builder.Build(s.t.Context(), "./cmd/scylla-operator")
	if err != nil {
		s.t.Fatal(err)
	}
	name := fmt.Sprintf("manager-controller-%s-%d", s.opts.name, len(s.replicas))
	args := []string{
		"manager-controller",
		"--kubeconfig=" + s.credential.KubeconfigPath,
		"--scylladb-manager-url=" + s.managerURL(),
		"--scylladb-manager-auth-token-file=" + s.tokenFile,
		"--resync-period=" + resyncPeriod.String(),
		"--serving-address=127.0.0.1:0",
		"-v=4",
	}
	if s.opts.leaseName != "" {
		args = append(args, "--leader-elect=true", "--leader-election-namespace="+s.credential.ServiceAccount.Namespace,
			"--leader-election-lease-name="+s.opts.leaseName)
	} else {
		args = append(args, "--leader-elect=false")
	}
	p, err := framework.StartProcess(framework.ProcessSpec{
		Name:    name,
		Path:    path,
		Args:    args,
		LogPath: filepath.Join(s.c.ControlPlane.Dir, name+".log"),
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.current = p
	s.replicas = append(s.replicas, p)
	s.t.Logf("started %s", p.Describe())
	return p
}

// kill SIGKILLs the current replica, which gets no chance to finish anything, and waits until it is gone.
func (s *managerStack) kill() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.current
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
	s.current = nil
	s.t.Logf("killed %s", p.Name)
}

// check returns an error with its log tail if the current replica exited on its own.
func (s *managerStack) check() error {
	s.mu.Lock()
	p := s.current
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if exited, err := p.Exited(); exited {
		return fmt.Errorf("%s exited unexpectedly (%v)\n%s", p.Name, err, p.LogTail(40))
	}
	return nil
}

// describe summarizes what the fake holds and the manager-controller's requests, for failure messages.
func (s *managerStack) describe(ctx context.Context) string {
	st, err := s.fake.State(ctx)
	if err != nil {
		return fmt.Sprintf("(can't read the fake ScyllaDB Manager's state: %v)", err)
	}
	reqs, err := s.fake.Requests(ctx)
	if err != nil {
		return fmt.Sprintf("(can't read the fake ScyllaDB Manager's requests: %v)", err)
	}
	reqs = framework.ManagerAPIRequests(reqs)
	if len(reqs) > 60 {
		reqs = reqs[len(reqs)-60:]
	}
	return fmt.Sprintf("===== fake ScyllaDB Manager %s (%s) =====\n%s----- last %d API requests -----\n%s",
		s.opts.name, s.fake.URL, describeState(st), len(reqs), framework.DescribeScyllaDBManagerRequests(reqs))
}
