package controllerhelpers

import (
	"context"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/metrics"
)

// ProcessNextWorkItem takes the next key from queue, syncs it and reports whether the worker should go on; every
// controller's worker loops on it. Once ctx is done it takes no new key: a shut-down queue still hands out the keys it
// holds, and they are left to whoever leads next. A sync that started runs to its end even when ctx is cancelled
// meanwhile (SIGTERM, a lost lease), so that no object is left half written. Success forgets the key's back-off; an
// error requeues it rate-limited.
func ProcessNextWorkItem(ctx context.Context, controllerName string, queue workqueue.TypedRateLimitingInterface[string], sync func(ctx context.Context, key string) error) bool {
	if ctx.Err() != nil {
		return false
	}
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)
	if ctx.Err() != nil {
		return false
	}

	start := time.Now()
	err := sync(context.WithoutCancel(ctx), key)
	metrics.ObserveSync(controllerName, start, err)
	klog.FromContext(ctx).V(4).Info("Finished syncing", "controller", controllerName, "key", key, "duration", time.Since(start))
	if err == nil {
		queue.Forget(key)
		return true
	}

	utilruntime.HandleErrorWithContext(ctx, err, "Syncing failed; requeuing", "controller", controllerName, "key", key)
	queue.AddRateLimited(key)
	return true
}
