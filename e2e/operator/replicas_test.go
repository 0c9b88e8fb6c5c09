//go:build e2e

package operator

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// fastLeaseArgs let the successor of a killed leader, which never released its Lease, take over within seconds.
var fastLeaseArgs = []string{"--leader-election-lease-duration=8s", "--leader-election-renew-deadline=6s", "--leader-election-retry-period=1s"}

// throttledClientArgs slow a replica's API client down so that the writes of one sync spread over seconds, and a
// kill lands inside a sync rather than between two.
var throttledClientArgs = []string{"--qps=4", "--burst=1"}

// TestOperatorKilledMidwayLeavesNoDuplicateOrOrphan kills the operator twice with SIGKILL, once while it creates a
// new cluster's objects and once while it rolls out a version change, each time starting a new replica, and checks
// that the result is exactly the cluster's objects, each created once and controlled by one live owner.
func TestOperatorKilledMidwayLeavesNoDuplicateOrOrphan(t *testing.T) {
	e := newTestEnv(t)
	audit := e.c.ControlPlane.Audit
	replica := func(name string, extraArgs ...[]string) *operatorProcess {
		var args []string
		for _, a := range extraArgs {
			args = append(args, a...)
		}
		return startOperator(t, e.f, e.c, name, operatorOptions{leaseName: e.ns, verbosity: 2, extraArgs: args})
	}
	const newVersion = "2025.1.3"

	start, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	first := replica("operator-kill-first", fastLeaseArgs, throttledClientArgs)
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))

	e.waitForFirstSyncMidway(sc)
	first.kill()

	second := replica("operator-kill-second", fastLeaseArgs, throttledClientArgs)
	sc = e.waitForRollout(sc.Name, "the second replica to finish creating the cluster")
	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.Version = newVersion })
	e.f.WaitFor(stepTimeout, "the operator to be in the middle of updating the StatefulSets to "+newVersion, func(ctx context.Context) (bool, error) {
		var updated []string
		for _, rack := range sc.Spec.Datacenter.Racks {
			sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, statefulSetName(sc, rack.Name), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if containerImage(&sts.Spec.Template.Spec, naming.ScyllaDBContainerName) == scyllaImage(newVersion) {
				updated = append(updated, sts.Name)
			}
		}
		switch len(updated) {
		case 0:
			return false, fmt.Errorf("no StatefulSet updated yet")
		case len(sc.Spec.Datacenter.Racks):
			return false, framework.StopPolling(fmt.Errorf("every StatefulSet is updated already: the rollout's sync ended before the kill"))
		}
		return true, nil
	})
	second.kill()

	replica("operator-kill-third", fastLeaseArgs)
	sc = e.waitForRollout(sc.Name, "the third replica to finish the rollout")
	if err := e.checkInventory(t.Context(), sc); err != nil {
		t.Fatal(err)
	}

	events, err := audit.EventsSince(start)
	if err != nil {
		t.Fatal(err)
	}
	filters := append(operatorWrites(e.ns), notOnResource("events"), framework.Succeeded())
	var problems []string
	for key, n := range countByObject(events, slices.Concat(filters, []framework.AuditFilter{verb("create")})...) {
		if n != 1 {
			problems = append(problems, fmt.Sprintf("%s created %d times", key, n))
		}
	}
	for key, n := range countByObject(events, slices.Concat(filters, []framework.AuditFilter{verb("delete")})...) {
		problems = append(problems, fmt.Sprintf("%s deleted %d times", key, n))
	}
	if len(problems) != 0 {
		sort.Strings(problems)
		t.Errorf("every object should have been created once and none deleted:\n%s\nwrites:\n%s", strings.Join(problems, "\n"), describeRequests(events, filters...))
	}
}

// TestOnlyTheLeaderReconciles runs two replicas with leader election: only the one that holds the Lease writes
// anything, and when it stops, the other takes over.
func TestOnlyTheLeaderReconciles(t *testing.T) {
	e := newTestEnv(t)
	audit := e.c.ControlPlane.Audit
	names := []string{"operator-replica-0", "operator-replica-1"}
	replicas := map[string]*operatorProcess{}
	start, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		// Syncs are logged at 4; the takeover check counts them.
		replicas[name] = startOperator(t, e.f, e.c, name, operatorOptions{leaseName: e.ns, verbosity: 4})
	}
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	sc = e.waitForRollout(sc.Name, "the 3-rack ScyllaCluster to roll out")

	events, err := audit.EventsSince(start)
	if err != nil {
		t.Fatal(err)
	}
	leader, standby := "", ""
	for _, identity := range names {
		byReplica := framework.Credential(replicas[identity].credential)
		leaseWrites := framework.CountRequests(events, framework.UserAgentPrefix(operatorUserAgentPrefix), byReplica,
			framework.Writes(), framework.Succeeded(), framework.OnResource(leaseResource, ""))
		objectWrites := framework.CountRequests(events, append(operatorWrites(e.ns), byReplica)...)
		switch {
		case leaseWrites.Total() != 0 && objectWrites.Total() != 0:
			if len(leader) != 0 {
				t.Fatalf("both %s and %s held the Lease and wrote objects:\n%s", leader, identity, describeRequests(events, operatorWrites(e.ns)...))
			}
			leader = identity
		case leaseWrites.Total() == 0 && objectWrites.Total() == 0:
			standby = identity
		default:
			t.Fatalf("%s made %d Lease writes and %d other writes; a replica must do both (leader) or neither (standby):\n%s",
				identity, leaseWrites.Total(), objectWrites.Total(), describeRequests(events, operatorWrites(e.ns)...))
		}
	}
	if len(leader) == 0 || len(standby) == 0 {
		t.Fatalf("want one leader and one standby, got leader %q and standby %q", leader, standby)
	}

	// The leader releases the Lease when it stops gracefully. The standby takes over a converged cluster: it syncs
	// it and finds nothing to write. Then it alone reconciles a change.
	handover, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	logOffset := replicas[standby].logOffset()
	if err := replicas[leader].terminate(stepTimeout); err != nil {
		t.Fatalf("leader %s exited with %v after SIGTERM, want a clean exit", leader, err)
	}
	e.f.WaitFor(stepTimeout, "the standby to take over and sync the cluster", func(context.Context) (bool, error) {
		scSyncs := replicas[standby].countLogLines(logOffset, `"Finished syncing"`, fmt.Sprintf(`key="%s/%s"`, e.ns, sc.Name))
		sdcSyncs := replicas[standby].countLogLines(logOffset, `"Finished syncing"`, fmt.Sprintf(`scyllaDBDatacenter="%s/%s"`, e.ns, sc.Name))
		return scSyncs != 0 && sdcSyncs != 0, fmt.Errorf("the standby synced the ScyllaCluster %d times and its ScyllaDBDatacenter %d times", scSyncs, sdcSyncs)
	})
	events, err = audit.EventsSince(handover)
	if err != nil {
		t.Fatal(err)
	}
	if writes := framework.CountRequests(events, operatorWrites(e.ns)...); writes.Total() != 0 {
		t.Errorf("taking over a converged cluster, the operator made %d writes, want none:\n%s", writes.Total(), describeRequests(events, operatorWrites(e.ns)...))
	}

	change, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	sc = e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.Datacenter.Racks[0].Members = 2 })
	sc = e.waitForRollout(sc.Name, "the former standby to scale the cluster up")
	if err := e.checkInventory(t.Context(), sc); err != nil {
		t.Fatal(err)
	}
	events, err = audit.EventsSince(change)
	if err != nil {
		t.Fatal(err)
	}
	if n := framework.CountRequests(events, append(operatorWrites(e.ns), framework.Credential(replicas[standby].credential))...).Total(); n == 0 {
		t.Errorf("the former standby %s made no write for the scale-up", standby)
	}
	if n := framework.CountRequests(events, append(operatorWrites(e.ns), framework.Credential(replicas[leader].credential))...).Total(); n != 0 {
		t.Errorf("the stopped leader %s made %d writes for the scale-up", leader, n)
	}
}

// waitForFirstSyncMidway waits until the operator is in the middle of the first sync of the ScyllaCluster's
// datacenter: it has created member Services but no StatefulSet yet. It needs a throttled operator
// (throttledClientArgs), and fails if the sync got past that point before the wait saw it.
func (e *testEnv) waitForFirstSyncMidway(sc *scyllav1.ScyllaCluster) {
	e.t.Helper()
	e.f.WaitFor(stepTimeout, "the operator to be in the middle of creating the datacenter's objects", func(ctx context.Context) (bool, error) {
		svcs, err := e.memberServices(ctx, sc.Name)
		if err != nil {
			return false, err
		}
		stss, err := e.kube.AppsV1().StatefulSets(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		switch {
		case len(stss.Items) != 0:
			return false, framework.StopPolling(fmt.Errorf("%d StatefulSets exist already: the first sync got past the point the test stops the operator at", len(stss.Items)))
		case len(svcs) == 0:
			return false, fmt.Errorf("no member Service yet")
		}
		return true, nil
	})
}

// TestSIGTERMLetsTheCurrentSyncFinish stops the operator gracefully in the middle of a sync: the sync must run to
// its end before the process exits, so that every StatefulSet and the PodDisruptionBudget of the new cluster exist.
func TestSIGTERMLetsTheCurrentSyncFinish(t *testing.T) {
	e := newTestEnv(t)
	ctx := t.Context()
	op := startOperator(t, e.f, e.c, "operator-sigterm", operatorOptions{leaseName: e.ns, verbosity: 2, extraArgs: throttledClientArgs})
	sc := e.createScyllaCluster(e.newScyllaCluster(3, 1))
	e.waitForFirstSyncMidway(sc)
	if err := op.terminate(stepTimeout); err != nil {
		t.Errorf("operator exited with %v after SIGTERM, want a clean exit", err)
	}

	// The first sync creates the first rack's StatefulSet; the others wait for their turn to grow.
	var missing []string
	name := statefulSetName(sc, sc.Spec.Datacenter.Racks[0].Name)
	if _, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
		missing = append(missing, fmt.Sprintf("StatefulSet %s: %v", name, err))
	}
	if _, err := e.kube.PolicyV1().PodDisruptionBudgets(e.ns).Get(ctx, naming.PodDisruptionBudgetName(sc.Name), metav1.GetOptions{}); err != nil {
		missing = append(missing, fmt.Sprintf("PodDisruptionBudget %s: %v", naming.PodDisruptionBudgetName(sc.Name), err))
	}
	if len(missing) != 0 {
		t.Errorf("the sync that ran when SIGTERM came was not finished before the operator exited:\n%s\n%s", strings.Join(missing, "\n"), op.proc.LogTail(30))
	}
}

// verb selects requests with the given verb.
func verb(v string) framework.AuditFilter {
	return func(e *auditv1.Event) bool { return e.Verb == v }
}

// countByObject counts the requests every filter accepts by "<resource> <name>".
func countByObject(events []auditv1.Event, filters ...framework.AuditFilter) map[string]int {
	counts := map[string]int{}
	for i := range events {
		e := &events[i]
		if e.ObjectRef == nil || !acceptsAll(e, filters) {
			continue
		}
		counts[e.ObjectRef.Resource+" "+e.ObjectRef.Name]++
	}
	return counts
}
