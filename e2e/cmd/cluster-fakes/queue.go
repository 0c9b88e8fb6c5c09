package main

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/util/workqueue"
)

// everything selects all objects of a lister.
var everything = labels.Everything()

// processNextWorkItem takes one key off the queue and syncs it: forgotten on success, requeued with back-off on
// error. It returns false once the queue is shut down.
func processNextWorkItem[T comparable](ctx context.Context, queue workqueue.TypedRateLimitingInterface[T], sync func(context.Context, T) error) bool {
	key, quit := queue.Get()
	if quit {
		return false
	}
	defer queue.Done(key)

	if err := sync(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Error syncing; requeuing", "key", fmt.Sprint(key))
		queue.AddRateLimited(key)
		return true
	}
	queue.Forget(key)
	return true
}
