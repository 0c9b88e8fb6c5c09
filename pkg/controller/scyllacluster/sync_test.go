package scyllacluster

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// syncFixture runs the controller's sync against fake clientsets, with informer caches filled by hand.
type syncFixture struct {
	scyllaClient *scyllafake.Clientset
	factory      scyllainformers.SharedInformerFactory
	controller   *Controller
	recorder     *record.FakeRecorder
}

// newSyncFixture returns a fixture whose API server and caches both hold objects.
func newSyncFixture(t *testing.T, objects ...runtime.Object) *syncFixture {
	t.Helper()

	// NewSimpleClientset: the generated apply configurations carry no OpenAPI schema, which NewClientset needs.
	scyllaClient := scyllafake.NewSimpleClientset(objects...)
	keepStatusOnUpdate(scyllaClient, "scylladbdatacenters", func(obj, stored runtime.Object) {
		obj.(*scyllav1alpha1.ScyllaDBDatacenter).Status = stored.(*scyllav1alpha1.ScyllaDBDatacenter).Status
	})
	keepStatusOnUpdate(scyllaClient, "scylladbmanagertasks", func(obj, stored runtime.Object) {
		obj.(*scyllav1alpha1.ScyllaDBManagerTask).Status = stored.(*scyllav1alpha1.ScyllaDBManagerTask).Status
	})
	factory := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)
	controller, err := NewController(
		kubefake.NewClientset(),
		scyllaClient,
		factory.Scylla().V1().ScyllaClusters(),
		factory.Scylla().V1alpha1().ScyllaDBDatacenters(),
		factory.Scylla().V1alpha1().ScyllaDBManagerTasks(),
	)
	if err != nil {
		t.Fatalf("can't create controller: %v", err)
	}
	t.Cleanup(controller.eventBroadcaster.Shutdown)
	t.Cleanup(controller.queue.ShutDown)

	recorder := record.NewFakeRecorder(100)
	controller.eventRecorder = recorder
	controller.clock = func() time.Time { return testNow.Time }
	// Every status is written at once unless a test batches them.
	controller.statusBatcher = controllerhelpers.NewStatusBatcher(0)

	f := &syncFixture{scyllaClient: scyllaClient, factory: factory, controller: controller, recorder: recorder}
	f.catchUpCaches(t)
	scyllaClient.ClearActions()
	return f
}

// keepStatusOnUpdate makes an update of resource (not of its status subresource) keep the stored object's status, as
// the API server does and the fake does not: copyStatus copies the status of stored to obj.
func keepStatusOnUpdate(client *scyllafake.Clientset, resource string, copyStatus func(obj, stored runtime.Object)) {
	client.PrependReactor("update", resource, func(action clienttesting.Action) (bool, runtime.Object, error) {
		update := action.(clienttesting.UpdateAction)
		if len(update.GetSubresource()) != 0 {
			return false, nil, nil
		}
		accessor, err := meta.Accessor(update.GetObject())
		if err != nil {
			return true, nil, err
		}
		stored, err := client.Tracker().Get(update.GetResource(), update.GetNamespace(), accessor.GetName())
		if err == nil {
			copyStatus(update.GetObject(), stored)
		}
		return false, nil, nil
	})
}

// catchUpCaches makes the informer caches hold exactly what the fake API server holds, as caches that caught up
// with every watch event would.
func (f *syncFixture) catchUpCaches(t *testing.T) {
	t.Helper()

	stores := []struct {
		gvr     schema.GroupVersionResource
		gvk     schema.GroupVersionKind
		indexer cache.Indexer
	}{
		{
			gvr:     scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"),
			gvk:     scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster"),
			indexer: f.factory.Scylla().V1().ScyllaClusters().Informer().GetIndexer(),
		},
		{
			gvr:     scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"),
			gvk:     scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter"),
			indexer: f.factory.Scylla().V1alpha1().ScyllaDBDatacenters().Informer().GetIndexer(),
		},
		{
			gvr:     scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks"),
			gvk:     scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBManagerTask"),
			indexer: f.factory.Scylla().V1alpha1().ScyllaDBManagerTasks().Informer().GetIndexer(),
		},
	}
	for _, s := range stores {
		list, err := f.scyllaClient.Tracker().List(s.gvr, s.gvk, "")
		if err != nil {
			t.Fatalf("can't list %s: %v", s.gvr.Resource, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatalf("can't extract %s: %v", s.gvr.Resource, err)
		}
		objects := make([]any, 0, len(items))
		for _, item := range items {
			objects = append(objects, item)
		}
		if err := s.indexer.Replace(objects, ""); err != nil {
			t.Fatalf("can't fill the %s cache: %v", s.gvr.Resource, err)
		}
	}
}

// update stores obj in the fake API server, as another actor would.
func (f *syncFixture) update(t *testing.T, obj runtime.Object, resource string, groupVersion schema.GroupVersion) {
	t.Helper()

	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.scyllaClient.Tracker().Update(groupVersion.WithResource(resource), obj, accessor.GetNamespace()); err != nil {
		t.Fatalf("can't update %s %q: %v", resource, accessor.GetName(), err)
	}
}

func (f *syncFixture) sync(t *testing.T, sc *scyllav1.ScyllaCluster) error {
	t.Helper()
	return f.controller.sync(t.Context(), cache.MetaObjectToName(sc).String())
}

// takeWrites returns the write requests made since the last call as "<verb> <resource>[/<subresource>] <name>".
func (f *syncFixture) takeWrites() []string {
	var writes []string
	for _, action := range f.scyllaClient.Actions() {
		resource := action.GetResource().Resource
		if sub := action.GetSubresource(); len(sub) != 0 {
			resource += "/" + sub
		}
		var name string
		switch a := action.(type) {
		case clienttesting.CreateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case clienttesting.UpdateAction:
			name = a.GetObject().(metav1.Object).GetName()
		case clienttesting.DeleteAction:
			name = a.GetName()
		default:
			continue
		}
		writes = append(writes, fmt.Sprintf("%s %s %s", action.GetVerb(), resource, name))
	}
	f.scyllaClient.ClearActions()
	return writes
}

func (f *syncFixture) takeEvents() []string {
	return fakeclient.Events(f.recorder)
}

func (f *syncFixture) getScyllaCluster(t *testing.T, sc *scyllav1.ScyllaCluster) *scyllav1.ScyllaCluster {
	t.Helper()
	got, err := f.scyllaClient.ScyllaV1().ScyllaClusters(sc.Namespace).Get(t.Context(), sc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// syncCreatingScyllaDBDatacenter syncs sc, which has no ScyllaDBDatacenter yet, expects that sync to create it and
// to write nothing else (the tasks and the status wait for the sync its add event brings), and lets the caches catch
// up as the informer's add event would.
func (f *syncFixture) syncCreatingScyllaDBDatacenter(t *testing.T, sc *scyllav1.ScyllaCluster) {
	t.Helper()
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error on the sync that creates the ScyllaDBDatacenter: %v", err)
	}
	if diff := cmp.Diff([]string{"create scylladbdatacenters " + naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)}, f.takeWrites()); diff != "" {
		t.Fatalf("unexpected writes of the sync that creates the ScyllaDBDatacenter (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Fatalf("expected no events from the sync that creates the ScyllaDBDatacenter, got %q", events)
	}
	f.catchUpCaches(t)
}

// reportFirstScyllaDBDatacenterStatus stores the first status the ScyllaDBDatacenter controller writes for a new
// datacenter: its spec observed, Progressing True, not Available yet.
func (f *syncFixture) reportFirstScyllaDBDatacenterStatus(t *testing.T) {
	t.Helper()
	sdc := f.getScyllaDBDatacenter(t)
	sdc.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(sdc.Generation),
		Conditions: []metav1.Condition{
			condition("Available", metav1.ConditionFalse, "NodesNotReady", "0 of 3 nodes available", sdc.Generation, testNow),
			condition("Progressing", metav1.ConditionTrue, "Rolling", "creating rack a", sdc.Generation, testNow),
			condition("Degraded", metav1.ConditionFalse, "AsExpected", "", sdc.Generation, testNow),
		},
	}
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
}

// syncUntilFirstScyllaDBDatacenterStatus syncs sc once it is stored, as the informer's events bring it, until its
// ScyllaDBDatacenter reports its first status: the sync that creates the datacenter and the one its add event brings.
// The caches then catch up with that status, and the writes are forgotten.
func (f *syncFixture) syncUntilFirstScyllaDBDatacenterStatus(t *testing.T, sc *scyllav1.ScyllaCluster) {
	t.Helper()
	f.syncCreatingScyllaDBDatacenter(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error on the second sync: %v", err)
	}
	f.reportFirstScyllaDBDatacenterStatus(t)
	f.catchUpCaches(t)
	f.takeWrites()
	f.takeEvents()
}

// syncCreated syncs sc once it is stored, as the informer's events bring it: the sync that creates its
// ScyllaDBDatacenter, the one the datacenter's add event brings, and the one after the datacenter's first status.
// It forgets the writes and events of those.
func (f *syncFixture) syncCreated(t *testing.T, sc *scyllav1.ScyllaCluster) {
	t.Helper()
	f.syncUntilFirstScyllaDBDatacenterStatus(t, sc)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error on the third sync: %v", err)
	}
	f.takeWrites()
	f.takeEvents()
}

// expectQuietResync lets the caches catch up, syncs sc as stored again and expects neither writes nor events.
func (f *syncFixture) expectQuietResync(t *testing.T, sc *scyllav1.ScyllaCluster) {
	t.Helper()
	f.catchUpCaches(t)
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error on a resync: %v", err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected no writes on a resync, got %q", writes)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events on a resync, got %q", events)
	}
}

// newScyllaClusterWithTasks returns newBasicScyllaCluster with two backups and a repair.
func newScyllaClusterWithTasks() *scyllav1.ScyllaCluster {
	sc := newBasicScyllaCluster()
	sc.Spec.Backups = []scyllav1.BackupTaskSpec{
		{TaskSpec: scyllav1.TaskSpec{Name: "daily"}, Location: []string{"s3:backups"}},
		{TaskSpec: scyllav1.TaskSpec{Name: "weekly"}, Location: []string{"s3:backups"}},
	}
	sc.Spec.Repairs = []scyllav1.RepairTaskSpec{{TaskSpec: scyllav1.TaskSpec{Name: "nightly"}}}
	return sc
}

var (
	dailyBackupTaskName   = naming.ScyllaDBManagerTaskName("basic", "Backup", "daily")
	weeklyBackupTaskName  = naming.ScyllaDBManagerTaskName("basic", "Backup", "weekly")
	nightlyRepairTaskName = naming.ScyllaDBManagerTaskName("basic", "Repair", "nightly")
	// createTasks are the writes that create the tasks of newScyllaClusterWithTasks.
	createTasks = []string{
		"create scylladbmanagertasks " + dailyBackupTaskName,
		"create scylladbmanagertasks " + weeklyBackupTaskName,
		"create scylladbmanagertasks " + nightlyRepairTaskName,
	}
)

// The ScyllaDBDatacenter is what makes pods: the sync that creates it stops there, and the one its add event brings
// creates the tasks. The first status waits for the datacenter's first status, which would replace it at once.
func TestSyncCreatesTheScyllaDBDatacenterFirstThenTasksThenStatusThenWritesNothingOnceConverged(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string{"create scylladbdatacenters basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes on the first sync (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events for the create of the first sync, got %q", events)
	}
	if queued := f.controller.queue.Len(); queued != 0 {
		t.Errorf("expected the first sync to leave the next one to the ScyllaDBDatacenter's add event, got %d keys queued", queued)
	}

	sdc, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("can't get the created ScyllaDBDatacenter: %v", err)
	}
	want := expectedBasicScyllaDBDatacenter()
	if diff := cmp.Diff(want.Spec, sdc.Spec); diff != "" {
		t.Errorf("unexpected ScyllaDBDatacenter spec (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.OwnerReferences, sdc.OwnerReferences); diff != "" {
		t.Errorf("unexpected ScyllaDBDatacenter owner references (-want +got):\n%s", diff)
	}
	if got := sdc.Labels[naming.RegisterWithScyllaDBManagerLabel]; got != "true" {
		t.Errorf("expected the ScyllaDBDatacenter to be labelled for ScyllaDB Manager registration, got %q", got)
	}

	// The second sync, brought by the ScyllaDBDatacenter's add event, sees it in the cache.
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error on the second sync: %v", err)
	}
	if diff := cmp.Diff(createTasks, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes on the second sync (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events for the creates of the second sync, got %q", events)
	}
	f.expectQuietResync(t, sc)

	// The ScyllaDBDatacenter controller writes the datacenter's first status.
	f.reportFirstScyllaDBDatacenterStatus(t)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error on the third sync: %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes on the sync after the ScyllaDBDatacenter's first status (-want +got):\n%s", diff)
	}

	status := f.getScyllaCluster(t, sc).Status
	if status.ObservedGeneration == nil || *status.ObservedGeneration != sc.Generation {
		t.Errorf("expected observedGeneration %d once the ScyllaDBDatacenter observed its spec, got %v", sc.Generation, status.ObservedGeneration)
	}
	progressing := meta.FindStatusCondition(status.Conditions, "Progressing")
	if progressing == nil || progressing.Status != metav1.ConditionTrue || !strings.Contains(progressing.Message, "creating rack a") {
		t.Errorf("expected Progressing True with the ScyllaDBDatacenter's message, got %+v", progressing)
	}
	var taskNames []string
	for _, backup := range status.Backups {
		taskNames = append(taskNames, backup.Name)
	}
	for _, repair := range status.Repairs {
		taskNames = append(taskNames, repair.Name)
	}
	if diff := cmp.Diff([]string{"daily", "weekly", "nightly"}, taskNames); diff != "" {
		t.Errorf("unexpected task statuses (-want +got):\n%s", diff)
	}

	// The caches catch up with what the sync wrote; the next sync has nothing left to do.
	f.expectQuietResync(t, sc)
}

// A status that has something to say besides "the ScyllaDBDatacenter has not reported yet" does not wait for the
// datacenter's first status: not the first one of a ScyllaCluster whose datacenter failed to be created, and not any
// later one.
func TestSyncWritesTheStatusBeforeTheScyllaDBDatacentersFirstWhenItHasNews(t *testing.T) {
	t.Parallel()

	taskCreatesAndStatus := append(slices.Clone(createTasks), "update scyllaclusters/status basic")

	t.Run("the ScyllaDBDatacenter can't be created", func(t *testing.T) {
		t.Parallel()
		sc := newScyllaClusterWithTasks()
		f := newSyncFixture(t, sc)
		f.scyllaClient.PrependReactor("create", "scylladbdatacenters", func(clienttesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(scyllav1alpha1.Resource("scylladbdatacenters"), "basic", errors.New("quota exceeded"))
		})
		if err := f.sync(t, sc); err == nil {
			t.Fatal("expected the failed create to be retried")
		}
		if diff := cmp.Diff(append([]string{"create scylladbdatacenters basic"}, taskCreatesAndStatus...), f.takeWrites()); diff != "" {
			t.Errorf("unexpected writes (-want +got):\n%s", diff)
		}
		status := f.getScyllaCluster(t, sc).Status
		if c := meta.FindStatusCondition(status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "quota exceeded") {
			t.Errorf("expected Degraded True saying why, got %+v", c)
		}
	})

	t.Run("the ScyllaDBDatacenter was recreated", func(t *testing.T) {
		t.Parallel()
		sc := newScyllaClusterWithTasks()
		sc.Status.ObservedGeneration = new(sc.Generation)
		sc.Status.Members = new(int32(3))
		f := newSyncFixture(t, sc)
		f.syncCreatingScyllaDBDatacenter(t, sc)
		if err := f.sync(t, sc); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(taskCreatesAndStatus, f.takeWrites()); diff != "" {
			t.Errorf("unexpected writes (-want +got):\n%s", diff)
		}
		status := f.getScyllaCluster(t, sc).Status
		if status.Members != nil {
			t.Errorf("expected the status to drop what the old ScyllaDBDatacenter reported, got members %d", *status.Members)
		}
		if c := meta.FindStatusCondition(status.Conditions, "Progressing"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != scyllaDBDatacenterNotObservedReason {
			t.Errorf("expected Progressing True with reason %s, got %+v", scyllaDBDatacenterNotObservedReason, c)
		}
	})
}

func TestSyncMirrorsProgressOfTheScyllaDBDatacenterAndTasksOnce(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)

	// The ScyllaDBDatacenter controller and the ScyllaDBManagerTask controller report back.
	sdc, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = "manager-cluster-id"
	sdc.Status = newScyllaDBDatacenterWithStatus(sdc.Generation).Status
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)

	task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), dailyBackupTaskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task.Annotations[naming.ScyllaDBManagerTaskStatusAnnotation] = `{"name":"daily","id":"task-id","location":["s3:backups"]}`
	f.update(t, task, "scylladbmanagertasks", scyllav1alpha1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()

	f.catchUpCaches(t)
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	if status.ObservedGeneration == nil || *status.ObservedGeneration != sc.Generation {
		t.Errorf("expected observedGeneration %d, got %v", sc.Generation, status.ObservedGeneration)
	}
	if status.ManagerID == nil || *status.ManagerID != "manager-cluster-id" {
		t.Errorf("expected managerId %q, got %v", "manager-cluster-id", status.ManagerID)
	}
	if status.Backups[0].ID == nil || *status.Backups[0].ID != "task-id" {
		t.Errorf("expected the daily backup's ID from its task's status annotation, got %+v", status.Backups[0])
	}
	for _, condType := range []string{"Available", "Progressing", "Degraded"} {
		want := map[string]metav1.ConditionStatus{"Available": metav1.ConditionTrue, "Progressing": metav1.ConditionFalse, "Degraded": metav1.ConditionFalse}[condType]
		if c := meta.FindStatusCondition(status.Conditions, condType); c == nil || c.Status != want || c.ObservedGeneration != sc.Generation {
			t.Errorf("expected %s %s at generation %d, got %+v", condType, want, sc.Generation, c)
		}
	}

	f.expectQuietResync(t, sc)
}

func TestSyncPrunesTheTaskOfARemovedBackup(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)

	sc = f.getScyllaCluster(t, sc)
	sc.Spec.Backups = sc.Spec.Backups[:1]
	sc.Generation++
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	wantWrites := []string{
		"delete scylladbmanagertasks " + weeklyBackupTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	wantEvents := []string{
		`Normal ScyllaDBManagerTaskDeleted ScyllaDBManagerTask scylla/` + weeklyBackupTaskName + ` deleted because it is no longer wanted`,
	}
	if diff := cmp.Diff(wantEvents, f.takeEvents()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	if _, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), weeklyBackupTaskName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("expected the weekly backup's task to be gone, got %v", err)
	}
	if got := len(f.getScyllaCluster(t, sc).Status.Backups); got != 1 {
		t.Errorf("expected one backup status, got %d", got)
	}
}

func TestSyncRefusesAScyllaDBDatacenterControlledBySomeoneElse(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name            string
		ownerReferences []metav1.OwnerReference
		wantMessage     string
	}{
		{
			name: "another ScyllaCluster of another name",
			ownerReferences: []metav1.OwnerReference{{
				APIVersion: "scylla.scylladb.com/v1", Kind: "ScyllaCluster", Name: "other", UID: "other-uid", Controller: new(true),
			}},
			wantMessage: `ScyllaDBDatacenter "scylla/basic" already exists and is controlled by ScyllaCluster "other" (UID other-uid), not by this ScyllaCluster; delete it or give it a different name`,
		},
		{
			name:        "no controller at all",
			wantMessage: `ScyllaDBDatacenter "scylla/basic" already exists and is not controlled by anything, not by this ScyllaCluster; delete it or give it a different name`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			sc := newBasicScyllaCluster()
			foreign := &scyllav1alpha1.ScyllaDBDatacenter{
				ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "basic", UID: "foreign-uid", OwnerReferences: tc.ownerReferences},
				Spec:       scyllav1alpha1.ScyllaDBDatacenterSpec{ScyllaDB: scyllav1alpha1.ScyllaDB{Image: "example.com/other:1"}},
			}
			f := newSyncFixture(t, sc, foreign)

			// Retrying does not help, so the key is not requeued; a change of either object syncs it again.
			if err := f.sync(t, sc); err != nil {
				t.Fatalf("expected no error to requeue with, got %v", err)
			}
			if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"Warning OwnershipConflict " + tc.wantMessage}, f.takeEvents()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}

			status := f.getScyllaCluster(t, sc).Status
			wantConditions := map[string]metav1.Condition{
				"ScyllaDBDatacenterControllerDegraded": condition("ScyllaDBDatacenterControllerDegraded", metav1.ConditionTrue, "Error", tc.wantMessage, sc.Generation, testNow),
				"Degraded":                             condition("Degraded", metav1.ConditionTrue, "Error", "ScyllaDBDatacenterControllerDegraded: "+tc.wantMessage, sc.Generation, testNow),
			}
			for condType, want := range wantConditions {
				if diff := cmp.Diff(&want, meta.FindStatusCondition(status.Conditions, condType)); diff != "" {
					t.Errorf("unexpected %s condition (-want +got):\n%s", condType, diff)
				}
			}

			// The failure is reported once, not on every sync.
			f.expectQuietResync(t, sc)

			got, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(foreign, got); diff != "" {
				t.Errorf("the foreign ScyllaDBDatacenter was modified (-want +got):\n%s", diff)
			}
		})
	}
}

// A ScyllaCluster deleted and created again (kubectl delete, then apply) finds the old one's ScyllaDBDatacenter and
// tasks still there: the garbage collector, and the finalizers of the ScyllaDB Manager integration, take a while. The
// new one waits for them without reporting a conflict or raising Warning events, and creates its own once they are
// gone.
func TestSyncWaitsForTheObjectsOfADeletedScyllaClusterOfTheSameName(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	previous := sc.DeepCopy()
	previous.UID = "previous-uid"
	oldSDC, err := makeScyllaDBDatacenter(previous)
	if err != nil {
		t.Fatal(err)
	}
	oldSDC.Finalizers = []string{naming.ScyllaDBManagerClusterFinalizer}
	oldDaily, err := makeBackupTask(previous, &previous.Spec.Backups[0])
	if err != nil {
		t.Fatal(err)
	}
	oldDaily.Finalizers = []string{naming.ScyllaDBManagerTaskFinalizer}
	oldDaily.DeletionTimestamp = new(metav1.NewTime(testEarlier.Time))
	oldWeekly, err := makeBackupTask(previous, &previous.Spec.Backups[1])
	if err != nil {
		t.Fatal(err)
	}
	f := newSyncFixture(t, sc, oldSDC, oldDaily, oldWeekly)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected waiting for the garbage collector not to be an error, got %v", err)
	}
	// No task is created while the datacenter of their name is not this ScyllaCluster's.
	wantWrites := []string{"update scyllaclusters/status basic"}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events, got %q", events)
	}
	status := f.getScyllaCluster(t, sc).Status
	wantProgressing := map[string]string{
		"ScyllaDBDatacenterControllerProgressing": `ScyllaDBDatacenter "scylla/basic" belongs to a deleted ScyllaCluster of the same name (UID previous-uid) and is left to the garbage collector; it is created again once it is gone`,
		"ScyllaDBManagerTaskControllerProgressing": `ScyllaDBManagerTask "scylla/` + dailyBackupTaskName + `" is being deleted; it is created again once it is gone` +
			"\n" + `ScyllaDBManagerTask "scylla/` + weeklyBackupTaskName + `" belongs to a deleted ScyllaCluster of the same name (UID previous-uid) and is left to the garbage collector; it is created again once it is gone` +
			"\n" + `ScyllaDBManagerTasks are created and updated once ScyllaDBDatacenter "scylla/basic", which they are scheduled in, is this ScyllaCluster's, not another's`,
	}
	for condType, wantMessage := range wantProgressing {
		c := meta.FindStatusCondition(status.Conditions, condType)
		if c == nil || c.Status != metav1.ConditionTrue || c.Message != wantMessage {
			t.Errorf("expected %s True with message %q, got %+v", condType, wantMessage, c)
		}
	}
	for _, condType := range []string{"ScyllaDBDatacenterControllerDegraded", "ScyllaDBManagerTaskControllerDegraded"} {
		if c := meta.FindStatusCondition(status.Conditions, condType); c == nil || c.Status != metav1.ConditionFalse {
			t.Errorf("expected %s False, got %+v", condType, c)
		}
	}

	// The garbage collector marks the datacenter for deletion, then it and the tasks are gone.
	oldSDC = oldSDC.DeepCopy()
	oldSDC.DeletionTimestamp = new(metav1.NewTime(testNow.Time))
	f.update(t, oldSDC, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	f.catchUpCaches(t)
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events, got %q", events)
	}
	c := meta.FindStatusCondition(f.getScyllaCluster(t, sc).Status.Conditions, "ScyllaDBDatacenterControllerProgressing")
	if want := `ScyllaDBDatacenter "scylla/basic" is being deleted; it is created again once it is gone`; c == nil || c.Message != want {
		t.Errorf("expected ScyllaDBDatacenterControllerProgressing with message %q, got %+v", want, c)
	}
	f.takeWrites()

	for _, o := range []struct{ resource, name string }{
		{"scylladbdatacenters", "basic"}, {"scylladbmanagertasks", dailyBackupTaskName}, {"scylladbmanagertasks", weeklyBackupTaskName},
	} {
		if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource(o.resource), testNamespace, o.name); err != nil {
			t.Fatal(err)
		}
	}
	f.catchUpCaches(t)
	f.syncCreatingScyllaDBDatacenter(t, f.getScyllaCluster(t, sc))
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(append(slices.Clone(createTasks), "update scyllaclusters/status basic"), f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

// The tasks name their ScyllaDBDatacenter, not the ScyllaCluster: while the datacenter of that name is another's,
// ScyllaDB Manager integration would schedule the ScyllaCluster's backups and repairs in that one's cluster, so none
// is created until the name is the ScyllaCluster's.
func TestSyncCreatesNoTaskWhileTheScyllaDBDatacenterOfItsNameIsAnothers(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	foreign := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   testNamespace,
			Name:        "basic",
			UID:         "foreign-uid",
			Labels:      map[string]string{naming.RegisterWithScyllaDBManagerLabel: naming.RegisterWithScyllaDBManagerLabelValue},
			Annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "5f1c3b8e-2a47-4d6b-9c0e-7d8f9a1b2c3d"},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{ScyllaDB: scyllav1alpha1.ScyllaDB{Image: "example.com/other:1"}},
	}
	f := newSyncFixture(t, sc, foreign)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	want := `ScyllaDBManagerTasks are created and updated once ScyllaDBDatacenter "scylla/basic", which they are scheduled in, is this ScyllaCluster's, not another's`
	if c := meta.FindStatusCondition(status.Conditions, "ScyllaDBManagerTaskControllerProgressing"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != awaitingScyllaDBDatacenterReason || c.Message != want {
		t.Errorf("expected ScyllaDBManagerTaskControllerProgressing True with reason %s and message %q, got %+v", awaitingScyllaDBDatacenterReason, want, c)
	}
	if events := f.takeEvents(); len(events) != 1 || !strings.Contains(events[0], "OwnershipConflict") {
		t.Errorf("expected only the datacenter's ownership conflict, got %q", events)
	}
	wantMessage := `ScyllaDBDatacenter "basic" is not this ScyllaCluster's: the name is taken by an object it does not control`
	if c := meta.FindStatusCondition(status.Conditions, "ScyllaDBDatacenterProgressing"); c == nil || c.Message != wantMessage {
		t.Errorf("expected ScyllaDBDatacenterProgressing with message %q, got %+v", wantMessage, c)
	}
	f.expectQuietResync(t, sc)

	// Once the other datacenter is gone, the ScyllaCluster's own is created, and then its tasks.
	if err := f.scyllaClient.Tracker().Delete(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), testNamespace, "basic"); err != nil {
		t.Fatal(err)
	}
	f.catchUpCaches(t)
	f.syncCreatingScyllaDBDatacenter(t, f.getScyllaCluster(t, sc))
	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(append(slices.Clone(createTasks), "update scyllaclusters/status basic"), f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

// TestSyncDoesNotActOnASpecTheWebhookWouldRefuse: a spec validation.ValidateScyllaCluster refuses, as the admission
// webhook does, is reported and nothing is translated from it, not even its valid parts.
// An error outside the backups and repairs stops the translation of the ScyllaDBDatacenter, which is not created; the
// errors inside a task entry are reported with the task.
func TestSyncDoesNotActOnASpecTheWebhookWouldRefuse(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.Spec.Sysctls = []string{"nonsense"}
	sc.Spec.Backups[0].Location = nil
	f := newSyncFixture(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	const specError = `spec.sysctls[0]: Invalid value: "nonsense": must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000`
	const taskError = `can't translate backup task "daily": spec.backups[0].location: Required value: a backup needs at least one location, e.g. s3:backups`
	events := f.takeEvents()
	slices.Sort(events)
	if diff := cmp.Diff([]string{"Warning InvalidSpec " + taskError, "Warning InvalidSpec " + specError}, events); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	status := f.getScyllaCluster(t, sc).Status
	for condType, message := range map[string]string{"SpecValidationDegraded": specError, "ScyllaDBManagerTaskControllerDegraded": taskError} {
		if c := meta.FindStatusCondition(status.Conditions, condType); c == nil || c.Status != metav1.ConditionTrue || c.Message != message {
			t.Errorf("expected %s True with message %q, got %+v", condType, message, c)
		}
	}
	if c := meta.FindStatusCondition(status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("expected Degraded True, got %+v", c)
	}
	if c := meta.FindStatusCondition(status.Conditions, "SpecValidationProgressing"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("expected SpecValidationProgressing False, got %+v", c)
	}
	if status.Backups[0].Error == nil || *status.Backups[0].Error != taskError {
		t.Errorf("expected the daily backup's status error %q, got %v", taskError, status.Backups[0].Error)
	}
}

func TestSyncRequeuesTransientErrorsAndStillWritesStatus(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	f.scyllaClient.PrependReactor("create", "scylladbdatacenters", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewInternalError(errors.New("etcd is down"))
	})

	err := f.sync(t, sc)
	if err == nil || !strings.Contains(err.Error(), "etcd is down") {
		t.Fatalf("expected an error to requeue with, got %v", err)
	}
	if diff := cmp.Diff([]string{"create scylladbdatacenters basic", "update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	if c := meta.FindStatusCondition(status.Conditions, "ScyllaDBDatacenterControllerDegraded"); c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "etcd is down") {
		t.Errorf("expected ScyllaDBDatacenterControllerDegraded True about the failure, got %+v", c)
	}
}

// The add event of the first task a sync created syncs the ScyllaCluster again, often before the informer holds the
// second: the tasks the controller created are waited for (createExpectations), neither created again (a 409 each)
// nor reported missing in a status the next sync takes back.
func TestSyncWaitsForTheTasksItCreatedWithoutWritingWhileTheCacheIsBehind(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncUntilFirstScyllaDBDatacenterStatus(t, sc)
	tasks := f.factory.Scylla().V1alpha1().ScyllaDBManagerTasks().Informer().GetIndexer()
	all := tasks.List()
	if len(all) < 2 {
		t.Fatalf("expected the tasks in the cache, got %d", len(all))
	}
	// The informer shows the first of the tasks the sync created.
	if err := tasks.Replace(all[:1], ""); err != nil {
		t.Fatal(err)
	}

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected the sync to wait for the created task's add event, got %v", err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected no writes while the cache is behind the sync's own creates, got %q", writes)
	}

	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes once the cache caught up (-want +got):\n%s", diff)
	}
	if n := len(f.controller.createdTasks.created); n != 0 {
		t.Errorf("expected no expectations left once the cache shows the tasks, got %d", n)
	}
}

func TestCreateExpectationsExpire(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	e := newCreateExpectations(func() time.Time { return now })
	e.recordCreate("ns/basic", "task")
	if !e.pending("ns/basic", "task") || e.pending("ns/basic", "other") || e.pending("ns/other", "task") {
		t.Fatal("expected only the recorded task of its ScyllaCluster to be pending")
	}
	now = now.Add(createExpectationsTTL)
	if e.pending("ns/basic", "task") {
		t.Error("expected the expectation to expire after its TTL")
	}
	if len(e.created) != 0 {
		t.Errorf("expected the expired expectation dropped, got %v", e.created)
	}
	e.recordCreate("ns/basic", "task")
	e.forget("ns/basic")
	if e.pending("ns/basic", "task") {
		t.Error("expected forget to drop the ScyllaCluster's expectations")
	}
}

// A create refused because the object exists already means only that the cache is behind (here, after a restart that
// lost what the controller created): the sync is retried, and no status is written from its stale view (it would
// report a failure the retry takes back, two writes for nothing).
func TestSyncRetriesWithoutWritingTheStatusWhileTheCacheIsBehind(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncUntilFirstScyllaDBDatacenterStatus(t, sc)
	// The task informer has not caught up with the creates yet, and the controller does not know it made them.
	tasks := f.factory.Scylla().V1alpha1().ScyllaDBManagerTasks().Informer().GetIndexer()
	if err := tasks.Replace(nil, ""); err != nil {
		t.Fatal(err)
	}
	f.controller.createdTasks = newCreateExpectations(time.Now)

	err := f.sync(t, sc)
	if err == nil || !resourceapply.IsStaleCacheError(err) {
		t.Fatalf("expected the AlreadyExists errors to requeue with, got %v", err)
	}
	if diff := cmp.Diff(createTasks, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes while the cache is behind (-want +got):\n%s", diff)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events while the cache is behind, got %q", events)
	}

	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes of the retry (-want +got):\n%s", diff)
	}
	if c := meta.FindStatusCondition(f.getScyllaCluster(t, sc).Status.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionFalse {
		t.Errorf("expected Degraded False, got %+v", c)
	}
}

func TestSyncLeavesAScyllaClusterBeingDeletedAlone(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	sc.DeletionTimestamp = new(metav1.NewTime(testEarlier.Time))
	sc.Finalizers = []string{"example.com/keep"}
	f := newSyncFixture(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected no writes, got %q", writes)
	}
}

func TestSyncOfAGoneScyllaClusterDoesNothing(t *testing.T) {
	t.Parallel()

	f := newSyncFixture(t)
	if err := f.controller.sync(t.Context(), "scylla/gone"); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected no writes, got %q", writes)
	}
}

func TestSyncWaitsForOwnedObjectsBeingDeletedBeforeCreatingThemAgain(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)

	// The ScyllaDBDatacenter and a task are on their way out, held by finalizers, while the spec still wants them.
	deleting := metav1.NewTime(testEarlier.Time)
	sdc, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sdc.DeletionTimestamp = &deleting
	sdc.Finalizers = []string{naming.ScyllaDBManagerClusterFinalizer}
	f.update(t, sdc, "scylladbdatacenters", scyllav1alpha1.SchemeGroupVersion)
	task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), dailyBackupTaskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task.DeletionTimestamp = &deleting
	task.Finalizers = []string{naming.ScyllaDBManagerTaskFinalizer}
	f.update(t, task, "scylladbmanagertasks", scyllav1alpha1.SchemeGroupVersion)
	f.scyllaClient.ClearActions()
	f.catchUpCaches(t)

	if err := f.sync(t, f.getScyllaCluster(t, sc)); err != nil {
		t.Fatalf("expected waiting for the deletions not to be an error, got %v", err)
	}
	if diff := cmp.Diff([]string{"update scyllaclusters/status basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	status := f.getScyllaCluster(t, sc).Status
	wantMessages := map[string]string{
		"ScyllaDBDatacenterControllerProgressing":  `ScyllaDBDatacenter "scylla/basic" is being deleted; it is created again once it is gone`,
		"ScyllaDBManagerTaskControllerProgressing": `ScyllaDBManagerTask "scylla/` + dailyBackupTaskName + `" is being deleted; it is created again once it is gone`,
	}
	for condType, wantMessage := range wantMessages {
		c := meta.FindStatusCondition(status.Conditions, condType)
		if c == nil || c.Status != metav1.ConditionTrue || c.Reason != waitingForDeletionReason || c.Message != wantMessage {
			t.Errorf("expected %s True with reason %s and message %q, got %+v", condType, waitingForDeletionReason, wantMessage, c)
		}
	}
}

// A task name taken by an object another controller owns can only be resolved by a person: the task's status says
// so and the key is not retried in a hot loop, while the other tasks are still applied.
func TestSyncReportsATaskTakenBySomeoneElseWithoutRetrying(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	foreign := &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      dailyBackupTaskName,
			UID:       "foreign-uid",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "scylla.scylladb.com/v1", Kind: "ScyllaCluster", Name: "other", UID: "other-uid", Controller: new(true),
			}},
		},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "other"},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair:             &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{},
		},
	}
	f := newSyncFixture(t, sc, foreign)
	f.syncCreatingScyllaDBDatacenter(t, sc)

	if err := f.sync(t, sc); err != nil {
		t.Fatalf("expected no error to requeue with, got %v", err)
	}
	// The error is news: the status goes out without waiting for the ScyllaDBDatacenter's first one.
	wantWrites := []string{
		"create scylladbmanagertasks " + weeklyBackupTaskName,
		"create scylladbmanagertasks " + nightlyRepairTaskName,
		"update scyllaclusters/status basic",
	}
	if diff := cmp.Diff(wantWrites, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}

	status := f.getScyllaCluster(t, sc).Status
	if status.Backups[0].Error == nil || !strings.Contains(*status.Backups[0].Error, "controlled by ScyllaCluster \"other\"") {
		t.Errorf("expected the daily backup's status to name the other controller, got %+v", status.Backups[0])
	}
	if c := meta.FindStatusCondition(status.Conditions, "ScyllaDBManagerTaskControllerDegraded"); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("expected ScyllaDBManagerTaskControllerDegraded True, got %+v", c)
	}
	got, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), dailyBackupTaskName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.UID != "foreign-uid" || got.Spec.Type != scyllav1alpha1.ScyllaDBManagerTaskTypeRepair {
		t.Errorf("the other controller's task was changed: %+v", got)
	}
}

// The established operator's opt-out annotation, added to a running ScyllaCluster, takes the registration label off
// its ScyllaDBDatacenter (the manager-controller then removes the cluster from ScyllaDB Manager); removed again, the
// label comes back.
func TestSyncOptOutOfScyllaDBManagerRemovesAndRestoresTheRegistrationLabel(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	f.syncCreated(t, sc)
	if got := f.getScyllaDBDatacenter(t).Labels[naming.RegisterWithScyllaDBManagerLabel]; got != "true" {
		t.Fatalf("expected the ScyllaDBDatacenter to be labelled for registration, got %q", got)
	}

	sc = f.getScyllaCluster(t, sc)
	metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "true")
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string{"update scylladbdatacenters basic"}, f.takeWrites()); diff != "" {
		t.Errorf("unexpected writes after opting out (-want +got):\n%s", diff)
	}
	f.takeEvents()
	if got, ok := f.getScyllaDBDatacenter(t).Labels[naming.RegisterWithScyllaDBManagerLabel]; ok {
		t.Errorf("expected the opted-out ScyllaDBDatacenter to lose its registration label, got %q", got)
	}
	f.expectQuietResync(t, sc)

	sc = f.getScyllaCluster(t, sc)
	delete(sc.Annotations, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation)
	f.update(t, sc, "scyllaclusters", scyllav1.SchemeGroupVersion)
	f.catchUpCaches(t)
	if err := f.sync(t, sc); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got := f.getScyllaDBDatacenter(t).Labels[naming.RegisterWithScyllaDBManagerLabel]; got != "true" {
		t.Errorf("expected the registration label back once the opt-out is gone, got %q", got)
	}
}
