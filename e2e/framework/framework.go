package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster is one control plane as a test sees it: clients with the test's user agent and the test's namespace.
type Cluster struct {
	// ControlPlane is the suite's control plane.
	ControlPlane *ControlPlane
	// Clients identify themselves with the test's user agent.
	Clients *Clients
	// Namespace was created for this test and is deleted after it.
	Namespace string
}

// Framework is the per-test view of the suite: one Cluster per control plane, programs the test started, and
// helpers that fail the test with a useful message.
type Framework struct {
	t     testing.TB
	suite *Suite
	// UserAgent is the user agent of the test's clients, "e2e-test/<test name>", so that the audit log tells
	// the test's own requests apart from the programs'.
	UserAgent string
	// Clusters has one entry per control plane, in the suite's order.
	Clusters []*Cluster

	mu       sync.Mutex
	programs []*Process
	dumped   bool
}

// NewFramework creates a namespace for the test in every control plane of the current suite; the namespaces are
// deleted when the test ends, after a dump if it failed.
func NewFramework(t testing.TB) *Framework {
	t.Helper()
	s := CurrentSuite(t)
	f := &Framework{t: t, suite: s, UserAgent: "e2e-test/" + t.Name()}
	ctx := t.Context()
	for _, cp := range s.ControlPlanes {
		clients, err := cp.Clients(f.UserAgent)
		if err != nil {
			t.Fatalf("can't create clients for %s: %v", cp.Name, err)
		}
		ns, err := clients.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + sanitizeName(t.Name(), 40) + "-"},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("can't create namespace in %s: %v", cp.Name, err)
		}
		f.Clusters = append(f.Clusters, &Cluster{ControlPlane: cp, Clients: clients, Namespace: ns.Name})
	}
	t.Cleanup(func() {
		if t.Failed() {
			f.dumpOnce()
		}
		// t.Context is already cancelled during cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, c := range f.Clusters {
			err := c.Clients.Kube.CoreV1().Namespaces().Delete(ctx, c.Namespace, metav1.DeleteOptions{})
			if err != nil {
				t.Errorf("can't delete namespace %q in %s: %v", c.Namespace, c.ControlPlane.Name, err)
			}
		}
	})
	return f
}

// Suite returns the suite the test runs in.
func (f *Framework) Suite() *Suite {
	return f.suite
}

// Cluster returns the first (and in single-datacenter suites, only) cluster.
func (f *Framework) Cluster() *Cluster {
	return f.Clusters[0]
}

// Namespace returns the test's namespace in the first cluster.
func (f *Framework) Namespace() string {
	return f.Clusters[0].Namespace
}

// Clients returns the test's clients for the first cluster.
func (f *Framework) Clients() *Clients {
	return f.Clusters[0].Clients
}

// StartProgram runs one of the project's programs against a cluster for the rest of the test (see
// Suite.StartProgram); its log tail is part of failure dumps.
func (f *Framework) StartProgram(c *Cluster, prog Program) *Process {
	f.t.Helper()
	p, err := f.suite.StartProgram(f.t.Context(), c.ControlPlane, prog)
	if err != nil {
		f.t.Fatalf("can't start program %s: %v", prog.Name, err)
	}
	f.mu.Lock()
	f.programs = append(f.programs, p)
	f.mu.Unlock()
	f.t.Cleanup(func() {
		if err := c.ControlPlane.StopProcess(p.Name); err != nil {
			f.t.Errorf("can't stop program %s: %v", p.Name, err)
		}
	})
	return p
}

// WaitFor polls cond for at most timeout. If it does not hold in time, the test fails with the condition's last
// error, a summary of every object in the test's namespaces with their events, the log tails of the test's
// programs and of any control plane process that exited; full objects go to a file in the suite's directory.
func (f *Framework) WaitFor(timeout time.Duration, what string, cond Condition) {
	f.t.Helper()
	start := time.Now()
	err := WaitFor(f.t.Context(), timeout, func(ctx context.Context) (bool, error) {
		for _, c := range f.Clusters {
			if err := c.ControlPlane.CheckProcesses(); err != nil {
				return false, StopPolling(err)
			}
		}
		return cond(ctx)
	})
	if err != nil {
		f.t.Fatalf("waiting %v for %s: %v\n%s", time.Since(start).Round(time.Millisecond), what, err, f.dumpOnce())
	}
}

// dumpOnce returns the failure dump the first time and a pointer to it afterwards.
func (f *Framework) dumpOnce() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.dumped {
		return "(state already dumped above)"
	}
	f.dumped = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	dumpDir := filepath.Join(f.suite.Dir, "dumps", sanitizeName(f.t.Name(), 100))
	if err := os.MkdirAll(dumpDir, 0o755); err != nil {
		fmt.Fprintf(&b, "can't create dump directory: %v\n", err)
	}
	for _, c := range f.Clusters {
		fullPath := filepath.Join(dumpDir, c.ControlPlane.Name+".yaml")
		summary, err := DumpNamespace(ctx, c.Clients, c.Namespace, fullPath)
		fmt.Fprintf(&b, "===== %s namespace %s (full objects in %s) =====\n%s", c.ControlPlane.Name, c.Namespace, fullPath, summary)
		if err != nil {
			fmt.Fprintf(&b, "dump incomplete: %v\n", err)
		}
		for _, p := range c.ControlPlane.Processes() {
			if exited, _ := p.Exited(); exited {
				fmt.Fprintf(&b, "%s\n", formatLogTail(p, 30))
			}
		}
	}
	for _, p := range f.programs {
		fmt.Fprintf(&b, "%s: %s\n", p.Describe(), formatLogTail(p, 40))
	}
	return b.String()
}

// ProgramKubeconfig writes a kubeconfig for one process of subcommand on c with its ServiceAccount's credentials
// (see Suite.ProgramKubeconfig), failing the test if it can't.
func (f *Framework) ProgramKubeconfig(c *Cluster, subcommand, name string) *ServiceAccountCredential {
	f.t.Helper()
	cred, err := f.suite.ProgramKubeconfig(f.t.Context(), c.ControlPlane, subcommand, name)
	if err != nil {
		f.t.Fatal(err)
	}
	return cred
}

// RemoteKubeconfig returns a kubeconfig for c as the remote cluster identity of the install manifests (see
// Suite.RemoteKubeconfig), failing the test if it can't.
func (f *Framework) RemoteKubeconfig(c *Cluster) []byte {
	f.t.Helper()
	data, err := f.suite.RemoteKubeconfig(f.t.Context(), c.ControlPlane)
	if err != nil {
		f.t.Fatal(err)
	}
	return data
}
