package operator

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	kubeinformers "k8s.io/client-go/informers"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

func TestCachesSyncedCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		leading, synced bool
		wantReady       bool
	}{
		{name: "a standby replica is ready to take over", wantReady: true},
		{name: "a leader whose caches are not synced is not ready", leading: true},
		{name: "a leader whose caches are synced is ready", leading: true, synced: true, wantReady: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var leading, synced atomic.Bool
			leading.Store(tc.leading)
			synced.Store(tc.synced)
			err := cachesSyncedCheck(&leading, &synced).Check(nil)
			if ready := err == nil; ready != tc.wantReady {
				t.Errorf("ready = %v (%v), want %v", ready, err, tc.wantReady)
			}
		})
	}
}

func TestRunControllersRunsOnSyncedCachesAndWaitsForRunsToFinish(t *testing.T) {
	t.Parallel()
	factory := kubeinformers.NewSharedInformerFactory(kubefake.NewClientset(), 0)
	secrets := factory.Core().V1().Secrets().Informer()

	var syncedAtStart, onSyncedCalled, finished atomic.Bool
	running := make(chan struct{})
	p := &controllerProgram{newControllers: func() (*controllerSet, error) {
		return &controllerSet{
			informerFactories: []informerFactory{factory},
			runs: []func(ctx context.Context){func(ctx context.Context) {
				syncedAtStart.Store(secrets.HasSynced())
				close(running)
				<-ctx.Done()
				// A sync in progress at shutdown runs to its end.
				time.Sleep(50 * time.Millisecond)
				finished.Store(true)
			}},
		}, nil
	}}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.runControllers(ctx, func() { onSyncedCalled.Store(true) }) }()
	select {
	case <-running:
	case <-time.After(30 * time.Second):
		t.Fatal("the controller did not start")
	}
	if !syncedAtStart.Load() || !onSyncedCalled.Load() {
		t.Errorf("the controller started before the caches synced (cache synced: %v, onSynced called: %v)", syncedAtStart.Load(), onSyncedCalled.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("runControllers: %v", err)
	}
	if !finished.Load() {
		t.Error("runControllers returned before the controller finished")
	}
}

func TestRunControllersReportsAControllerThatCantBeBuilt(t *testing.T) {
	t.Parallel()
	want := errors.New("can't create the X controller")
	p := &controllerProgram{newControllers: func() (*controllerSet, error) { return nil, want }}
	called := false
	if err := p.runControllers(t.Context(), func() { called = true }); !errors.Is(err, want) {
		t.Errorf("runControllers = %v, want %v", err, want)
	}
	if called {
		t.Error("onSynced was called without controllers")
	}
}

func TestSetGCPercentKeepsWhatGOGCSays(t *testing.T) {
	previous := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(previous) })

	for _, gogc := range []string{"off", "200", "50"} {
		got, fromEnv, err := setGCPercent(func(key string) string {
			if key != "GOGC" {
				t.Errorf("unexpected lookup of %q", key)
			}
			return gogc
		})
		if got != gogc || !fromEnv || err != nil {
			t.Errorf("GOGC=%s: got %q, fromEnv=%v", gogc, got, fromEnv)
		}
		if inEffect := debug.SetGCPercent(100); inEffect != 100 {
			t.Errorf("GOGC=%s: the target was changed to %d", gogc, inEffect)
		}
	}

	for _, gogc := range []string{"fifty", "50%", "Off"} {
		_, _, err := setGCPercent(func(string) string { return gogc })
		if want := fmt.Sprintf("GOGC=%q is neither a percent nor \"off\"", gogc); err == nil || err.Error() != want {
			t.Errorf("GOGC=%s: got error %v, want %q", gogc, err, want)
		}
		if inEffect := debug.SetGCPercent(100); inEffect != 100 {
			t.Errorf("GOGC=%s: the target was changed to %d", gogc, inEffect)
		}
	}

	got, fromEnv, err := setGCPercent(func(string) string { return "" })
	if got != "50" || fromEnv || err != nil {
		t.Errorf("without GOGC: got %q, fromEnv=%v, want \"50\" from the program", got, fromEnv)
	}
	if inEffect := debug.SetGCPercent(100); inEffect != controllerGCPercent {
		t.Errorf("without GOGC: the target in effect is %d, want %d", inEffect, controllerGCPercent)
	}
}
