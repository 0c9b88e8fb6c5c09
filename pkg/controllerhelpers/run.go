package controllerhelpers

import (
	"context"
	"fmt"
	"sync"

	scyllascheme "github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// eventScheme knows the kinds events may refer to: client-go's and ours. It is built once, apart from the global
// scheme, which is left alone.
var eventScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := scyllascheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
})

// NewEventRecorder returns an event broadcaster and a recorder of events from component that knows client-go's kinds
// and ours. The broadcaster sends nothing until RunWorkers starts it.
func NewEventRecorder(component string) (record.EventBroadcaster, record.EventRecorder, error) {
	scheme, err := eventScheme()
	if err != nil {
		return nil, nil, fmt.Errorf("can't build the event scheme: %w", err)
	}
	broadcaster := record.NewBroadcaster()
	return broadcaster, broadcaster.NewRecorder(scheme, corev1.EventSource{Component: component}), nil
}

// Loop is what RunWorkers runs for one controller.
type Loop struct {
	// Name names the controller in logs and metrics.
	Name string
	// Queue holds the keys to sync.
	Queue workqueue.TypedRateLimitingInterface[string]
	// CachesToSync are the informers that must have synced before the first sync.
	CachesToSync []cache.InformerSynced
	// Sync syncs one key.
	Sync func(ctx context.Context, key string) error
	// EventBroadcaster, when set, records events to KubeClient while the loop runs.
	EventBroadcaster record.EventBroadcaster
	KubeClient       kubernetes.Interface
	// Background are loops that run beside the workers, once the caches synced, until ctx is done (periodic
	// resyncs, for instance).
	Background []func(ctx context.Context)
}

// RunWorkers runs l until ctx is done: it starts recording events, waits for the caches, then syncs keys with workers
// workers (ProcessNextWorkItem) and runs l.Background. On shutdown each worker finishes the sync it started and takes
// no other key; RunWorkers returns once every worker and background loop has stopped, and stops recording events
// last.
func RunWorkers(ctx context.Context, workers int, l Loop) {
	defer utilruntime.HandleCrashWithContext(ctx)

	logger := klog.FromContext(ctx).WithValues("controller", l.Name)
	ctx = klog.NewContext(ctx, logger)

	if l.EventBroadcaster != nil {
		l.EventBroadcaster.StartStructuredLogging(4)
		l.EventBroadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: l.KubeClient.CoreV1().Events("")})
		defer l.EventBroadcaster.Shutdown()
	}

	logger.Info("Starting controller", "workers", workers)
	var wg sync.WaitGroup
	defer func() {
		logger.Info("Shutting down controller")
		// Wakes the workers waiting for a key; the keys still queued are left to whoever leads next.
		l.Queue.ShutDown()
		wg.Wait()
		logger.Info("Controller shut down")
	}()

	if !cache.WaitForNamedCacheSyncWithContext(ctx, l.CachesToSync...) {
		return
	}

	for range workers {
		wg.Go(func() {
			for ProcessNextWorkItem(ctx, l.Name, l.Queue, l.Sync) {
			}
		})
	}
	for _, background := range l.Background {
		wg.Go(func() { background(ctx) })
	}

	<-ctx.Done()
}
