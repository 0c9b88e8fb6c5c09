//go:build e2e

package operator

import (
	"context"
	"fmt"
	"sort"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// scaleRackDown sets the rack's members to `to` and follows the scale-down node by node, from the last one, with
// newSidecars playing the nodes' sidecars. For each node it waits until the operator asks for its decommission by
// labelling its member Service (and no other) scylla/decommissioned="false", checks that the node still runs and
// is still counted by the StatefulSet while it decommissions, completes the decommission, and waits until the
// StatefulSet counts one node less and the node's pod, member Service and data claim are gone.
func (e *testEnv) scaleRackDown(scName, rack string, to int32) *scyllav1.ScyllaCluster {
	e.t.Helper()
	from := rackByName(e.t, e.getScyllaCluster(scName), rack).Members
	if to >= from {
		e.t.Fatalf("rack %q has %d members; scaling it down to %d is not a scale-down", rack, from, to)
	}
	sc := e.updateScyllaCluster(scName, func(sc *scyllav1.ScyllaCluster) { rackByName(e.t, sc, rack).Members = to })
	stsName := statefulSetName(sc, rack)
	side := newSidecars(e.c)

	for ordinal := from - 1; ordinal >= to; ordinal-- {
		name := memberName(sc, rack, ordinal)
		e.f.WaitFor(stepTimeout, fmt.Sprintf("the operator to ask for the decommission of node %s", name), func(ctx context.Context) (bool, error) {
			svcs, err := e.memberServices(ctx, scName)
			if err != nil {
				return false, err
			}
			var labelled []string
			for n, svc := range svcs {
				if v, ok := svc.Labels[naming.DecommissionedLabel]; ok {
					labelled = append(labelled, n+"="+v)
				}
			}
			sort.Strings(labelled)
			want := []string{name + "=" + naming.DecommissionedLabelFalse}
			if !cmp.Equal(want, labelled) {
				return false, fmt.Errorf("member Services labelled %s: %v, want %v", naming.DecommissionedLabel, labelled, want)
			}
			return true, nil
		})

		// The label is still "false": the operator must keep the node until the sidecar reports it decommissioned.
		sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(e.t.Context(), stsName, metav1.GetOptions{})
		if err != nil {
			e.t.Fatal(err)
		}
		if got := deref(sts.Spec.Replicas); got != ordinal+1 {
			e.t.Fatalf("StatefulSet %q has %d replicas while node %s is decommissioning, want %d", stsName, got, name, ordinal+1)
		}
		if _, err := e.kube.CoreV1().Pods(e.ns).Get(e.t.Context(), name, metav1.GetOptions{}); err != nil {
			e.t.Fatalf("pod %s is not there while it decommissions: %v", name, err)
		}

		if err := side.completeDecommission(e.t.Context(), e.ns, name); err != nil {
			e.t.Fatal(err)
		}

		e.f.WaitFor(stepTimeout, fmt.Sprintf("node %s to be removed with its Service and data claim", name), func(ctx context.Context) (bool, error) {
			sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(ctx, stsName, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if deref(sts.Spec.Replicas) != ordinal || sts.Status.Replicas != ordinal {
				return false, fmt.Errorf("StatefulSet %q: spec.replicas %d, status.replicas %d, want %d", stsName, deref(sts.Spec.Replicas), sts.Status.Replicas, ordinal)
			}
			for _, get := range []struct {
				kind string
				get  func() error
			}{
				{"Pod " + name, func() error { _, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{}); return err }},
				{"Service " + name, func() error { _, err := e.kube.CoreV1().Services(e.ns).Get(ctx, name, metav1.GetOptions{}); return err }},
				{"PersistentVolumeClaim " + naming.PVCName(name), func() error {
					_, err := e.kube.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, naming.PVCName(name), metav1.GetOptions{})
					return err
				}},
			} {
				switch err := get.get(); {
				case err == nil:
					return false, fmt.Errorf("%s still exists", get.kind)
				case !apierrors.IsNotFound(err):
					return false, err
				}
			}
			return true, nil
		})
	}
	return sc
}
