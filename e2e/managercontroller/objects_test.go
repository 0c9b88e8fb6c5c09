//go:build e2e

package managercontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	// scyllaVersion and agentVersion are those of deploy/examples/scyllacluster-basic.yaml.
	scyllaVersion = "2025.1.2"
	agentVersion  = "3.5.0"
	// datacenterName is also the datacenter of the fake ScyllaDB Manager's default topology.
	datacenterName = "dc1"

	// Task types and the names of the tasks ScyllaDB Manager creates with every cluster.
	managerBackup      = "backup"
	managerRepair      = "repair"
	managerHealthcheck = "healthcheck"
	// defaultRepairName is the repair ScyllaDB Manager adds to a cluster registered without without_repair.
	defaultRepairName = "all-weekly"

	// registrationDegraded and registrationProgressing are the manager-controller's conditions on a registered
	// ScyllaDBDatacenter's status.
	registrationDegraded    = "ScyllaDBManagerRegistrationDegraded"
	registrationProgressing = "ScyllaDBManagerRegistrationProgressing"
)

// healthcheckTasks are the tasks ScyllaDB Manager creates with every cluster, as "type/name".
var healthcheckTasks = []string{managerHealthcheck + "/alternator", managerHealthcheck + "/cql", managerHealthcheck + "/rest"}

// Crons of the scenarios' tasks run once a year, so that their next activation, which the manager-controller
// copies into the task's status, does not move while a test watches for writes.
const (
	cronA = "0 3 1 1 *"
	cronB = "0 4 1 1 *"
	cronC = "0 5 1 1 *"
	cronD = "30 3 1 1 *"
)

// newScyllaCluster returns a ScyllaCluster of one rack with one small node that starts without waiting, with the
// given backups and repairs.
func newScyllaCluster(namespace, name string, backups []scyllav1.BackupTaskSpec, repairs []scyllav1.RepairTaskSpec) *scyllav1.ScyllaCluster {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	return &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec: scyllav1.ScyllaClusterSpec{
			Version:         scyllaVersion,
			AgentVersion:    agentVersion,
			MinReadySeconds: ptr.To[int32](0),
			Datacenter: scyllav1.DatacenterSpec{
				Name: datacenterName,
				Racks: []scyllav1.RackSpec{{
					Name:      "a",
					Members:   1,
					Storage:   scyllav1.Storage{Capacity: "1Gi"},
					Resources: corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
				}},
			},
			Backups: backups,
			Repairs: repairs,
		},
	}
}

func backupTask(name, cron string, location ...string) scyllav1.BackupTaskSpec {
	return scyllav1.BackupTaskSpec{
		TaskSpec: scyllav1.TaskSpec{Name: name, SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{Cron: ptr.To(cron)}},
		Location: location,
	}
}

func repairTask(name, cron string) scyllav1.RepairTaskSpec {
	return scyllav1.RepairTaskSpec{TaskSpec: scyllav1.TaskSpec{Name: name, SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{Cron: ptr.To(cron)}}}
}

// newScyllaDBDatacenter returns a standalone ScyllaDBDatacenter of one rack with one small node, labelled for
// registration with ScyllaDB Manager.
func newScyllaDBDatacenter(namespace, name string) *scyllav1alpha1.ScyllaDBDatacenter {
	small := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: namespace,
			Name:      name,
			Labels:    map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName:          name,
			DatacenterName:       ptr.To(datacenterName),
			ScyllaDB:             scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:" + scyllaVersion},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: ptr.To("docker.io/scylladb/scylla-manager-agent:" + agentVersion)},
			MinReadySeconds:      ptr.To[int32](0),
			RackTemplate: &scyllav1alpha1.RackTemplate{
				Nodes: ptr.To[int32](1),
				ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
					Resources: &corev1.ResourceRequirements{Requests: small.DeepCopy(), Limits: small.DeepCopy()},
					Storage:   &scyllav1alpha1.StorageOptions{Capacity: "1Gi"},
				},
			},
			Racks: []scyllav1alpha1.RackSpec{{Name: "a"}},
		},
	}
}

func (e *env) createScyllaCluster(sc *scyllav1.ScyllaCluster) {
	e.t.Helper()
	if _, err := e.scylla.ScyllaV1().ScyllaClusters(sc.Namespace).Create(e.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		e.t.Fatalf("can't create ScyllaCluster %q: %v", sc.Namespace+"/"+sc.Name, err)
	}
}

// updateScyllaCluster changes the ScyllaCluster's spec with mutate, retrying on conflicts with status writes.
func (e *env) updateScyllaCluster(name string, mutate func(*scyllav1.ScyllaCluster)) {
	e.t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		mutate(sc)
		_, err = e.scylla.ScyllaV1().ScyllaClusters(e.ns).Update(e.t.Context(), sc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		e.t.Fatalf("can't update ScyllaCluster %q: %v", name, err)
	}
}

// taskKey names a ScyllaDB Manager task by "type/name".
func taskKey(typ, name string) string {
	return typ + "/" + name
}

// wantTask is a task ScyllaDB Manager should hold for a ScyllaCluster.
type wantTask struct {
	// object is the name of the ScyllaDBManagerTask the operator translates the task into.
	object   string
	typ      string
	name     string
	cron     string
	location []string
}

func (w wantTask) key() string { return taskKey(w.typ, w.name) }

// wantTasks returns the tasks ScyllaDB Manager should hold for sc's backups and repairs.
func wantTasks(sc *scyllav1.ScyllaCluster) []wantTask {
	var out []wantTask
	for _, b := range sc.Spec.Backups {
		out = append(out, wantTask{
			object:   naming.ScyllaDBManagerTaskName(sc.Name, naming.ScyllaDBManagerTaskTypeBackup, b.Name),
			typ:      managerBackup,
			name:     b.Name,
			cron:     ptr.Deref(b.Cron, ""),
			location: b.Location,
		})
	}
	for _, r := range sc.Spec.Repairs {
		out = append(out, wantTask{
			object: naming.ScyllaDBManagerTaskName(sc.Name, naming.ScyllaDBManagerTaskTypeRepair, r.Name),
			typ:    managerRepair,
			name:   r.Name,
			cron:   ptr.Deref(r.Cron, ""),
		})
	}
	return out
}

// converged is a ScyllaCluster whose state agrees everywhere: in Kubernetes and in ScyllaDB Manager.
type converged struct {
	sc  *scyllav1.ScyllaCluster
	sdc *scyllav1alpha1.ScyllaDBDatacenter
	// clusterID is the ScyllaDB Manager cluster's ID.
	clusterID string
	// tasks are ScyllaDB Manager's live tasks of the cluster by "type/name".
	tasks map[string]fakescyllamanager.TaskState
	// objects are the ScyllaDBManagerTasks by "type/name" of their ScyllaDB Manager task.
	objects map[string]*scyllav1alpha1.ScyllaDBManagerTask
	state   fakescyllamanager.State
}

// scyllaClusterConverged returns the ScyllaCluster named name once everything agrees with its current spec:
//   - its status names the ScyllaDB Manager cluster (managerId) and, for each backup and repair, the task's ID and
//     its cron as ScyllaDB Manager holds it, and no error;
//   - its ScyllaDBDatacenter has the registration finalizer, the cluster ID annotation and no degraded
//     registration;
//   - ScyllaDB Manager holds that cluster, under the ScyllaCluster's name, with exactly the spec's tasks (cron and
//     locations as in the spec) and the healthchecks it creates itself;
//   - each task's ScyllaDBManagerTask exists, has its finalizer, the task's ID and is Available and not Degraded,
//     and no other ScyllaDBManagerTask exists in the namespace.
//
// Otherwise it says what does not agree yet.
func (e *env) scyllaClusterConverged(ctx context.Context, name string) (*converged, error) {
	sc, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if sc.Status.ManagerID == nil {
		return nil, fmt.Errorf("ScyllaCluster %q has no status.managerId yet", name)
	}
	clusterID := *sc.Status.ManagerID
	sdc, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).Get(ctx, naming.ScyllaDBDatacenterNameForScyllaCluster(name), metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if err := registeredDatacenterProblem(sdc, clusterID); err != nil {
		return nil, err
	}

	st, err := e.managerState(ctx)
	if err != nil {
		return nil, err
	}
	cluster := clusterByID(st, clusterID)
	if cluster == nil {
		return nil, fmt.Errorf("ScyllaDB Manager has no cluster %s (managerId of ScyllaCluster %q)", clusterID, name)
	}
	if want := naming.ScyllaDBManagerClusterName(e.ns, name); cluster.Name != want {
		return nil, fmt.Errorf("ScyllaDB Manager cluster %s is named %q, want %q", clusterID, cluster.Name, want)
	}
	live := liveTasksByKey(st, clusterID)
	want := wantTasks(sc)
	wantKeys := slices.Clone(healthcheckTasks)
	for _, w := range want {
		wantKeys = append(wantKeys, w.key())
	}
	sort.Strings(wantKeys)
	if diff := cmp.Diff(wantKeys, sortedKeys(live)); diff != "" {
		return nil, fmt.Errorf("ScyllaDB Manager's live tasks of cluster %s differ (-want +got):\n%s", clusterID, diff)
	}

	objects := map[string]*scyllav1alpha1.ScyllaDBManagerTask{}
	list, err := e.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	byName := map[string]*scyllav1alpha1.ScyllaDBManagerTask{}
	for i := range list.Items {
		byName[list.Items[i].Name] = &list.Items[i]
	}
	var problems []string
	for _, w := range want {
		task := live[w.key()]
		if task.Schedule.Cron != w.cron {
			problems = append(problems, fmt.Sprintf("ScyllaDB Manager task %s has cron %q, want %q", w.key(), task.Schedule.Cron, w.cron))
		}
		if w.typ == managerBackup {
			var props struct {
				Location []string `json:"location"`
			}
			if err := json.Unmarshal(task.Properties, &props); err != nil {
				problems = append(problems, fmt.Sprintf("ScyllaDB Manager task %s has properties %s: %v", w.key(), task.Properties, err))
			} else if !slices.Equal(props.Location, w.location) {
				problems = append(problems, fmt.Sprintf("ScyllaDB Manager task %s has locations %q, want %q", w.key(), props.Location, w.location))
			}
		}
		obj, ok := byName[w.object]
		if !ok {
			problems = append(problems, fmt.Sprintf("no ScyllaDBManagerTask %q", w.object))
			continue
		}
		delete(byName, w.object)
		objects[w.key()] = obj
		if err := taskObjectProblem(obj, task.ID); err != nil {
			problems = append(problems, err.Error())
		}
	}
	for name, obj := range byName {
		problems = append(problems, fmt.Sprintf("ScyllaDBManagerTask %q (deleting: %v, finalizers %v) is not one of the ScyllaCluster's tasks", name, obj.DeletionTimestamp != nil, obj.Finalizers))
	}

	statusTasks := map[string]scyllav1.TaskStatus{}
	var statusCrons = map[string]string{}
	for _, b := range sc.Status.Backups {
		statusTasks[taskKey(managerBackup, b.Name)] = b.TaskStatus
		statusCrons[taskKey(managerBackup, b.Name)] = ptr.Deref(b.Cron, "")
	}
	for _, r := range sc.Status.Repairs {
		statusTasks[taskKey(managerRepair, r.Name)] = r.TaskStatus
		statusCrons[taskKey(managerRepair, r.Name)] = ptr.Deref(r.Cron, "")
	}
	if len(statusTasks) != len(want) {
		problems = append(problems, fmt.Sprintf("ScyllaCluster %q status lists %d tasks, want %d", name, len(statusTasks), len(want)))
	}
	for _, w := range want {
		ts, ok := statusTasks[w.key()]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("ScyllaCluster %q status has no task %s", name, w.key()))
		case ptr.Deref(ts.ID, "") != live[w.key()].ID:
			problems = append(problems, fmt.Sprintf("ScyllaCluster %q status gives task %s ID %q, ScyllaDB Manager %q", name, w.key(), ptr.Deref(ts.ID, ""), live[w.key()].ID))
		case ts.Error != nil:
			problems = append(problems, fmt.Sprintf("ScyllaCluster %q status gives task %s error %q", name, w.key(), *ts.Error))
		case statusCrons[w.key()] != w.cron:
			problems = append(problems, fmt.Sprintf("ScyllaCluster %q status gives task %s cron %q, want %q", name, w.key(), statusCrons[w.key()], w.cron))
		}
	}
	if len(problems) != 0 {
		sort.Strings(problems)
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return &converged{sc: sc, sdc: sdc, clusterID: clusterID, tasks: live, objects: objects, state: st}, nil
}

// waitForScyllaCluster waits until the ScyllaCluster named name converged (scyllaClusterConverged).
func (e *env) waitForScyllaCluster(name string, timeout time.Duration, what string) *converged {
	e.t.Helper()
	var conv *converged
	e.waitFor(timeout, what, func(ctx context.Context) (bool, error) {
		var err error
		conv, err = e.scyllaClusterConverged(ctx, name)
		return err == nil, err
	})
	return conv
}

// registeredDatacenterProblem says why sdc does not read as registered under clusterID, or returns nil.
func registeredDatacenterProblem(sdc *scyllav1alpha1.ScyllaDBDatacenter, clusterID string) error {
	if got := sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != clusterID {
		return fmt.Errorf("ScyllaDBDatacenter %q has cluster ID annotation %q, want %q", sdc.Name, got, clusterID)
	}
	if !slices.Contains(sdc.Finalizers, naming.ScyllaDBManagerClusterFinalizer) {
		return fmt.Errorf("ScyllaDBDatacenter %q has finalizers %v, want %s", sdc.Name, sdc.Finalizers, naming.ScyllaDBManagerClusterFinalizer)
	}
	for _, condType := range []string{registrationDegraded, registrationProgressing} {
		if c := meta.FindStatusCondition(sdc.Status.Conditions, condType); c != nil && c.Status == metav1.ConditionTrue {
			return fmt.Errorf("ScyllaDBDatacenter %q is %s: %s: %s", sdc.Name, condType, c.Reason, c.Message)
		}
	}
	return nil
}

// taskObjectProblem says why a ScyllaDBManagerTask does not read as in sync with ScyllaDB Manager's task taskID, or
// returns nil.
func taskObjectProblem(obj *scyllav1alpha1.ScyllaDBManagerTask, taskID string) error {
	switch {
	case obj.DeletionTimestamp != nil:
		return fmt.Errorf("ScyllaDBManagerTask %q is being deleted", obj.Name)
	case !slices.Contains(obj.Finalizers, naming.ScyllaDBManagerTaskFinalizer):
		return fmt.Errorf("ScyllaDBManagerTask %q has finalizers %v, want %s", obj.Name, obj.Finalizers, naming.ScyllaDBManagerTaskFinalizer)
	case ptr.Deref(obj.Status.TaskID, "") != taskID:
		return fmt.Errorf("ScyllaDBManagerTask %q has status.taskID %q, ScyllaDB Manager %q", obj.Name, ptr.Deref(obj.Status.TaskID, ""), taskID)
	case ptr.Deref(obj.Status.ObservedGeneration, 0) != obj.Generation:
		return fmt.Errorf("ScyllaDBManagerTask %q has observedGeneration %d, generation %d", obj.Name, ptr.Deref(obj.Status.ObservedGeneration, 0), obj.Generation)
	case ptr.Deref(obj.Status.LastRunStatus, "") != "NEW":
		// The fake runs no task on its schedule; these never ran.
		return fmt.Errorf("ScyllaDBManagerTask %q has lastRunStatus %q, want NEW", obj.Name, ptr.Deref(obj.Status.LastRunStatus, ""))
	}
	if c := meta.FindStatusCondition(obj.Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionFalse {
		return fmt.Errorf("ScyllaDBManagerTask %q is not Degraded=False: %s", obj.Name, describeCondition(c))
	}
	if c := meta.FindStatusCondition(obj.Status.Conditions, "Available"); c == nil || c.Status != metav1.ConditionTrue {
		return fmt.Errorf("ScyllaDBManagerTask %q is not Available=True: %s", obj.Name, describeCondition(c))
	}
	return nil
}

func describeCondition(c *metav1.Condition) string {
	if c == nil {
		return "no such condition"
	}
	return fmt.Sprintf("%s=%s for generation %d (%s: %s)", c.Type, c.Status, c.ObservedGeneration, c.Reason, c.Message)
}

// waitForScyllaClusterGone deletes nothing itself: it waits until the ScyllaCluster named name, its ScyllaDBDatacenter and
// every ScyllaDBManagerTask of the namespace are gone, and ScyllaDB Manager holds no cluster clusterID.
func (e *env) waitForScyllaClusterGone(name, clusterID string) {
	e.t.Helper()
	e.waitFor(rolloutTimeout, fmt.Sprintf("ScyllaCluster %q and everything of it to be gone, in Kubernetes and in ScyllaDB Manager", name), func(ctx context.Context) (bool, error) {
		var left []string
		if _, err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			left = append(left, fmt.Sprintf("ScyllaCluster %q (%v)", name, err))
		}
		sdcs, err := e.scylla.ScyllaV1alpha1().ScyllaDBDatacenters(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, sdc := range sdcs.Items {
			left = append(left, fmt.Sprintf("ScyllaDBDatacenter %q (finalizers %v)", sdc.Name, sdc.Finalizers))
		}
		tasks, err := e.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, task := range tasks.Items {
			left = append(left, fmt.Sprintf("ScyllaDBManagerTask %q (finalizers %v)", task.Name, task.Finalizers))
		}
		st, err := e.managerState(ctx)
		if err != nil {
			return false, err
		}
		if c := clusterByID(st, clusterID); c != nil {
			left = append(left, fmt.Sprintf("ScyllaDB Manager cluster %s (%s)", c.ID, c.Name))
		}
		if len(left) != 0 {
			return false, fmt.Errorf("still there: %s", strings.Join(left, "; "))
		}
		return true, nil
	})
}

// deleteScyllaClusterAndWait deletes the ScyllaCluster and waits until nothing of it is left anywhere
// (waitForScyllaClusterGone). During the deletion, ScyllaDB Manager must get no create or update for the
// cluster, and exactly one cluster delete.
func (e *env) deleteScyllaClusterAndWait(name, clusterID string) {
	e.t.Helper()
	mark := e.markRequests()
	if err := e.scylla.ScyllaV1().ScyllaClusters(e.ns).Delete(e.t.Context(), name, metav1.DeleteOptions{}); err != nil {
		e.t.Fatalf("can't delete ScyllaCluster %q: %v", name, err)
	}
	e.waitForScyllaClusterGone(name, clusterID)
	e.sleep(settleTime)
	writes := e.clusterWritesSince(mark, clusterID)
	clusterDeletes := 0
	var unexpected []fakescyllamanager.Request
	for _, r := range writes {
		switch {
		case r.Method == "DELETE" && r.Path == "/api/v1/cluster/"+clusterID:
			clusterDeletes++
		case r.Method == "DELETE" && strings.HasPrefix(r.Path, "/api/v1/cluster/"+clusterID+"/task/"):
			// Tasks may be deleted before their cluster; after it, their deletes find nothing.
		default:
			unexpected = append(unexpected, r)
		}
	}
	if clusterDeletes != 1 || len(unexpected) != 0 {
		e.t.Errorf("deleting ScyllaCluster %q made ScyllaDB Manager get %d cluster deletes (want 1) and %d other writes (want none that is not a task delete); all its writes:\n%s",
			name, clusterDeletes, len(unexpected), framework.DescribeScyllaDBManagerRequests(writes))
	}
}

// clusterByID returns the cluster with ID id, or nil.
func clusterByID(st fakescyllamanager.State, id string) *fakescyllamanager.ClusterState {
	for i := range st.Clusters {
		if st.Clusters[i].ID == id {
			return &st.Clusters[i]
		}
	}
	return nil
}

// clustersNamed returns the clusters called name.
func clustersNamed(st fakescyllamanager.State, name string) []fakescyllamanager.ClusterState {
	var out []fakescyllamanager.ClusterState
	for _, c := range st.Clusters {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// liveTasksByKey returns the cluster's tasks that are not deleted, by "type/name". A name held twice keeps the
// later task; duplicateLiveTasks finds those.
func liveTasksByKey(st fakescyllamanager.State, clusterID string) map[string]fakescyllamanager.TaskState {
	out := map[string]fakescyllamanager.TaskState{}
	for _, t := range st.Tasks {
		if t.ClusterID == clusterID && !t.Deleted {
			out[taskKey(t.Type, t.Name)] = t
		}
	}
	return out
}

// tasksOwnedBy returns every task ScyllaDB Manager ever held for the Kubernetes object with UID uid (its owner
// label), deleted ones included, in creation order.
func tasksOwnedBy(st fakescyllamanager.State, uid types.UID) []fakescyllamanager.TaskState {
	var out []fakescyllamanager.TaskState
	for _, t := range st.Tasks {
		if t.Labels[naming.ScyllaDBManagerOwnerUIDLabel] == string(uid) {
			out = append(out, t)
		}
	}
	return out
}

// tasksOfCluster returns every task of the cluster, deleted ones included.
func tasksOfCluster(st fakescyllamanager.State, clusterID string) []fakescyllamanager.TaskState {
	var out []fakescyllamanager.TaskState
	for _, t := range st.Tasks {
		if t.ClusterID == clusterID {
			out = append(out, t)
		}
	}
	return out
}

// expectNoDuplicates checks that ScyllaDB Manager holds conv's cluster once under its name, that it ever created
// exactly one task for each of the ScyllaCluster's ScyllaDBManagerTasks (deleted ones counted) and that there never
// was the default weekly repair.
func (e *env) expectNoDuplicates(conv *converged) {
	e.t.Helper()
	st, err := e.managerState(e.t.Context())
	if err != nil {
		e.t.Fatal(err)
	}
	cluster := clusterByID(st, conv.clusterID)
	if cluster == nil {
		e.t.Fatalf("ScyllaDB Manager has no cluster %s", conv.clusterID)
	}
	if named := clustersNamed(st, cluster.Name); len(named) != 1 {
		e.t.Errorf("ScyllaDB Manager holds %d clusters named %q, want 1:\n%s", len(named), cluster.Name, describeState(st))
	}
	for key, obj := range conv.objects {
		if owned := tasksOwnedBy(st, obj.UID); len(owned) != 1 {
			e.t.Errorf("ScyllaDB Manager ever held %d tasks for ScyllaDBManagerTask %q (%s), want 1:\n%s", len(owned), obj.Name, key, describeTasks(owned))
		}
	}
	for _, t := range tasksOfCluster(st, conv.clusterID) {
		if t.Type == managerRepair && t.Name == defaultRepairName {
			e.t.Errorf("ScyllaDB Manager holds its default repair %q in cluster %s: the cluster was registered without without_repair", defaultRepairName, conv.clusterID)
		}
		owned := t.Labels[naming.ScyllaDBManagerOwnerUIDLabel] != ""
		if !owned && t.Type != managerHealthcheck && !t.Deleted {
			e.t.Errorf("ScyllaDB Manager holds task %s/%s (%s) in cluster %s that no ScyllaDBManagerTask owns", t.Type, t.Name, t.ID, conv.clusterID)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// describeState lists the fake's clusters and tasks, one per line.
func describeState(st fakescyllamanager.State) string {
	var b strings.Builder
	for _, c := range st.Clusters {
		fmt.Fprintf(&b, "cluster %s %q host %s labels %v\n", c.ID, c.Name, c.Host, c.Labels)
	}
	b.WriteString(describeTasks(st.Tasks))
	return b.String()
}

func describeTasks(tasks []fakescyllamanager.TaskState) string {
	var b strings.Builder
	for _, t := range tasks {
		fmt.Fprintf(&b, "  task %s of cluster %s: %s/%s enabled=%v deleted=%v cron=%q owner=%s\n", t.ID, t.ClusterID, t.Type, t.Name,
			t.Enabled, t.Deleted, t.Schedule.Cron, t.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
	}
	return b.String()
}
