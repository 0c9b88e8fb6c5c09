package controllerhelpers

import (
	"context"
	"errors"
	"testing"
)

func TestProcessNextWorkItem(t *testing.T) {
	t.Parallel()

	t.Run("success forgets the key and the sync outlives a cancellation", func(t *testing.T) {
		t.Parallel()
		queue := NewQueue("test-success")
		defer queue.ShutDown()
		queue.AddRateLimited("ns/a")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var syncCtxErr error
		goOn := ProcessNextWorkItem(ctx, "test", queue, func(syncCtx context.Context, key string) error {
			cancel()
			syncCtxErr = syncCtx.Err()
			return nil
		})
		if !goOn {
			t.Error("the worker should go on after a successful sync")
		}
		if syncCtxErr != nil {
			t.Errorf("the sync's context was cancelled with the worker's: %v", syncCtxErr)
		}
		if n := queue.NumRequeues("ns/a"); n != 0 {
			t.Errorf("key still has %d requeues after success", n)
		}
	})

	t.Run("an error requeues the key rate-limited", func(t *testing.T) {
		t.Parallel()
		queue := NewQueue("test-error")
		defer queue.ShutDown()
		queue.Add("ns/a")
		goOn := ProcessNextWorkItem(context.Background(), "test", queue, func(context.Context, string) error {
			return errors.New("boom")
		})
		if !goOn {
			t.Error("the worker should go on after a failed sync")
		}
		if n := queue.NumRequeues("ns/a"); n != 1 {
			t.Errorf("key has %d requeues, want 1", n)
		}
	})

	t.Run("a done context takes no new key", func(t *testing.T) {
		t.Parallel()
		queue := NewQueue("test-done")
		defer queue.ShutDown()
		queue.Add("ns/a")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		synced := false
		if ProcessNextWorkItem(ctx, "test", queue, func(context.Context, string) error { synced = true; return nil }) {
			t.Error("the worker should stop once its context is done")
		}
		if synced || queue.Len() != 1 {
			t.Errorf("synced = %v, queue length = %d; want the key left in the queue", synced, queue.Len())
		}
	})
}
