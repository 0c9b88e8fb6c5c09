package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// floorLabel marks the floor's pods, which are no ScyllaDB pods.
const floorLabel = "bench-scale/floor"

// measureFloor returns the seconds until the pods of n ScyllaClusters, created directly as 3n single-replica
// StatefulSets with a claim each (no operator), are all Ready on a fresh control plane like the operator's, and
// kube-controller-manager's writes by controller until then (WindowStats.ControllerManagerWrites).
func measureFloor(ctx context.Context, o *options, binDir, outDir, stages string, builder *framework.GoBuilder, n int) (float64, map[string]int, error) {
	dir := filepath.Join(outDir, fmt.Sprintf("floor-n%d", n))
	cp, clients, stop, err := startControlPlane(ctx, o, binDir, stages, builder, fmt.Sprintf("bench-floor-n%d", n), dir, n)
	if err != nil {
		return 0, nil, err
	}
	defer stop()
	mark, err := cp.Audit.Mark()
	if err != nil {
		return 0, nil, err
	}
	logf("floor N=%d: creating %d StatefulSets", n, 3*n)
	start := time.Now()
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ns := fmt.Sprintf("floor-%d", i)
			if _, err := clients.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("can't create namespace %q: %w", ns, err)
				return
			}
			var all []error
			for _, zone := range zones {
				if _, err := clients.Kube.AppsV1().StatefulSets(ns).Create(ctx, makeFloorStatefulSet(zone), metav1.CreateOptions{}); err != nil {
					all = append(all, fmt.Errorf("can't create StatefulSet %s/%s: %w", ns, zone, err))
				}
			}
			errs <- errors.Join(all...)
		}()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	if err := errors.Join(all...); err != nil {
		return 0, nil, err
	}
	deadline := time.Now().Add(o.timeout)
	for {
		pods, err := clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: floorLabel})
		if err != nil {
			return 0, nil, err
		}
		ready := 0
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		if ready == 3*n {
			elapsed := time.Since(start).Seconds()
			logf("floor N=%d: every pod Ready after %.1fs", n, elapsed)
			events, err := cp.Audit.EventsSince(mark)
			if err != nil {
				return 0, nil, err
			}
			return elapsed, summarizeAudit(events, n).ControllerManagerWrites, nil
		}
		if time.Now().After(deadline) {
			return 0, nil, fmt.Errorf("floor: %d/%d pods Ready after %v", ready, 3*n, o.timeout)
		}
		select {
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// makeFloorStatefulSet returns a single-replica StatefulSet with one claim, placed in zone like a rack of
// makeScyllaCluster.
func makeFloorStatefulSet(zone string) *appsv1.StatefulSet {
	// The ScyllaDB pod label gives the floor's pods the benchmark's kwok stages of ScyllaDB pods (writeBenchStages);
	// no operator runs to see it.
	labels := map[string]string{floorLabel: zone}
	podLabels := map[string]string{floorLabel: zone, naming.PodTypeLabel: naming.PodTypeScyllaDBNode}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: zone},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: zone,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:         "scylla",
						Image:        "localhost/scylla:bench",
						VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/scylla"}},
					}},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
						RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
							MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelTopologyZone, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}},
						}}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}
