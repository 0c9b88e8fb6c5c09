package scyllacluster

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// drainQueue returns the keys in the controller's queue and empties it.
func drainQueue(c *Controller) []string {
	var keys []string
	for c.queue.Len() > 0 {
		key, _ := c.queue.Get()
		keys = append(keys, key)
		c.queue.Forget(key)
		c.queue.Done(key)
	}
	return keys
}

func TestHandlersEnqueueTheScyllaClusterAnObjectConcerns(t *testing.T) {
	t.Parallel()

	sc := newScyllaClusterWithTasks()
	ours := expectedBasicScyllaDBDatacenter()
	ours.ResourceVersion = "2"
	foreign := ours.DeepCopy()
	foreign.OwnerReferences = []metav1.OwnerReference{{APIVersion: "example.com/v1", Kind: "Other", Name: "x", UID: "x-uid", Controller: new(true)}}
	ofOtherScyllaCluster := ours.DeepCopy()
	ofOtherScyllaCluster.OwnerReferences = []metav1.OwnerReference{{APIVersion: "scylla.scylladb.com/v1", Kind: "ScyllaCluster", Name: "other", UID: "other-uid", Controller: new(true)}}
	unrelated := foreign.DeepCopy()
	unrelated.Name = "other"
	task, err := makeBackupTask(sc, &sc.Spec.Backups[0])
	if err != nil {
		t.Fatal(err)
	}
	task.ResourceVersion = "3"
	ofRecreatedScyllaCluster := task.DeepCopy()
	ofRecreatedScyllaCluster.OwnerReferences[0].UID = "previous-uid"
	datacenterOfRecreatedScyllaCluster := ours.DeepCopy()
	datacenterOfRecreatedScyllaCluster.OwnerReferences[0].UID = "previous-uid"
	deletedDatacenterOfRecreatedScyllaCluster := datacenterOfRecreatedScyllaCluster.DeepCopy()
	deletedDatacenterOfRecreatedScyllaCluster.ResourceVersion = "4"
	deletedDatacenterOfRecreatedScyllaCluster.DeletionTimestamp = new(metav1.NewTime(testNow.Time))
	orphanedTask := task.DeepCopy()
	orphanedTask.OwnerReferences = nil
	foreignTask := task.DeepCopy()
	foreignTask.OwnerReferences = foreign.OwnerReferences
	unlabelledForeignTask := foreignTask.DeepCopy()
	unlabelledForeignTask.Labels = nil

	tt := []struct {
		name     string
		deliver  func(c *Controller)
		wantKeys []string
	}{
		{
			name:     "a ScyllaCluster enqueues itself",
			deliver:  func(c *Controller) { c.handlers.ControllerHandlerFuncs().OnAdd(sc, false) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a ScyllaDBDatacenter enqueues its controlling ScyllaCluster",
			deliver:  func(c *Controller) { c.handlers.OwnedHandlerFuncs().OnAdd(ours, false) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a ScyllaDBManagerTask enqueues its controlling ScyllaCluster",
			deliver:  func(c *Controller) { c.handlers.OwnedHandlerFuncs().OnAdd(task, false) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a ScyllaDBManagerTask of a ScyllaCluster that was deleted and recreated enqueues nothing",
			deliver:  func(c *Controller) { c.handlers.OwnedHandlerFuncs().OnAdd(ofRecreatedScyllaCluster, false) },
			wantKeys: nil,
		},
		{
			name:     "a ScyllaDBManagerTask of a ScyllaCluster that was deleted and recreated enqueues the recreated one as it goes",
			deliver:  func(c *Controller) { c.previousScyllaClusterHandlerFuncs().OnDelete(ofRecreatedScyllaCluster) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name: "a ScyllaDBDatacenter of a ScyllaCluster that was deleted and recreated enqueues the recreated one when marked for deletion",
			deliver: func(c *Controller) {
				c.previousScyllaClusterHandlerFuncs().OnUpdate(datacenterOfRecreatedScyllaCluster, deletedDatacenterOfRecreatedScyllaCluster)
			},
			wantKeys: []string{"scylla/basic"},
		},
		{
			name: "the deletion of a ScyllaDBDatacenter of a ScyllaCluster that was deleted and recreated, seen as a tombstone, enqueues the recreated one",
			deliver: func(c *Controller) {
				c.previousScyllaClusterHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic", Obj: deletedDatacenterOfRecreatedScyllaCluster})
			},
			wantKeys: []string{"scylla/basic"},
		},
		{
			name: "objects of the current ScyllaCluster are not also enqueued as left over",
			deliver: func(c *Controller) {
				c.previousScyllaClusterHandlerFuncs().OnAdd(ours, false)
				c.previousScyllaClusterHandlerFuncs().OnAdd(task, false)
			},
			wantKeys: nil,
		},
		{
			name:     "an object of another controller is not enqueued as left over",
			deliver:  func(c *Controller) { c.previousScyllaClusterHandlerFuncs().OnAdd(foreign, false) },
			wantKeys: nil,
		},
		{
			name:     "the deletion of an orphaned ScyllaDBManagerTask enqueues the ScyllaCluster it is labelled with, whose task it blocked",
			deliver:  func(c *Controller) { c.blockingScyllaDBManagerTaskHandlerFuncs().OnDelete(orphanedTask) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name: "the deletion of a ScyllaDBManagerTask of another controller, seen as a tombstone, enqueues the ScyllaCluster it is labelled with",
			deliver: func(c *Controller) {
				c.blockingScyllaDBManagerTaskHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/" + foreignTask.Name, Obj: foreignTask})
			},
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a ScyllaDBManagerTask the labelled ScyllaCluster controls is not also enqueued by label",
			deliver:  func(c *Controller) { c.blockingScyllaDBManagerTaskHandlerFuncs().OnAdd(task, false) },
			wantKeys: nil,
		},
		{
			name:     "an unlabelled ScyllaDBManagerTask of another controller enqueues nothing",
			deliver:  func(c *Controller) { c.blockingScyllaDBManagerTaskHandlerFuncs().OnAdd(unlabelledForeignTask, false) },
			wantKeys: nil,
		},
		{
			name:     "a ScyllaDBDatacenter controlled by a ScyllaCluster is not also enqueued by name",
			deliver:  func(c *Controller) { c.blockingScyllaDBDatacenterHandlerFuncs().OnAdd(ours, false) },
			wantKeys: nil,
		},
		{
			name:     "a ScyllaDBDatacenter of another controller enqueues the ScyllaCluster it blocks",
			deliver:  func(c *Controller) { c.blockingScyllaDBDatacenterHandlerFuncs().OnAdd(foreign, false) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a ScyllaDBDatacenter of a ScyllaCluster of another name enqueues the ScyllaCluster it blocks",
			deliver:  func(c *Controller) { c.blockingScyllaDBDatacenterHandlerFuncs().OnDelete(ofOtherScyllaCluster) },
			wantKeys: []string{"scylla/basic"},
		},
		{
			name: "the deletion of a blocking ScyllaDBDatacenter, seen as a tombstone, enqueues the ScyllaCluster",
			deliver: func(c *Controller) {
				c.blockingScyllaDBDatacenterHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/basic", Obj: foreign})
			},
			wantKeys: []string{"scylla/basic"},
		},
		{
			name:     "a resync of a blocking ScyllaDBDatacenter enqueues nothing",
			deliver:  func(c *Controller) { c.blockingScyllaDBDatacenterHandlerFuncs().OnUpdate(foreign, foreign) },
			wantKeys: nil,
		},
		{
			name:     "a ScyllaDBDatacenter no ScyllaCluster is named like enqueues nothing",
			deliver:  func(c *Controller) { c.blockingScyllaDBDatacenterHandlerFuncs().OnAdd(unrelated, false) },
			wantKeys: nil,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newSyncFixture(t, sc)
			tc.deliver(f.controller)
			if diff := cmp.Diff(tc.wantKeys, drainQueue(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProcessNextWorkItemSyncsAKeyAndTakesNoMoreWorkOnShutdown(t *testing.T) {
	t.Parallel()

	sc := newBasicScyllaCluster()
	f := newSyncFixture(t, sc)
	c := f.controller

	c.queue.Add("scylla/basic")
	if !controllerhelpers.ProcessNextWorkItem(t.Context(), ControllerName, c.queue, c.sync) {
		t.Fatal("expected the worker to go on")
	}
	if _, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Get(t.Context(), "basic", metav1.GetOptions{}); err != nil {
		t.Errorf("expected the ScyllaDBDatacenter to be created, got %v", err)
	}
	if n := c.queue.Len(); n != 0 {
		t.Errorf("expected an empty queue after a successful sync, got %d keys", n)
	}
	f.takeWrites()

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c.queue.Add("scylla/basic")
	if controllerhelpers.ProcessNextWorkItem(ctx, ControllerName, c.queue, c.sync) {
		t.Error("expected the worker to stop once its context is done")
	}
	if writes := f.takeWrites(); len(writes) != 0 {
		t.Errorf("expected no sync once shutdown began, got %q", writes)
	}
}

func TestProcessNextWorkItemRequeuesAFailedSync(t *testing.T) {
	t.Parallel()

	f := newSyncFixture(t, newBasicScyllaCluster())
	c := f.controller
	f.scyllaClient.PrependReactor("create", "scylladbdatacenters", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("try later")
	})

	c.queue.Add("scylla/basic")
	if !controllerhelpers.ProcessNextWorkItem(t.Context(), ControllerName, c.queue, c.sync) {
		t.Fatal("expected the worker to go on")
	}
	if n := c.queue.NumRequeues("scylla/basic"); n != 1 {
		t.Errorf("expected the key to be requeued once, got %d", n)
	}
}

func TestRunReconcilesThroughStartedInformersAndReturnsOnShutdown(t *testing.T) {
	t.Parallel()

	f := newSyncFixture(t, newScyllaClusterWithTasks())
	watcher, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(testNamespace).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Stop()
	taskWatcher, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer taskWatcher.Stop()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f.factory.Start(ctx.Done())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.controller.Run(ctx, 2)
	}()

	// The ScyllaCluster reaches the queue through its informer and the worker creates its ScyllaDBDatacenter.
	event := <-watcher.ResultChan()
	if event.Type != watch.Added {
		t.Errorf("expected the ScyllaDBDatacenter to be added, got a %s event", event.Type)
	}
	// That sync stops there; the ScyllaDBDatacenter's add event, through its informer, brings the sync that creates
	// the tasks.
	select {
	case event := <-taskWatcher.ResultChan():
		if event.Type != watch.Added {
			t.Errorf("expected a ScyllaDBManagerTask to be added, got a %s event", event.Type)
		}
	case <-time.After(wait.ForeverTestTimeout):
		t.Error("the ScyllaDBDatacenter's add event did not bring the sync that creates the tasks")
	}

	cancel()
	<-done
	f.factory.Shutdown()
}
