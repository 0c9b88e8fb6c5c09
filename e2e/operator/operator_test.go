//go:build e2e

package operator

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

const (
	// operatorUserAgentPrefix selects the operator's requests in the audit log: its user agent is
	// "scylla-operator-operator/<version>".
	operatorUserAgentPrefix = "scylla-operator-operator/"

	// operatorImage is what the operator is told its own image is; pods are simulated, so it is never pulled.
	operatorImage = "localhost/scylla-operator:e2e"

	// leaseResource is the resource of leader election Leases, whose renewals are not reconciling.
	leaseResource = "leases"
)

// operatorOptions say how a test runs one replica of `scylla-operator operator`.
type operatorOptions struct {
	// leaseName names the leader election Lease, which is in the namespace of the operator's ServiceAccount (the
	// only one where its Role lets it write Leases); replicas with the same one elect a single leader.
	leaseName string
	// resyncPeriod is --resync-period; zero keeps the operator's default.
	resyncPeriod time.Duration
	// verbosity is the klog -v level.
	verbosity int
	// extraArgs are appended to the operator's arguments.
	extraArgs []string
}

// operatorProcess is one replica of the operator run by a test: a real process built from the working tree.
type operatorProcess struct {
	t    testing.TB
	cp   *framework.ControlPlane
	name string
	// credential is the replica's own token of the operator's ServiceAccount. All replicas share a user agent and a
	// user, so the audit log tells them apart by the token (framework.Credential).
	credential *framework.ServiceAccountCredential
	proc       *framework.Process
}

// startOperator starts a replica of the operator against c's control plane, with leader election, until the test
// ends. name must be unique among the control plane's processes; the log is <control plane dir>/<name>.log. When
// the test fails, the end of the log is printed.
//
// It uses Suite.StartProgram rather than Framework.StartProgram because a test may kill the replica and start
// another under a fresh name, and the control plane must forget a killed process at once (a process that exited
// fails every Framework.WaitFor).
func startOperator(t testing.TB, f *framework.Framework, c *framework.Cluster, name string, opts operatorOptions) *operatorProcess {
	t.Helper()
	cp := c.ControlPlane
	credential := f.ProgramKubeconfig(c, framework.OperatorSubcommand, name)
	args := []string{
		"operator",
		"--kubeconfig=" + credential.KubeconfigPath,
		"--image=" + operatorImage,
		"--leader-elect=true",
		"--leader-election-namespace=" + credential.ServiceAccount.Namespace,
		"--leader-election-lease-name=" + opts.leaseName,
		// Replicas of different tests never share a port.
		"--serving-address=127.0.0.1:0",
		fmt.Sprintf("-v=%d", opts.verbosity),
	}
	if opts.resyncPeriod != 0 {
		args = append(args, "--resync-period="+opts.resyncPeriod.String())
	}
	args = append(args, opts.extraArgs...)

	proc, err := f.Suite().StartProgram(context.Background(), cp, framework.Program{
		Name:    name,
		Package: "./cmd/scylla-operator",
		Args:    args,
	})
	if err != nil {
		t.Fatalf("can't start operator %s: %v", name, err)
	}
	op := &operatorProcess{t: t, cp: cp, name: name, credential: credential, proc: proc}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s\n%s", op.proc.Describe(), op.proc.LogTail(80))
		}
		if err := op.forget(); err != nil {
			t.Errorf("can't stop operator %s: %v", name, err)
		}
	})
	return op
}

// forget stops the replica if it still runs (SIGTERM, then SIGKILL) and removes it from the control plane.
func (op *operatorProcess) forget() error {
	if op.cp.Process(op.name) != op.proc {
		return nil
	}
	return op.cp.StopProcess(op.name)
}

// kill sends SIGKILL: the replica gets no chance to finish its work or release its Lease.
func (op *operatorProcess) kill() {
	op.t.Helper()
	if err := syscall.Kill(op.proc.PID(), syscall.SIGKILL); err != nil {
		op.t.Fatalf("can't kill operator %s: %v", op.name, err)
	}
	<-op.proc.Done()
	if err := op.forget(); err != nil {
		op.t.Fatalf("can't forget killed operator %s: %v", op.name, err)
	}
}

// terminate sends SIGTERM and waits for the replica to exit on its own, for at most timeout: a graceful stop
// finishes the current syncs and releases the Lease. It returns how the process exited.
func (op *operatorProcess) terminate(timeout time.Duration) error {
	op.t.Helper()
	if err := syscall.Kill(op.proc.PID(), syscall.SIGTERM); err != nil {
		op.t.Fatalf("can't send SIGTERM to operator %s: %v", op.name, err)
	}
	select {
	case <-op.proc.Done():
	case <-time.After(timeout):
		op.t.Fatalf("operator %s did not exit within %v of SIGTERM\n%s", op.name, timeout, op.proc.LogTail(40))
	}
	_, exitErr := op.proc.Exited()
	if err := op.forget(); err != nil {
		op.t.Fatalf("can't forget operator %s: %v", op.name, err)
	}
	return exitErr
}

// logOffset is the current size of the replica's log, to read only what it logs later.
func (op *operatorProcess) logOffset() int64 {
	op.t.Helper()
	info, err := os.Stat(op.proc.LogPath)
	if err != nil {
		op.t.Fatalf("can't stat the log of operator %s: %v", op.name, err)
	}
	return info.Size()
}

// countLogLines counts the lines logged after offset that contain every one of substrings.
func (op *operatorProcess) countLogLines(offset int64, substrings ...string) int {
	op.t.Helper()
	n, err := countLinesContaining(op.proc.LogPath, offset, substrings...)
	if err != nil {
		op.t.Fatalf("can't read the log of operator %s: %v", op.name, err)
	}
	return n
}

// notOnResource selects requests that are not about resource (plural, any subresource).
func notOnResource(resource string) framework.AuditFilter {
	return func(e *auditv1.Event) bool { return e.ObjectRef == nil || e.ObjectRef.Resource != resource }
}

// onObject selects requests for an object called name.
func onObject(name string) framework.AuditFilter {
	return func(e *auditv1.Event) bool { return e.ObjectRef != nil && e.ObjectRef.Name == name }
}

// operatorWrites selects the writes the operator's replicas made in namespace, lease renewals aside.
func operatorWrites(namespace string) []framework.AuditFilter {
	return []framework.AuditFilter{
		framework.UserAgentPrefix(operatorUserAgentPrefix),
		framework.Writes(),
		framework.InNamespace(namespace),
		notOnResource(leaseResource),
	}
}

// describeRequests lists the requests every filter accepts, one per line, for failure messages.
func describeRequests(events []auditv1.Event, filters ...framework.AuditFilter) string {
	var b strings.Builder
	for i := range events {
		e := &events[i]
		if !acceptsAll(e, filters) {
			continue
		}
		user := e.User.Username
		if e.ImpersonatedUser != nil {
			user = e.ImpersonatedUser.Username
		}
		code := int32(0)
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		resource := ""
		if e.ObjectRef != nil {
			resource = e.ObjectRef.Resource
			if len(e.ObjectRef.Subresource) != 0 {
				resource += "/" + e.ObjectRef.Subresource
			}
			resource += " " + e.ObjectRef.Name
		}
		fmt.Fprintf(&b, "  %s %s %s %s -> %d\n", e.RequestReceivedTimestamp.Format("15:04:05.000"), user, e.Verb, resource, code)
	}
	return b.String()
}

func acceptsAll(e *auditv1.Event, filters []framework.AuditFilter) bool {
	for _, f := range filters {
		if !f(e) {
			return false
		}
	}
	return true
}
