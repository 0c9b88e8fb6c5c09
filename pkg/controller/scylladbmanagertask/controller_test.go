package scylladbmanagertask

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// drainQueue returns the keys in the controller's queue, sorted, and empties it.
func drainQueue(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		keys = append(keys, key)
		c.queue.Forget(key)
		c.queue.Done(key)
	}
	slices.Sort(keys)
	return keys
}

func TestHandlersEnqueueTheTasksOfAClusterObjectWhoseRegistrationChanged(t *testing.T) {
	t.Parallel()

	other := newBackupTask("other")
	other.Spec.ScyllaDBClusterRef.Name = "elsewhere"
	ofCluster := newRepairTask("of-cluster")
	ofCluster.Spec.ScyllaDBClusterRef = scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterKind, Name: testDCName}
	objects := []*scyllav1alpha1.ScyllaDBManagerTask{newBackupTask("daily"), newRepairTask("weekly"), other, ofCluster}

	registered := newRegisteredDatacenter()
	unregistered := registered.DeepCopy()
	unregistered.ResourceVersion = "2"
	unregistered.Annotations = nil
	statusOnly := registered.DeepCopy()
	statusOnly.ResourceVersion = "3"
	statusOnly.Status.ObservedGeneration = new(int64(5))
	sc := &scyllav1alpha1.ScyllaDBCluster{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testDCName, ResourceVersion: "1"}}
	labelled := sc.DeepCopy()
	labelled.ResourceVersion = "2"
	labelled.Labels = map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"}

	tt := []struct {
		name     string
		deliver  func(c *Controller)
		wantKeys []string
	}{
		{
			name:     "a ScyllaDBManagerTask enqueues itself",
			deliver:  func(c *Controller) { c.handlers.ControllerHandlerFuncs().OnAdd(objects[0], false) },
			wantKeys: []string{"scylla/daily"},
		},
		{
			name:     "a new ScyllaDBDatacenter enqueues the tasks that reference it",
			deliver:  func(c *Controller) { c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind).OnAdd(registered, false) },
			wantKeys: []string{"scylla/daily", "scylla/weekly"},
		},
		{
			name: "a ScyllaDBDatacenter that lost its cluster ID enqueues the tasks that reference it",
			deliver: func(c *Controller) {
				c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind).OnUpdate(registered, unregistered)
			},
			wantKeys: []string{"scylla/daily", "scylla/weekly"},
		},
		{
			name: "a status update of a ScyllaDBDatacenter enqueues nothing",
			deliver: func(c *Controller) {
				c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind).OnUpdate(registered, statusOnly)
			},
			wantKeys: nil,
		},
		{
			name: "a resync of a ScyllaDBDatacenter enqueues nothing",
			deliver: func(c *Controller) {
				c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind).OnUpdate(registered, registered)
			},
			wantKeys: nil,
		},
		{
			name: "the deletion of a ScyllaDBDatacenter, seen as a tombstone, enqueues the tasks that reference it",
			deliver: func(c *Controller) {
				c.referencedClusterHandlerFuncs(scyllaDBDatacenterKind).OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic", Obj: registered})
			},
			wantKeys: []string{"scylla/daily", "scylla/weekly"},
		},
		{
			name:     "a ScyllaDBCluster labelled for registration enqueues the tasks that reference it, not those of the datacenter of that name",
			deliver:  func(c *Controller) { c.referencedClusterHandlerFuncs(scyllaDBClusterKind).OnUpdate(sc, labelled) },
			wantKeys: []string{"scylla/of-cluster"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, objects[0], objects[1], objects[2], objects[3])
			tc.deliver(f.controller)
			if diff := cmp.Diff(tc.wantKeys, drainQueue(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProcessNextWorkItemRequeuesAFailedSync(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	if err := f.manager.InjectFailure(fakescyllamanager.EndpointCreateTask, fakescyllamanager.Failure{Status: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}

	f.controller.queue.Add("scylla/daily")
	if !controllerhelpers.ProcessNextWorkItem(t.Context(), ControllerName, f.controller.queue, f.controller.sync) {
		t.Fatal("expected the worker to go on")
	}
	if n := f.controller.queue.NumRequeues("scylla/daily"); n != 1 {
		t.Errorf("expected the key to be requeued once, got %d", n)
	}
}

func TestRunSchedulesThroughStartedInformersAndReturnsOnShutdown(t *testing.T) {
	t.Parallel()

	task := newBackupTask("daily")
	task.Finalizers = nil
	f := newFixture(t, newRegisteredDatacenter(), task)
	f.controller.statusRefreshInterval = 10 * time.Millisecond
	watcher, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.controller.Run(ctx, 2)
	}()

	// The finalizer, then the task, its annotation and its status, each through the informer.
	deadline := time.After(30 * time.Second)
	for len(f.ourTasks()) == 0 {
		select {
		case <-watcher.ResultChan():
		case <-deadline:
			t.Fatal("the task was not created in ScyllaDB Manager")
		}
	}
	// The status refresh syncs the task again by itself.
	f.managerRequests()
	for countEndpoint(f.manager.Requests(), fakescyllamanager.EndpointListTasks) == 0 {
		select {
		case <-time.After(10 * time.Millisecond):
			f.expireMemo()
		case <-deadline:
			t.Fatal("the status refresh did not sync the task")
		}
	}

	cancel()
	<-done
	f.factory.Shutdown()
}

// TestATasksStatusOnlyUpdateQueuesNothing: the controller's own status writes queue nothing, so that a failure whose
// message changes on every attempt is retried with the queue's back-off, not at once; other updates and resyncs
// queue the task.
func TestATasksStatusOnlyUpdateQueuesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newRegisteredDatacenter(), newBackupTask("daily"))
	drainQueue(f.controller)
	old := f.task(t, "daily")
	statusOnly := old.DeepCopy()
	statusOnly.ResourceVersion = "100"
	statusOnly.Status.Conditions = []metav1.Condition{{Type: "Degraded", Status: metav1.ConditionTrue, Reason: "ScyllaDBManagerError", Message: "connection reset by peer: 127.0.0.1:40123"}}
	labelled := old.DeepCopy()
	labelled.ResourceVersion = "101"
	labelled.Labels = map[string]string{"team": "db"}

	for _, tc := range []struct {
		name     string
		old, cur *scyllav1alpha1.ScyllaDBManagerTask
		want     []string
	}{
		{name: "a status-only update", old: old, cur: statusOnly},
		{name: "a label change", old: old, cur: labelled, want: []string{testNamespace + "/daily"}},
		{name: "a resync", old: old, cur: old, want: []string{testNamespace + "/daily"}},
	} {
		f.controller.taskHandlerFuncs().OnUpdate(tc.old, tc.cur)
		if diff := cmp.Diff(tc.want, drainQueue(f.controller)); diff != "" {
			t.Errorf("%s: unexpected queued keys (-want +got):\n%s", tc.name, diff)
		}
	}
}
