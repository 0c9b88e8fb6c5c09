package operator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/serving"
)

// informerFactory is what the Kubernetes and the scylla.scylladb.com shared informer factories have in common.
type informerFactory interface {
	Start(stopCh <-chan struct{})
	WaitForCacheSync(stopCh <-chan struct{}) map[reflect.Type]bool
	Shutdown()
}

// controllerSet is what a program runs once it leads: the informer factories its controllers registered their
// handlers with, and the controllers' Run functions, each returning once its workers finished.
type controllerSet struct {
	informerFactories []informerFactory
	runs              []func(ctx context.Context)
}

// controllerProgram is what the controller programs (operator, manager-controller) share: they serve /healthz,
// /readyz, /metrics and, with --profiling, /debug/pprof/, elect a leader, and only the leader builds its
// controllers, syncs their caches and runs them.
type controllerProgram struct {
	serving        *serving.Options
	leaderElection *genericclioptions.LeaderElection
	kubeClient     kubernetes.Interface
	// newControllers builds the controllers once this replica leads, so that a standby replica holds no caches.
	newControllers func() (*controllerSet, error)
}

// controllerGCPercent is the garbage collection target of the controller programs unless the GOGC environment
// variable sets one. Their heap is mostly informer caches that live as long as the process, so Go's default of 100
// (the heap grows to twice what is live before each collection) spends as much memory on garbage as on the caches; 50
// lowers the operator's peak RSS at 100 ScyllaClusters by about a fifth for a little more GC CPU (README, performance).
const controllerGCPercent = 50

// setGCPercent applies controllerGCPercent unless getenv("GOGC") is set, and returns the target in effect ("off" or a
// percent) and whether the environment chose it. A GOGC that is neither "off" nor a percent is an error: the Go
// runtime would ignore it and silently keep its own default.
func setGCPercent(getenv func(string) string) (string, bool, error) {
	gogc := getenv("GOGC")
	if len(gogc) == 0 {
		debug.SetGCPercent(controllerGCPercent)
		return fmt.Sprint(controllerGCPercent), false, nil
	}
	if _, err := strconv.Atoi(gogc); err != nil && gogc != "off" {
		return "", true, fmt.Errorf("GOGC=%q is neither a percent nor \"off\"", gogc)
	}
	return gogc, true, nil
}

// run serves health and metrics, then runs the controllers once this replica leads, until ctx is done. On shutdown
// every worker finishes the object it is syncing before the lease is released and run returns.
func (p *controllerProgram) run(ctx context.Context) error {
	gcPercent, fromEnv, err := setGCPercent(os.Getenv)
	if err != nil {
		return err
	}
	klog.InfoS("Garbage collection target", "gcPercent", gcPercent, "fromGOGC", fromEnv)

	var leading, synced atomic.Bool
	healthz := []serving.Checker{p.leaderElection.HealthzAdaptor}
	readyz := []serving.Checker{cachesSyncedCheck(&leading, &synced)}

	var wg sync.WaitGroup
	servingCtx, stopServing := context.WithCancel(context.Background())
	defer stopServing()
	servingErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		servingErr <- p.serving.Run(servingCtx, p.serving.Handler(healthz, readyz))
	}()

	err = p.leaderElection.Run(ctx, p.kubeClient, func(ctx context.Context) {
		leading.Store(true)
		if err := p.runControllers(ctx, func() { synced.Store(true) }); err != nil {
			klog.ErrorS(err, "Controllers stopped")
		}
	})
	stopServing()
	wg.Wait()
	return errors.Join(err, <-servingErr)
}

// cachesSyncedCheck is the readiness check: a standby replica is ready to take over; the leader is ready once its
// informer caches are synced.
func cachesSyncedCheck(leading, synced *atomic.Bool) serving.Checker {
	return serving.CheckFunc{CheckName: "informers-synced", F: func() error {
		if leading.Load() && !synced.Load() {
			return errors.New("informer caches are not synced yet")
		}
		return nil
	}}
}

// runControllers builds the controllers, starts the informer factories after every controller registered its
// handlers, waits for their caches, calls onSynced and runs the controllers until ctx is done and each returned.
func (p *controllerProgram) runControllers(ctx context.Context, onSynced func()) error {
	set, err := p.newControllers()
	if err != nil {
		return err
	}
	for _, f := range set.informerFactories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	for _, f := range set.informerFactories {
		for t, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return fmt.Errorf("can't sync the informer cache of %v", t)
			}
		}
	}
	onSynced()

	var wg sync.WaitGroup
	for _, run := range set.runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(ctx)
		}()
	}
	wg.Wait()
	return nil
}
