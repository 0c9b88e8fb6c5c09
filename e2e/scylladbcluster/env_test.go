//go:build e2e

package scylladbcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

const (
	// operatorImage is what the operators are told their image is; pods are simulated and the image is never pulled.
	operatorImage = "localhost/scylla-operator:e2e"

	// resyncPeriod is the operators' and the manager-controller's --resync-period: the shortest they accept, so
	// that a steady-state window can cover a resync.
	resyncPeriod = time.Minute

	// registryTTL is how long a fake ScyllaDB that stopped heartbeating still reads as Up in the shared registry.
	registryTTL = 5 * time.Second

	// rolloutTimeout bounds a wait for datacenters to roll out and everything about them to converge.
	rolloutTimeout = 5 * time.Minute
	// stepTimeout bounds a wait for one reaction of a controller.
	stepTimeout = 2 * time.Minute

	// operatorUserAgentPrefix and managerControllerUserAgentPrefix select the programs' requests in the audit logs.
	// The meta operator's requests to the workers carry the same prefix as the workers' own operators'.
	operatorUserAgentPrefix          = "scylla-operator-operator/"
	managerControllerUserAgentPrefix = "scylla-operator-manager-controller/"
)

// plane is one control plane as a test sees it.
type plane struct {
	c      *framework.Cluster
	scylla scyllaclientset.Interface
	// sim runs the plane's ScyllaDB nodes; nil on the meta plane.
	sim *nodesim.Simulator
}

func (p *plane) name() string {
	return p.c.ControlPlane.Name
}

// env is one test's view of the suite: its framework, the meta plane, the workers, and the ring registry every
// worker's nodes join.
type env struct {
	t        *testing.T
	f        *framework.Framework
	meta     *plane
	workers  []*plane
	registry *fakescylladb.Registry
}

func newEnv(t *testing.T) *env {
	t.Helper()
	f := framework.NewFramework(t)
	e := &env{t: t, f: f, registry: fakescylladb.NewRegistry(registryTTL)}
	newPlane := func(i int) *plane {
		c := f.Clusters[i]
		scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
		if err != nil {
			t.Fatalf("can't create the scylla.scylladb.com client of %s: %v", c.ControlPlane.Name, err)
		}
		return &plane{c: c, scylla: scylla}
	}
	e.meta = newPlane(metaPlane)
	for _, i := range workerPlanes {
		e.workers = append(e.workers, newPlane(i))
	}
	return e
}

// startOperator runs, until the test ends, the operator on p's control plane, with the ClusterRole its
// datacenters' sidecars are bound to.
func (e *env) startOperator(p *plane) {
	e.t.Helper()
	if err := nodesim.InstallMemberClusterRole(e.t.Context(), p.c.Clients, e.f.Suite().RepoRoot, e.f.UserAgent); err != nil {
		e.t.Fatal(err)
	}
	e.f.StartProgram(p.c, framework.Program{
		Name:    "operator-" + p.c.Namespace,
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + e.f.ProgramKubeconfig(p.c, framework.OperatorSubcommand, "operator-"+p.c.Namespace).KubeconfigPath,
			"--image=" + operatorImage,
			"--leader-elect=false",
			"--serving-address=127.0.0.1:0",
			"--resync-period=" + resyncPeriod.String(),
			"-v=2",
		},
	})
}

// startNodes runs, until the test ends, the node simulator of worker p, joining the test's shared ring registry.
func (e *env) startNodes(p *plane) {
	e.t.Helper()
	p.sim = nodesim.StartForTest(e.t, e.f, p.c, nodesim.Options{
		Dir:      filepath.Join(e.f.Suite().Dir, "nodesim", sanitize(e.t.Name()), p.name()),
		Registry: e.registry,
	})
}

// startWorkers runs the operator and the node simulator on every worker.
func (e *env) startWorkers() {
	e.t.Helper()
	for _, w := range e.workers {
		e.startOperator(w)
		e.startNodes(w)
	}
}

// waitFor is Framework.WaitFor with the rings of the shared registry added to the failure message.
func (e *env) waitFor(timeout time.Duration, what string, cond framework.Condition) {
	e.t.Helper()
	e.f.WaitFor(timeout, what, func(ctx context.Context) (bool, error) {
		done, err := cond(ctx)
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w\nrings: %s", err, describeRings(e.registry.Rings()))
		}
		return done, err
	})
}

// ringsOf returns the shared registry's rings of one cluster name.
func (e *env) ringsOf(clusterName string) []fakescylladb.Ring {
	var out []fakescylladb.Ring
	for _, r := range e.registry.Rings() {
		if r.ClusterName == clusterName {
			out = append(out, r)
		}
	}
	return out
}

// oneRing says why the shared registry does not hold exactly one ring of clusterName whose members are Up and
// Normal, one per datacenter of wantDCs, with distinct broadcast addresses; otherwise it returns that ring.
func (e *env) oneRing(clusterName string, wantDCs ...string) (fakescylladb.Ring, error) {
	rings := e.ringsOf(clusterName)
	if len(rings) != 1 {
		return fakescylladb.Ring{}, fmt.Errorf("want one ring of cluster %q, got %d", clusterName, len(rings))
	}
	ring := rings[0]
	var dcs []string
	addresses := map[string]string{}
	for _, m := range ring.Members {
		if m.Status != fakescylladb.StatusUp || m.State != fakescylladb.StateNormal {
			return ring, fmt.Errorf("member %s of datacenter %q is %s/%s, want Up/Normal", m.BroadcastAddress, m.Datacenter, m.Status, m.State)
		}
		if other, ok := addresses[m.BroadcastAddress]; ok {
			return ring, fmt.Errorf("members of datacenters %q and %q share broadcast address %s", other, m.Datacenter, m.BroadcastAddress)
		}
		addresses[m.BroadcastAddress] = m.Datacenter
		dcs = append(dcs, m.Datacenter)
	}
	sort.Strings(dcs)
	want := slices.Clone(wantDCs)
	sort.Strings(want)
	if !slices.Equal(dcs, want) {
		return ring, fmt.Errorf("ring %s has members in datacenters %q, want one in each of %q", ring.ID, dcs, want)
	}
	return ring, nil
}

// simulatedNodes returns worker p's simulated nodes of namespace.
func simulatedNodes(p *plane, namespace string) []nodesim.Node {
	var out []nodesim.Node
	for _, n := range p.sim.Nodes() {
		if n.Namespace == namespace {
			out = append(out, n)
		}
	}
	return out
}

// onlyNode returns the one simulated node of namespace on worker p.
func (e *env) onlyNode(p *plane, namespace string) nodesim.Node {
	e.t.Helper()
	nodes := simulatedNodes(p, namespace)
	if len(nodes) != 1 {
		e.t.Fatalf("want one simulated node in namespace %q of %s, got %d", namespace, p.name(), len(nodes))
	}
	return nodes[0]
}

// records returns what the fake ScyllaDB of node recorded at each start.
func (e *env) records(p *plane, n nodesim.Node) []fakescylladb.Record {
	e.t.Helper()
	records, err := p.sim.Records(n.Namespace, n.Name)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(records) == 0 {
		e.t.Fatalf("the fake ScyllaDB of Pod %s/%s on %s recorded no start", n.Namespace, n.Name, p.name())
	}
	return records
}

// conditionsProblem says which of want the conditions lack, or don't have at generation; nil when they all hold.
func conditionsProblem(conditions []metav1.Condition, generation int64, want map[string]metav1.ConditionStatus) error {
	var problems []string
	for _, condType := range sortedKeys(want) {
		c := meta.FindStatusCondition(conditions, condType)
		switch {
		case c == nil:
			problems = append(problems, fmt.Sprintf("no condition %s", condType))
		case c.Status != want[condType] || c.ObservedGeneration != generation:
			problems = append(problems, fmt.Sprintf("%s=%s at generation %d, want %s at %d (%s: %s)", c.Type, c.Status, c.ObservedGeneration, want[condType], generation, c.Reason, c.Message))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, "; "))
}

// rolledOut are the conditions of a converged object.
var rolledOut = map[string]metav1.ConditionStatus{
	"Available":   metav1.ConditionTrue,
	"Progressing": metav1.ConditionFalse,
	"Degraded":    metav1.ConditionFalse,
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func describeRings(rings []fakescylladb.Ring) string {
	if len(rings) == 0 {
		return "(none)"
	}
	var b strings.Builder
	for _, r := range rings {
		fmt.Fprintf(&b, "\n  ring %s (cluster %q):", r.ID, r.ClusterName)
		for _, m := range r.Members {
			fmt.Fprintf(&b, " %s/%s %s seeds=%q %s/%s;", m.Datacenter, m.Rack, m.BroadcastAddress, m.Seeds, m.Status, m.State)
		}
	}
	return b.String()
}

// dumpNamespaces writes the objects of namespaces of p into the suite's dump directory when the test failed, and
// logs their summaries: the framework dumps only the test's own namespaces.
func (e *env) dumpNamespaces(p *plane, namespaces ...string) {
	if !e.t.Failed() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := filepath.Join(e.f.Suite().Dir, "dumps", sanitize(e.t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Errorf("can't create dump directory: %v", err)
		return
	}
	for _, ns := range namespaces {
		path := filepath.Join(dir, p.name()+"-"+ns+".yaml")
		summary, err := framework.DumpNamespace(ctx, p.c.Clients, ns, path)
		e.t.Logf("===== %s namespace %s (full objects in %s) =====\n%s", p.name(), ns, path, summary)
		if err != nil {
			e.t.Logf("dump incomplete: %v", err)
		}
	}
}

// auditMarks are positions in the audit logs of several planes.
type auditMarks map[*plane]framework.AuditMark

func (e *env) markAudit(planes ...*plane) auditMarks {
	e.t.Helper()
	marks := auditMarks{}
	for _, p := range planes {
		mark, err := p.c.ControlPlane.Audit.Mark()
		if err != nil {
			e.t.Fatal(err)
		}
		marks[p] = mark
	}
	return marks
}

// eventsSince returns, per plane, what its audit log holds since the marks.
func (e *env) eventsSince(marks auditMarks) map[*plane][]auditv1.Event {
	e.t.Helper()
	out := map[*plane][]auditv1.Event{}
	for p, mark := range marks {
		events, err := p.c.ControlPlane.Audit.EventsSince(mark)
		if err != nil {
			e.t.Fatal(err)
		}
		out[p] = events
	}
	return out
}

// writesSince returns, per plane with some, the writes logged since the marks that every filter accepts, leases
// aside.
func (e *env) writesSince(marks auditMarks, filters ...framework.AuditFilter) map[*plane][]auditv1.Event {
	e.t.Helper()
	out := map[*plane][]auditv1.Event{}
	for p, events := range e.eventsSince(marks) {
		for i := range events {
			ev := &events[i]
			if !framework.IsWriteVerb(ev.Verb) || (ev.ObjectRef != nil && ev.ObjectRef.Resource == "leases") {
				continue
			}
			accepted := true
			for _, filter := range filters {
				accepted = accepted && filter(ev)
			}
			if accepted {
				out[p] = append(out[p], *ev)
			}
		}
	}
	return out
}

// inNamespaces accepts requests on objects of the given namespaces or on cluster-scoped objects.
func inNamespaces(namespaces ...string) framework.AuditFilter {
	return func(ev *auditv1.Event) bool {
		return ev.ObjectRef != nil && (ev.ObjectRef.Namespace == "" || slices.Contains(namespaces, ev.ObjectRef.Namespace))
	}
}

func describeEvents(events []auditv1.Event) string {
	var b strings.Builder
	for _, ev := range events {
		code := int32(0)
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		object := ""
		if ev.ObjectRef != nil {
			object = ev.ObjectRef.Resource
			if ev.ObjectRef.Subresource != "" {
				object += "/" + ev.ObjectRef.Subresource
			}
			object += " " + ev.ObjectRef.Namespace + "/" + ev.ObjectRef.Name
		}
		fmt.Fprintf(&b, "  %s %q %s %s -> %d\n", ev.RequestReceivedTimestamp.Format("15:04:05.000"), ev.UserAgent, ev.Verb, object, code)
	}
	return b.String()
}

// podsOf returns the ScyllaDB Pods of namespace.
func podsOf(ctx context.Context, p *plane, namespace string) ([]corev1.Pod, error) {
	pods, err := p.c.Clients.Kube.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: naming.PodTypeLabel + "=" + naming.PodTypeScyllaDBNode,
	})
	if err != nil {
		return nil, err
	}
	return pods.Items, nil
}

// sanitize makes a file name out of a test name.
func sanitize(name string) string {
	return strings.NewReplacer("/", "_", " ", "_", ":", "_").Replace(name)
}
