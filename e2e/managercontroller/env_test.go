//go:build e2e

package managercontroller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	// rolloutTimeout bounds a wait for a datacenter to roll out and everything about it to converge.
	rolloutTimeout = 3 * time.Minute
	// stepTimeout bounds a wait for one reaction of the manager-controller, the operator or Kubernetes.
	stepTimeout = time.Minute
	// resyncTimeout bounds a wait for something the manager-controller only notices on its next resync.
	resyncTimeout = resyncPeriod + 45*time.Second
	// settleTime is how long a test waits after something converged before it counts the writes that led there,
	// so that a write that follows the convergence (a second, needless one) is counted too.
	settleTime = 3 * time.Second

	// pollEvery throttles the waits' conditions: each reads the API and the fake, and every read of the fake lands
	// in its request log, which keeps only the last 10000 requests.
	pollEvery = 500 * time.Millisecond
	// requestLogLimit is where the request log's marks stop being trustworthy: near the fake's cap, the oldest
	// entries are dropped and positions shift.
	requestLogLimit = 9500
)

// env is one scenario's view: its framework (namespaces, waits, dumps), its control plane, clients, and the
// manager stack it runs against.
type env struct {
	t      *testing.T
	f      *framework.Framework
	c      *framework.Cluster
	ns     string
	kube   kubernetes.Interface
	scylla scyllaclientset.Interface
	stack  *managerStack
}

// newEnv creates the scenario's namespaces; the scenario works on the given control plane.
func newEnv(t *testing.T, plane int) *env {
	t.Helper()
	f := framework.NewFramework(t)
	return envOf(t, f, plane)
}

func envOf(t *testing.T, f *framework.Framework, plane int) *env {
	t.Helper()
	c := f.Clusters[plane]
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Fatalf("can't create the scylla.scylladb.com client: %v", err)
	}
	return &env{t: t, f: f, c: c, ns: c.Namespace, kube: c.Clients.Kube, scylla: scylla}
}

// use makes the scenario run against stack; when it fails, what the stack's fake holds is logged.
func (e *env) use(stack *managerStack) {
	e.stack = stack
	e.t.Cleanup(func() {
		if e.t.Failed() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			e.t.Log(stack.describe(ctx))
		}
	})
}

// waitFor waits for cond like Framework.WaitFor, evaluating it at most every pollEvery, and fails at once if the
// stack's manager-controller exited on its own.
func (e *env) waitFor(timeout time.Duration, what string, cond framework.Condition) {
	e.t.Helper()
	var last time.Time
	var lastErr error
	e.f.WaitFor(timeout, what, func(ctx context.Context) (bool, error) {
		if e.stack != nil {
			if err := e.stack.check(); err != nil {
				return false, framework.StopPolling(err)
			}
		}
		if time.Since(last) < pollEvery {
			return false, lastErr
		}
		last = time.Now()
		done, err := cond(ctx)
		lastErr = err
		return done, err
	})
}

// sleep waits for d, failing the test if the manager-controller exits meanwhile.
func (e *env) sleep(d time.Duration) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		select {
		case <-e.t.Context().Done():
			e.t.Fatal(e.t.Context().Err())
		case <-time.After(min(time.Second, time.Until(deadline))):
		}
		if err := e.stack.check(); err != nil {
			e.t.Fatal(err)
		}
	}
}

// waitForHold waits until the gate's hold caught a request and returns it.
func (e *env) waitForHold(h *framework.Hold, timeout time.Duration, what string) framework.HeldRequest {
	e.t.Helper()
	var held framework.HeldRequest
	e.waitFor(timeout, what, func(context.Context) (bool, error) {
		var ok bool
		held, ok = h.Caught()
		return ok, nil
	})
	return held
}

// managerState returns what the stack's fake ScyllaDB Manager holds.
func (e *env) managerState(ctx context.Context) (fakescyllamanager.State, error) {
	return e.stack.fake.State(ctx)
}

// requestMark is a position in the fake's request log.
type requestMark int

// markRequests returns the current end of the fake's request log.
func (e *env) markRequests() requestMark {
	e.t.Helper()
	reqs := e.allRequests()
	return requestMark(len(reqs))
}

// requestsSince returns the ScyllaDB Manager API requests logged after mark.
func (e *env) requestsSince(mark requestMark) []fakescyllamanager.Request {
	e.t.Helper()
	reqs := e.allRequests()
	if int(mark) > len(reqs) {
		e.t.Fatalf("the fake's request log shrank from %d to %d entries; marks are meaningless", mark, len(reqs))
	}
	return framework.ManagerAPIRequests(reqs[mark:])
}

func (e *env) allRequests() []fakescyllamanager.Request {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.t.Context(), 30*time.Second)
	defer cancel()
	reqs, err := e.stack.fake.Requests(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(reqs) >= requestLogLimit {
		e.t.Fatalf("the fake's request log holds %d entries, close to its cap; its positions are no longer reliable", len(reqs))
	}
	return reqs
}

// clusterWritesSince returns the writes to the ScyllaDB Manager cluster clusterID logged after mark.
func (e *env) clusterWritesSince(mark requestMark, clusterID string) []fakescyllamanager.Request {
	e.t.Helper()
	return framework.ScyllaDBManagerWrites(framework.ScyllaDBManagerRequestsOfCluster(e.requestsSince(mark), clusterID))
}

// expectClusterWrites checks that the writes to the cluster since mark are exactly want, in order, each as
// "METHOD path" with a 2xx answer.
func (e *env) expectClusterWrites(mark requestMark, clusterID, what string, want ...string) {
	e.t.Helper()
	writes := e.clusterWritesSince(mark, clusterID)
	var got []string
	ok := true
	for _, r := range writes {
		got = append(got, r.Method+" "+r.Path)
		if r.Status < 200 || r.Status > 299 {
			ok = false
		}
	}
	if !ok || strings.Join(got, "\n") != strings.Join(want, "\n") {
		e.t.Errorf("%s: ScyllaDB Manager got these writes for cluster %s:\n%swant exactly:\n  %s", what, clusterID,
			framework.DescribeScyllaDBManagerRequests(writes), strings.Join(want, "\n  "))
	}
}

// auditWindow counts API requests in a window of the audit log.
type auditWindow struct {
	e    *env
	mark framework.AuditMark
}

func (e *env) markAudit() auditWindow {
	e.t.Helper()
	mark, err := e.c.ControlPlane.Audit.Mark()
	if err != nil {
		e.t.Fatal(err)
	}
	return auditWindow{e: e, mark: mark}
}

func (w auditWindow) events() []auditv1.Event {
	w.e.t.Helper()
	events, err := w.e.c.ControlPlane.Audit.EventsSince(w.mark)
	if err != nil {
		w.e.t.Fatal(err)
	}
	return events
}

// programWrites selects the writes a program (by user agent prefix) made in namespace, Lease renewals aside.
func programWrites(userAgentPrefix, namespace string) []framework.AuditFilter {
	return []framework.AuditFilter{
		framework.UserAgentPrefix(userAgentPrefix),
		framework.Writes(),
		framework.InNamespace(namespace),
		func(e *auditv1.Event) bool { return e.ObjectRef == nil || e.ObjectRef.Resource != "leases" },
	}
}

// describeRequests lists the audit events every filter accepts, one per line, for failure messages.
func describeRequests(events []auditv1.Event, filters ...framework.AuditFilter) string {
	var b strings.Builder
	for i := range events {
		e := &events[i]
		accepted := true
		for _, f := range filters {
			accepted = accepted && f(e)
		}
		if !accepted {
			continue
		}
		code := int32(0)
		if e.ResponseStatus != nil {
			code = e.ResponseStatus.Code
		}
		object := ""
		if e.ObjectRef != nil {
			object = e.ObjectRef.Resource
			if e.ObjectRef.Subresource != "" {
				object += "/" + e.ObjectRef.Subresource
			}
			object += " " + e.ObjectRef.Name
		}
		fmt.Fprintf(&b, "  %s %q %s %s -> %d\n", e.RequestReceivedTimestamp.Format("15:04:05.000"), e.UserAgent, e.Verb, object, code)
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}
