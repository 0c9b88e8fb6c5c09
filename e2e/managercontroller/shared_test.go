//go:build e2e

package managercontroller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
)

// TestSharedManagerController runs the operator, the node simulator, one fake ScyllaDB Manager and one
// manager-controller (with leader election) on the first control plane, and in parallel the scenarios that only
// need them working, each in its own namespace. Requests to ScyllaDB Manager are told apart by cluster ID.
func TestSharedManagerController(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Clusters[sharedPlane]
	startOperatorAndNodes(t, f, c)
	stack := startManagerStack(t, f, c, stackOptions{name: "shared", leaseName: c.Namespace})

	t.Run("group", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			run  func(t *testing.T, stack *managerStack)
		}{
			{"ScyllaClusterTasksFollowTheSpecAndLeaveWithIt", testScyllaClusterTasksFollowTheSpec},
			{"LabelledDatacenterRegistersOnceAndDeregistersWhenUnlabelled", testLabelledDatacenterRegistersOnce},
			{"TaskDeletedInManagerComesBackOnResync", testTaskDeletedInManagerComesBack},
			{"NoWritesOverTwoResyncPeriodsAfterConvergence", testNoWritesAfterConvergence},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.run(t, stack)
			})
		}
	})
}

// testScyllaClusterTasksFollowTheSpec: a ScyllaCluster with two backups and a repair becomes one ScyllaDB Manager
// cluster with exactly those tasks and the healthchecks; a changed cron is one task update, a removed backup one task
// delete; deleting the ScyllaCluster removes the cluster from ScyllaDB Manager and leaves nothing on a finalizer.
func testScyllaClusterTasksFollowTheSpec(t *testing.T, stack *managerStack) {
	e := newEnv(t, sharedPlane)
	e.use(stack)
	const name = "lifecycle"
	start := e.markRequests()
	e.createScyllaCluster(newScyllaCluster(e.ns, name,
		[]scyllav1.BackupTaskSpec{backupTask("nightly", cronA, "s3:nightly-backups"), backupTask("weekly", cronB, "gcs:weekly-backups")},
		[]scyllav1.RepairTaskSpec{repairTask("full", cronC)}))
	conv := e.waitForScyllaCluster(name, rolloutTimeout, "the ScyllaCluster to roll out and its backups and repair to be scheduled in ScyllaDB Manager")
	cid := conv.clusterID
	e.expectNoDuplicates(conv)
	if want := naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", conv.sdc.UID); cid != want {
		t.Errorf("the ScyllaCluster's datacenter is registered as ScyllaDB Manager cluster %s, want the ID derived from its UID, %s", cid, want)
	}
	e.sleep(settleTime)
	var creates []string
	for _, r := range e.clusterWritesSince(start, cid) {
		creates = append(creates, r.Method+" "+r.Path)
	}
	slices.Sort(creates)
	wantCreates := []string{"POST /api/v1/cluster/" + cid + "/tasks", "POST /api/v1/cluster/" + cid + "/tasks", "POST /api/v1/cluster/" + cid + "/tasks", "POST /api/v1/clusters"}
	if !slices.Equal(creates, wantCreates) {
		t.Errorf("scheduling the ScyllaCluster made ScyllaDB Manager get these writes:\n  %s\nwant one cluster create and three task creates:\n  %s",
			strings.Join(creates, "\n  "), strings.Join(wantCreates, "\n  "))
	}

	nightly, weekly := conv.tasks[taskKey(managerBackup, "nightly")], conv.tasks[taskKey(managerBackup, "weekly")]
	mark := e.markRequests()
	e.updateScyllaCluster(name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.Backups[0].Cron = ptr.To(cronD) })
	edited := e.waitForScyllaCluster(name, stepTimeout, "the nightly backup's new cron to reach ScyllaDB Manager and the ScyllaCluster's status")
	e.sleep(settleTime)
	e.expectClusterWrites(mark, cid, "changing the nightly backup's cron", "PUT /api/v1/cluster/"+cid+"/task/backup/"+nightly.ID)
	for key, task := range conv.tasks {
		if edited.tasks[key].ID != task.ID {
			t.Errorf("task %s changed its ID from %s to %s when the nightly backup's cron changed", key, task.ID, edited.tasks[key].ID)
		}
	}

	mark = e.markRequests()
	e.updateScyllaCluster(name, func(sc *scyllav1.ScyllaCluster) {
		sc.Spec.Backups = slices.DeleteFunc(sc.Spec.Backups, func(b scyllav1.BackupTaskSpec) bool { return b.Name == "weekly" })
	})
	removed := e.waitForScyllaCluster(name, stepTimeout, "the weekly backup to leave ScyllaDB Manager, the ScyllaDBManagerTasks and the ScyllaCluster's status")
	e.sleep(settleTime)
	e.expectClusterWrites(mark, cid, "removing the weekly backup", "DELETE /api/v1/cluster/"+cid+"/task/backup/"+weekly.ID)
	for _, task := range tasksOfCluster(removed.state, cid) {
		if task.ID == weekly.ID && !task.Deleted {
			t.Errorf("ScyllaDB Manager still holds the weekly backup %s", weekly.ID)
		}
	}

	e.deleteScyllaClusterAndWait(name, cid)
}

// testLabelledDatacenterRegistersOnce: a standalone ScyllaDBDatacenter labelled for registration is registered once
// it is rolled out, with one cluster create, under the ID derived from its UID, its client Service's name and its
// agents' token; removing the label deregisters it with one cluster delete and takes the finalizer and annotation.
func testLabelledDatacenterRegistersOnce(t *testing.T, stack *managerStack) {
	e := newEnv(t, sharedPlane)
	e.use(stack)
	ctx := t.Context()
	const name = "standalone"
	start := e.markRequests()
	sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Create(ctx, newScyllaDBDatacenter(e.ns, name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cid := naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", sdc.UID)
	wantName := naming.ScyllaDBManagerClusterNameForObject(e.ns, "ScyllaDBDatacenter", name)
	wantHost := naming.ScyllaDBManagerClusterHost(e.ns, name)
	e.waitFor(rolloutTimeout, "the ScyllaDBDatacenter to roll out and be registered with ScyllaDB Manager", func(ctx context.Context) (bool, error) {
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c := meta.FindStatusCondition(sdc.Status.Conditions, "Available"); c == nil || c.Status != metav1.ConditionTrue {
			return false, fmt.Errorf("ScyllaDBDatacenter %q is not Available: %s", name, describeCondition(c))
		}
		if err := registeredDatacenterProblem(sdc, cid); err != nil {
			return false, err
		}
		st, err := e.managerState(ctx)
		if err != nil {
			return false, err
		}
		cluster := clusterByID(st, cid)
		if cluster == nil {
			return false, fmt.Errorf("ScyllaDB Manager has no cluster %s", cid)
		}
		if cluster.Name != wantName || cluster.Host != wantHost {
			return false, fmt.Errorf("ScyllaDB Manager cluster %s is %q at host %q, want %q at %q", cid, cluster.Name, cluster.Host, wantName, wantHost)
		}
		return true, nil
	})

	st, err := e.managerState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cluster := clusterByID(st, cid)
	secret, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, naming.AgentAuthTokenSecretName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	token, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil {
		t.Fatal(err)
	}
	if len(token) == 0 || cluster.AuthToken != token {
		t.Errorf("ScyllaDB Manager cluster %s does not carry the agents' auth token from Secret %q", cid, secret.Name)
	}
	if !cluster.ForceTLSDisabled || !cluster.ForceNonSSLSessionPort {
		t.Errorf("ScyllaDB Manager cluster %s has forceTLSDisabled=%v forceNonSSLSessionPort=%v, want both true", cid, cluster.ForceTLSDisabled, cluster.ForceNonSSLSessionPort)
	}
	var tasks []string
	for _, task := range tasksOfCluster(st, cid) {
		tasks = append(tasks, taskKey(task.Type, task.Name))
	}
	slices.Sort(tasks)
	if !slices.Equal(tasks, healthcheckTasks) {
		t.Errorf("ScyllaDB Manager cluster %s has tasks %v, want only its healthchecks %v (registered without its weekly repair)", cid, tasks, healthcheckTasks)
	}
	e.sleep(settleTime)
	e.expectClusterWrites(start, cid, "registering the ScyllaDBDatacenter", "POST /api/v1/clusters")

	mark := e.markRequests()
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:null}}}`, naming.RegisterWithScyllaDBManagerLabel)
	if _, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(stepTimeout, "the unlabelled ScyllaDBDatacenter to be deregistered", func(ctx context.Context) (bool, error) {
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var problems []string
		if slices.Contains(sdc.Finalizers, naming.ScyllaDBManagerClusterFinalizer) {
			problems = append(problems, fmt.Sprintf("ScyllaDBDatacenter %q still has finalizer %s", name, naming.ScyllaDBManagerClusterFinalizer))
		}
		if id, ok := sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
			problems = append(problems, fmt.Sprintf("ScyllaDBDatacenter %q still has annotation %s=%q", name, naming.ScyllaDBManagerClusterIDAnnotation, id))
		}
		st, err := e.managerState(ctx)
		if err != nil {
			return false, err
		}
		if clusterByID(st, cid) != nil {
			problems = append(problems, fmt.Sprintf("ScyllaDB Manager still holds cluster %s", cid))
		}
		if len(problems) != 0 {
			return false, fmt.Errorf("%s", strings.Join(problems, "; "))
		}
		return true, nil
	})
	e.sleep(settleTime)
	e.expectClusterWrites(mark, cid, "removing the registration label", "DELETE /api/v1/cluster/"+cid)

	if err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitFor(stepTimeout, "the deregistered ScyllaDBDatacenter to go away without waiting for the manager-controller", func(ctx context.Context) (bool, error) {
		_, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, fmt.Errorf("ScyllaDBDatacenter %q is still there (%v)", name, err)
	})
	if writes := e.clusterWritesSince(mark, cid); len(writes) != 1 {
		t.Errorf("after the deregistration ScyllaDB Manager got more writes for cluster %s:\n%s", cid, framework.DescribeScyllaDBManagerRequests(writes))
	}
}

// testTaskDeletedInManagerComesBack: a task deleted in ScyllaDB Manager behind the manager-controller's back (as
// with sctool) is scheduled again on the next resync, and the statuses follow its new ID.
func testTaskDeletedInManagerComesBack(t *testing.T, stack *managerStack) {
	e := newEnv(t, sharedPlane)
	e.use(stack)
	const name = "resync"
	e.createScyllaCluster(newScyllaCluster(e.ns, name, []scyllav1.BackupTaskSpec{backupTask("nightly", cronA, "s3:resync-backups")}, nil))
	conv := e.waitForScyllaCluster(name, rolloutTimeout, "the ScyllaCluster to roll out and its backup to be scheduled in ScyllaDB Manager")
	key := taskKey(managerBackup, "nightly")
	old := conv.tasks[key]

	if err := stack.manager.DeleteTask(t.Context(), conv.clusterID, managerclient.TaskType(managerBackup), old.ID); err != nil {
		t.Fatalf("can't delete task %s from ScyllaDB Manager: %v", old.ID, err)
	}
	deleted := time.Now()
	var back *converged
	e.waitFor(resyncTimeout, "the backup deleted in ScyllaDB Manager to be scheduled again on the next resync", func(ctx context.Context) (bool, error) {
		var err error
		back, err = e.scyllaClusterConverged(ctx, name)
		if err != nil {
			return false, err
		}
		if back.tasks[key].ID == old.ID {
			return false, fmt.Errorf("task %s is still the deleted one", key)
		}
		return true, nil
	})
	t.Logf("the backup came back as %s %v after it was deleted", back.tasks[key].ID, time.Since(deleted).Round(time.Second))
	owned := tasksOwnedBy(back.state, back.objects[key].UID)
	if len(owned) != 2 || !owned[0].Deleted || owned[0].ID != old.ID || owned[1].Deleted {
		t.Errorf("ScyllaDB Manager ever held these tasks for ScyllaDBManagerTask %q; want the deleted one and one new one:\n%s", back.objects[key].Name, describeTasks(owned))
	}
	if back.clusterID != conv.clusterID {
		t.Errorf("the ScyllaCluster moved from ScyllaDB Manager cluster %s to %s", conv.clusterID, back.clusterID)
	}
	e.deleteScyllaClusterAndWait(name, back.clusterID)
}

// testNoWritesAfterConvergence: once a ScyllaCluster's tasks are scheduled, two resync periods pass without a write
// to ScyllaDB Manager for its cluster, without a write of the manager-controller or of the operator in its
// namespace, while the manager-controller does read ScyllaDB Manager on each resync.
func testNoWritesAfterConvergence(t *testing.T, stack *managerStack) {
	e := newEnv(t, sharedPlane)
	e.use(stack)
	const name = "steady"
	before := e.markAudit()
	e.createScyllaCluster(newScyllaCluster(e.ns, name,
		[]scyllav1.BackupTaskSpec{backupTask("nightly", cronA, "s3:steady-backups")},
		[]scyllav1.RepairTaskSpec{repairTask("weekly", cronB)}))
	conv := e.waitForScyllaCluster(name, rolloutTimeout, "the ScyllaCluster to roll out and its tasks to be scheduled in ScyllaDB Manager")
	e.sleep(settleTime)

	// The window is only meaningful if the filters see the programs' writes at all: they made plenty so far.
	events := before.events()
	mcWrites, operatorWrites := programWrites(managerControllerUserAgentPrefix, e.ns), programWrites(operatorUserAgentPrefix, e.ns)
	if n := framework.CountRequests(events, mcWrites...).Total(); n == 0 {
		t.Errorf("the audit log shows no write by user agent %q in namespace %s; the manager-controller's token (ServiceAccount %s) made these:\n%s",
			managerControllerUserAgentPrefix, e.ns, stack.credential.ServiceAccount, describeRequests(events, framework.Credential(stack.credential), framework.InNamespace(e.ns), framework.Writes()))
	}
	if n := framework.CountRequests(events, operatorWrites...).Total(); n == 0 {
		t.Errorf("the audit log shows no write by user agent %q in namespace %s; the filter is wrong", operatorUserAgentPrefix, e.ns)
	}

	window := 2*resyncPeriod + 10*time.Second
	requests := e.markRequests()
	audit := e.markAudit()
	snapshot := e.snapshotTaskStatuses(name)
	t.Logf("converged; watching writes for %v", window)
	e.sleep(window)

	reqs := framework.ScyllaDBManagerRequestsOfCluster(e.requestsSince(requests), conv.clusterID)
	writes := framework.ScyllaDBManagerWrites(reqs)
	if len(writes) != 0 {
		t.Errorf("ScyllaDB Manager got %d writes for cluster %s over %v after convergence, want none:\n%s", len(writes), conv.clusterID, window, framework.DescribeScyllaDBManagerRequests(writes))
	}
	// Without a resync in the window, no writes would prove nothing: each resync reads the cluster and its tasks.
	if reads := len(reqs) - len(writes); reads < 2 {
		t.Errorf("the manager-controller read ScyllaDB Manager's cluster %s %d times over %v, want at least once per resync period", conv.clusterID, reads, window)
	}
	events = audit.events()
	mcWriteCount, operatorWriteCount := framework.CountRequests(events, mcWrites...).Total(), framework.CountRequests(events, operatorWrites...).Total()
	if mcWriteCount != 0 {
		t.Errorf("the manager-controller made %d API writes in namespace %s over %v after convergence, want none:\n%s", mcWriteCount, e.ns, window, describeRequests(events, mcWrites...))
	}
	if operatorWriteCount != 0 {
		t.Errorf("the operator made %d API writes in namespace %s over %v after convergence, want none:\n%s", operatorWriteCount, e.ns, window, describeRequests(events, operatorWrites...))
	}
	if mcWriteCount+operatorWriteCount != 0 {
		if diff := cmp.Diff(snapshot, e.snapshotTaskStatuses(name)); diff != "" {
			t.Errorf("what the writes changed in the tasks' statuses (-before +after):\n%s", diff)
		}
	}
	if _, err := e.scyllaClusterConverged(t.Context(), name); err != nil {
		t.Errorf("the ScyllaCluster no longer reads as converged: %v", err)
	}
	e.deleteScyllaClusterAndWait(name, conv.clusterID)
}

// taskStatuses is what the manager-controller and the operator write about a ScyllaCluster's tasks: each
// ScyllaDBManagerTask's status and status annotation, and the ScyllaCluster's status.backups and status.repairs.
type taskStatuses struct {
	Annotations map[string]string
	Statuses    map[string]scyllav1alpha1.ScyllaDBManagerTaskStatus
	Backups     []scyllav1.BackupTaskStatus
	Repairs     []scyllav1.RepairTaskStatus
}

func (e *env) snapshotTaskStatuses(name string) taskStatuses {
	e.t.Helper()
	ctx := e.t.Context()
	s := taskStatuses{Annotations: map[string]string{}, Statuses: map[string]scyllav1alpha1.ScyllaDBManagerTaskStatus{}}
	tasks, err := e.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, task := range tasks.Items {
		s.Annotations[task.Name] = task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation]
		s.Statuses[task.Name] = task.Status
	}
	sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	s.Backups, s.Repairs = sc.Status.Backups, sc.Status.Repairs
	return s
}
