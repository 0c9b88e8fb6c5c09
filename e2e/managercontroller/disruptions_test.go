//go:build e2e

package managercontroller

import (
	"context"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// TestManagerControllerDisruptions runs the operator and the node simulator on the second control plane and, one
// after the other, the scenarios that break ScyllaDB Manager or kill the manager-controller, each with its own fake
// and manager-controller: either would disturb any other scenario the manager-controller serves.
func TestManagerControllerDisruptions(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Clusters[disruptionPlane]
	startOperatorAndNodes(t, f, c)

	t.Run("ScyllaDBManagerFailuresShowAsConditionsAndHeal", testManagerFailures)
	t.Run("KilledWithManagersAnswerInFlightDuplicatesNothing", testKilledMidWay)
}

// failureMessage is the error message of the failures injected into the fake.
const failureMessage = "e2e: ScyllaDB Manager fails on purpose"

// testManagerFailures: while ScyllaDB Manager answers registrations with 503, the ScyllaDBDatacenter shows
// ScyllaDBManagerRegistrationDegraded with that error and nothing is registered; once it recovers, everything is
// registered and scheduled once. Then, while ScyllaDB Manager drops every connection, a changed and an added task
// show Degraded (in their ScyllaDBManagerTasks and in the ScyllaCluster's status); once it is back, the change is
// one update and the addition one create.
func testManagerFailures(t *testing.T) {
	e := newEnv(t, disruptionPlane)
	stack := startManagerStack(t, e.f, e.c, stackOptions{name: "failures"})
	e.use(stack)
	ctx := t.Context()
	const name = "failures"
	sdcName := naming.ScyllaDBDatacenterNameForScyllaCluster(name)

	if err := stack.fake.SetKnobs(ctx, fakescyllamanager.Knobs{Failures: map[fakescyllamanager.Endpoint]fakescyllamanager.Failure{
		fakescyllamanager.EndpointCreateCluster: {Status: http.StatusServiceUnavailable, Message: failureMessage},
	}}); err != nil {
		t.Fatal(err)
	}
	start := e.markRequests()
	e.createScyllaCluster(newScyllaCluster(e.ns, name,
		[]scyllav1.BackupTaskSpec{backupTask("nightly", cronA, "s3:failures-backups")},
		[]scyllav1.RepairTaskSpec{repairTask("weekly", cronB)}))
	e.waitFor(rolloutTimeout, "the ScyllaDBDatacenter to show ScyllaDBManagerRegistrationDegraded with ScyllaDB Manager's 503", func(ctx context.Context) (bool, error) {
		sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, sdcName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := meta.FindStatusCondition(sdc.Status.Conditions, registrationDegraded)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, failureMessage) || !strings.Contains(c.Message, "503") {
			return false, fmt.Errorf("ScyllaDBDatacenter %q: %s", sdcName, describeCondition(c))
		}
		return true, nil
	})
	st, err := e.managerState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Clusters) != 0 {
		t.Errorf("ScyllaDB Manager holds clusters although every registration failed:\n%s", describeState(st))
	}
	sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Status.ManagerID != nil {
		t.Errorf("ScyllaCluster %q has managerId %q although it is not registered", name, *sc.Status.ManagerID)
	}
	attempts := 0
	for _, r := range e.requestsSince(start) {
		if r.Method == http.MethodPost && r.Path == "/api/v1/clusters" {
			attempts++
		}
	}
	if attempts == 0 {
		t.Errorf("the manager-controller never tried to register the ScyllaDBDatacenter")
	}

	if err := stack.fake.SetKnobs(ctx, fakescyllamanager.Knobs{}); err != nil {
		t.Fatal(err)
	}
	conv := e.waitForScyllaCluster(name, resyncTimeout, "the ScyllaCluster to be registered and its tasks scheduled once ScyllaDB Manager accepts registrations")
	e.expectNoDuplicates(conv)
	t.Logf("registered after %d failed attempts", attempts)

	nightly := conv.tasks[taskKey(managerBackup, "nightly")]
	if err := stack.fake.SetKnobs(ctx, fakescyllamanager.Knobs{Failures: map[fakescyllamanager.Endpoint]fakescyllamanager.Failure{
		fakescyllamanager.EndpointAll: {DropConnection: true},
	}}); err != nil {
		t.Fatal(err)
	}
	mark := e.markRequests()
	e.updateScyllaCluster(name, func(sc *scyllav1.ScyllaCluster) {
		sc.Spec.Backups[0].Cron = ptr.To(cronD)
		sc.Spec.Repairs = append(sc.Spec.Repairs, repairTask("extra", cronC))
	})
	nightlyObject := naming.ScyllaDBManagerTaskName(name, naming.ScyllaDBManagerTaskTypeBackup, "nightly")
	extraObject := naming.ScyllaDBManagerTaskName(name, naming.ScyllaDBManagerTaskTypeRepair, "extra")
	e.waitFor(stepTimeout, "the changed and the added task to show Degraded while ScyllaDB Manager drops every connection", func(ctx context.Context) (bool, error) {
		var problems []string
		for _, objName := range []string{nightlyObject, extraObject} {
			obj, err := e.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(e.ns).Get(ctx, objName, metav1.GetOptions{})
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			if err := degradedProblem(obj); err != nil {
				problems = append(problems, err.Error())
			}
		}
		sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, b := range sc.Status.Backups {
			if b.Name == "nightly" && b.Error == nil {
				problems = append(problems, "ScyllaCluster status.backups[nightly] has no error")
			}
		}
		extraReported := false
		for _, r := range sc.Status.Repairs {
			if r.Name == "extra" {
				extraReported = r.Error != nil
			}
		}
		if !extraReported {
			problems = append(problems, "ScyllaCluster status.repairs[extra] has no error")
		}
		if len(problems) != 0 {
			return false, fmt.Errorf("%s", strings.Join(problems, "; "))
		}
		return true, nil
	})
	st, err = e.managerState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if live := liveTasksByKey(st, conv.clusterID); live[taskKey(managerBackup, "nightly")].Schedule.Cron != cronA {
		t.Errorf("the nightly backup's cron changed in ScyllaDB Manager while it dropped every connection:\n%s", describeState(st))
	}

	if err := stack.fake.SetKnobs(ctx, fakescyllamanager.Knobs{}); err != nil {
		t.Fatal(err)
	}
	// Requests the fake dropped changed nothing; count only what it answered.
	recovered := e.waitForScyllaCluster(name, resyncTimeout, "the change and the addition to reach ScyllaDB Manager once it is back")
	e.expectNoDuplicates(recovered)
	e.sleep(settleTime)
	var answered []fakescyllamanager.Request
	for _, r := range e.clusterWritesSince(mark, conv.clusterID) {
		if r.Status != 0 {
			answered = append(answered, r)
		}
	}
	var got []string
	for _, r := range answered {
		got = append(got, r.Method+" "+r.Path)
	}
	want := []string{"POST /api/v1/cluster/" + conv.clusterID + "/tasks", "PUT /api/v1/cluster/" + conv.clusterID + "/task/backup/" + nightly.ID}
	if len(got) != 2 || !(got[0] == want[0] && got[1] == want[1] || got[0] == want[1] && got[1] == want[0]) {
		t.Errorf("after the outage ScyllaDB Manager got these writes for cluster %s:\n%swant one task create and one update of %s",
			conv.clusterID, framework.DescribeScyllaDBManagerRequests(answered), nightly.ID)
	}
	if id := recovered.tasks[taskKey(managerBackup, "nightly")].ID; id != nightly.ID {
		t.Errorf("the nightly backup was replaced (%s, was %s) instead of updated", id, nightly.ID)
	}
	e.deleteScyllaClusterAndWait(name, conv.clusterID)
}

// degradedProblem says why a ScyllaDBManagerTask does not show Degraded=True with a message, or returns nil.
func degradedProblem(obj *scyllav1alpha1.ScyllaDBManagerTask) error {
	c := meta.FindStatusCondition(obj.Status.Conditions, "Degraded")
	if c == nil || c.Status != metav1.ConditionTrue || c.Message == "" || c.ObservedGeneration != obj.Generation {
		return fmt.Errorf("ScyllaDBManagerTask %q (generation %d) is not Degraded with a message: %s", obj.Name, obj.Generation, describeCondition(c))
	}
	return nil
}

var taskCreatePath = regexp.MustCompile(`^/api/v1/cluster/[^/]+/tasks$`)

func isClusterCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/api/v1/clusters"
}

func isTaskCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && taskCreatePath.MatchString(r.URL.Path)
}

// testKilledMidWay SIGKILLs the manager-controller twice at the moment a crash is most likely to duplicate
// something: after ScyllaDB Manager created a cluster, and later a task, and before the manager-controller learned
// their IDs (an HTTPGate holds ScyllaDB Manager's answers). The replica started after each kill must take over
// what ScyllaDB Manager already holds: in the end there is one cluster, one task per ScyllaDBManagerTask ever, and
// the task created for the killed replica is the one in use.
func testKilledMidWay(t *testing.T) {
	e := newEnv(t, disruptionPlane)
	stack := startManagerStack(t, e.f, e.c, stackOptions{name: "killed", gate: true})
	e.use(stack)
	ctx := t.Context()
	const name = "killed"

	clusterHold := stack.gate.Arm(framework.HoldAfterResponse, isClusterCreate)
	e.createScyllaCluster(newScyllaCluster(e.ns, name,
		[]scyllav1.BackupTaskSpec{backupTask("nightly", cronA, "s3:killed-backups"), backupTask("weekly", cronB, "s3:killed-backups")},
		[]scyllav1.RepairTaskSpec{repairTask("full", cronC)}))
	heldCluster := e.waitForHold(clusterHold, rolloutTimeout, "the manager-controller to register the ScyllaCluster's datacenter (ScyllaDB Manager's answer held)")
	stack.kill()
	clusterHold.Release()
	t.Logf("killed the manager-controller while ScyllaDB Manager's answer to %s was held", heldCluster)
	if heldCluster.Status != http.StatusCreated {
		t.Fatalf("ScyllaDB Manager answered %s; the test needs the cluster created", heldCluster)
	}
	clusterID := path.Base(heldCluster.Location)
	// ScyllaDB Manager holds the cluster; Kubernetes does not know it: the kill landed in between.
	st, err := e.managerState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if clusterByID(st, clusterID) == nil {
		t.Fatalf("ScyllaDB Manager does not hold cluster %s although it answered its create:\n%s", clusterID, describeState(st))
	}
	sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; ok {
		t.Fatalf("ScyllaDBDatacenter %q already has annotation %s=%q: the kill did not land between the create and its record", sdc.Name, naming.ScyllaDBManagerClusterIDAnnotation, id)
	}

	taskHold := stack.gate.Arm(framework.HoldAfterResponse, isTaskCreate)
	stack.start()
	heldTask := e.waitForHold(taskHold, stepTimeout, "the restarted manager-controller to create a task (ScyllaDB Manager's answer held)")
	stack.kill()
	taskHold.Release()
	t.Logf("killed the manager-controller while ScyllaDB Manager's answer to %s was held", heldTask)
	if heldTask.Status != http.StatusCreated {
		t.Fatalf("ScyllaDB Manager answered %s; the test needs the task created", heldTask)
	}
	taskID := path.Base(heldTask.Location)
	objects, err := e.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objects.Items {
		if ptr.Deref(obj.Status.TaskID, "") == taskID {
			t.Fatalf("ScyllaDBManagerTask %q already records task %s: the kill did not land between the create and its record", obj.Name, taskID)
		}
	}

	stack.start()
	conv := e.waitForScyllaCluster(name, stepTimeout, "the third manager-controller to finish what the killed ones started")
	e.expectNoDuplicates(conv)
	if conv.clusterID != clusterID {
		t.Errorf("the ScyllaCluster is registered as cluster %s, not as the %s ScyllaDB Manager created for the first, killed, replica", conv.clusterID, clusterID)
	}
	var taskInUse string
	for key, task := range conv.tasks {
		if task.ID == taskID {
			taskInUse = key
		}
	}
	if taskInUse == "" {
		t.Errorf("task %s, which ScyllaDB Manager created for the second, killed, replica, is not among the tasks in use:\n%s", taskID, describeTasks(tasksOfCluster(conv.state, conv.clusterID)))
	} else {
		t.Logf("task %s created for the killed replica is %s", taskID, taskInUse)
	}
	e.deleteScyllaClusterAndWait(name, conv.clusterID)
}
