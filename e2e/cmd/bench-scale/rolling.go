package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// versions are the ScyllaDB versions a run creates its ScyllaClusters at and then rolls them to.
type versions struct {
	initial, rolling string
	// parallelNodeOperations sets spec.enableParallelNodeOperations, as the mutating webhook does for versions that
	// support it (the benchmark runs no webhook).
	parallelNodeOperations bool
}

var (
	// sequentialVersions bootstrap one node at a time per datacenter: rack by rack.
	sequentialVersions = versions{initial: "2025.1.2", rolling: "2025.1.3"}
	// parallelVersions support parallel node operations: every rack bootstraps at once.
	parallelVersions = versions{initial: "2026.2.0", rolling: "2026.2.1", parallelNodeOperations: true}
)

// Rolling is what a rolling change on every ScyllaCluster cost.
type Rolling struct {
	// Version is the ScyllaDB version every ScyllaCluster was changed to.
	Version string `json:"version"`
	// Seconds is how long until every ScyllaDB pod ran the new version and was Ready, and every ScyllaDBDatacenter
	// was Available again.
	Seconds float64 `json:"seconds"`
	// Requests are the API and ScyllaDB Manager requests of the roll-out.
	Requests WindowStats `json:"requests"`
	// CPUSeconds is the CPU time of each program during the roll-out.
	CPUSeconds map[string]float64 `json:"cpuSeconds"`
}

// measureRolling changes the ScyllaDB version of every ScyllaCluster at once and measures the roll-out.
func measureRolling(ctx context.Context, cp *framework.ControlPlane, clients *framework.Clients, fake *framework.FakeScyllaDBManager, procs map[string]int, n int, rollingVersion string, timeout time.Duration) (*Rolling, error) {
	mark, err := cp.Audit.Mark()
	if err != nil {
		return nil, err
	}
	if err := fake.ResetRequests(ctx); err != nil {
		return nil, err
	}
	cpuBefore := cpuSeconds(procs)
	logf("N=%d: changing every ScyllaCluster to version %s", n, rollingVersion)
	start := time.Now()
	patch := []byte(fmt.Sprintf(`{"spec":{"version":%q}}`, rollingVersion))
	var errs []error
	for i := range n {
		ns := fmt.Sprintf("bench-%d", i)
		if _, err := clients.Dynamic.Resource(scyllaClusterGVR).Namespace(ns).Patch(ctx, "bench", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			errs = append(errs, fmt.Errorf("can't patch ScyllaCluster %s/bench: %w", ns, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if err := cp.CheckProcesses(); err != nil {
			return nil, err
		}
		pods, err := clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: naming.PodTypeLabel + "=" + naming.PodTypeScyllaDBNode})
		if err != nil {
			return nil, err
		}
		rolled := 0
		for i := range pods.Items {
			pod := &pods.Items[i]
			if pod.DeletionTimestamp != nil || !podReady(pod) {
				continue
			}
			for _, c := range pod.Spec.Containers {
				if c.Name == "scylla" && strings.HasSuffix(c.Image, ":"+rollingVersion) {
					rolled++
				}
			}
		}
		sdcs, err := clients.Dynamic.Resource(sdcGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		available := 0
		for i := range sdcs.Items {
			if conditionTrue(&sdcs.Items[i], "Available") && observedCurrent(&sdcs.Items[i]) {
				available++
			}
		}
		elapsed := time.Since(start).Seconds()
		if rolled == 3*n && available == n {
			r := &Rolling{Version: rollingVersion, Seconds: elapsed, CPUSeconds: map[string]float64{}}
			cpuAfter := cpuSeconds(procs)
			for name := range procs {
				r.CPUSeconds[name] = cpuAfter[name] - cpuBefore[name]
			}
			events, err := cp.Audit.EventsSince(mark)
			if err != nil {
				return nil, err
			}
			r.Requests = summarizeAudit(events, n)
			reqs, err := fake.Requests(ctx)
			if err != nil {
				return nil, err
			}
			r.Requests.Manager = summarizeManager(reqs)
			r.Requests.ManagerWrites = managerWrites(r.Requests.Manager)
			logf("N=%d: rolled out in %.1fs", n, elapsed)
			return r, nil
		}
		state := fmt.Sprintf("pods %d/%d Ready on %s, datacenters %d/%d Available and observed", rolled, 3*n, rollingVersion, available, n)
		if state != last {
			logf("N=%d: %.1fs: %s", n, elapsed, state)
			last = state
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("not rolled out after %v: %s", timeout, state)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// observedCurrent reports whether the object's status.observedGeneration is its metadata.generation.
func observedCurrent(obj *unstructured.Unstructured) bool {
	observed, found, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return found && observed == obj.GetGeneration()
}
