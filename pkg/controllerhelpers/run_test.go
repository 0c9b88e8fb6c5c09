package controllerhelpers

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
)

// syncLog records the keys a loop synced and whether their context was done.
type syncLog struct {
	mu        sync.Mutex
	keys      []string
	cancelled []string
}

func (l *syncLog) record(ctx context.Context, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keys = append(l.keys, key)
	if ctx.Err() != nil {
		l.cancelled = append(l.cancelled, key)
	}
}

func (l *syncLog) synced() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.keys)
}

func alwaysSynced() []cache.InformerSynced {
	return []cache.InformerSynced{func() bool { return true }}
}

// runInBackground runs RunWorkers with l and returns a channel closed when it returns.
func runInBackground(ctx context.Context, workers int, l Loop) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunWorkers(ctx, workers, l)
	}()
	return done
}

func TestRunWorkersSyncsKeysAndRunsBackgroundLoopsUntilTheContextIsDone(t *testing.T) {
	t.Parallel()

	queue := NewQueue("test-run")
	log := &syncLog{}
	syncedAll := make(chan struct{})
	backgroundDone := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	queue.Add("ns/a")
	queue.Add("ns/b")
	done := runInBackground(ctx, 2, Loop{
		Name:         "test",
		Queue:        queue,
		CachesToSync: alwaysSynced(),
		Sync: func(ctx context.Context, key string) error {
			log.record(ctx, key)
			if len(log.synced()) == 2 {
				close(syncedAll)
			}
			return nil
		},
		Background: []func(ctx context.Context){func(ctx context.Context) {
			<-ctx.Done()
			close(backgroundDone)
		}},
	})

	<-syncedAll
	cancel()
	<-done
	select {
	case <-backgroundDone:
	default:
		t.Error("RunWorkers returned before its background loop stopped")
	}
	got := log.synced()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"ns/a", "ns/b"}, got); diff != "" {
		t.Errorf("unexpected synced keys (-want +got):\n%s", diff)
	}
	if !queue.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
}

func TestRunWorkersLetsAStartedSyncFinishAndTakesNoKeyAfterShutdown(t *testing.T) {
	t.Parallel()

	queue := NewQueue("test-shutdown")
	log := &syncLog{}
	started := make(chan struct{})
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	queue.Add("ns/a")
	done := runInBackground(ctx, 1, Loop{
		Name:         "test",
		Queue:        queue,
		CachesToSync: alwaysSynced(),
		Sync: func(ctx context.Context, key string) error {
			if key == "ns/a" {
				close(started)
				<-release
			}
			log.record(ctx, key)
			return nil
		},
	})

	<-started
	queue.Add("ns/b")
	cancel()
	select {
	case <-done:
		t.Fatal("RunWorkers returned while a sync was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done

	if diff := cmp.Diff([]string{"ns/a"}, log.synced()); diff != "" {
		t.Errorf("unexpected synced keys (-want +got):\n%s", diff)
	}
	if len(log.cancelled) != 0 {
		t.Errorf("syncs ran with a cancelled context: %q", log.cancelled)
	}
}

func TestRunWorkersSyncsNothingBeforeTheCachesSynced(t *testing.T) {
	t.Parallel()

	queue := NewQueue("test-unsynced")
	queue.Add("ns/a")
	ctx, cancel := context.WithCancel(t.Context())
	backgroundRan := false
	done := runInBackground(ctx, 1, Loop{
		Name:         "test",
		Queue:        queue,
		CachesToSync: []cache.InformerSynced{func() bool { return false }},
		Sync: func(context.Context, string) error {
			t.Error("synced a key before the caches synced")
			return nil
		},
		Background: []func(ctx context.Context){func(context.Context) { backgroundRan = true }},
	})
	cancel()
	<-done

	if backgroundRan {
		t.Error("ran a background loop before the caches synced")
	}
	if !queue.ShuttingDown() {
		t.Error("the queue was not shut down")
	}
}

func TestNewEventRecorderRecordsEventsOfOurKindsWhileRunning(t *testing.T) {
	t.Parallel()

	kubeClient := kubefake.NewClientset()
	broadcaster, recorder, err := NewEventRecorder("scylla-test-component")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	queue := NewQueue("test-events")
	queue.Add("ns/daily")
	done := runInBackground(ctx, 1, Loop{
		Name:         "test",
		Queue:        queue,
		CachesToSync: alwaysSynced(),
		// Events recorded before the broadcaster has a sink are dropped; a sync's are not.
		Sync: func(context.Context, string) error {
			task := &scyllav1alpha1.ScyllaDBManagerTask{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "daily", UID: "daily-uid"}}
			recorder.Event(task, corev1.EventTypeNormal, "Tested", "an event")
			return nil
		},
		EventBroadcaster: broadcaster,
		KubeClient:       kubeClient,
	})
	defer func() {
		cancel()
		<-done
	}()

	var events *corev1.EventList
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		events, err = kubeClient.CoreV1().Events("ns").List(ctx, metav1.ListOptions{})
		return err == nil && len(events.Items) != 0, err
	})
	if err != nil {
		t.Fatalf("no event reached the API server: %v", err)
	}
	got := events.Items[0]
	if got.Source.Component != "scylla-test-component" || got.InvolvedObject.Kind != "ScyllaDBManagerTask" || got.Reason != "Tested" {
		t.Errorf("unexpected event: source %+v, involved object %+v, reason %q", got.Source, got.InvolvedObject, got.Reason)
	}
}
