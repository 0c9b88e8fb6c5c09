package scylladbmanagertask

import (
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

const (
	testNamespace = "scylla"
	testDCName    = "basic"
	otherDCName   = "other"
)

var (
	// testClusterID is the ScyllaDB Manager cluster the test datacenter is registered as: the ID derived from its UID.
	testClusterID = naming.ScyllaDBManagerClusterID(scyllaDBDatacenterKind, "sdc-uid")
	// otherClusterID is the ScyllaDB Manager cluster the datacenter otherDCName is registered as, once
	// registerOtherCluster ran.
	otherClusterID = naming.ScyllaDBManagerClusterID(scyllaDBDatacenterKind, "other-sdc-uid")
)

// testStart is the fixture clock's first reading: a Wednesday noon.
var testStart = time.Date(2025, time.January, 1, 12, 0, 0, 0, time.UTC)

// testClock is a settable clock shared by the controller and the fake ScyllaDB Manager.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// fixture runs the controller's sync against a fake clientset, with informer caches filled by hand, and the real
// ScyllaDB Manager client against the in-process fake ScyllaDB Manager.
type fixture struct {
	clock         *testClock
	manager       *fakescyllamanager.Server
	managerClient *managerclient.Client
	scyllaClient  *scyllafake.Clientset
	factory       scyllainformers.SharedInformerFactory
	controller    *Controller
	recorder      *record.FakeRecorder
	// clusterMissing records what the controller reports of missing clusters.
	clusterMissing *fakeClusterMissingReporter
	// journal lists the writes to Kubernetes and ScyllaDB Manager in order.
	journal *fakeclient.Journal
}

// newFixture returns a fixture whose API server and caches hold objects and whose ScyllaDB Manager holds the
// cluster testClusterID (without its default repair task).
func newFixture(t *testing.T, objects ...runtime.Object) *fixture {
	t.Helper()

	clock := &testClock{now: testStart}
	manager, err := fakescyllamanager.NewServer(fakescyllamanager.Options{Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	journal := fakeclient.NewJournal(func() []string { return describeManagerWrites(manager.Requests()) })
	server := httptest.NewServer(journal.Handler(manager))
	t.Cleanup(server.Close)
	managerClient, err := managerclient.New(managerclient.Options{URL: server.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := managerClient.CreateCluster(t.Context(), &managerclient.Cluster{
		ID: testClusterID, Name: "scylla/basic", Host: "basic-client.scylla.svc", AuthToken: "token", WithoutRepair: true,
	}); err != nil {
		t.Fatalf("can't register the test cluster: %v", err)
	}
	manager.ResetRequests()

	// NewSimpleClientset: the generated apply configurations carry no OpenAPI schema, which NewClientset needs.
	scyllaClient := scyllafake.NewSimpleClientset(objects...)
	apiserverfields.BumpResourceVersions(&scyllaClient.Fake, scyllaClient.Tracker())
	scyllaClient.PrependReactor("*", "*", journal.Reactor)
	factory := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)
	clusterMissing := &fakeClusterMissingReporter{}
	controller, err := NewController(
		kubefake.NewClientset(),
		scyllaClient,
		managerClient,
		clusterMissing,
		factory.Scylla().V1alpha1().ScyllaDBManagerTasks(),
		factory.Scylla().V1alpha1().ScyllaDBDatacenters(),
		factory.Scylla().V1alpha1().ScyllaDBClusters(),
		factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		factory.Scylla().V1alpha1().ScyllaDBBackupEntries(),
	)
	if err != nil {
		t.Fatalf("can't create controller: %v", err)
	}
	t.Cleanup(controller.eventBroadcaster.Shutdown)
	t.Cleanup(controller.queue.ShutDown)
	recorder := record.NewFakeRecorder(1000)
	controller.eventRecorder = recorder
	controller.clock = clock.Now

	f := &fixture{
		clock:          clock,
		manager:        manager,
		managerClient:  managerClient,
		scyllaClient:   scyllaClient,
		factory:        factory,
		controller:     controller,
		recorder:       recorder,
		clusterMissing: clusterMissing,
		journal:        journal,
	}
	f.catchUp(t)
	scyllaClient.ClearActions()
	journal.Take()
	return f
}

// fakeClusterMissingReporter records the reports of missing clusters, as "<kind> <namespace>/<name> <clusterID>".
type fakeClusterMissingReporter struct {
	mu      sync.Mutex
	reports []string
}

func (r *fakeClusterMissingReporter) ReportClusterMissing(kind, namespace, name, clusterID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, kind+" "+namespace+"/"+name+" "+clusterID)
}

// take returns and forgets the reports so far.
func (r *fakeClusterMissingReporter) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	reports := r.reports
	r.reports = nil
	return reports
}

// catchUp makes the informer caches hold exactly what the fake API server holds, as caches that caught up with
// every watch event would.
func (f *fixture) catchUp(t *testing.T) {
	t.Helper()

	stores := []struct {
		resource string
		kind     string
		indexer  cache.Indexer
	}{
		{"scylladbmanagertasks", "ScyllaDBManagerTask", f.factory.Scylla().V1alpha1().ScyllaDBManagerTasks().Informer().GetIndexer()},
		{"scylladbdatacenters", "ScyllaDBDatacenter", f.factory.Scylla().V1alpha1().ScyllaDBDatacenters().Informer().GetIndexer()},
		{"scylladbclusters", "ScyllaDBCluster", f.factory.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetIndexer()},
		{"scylladbbackupbuckets", "ScyllaDBBackupBucket", f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets().Informer().GetIndexer()},
		{"scylladbbackupentries", "ScyllaDBBackupEntry", f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries().Informer().GetIndexer()},
	}
	for _, s := range stores {
		list, err := f.scyllaClient.Tracker().List(scyllav1alpha1.SchemeGroupVersion.WithResource(s.resource), scyllav1alpha1.SchemeGroupVersion.WithKind(s.kind), "")
		if err != nil {
			t.Fatalf("can't list %s: %v", s.resource, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatalf("can't extract %s: %v", s.resource, err)
		}
		objects := make([]any, 0, len(items))
		for _, item := range items {
			objects = append(objects, item)
		}
		if err := s.indexer.Replace(objects, ""); err != nil {
			t.Fatalf("can't fill the %s cache: %v", s.resource, err)
		}
	}
}

// put stores obj in the fake API server, as another actor would, and catches the caches up.
func (f *fixture) put(t *testing.T, obj runtime.Object, resource string) {
	t.Helper()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	gvr := scyllav1alpha1.SchemeGroupVersion.WithResource(resource)
	if _, err := f.scyllaClient.Tracker().Get(gvr, accessor.GetNamespace(), accessor.GetName()); err == nil {
		err = f.scyllaClient.Tracker().Update(gvr, obj, accessor.GetNamespace())
		if err != nil {
			t.Fatalf("can't update %s %q: %v", resource, accessor.GetName(), err)
		}
	} else if err := f.scyllaClient.Tracker().Add(obj); err != nil {
		t.Fatalf("can't add %s %q: %v", resource, accessor.GetName(), err)
	}
	f.catchUp(t)
}

// sync runs one sync of the task named name, with the caches caught up afterwards.
func (f *fixture) sync(t *testing.T, name string) error {
	t.Helper()
	err := f.controller.sync(t.Context(), testNamespace+"/"+name)
	f.catchUp(t)
	return err
}

// syncBeforeTheCacheCatchesUp runs one sync of the task named name and leaves the caches as they were, as when the
// events of the sync's writes enqueue the task again before the informer processed them all.
func (f *fixture) syncBeforeTheCacheCatchesUp(t *testing.T, name string) {
	t.Helper()
	if err := f.controller.sync(t.Context(), testNamespace+"/"+name); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
}

// mustSync runs one sync of the task named name and fails the test on error.
func (f *fixture) mustSync(t *testing.T, name string) {
	t.Helper()
	if err := f.sync(t, name); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
}

// task returns the task named name from the fake API server.
func (f *fixture) task(t *testing.T, name string) *scyllav1alpha1.ScyllaDBManagerTask {
	t.Helper()
	task, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// dropClusterRecord removes the ScyllaDB Manager cluster record from the task named name, as a task synced by an
// earlier manager-controller lacks it.
func (f *fixture) dropClusterRecord(t *testing.T, name string) {
	t.Helper()
	task := f.task(t, name)
	delete(task.Annotations, naming.ScyllaDBManagerTaskClusterIDAnnotation)
	f.put(t, task, "scylladbmanagertasks")
}

// deleteAndSync deletes the task named name, which the finalizer keeps as an object with a deletion timestamp, and
// runs one sync of it with a fresh task list; earlier ScyllaDB Manager requests and Kubernetes writes are forgotten.
func (f *fixture) deleteAndSync(t *testing.T, name string) {
	t.Helper()
	f.expireMemo()
	f.managerRequests()
	f.kubeWrites()
	task := f.task(t, name)
	task.DeletionTimestamp = new(metav1.NewTime(testStart))
	f.put(t, task, "scylladbmanagertasks")
	f.mustSync(t, name)
}

// newMoveFixture returns a fixture whose task "daily" was created in testClusterID and then retargeted to the
// datacenter otherDCName, registered as otherClusterID, which no sync has seen yet; the requests and writes so far are
// forgotten.
func newMoveFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	f.mustSync(t, "daily")
	f.registerOtherCluster(t)
	task := f.task(t, "daily")
	task.Spec.ScyllaDBClusterRef.Name = otherDCName
	task.Generation++
	f.put(t, task, "scylladbmanagertasks")
	f.managerRequests()
	f.kubeWrites()
	return f
}

// expireMemo moves the clock past the task list memo's TTL, so that the next sync reads ScyllaDB Manager.
func (f *fixture) expireMemo() {
	f.clock.Advance(defaultTaskListTTL + time.Second)
}

// managerRequests returns and forgets the API requests ScyllaDB Manager got; the journal keeps the writes.
func (f *fixture) managerRequests() []fakescyllamanager.Request {
	f.journal.CatchUp()
	requests := f.manager.Requests()
	f.manager.ResetRequests()
	return requests
}

// managerWrites returns the endpoints of the writes among requests.
func managerWrites(requests []fakescyllamanager.Request) []fakescyllamanager.Endpoint {
	var writes []fakescyllamanager.Endpoint
	for _, r := range requests {
		if r.IsWrite() {
			writes = append(writes, r.Endpoint)
		}
	}
	return writes
}

// describeManagerWrites describes the writes among requests as "ScyllaDB Manager <endpoint>", for the journal.
func describeManagerWrites(requests []fakescyllamanager.Request) []string {
	var writes []string
	for _, endpoint := range managerWrites(requests) {
		writes = append(writes, "ScyllaDB Manager "+string(endpoint))
	}
	return writes
}

// countEndpoint counts the requests to endpoint.
func countEndpoint(requests []fakescyllamanager.Request, endpoint fakescyllamanager.Endpoint) int {
	n := 0
	for _, r := range requests {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}

// kubeWrites returns and forgets the writes the controller made through the clientset, as "verb resource[/sub]".
func (f *fixture) kubeWrites() []string {
	var writes []string
	for _, a := range f.scyllaClient.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); len(sub) != 0 {
			w += "/" + sub
		}
		if p, ok := a.(clienttesting.PatchAction); ok {
			w += " " + string(p.GetPatchType())
		}
		writes = append(writes, w)
	}
	f.scyllaClient.ClearActions()
	return writes
}

// ourTasks returns the live tasks ScyllaDB Manager holds in the test cluster, healthchecks left out.
func (f *fixture) ourTasks() []fakescyllamanager.TaskState {
	var tasks []fakescyllamanager.TaskState
	for _, task := range f.manager.State().LiveTasks() {
		if task.ClusterID == testClusterID && task.Type != "healthcheck" {
			tasks = append(tasks, task)
		}
	}
	return tasks
}

// onlyTask returns the one live task of ScyllaDB Manager's test cluster and fails the test unless there is exactly one.
func (f *fixture) onlyTask(t *testing.T) fakescyllamanager.TaskState {
	t.Helper()
	tasks := f.ourTasks()
	if len(tasks) != 1 {
		t.Fatalf("expected ScyllaDB Manager to hold one task, got %d: %+v", len(tasks), tasks)
	}
	return tasks[0]
}

// events returns and forgets the recorded events.
func (f *fixture) events() []string {
	return fakeclient.Events(f.recorder)
}

// newRegisteredDatacenter returns the ScyllaDBDatacenter named testDCName, registered as testClusterID.
func newRegisteredDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            testDCName,
			UID:             "sdc-uid",
			ResourceVersion: "1",
			Labels:          map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
			Annotations:     map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: testClusterID},
		},
	}
}

// registerOtherCluster registers otherClusterID with ScyllaDB Manager and stores the ScyllaDBDatacenter named
// otherDCName, registered as it: the target a task is moved to.
func (f *fixture) registerOtherCluster(t *testing.T) {
	t.Helper()
	if _, err := f.managerClient.CreateCluster(t.Context(), &managerclient.Cluster{
		ID: otherClusterID, Name: "scylla/other", Host: "other-client.scylla.svc", AuthToken: "token", WithoutRepair: true,
	}); err != nil {
		t.Fatalf("can't register the other cluster: %v", err)
	}
	dc := newRegisteredDatacenter()
	dc.Name, dc.UID = otherDCName, "other-sdc-uid"
	dc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = otherClusterID
	f.put(t, dc, "scylladbdatacenters")
	f.managerRequests()
}

// tasksIn returns the live tasks ScyllaDB Manager holds in cluster clusterID, healthchecks left out.
func (f *fixture) tasksIn(clusterID string) []fakescyllamanager.TaskState {
	var tasks []fakescyllamanager.TaskState
	for _, task := range f.manager.State().LiveTasks() {
		if task.ClusterID == clusterID && task.Type != "healthcheck" {
			tasks = append(tasks, task)
		}
	}
	return tasks
}

// clusterWrites returns the writes among requests as "<endpoint> <cluster ID>".
func clusterWrites(requests []fakescyllamanager.Request) []string {
	var writes []string
	for _, r := range requests {
		if !r.IsWrite() {
			continue
		}
		// Paths read /api/v1/cluster/{id}/...
		segments := strings.Split(strings.Trim(r.Path, "/"), "/")
		clusterID := ""
		if len(segments) > 3 && segments[2] == "cluster" {
			clusterID = segments[3]
		}
		writes = append(writes, string(r.Endpoint)+" "+clusterID)
	}
	return writes
}

// newBackupTask returns a Backup ScyllaDBManagerTask named name referencing the test datacenter, with the
// finalizer already on.
func newBackupTask(name string) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            name,
			UID:             types.UID(name + "-uid"),
			ResourceVersion: "1",
			Generation:      1,
			Finalizers:      []string{naming.ScyllaDBManagerTaskFinalizer},
		},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBDatacenterKind, Name: testDCName},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{
					Cron:       new("0 2 * * *"),
					NumRetries: new(int64(3)),
				},
				Location:  []string{"s3:backups"},
				Retention: new(int64(7)),
			},
		},
	}
}

// newRepairTask returns a Repair ScyllaDBManagerTask named name referencing the test datacenter, with the finalizer
// already on.
func newRepairTask(name string) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            name,
			UID:             types.UID(name + "-uid"),
			ResourceVersion: "1",
			Generation:      1,
			Finalizers:      []string{naming.ScyllaDBManagerTaskFinalizer},
		},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBDatacenterKind, Name: testDCName},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair: &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{
					Cron: new("0 3 * * SUN"),
				},
				Intensity:           new(int64(2)),
				SmallTableThreshold: new(resource.MustParse("1Gi")),
			},
		},
	}
}

// conditionStatuses returns "<type>=<status>/<reason>" of the task's conditions, sorted.
func conditionStatuses(task *scyllav1alpha1.ScyllaDBManagerTask) []string {
	var out []string
	for _, c := range task.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	slices.Sort(out)
	return out
}
