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

// scaleRackDown sets the rack's members to `to` and follows the scale-down node by node, from the last one; the
// simulated nodes' sidecars decommission them (startNodeSimulator). For each node it waits until the operator asks
// for the decommission by labelling the node's member Service (and no other) scylla/decommissioned, checks that the
// StatefulSet still counts the node and its pod runs while the label says "false", and waits until the StatefulSet
// counts one node less and the node's pod, member Service and data claim are gone. It fails if it never saw a
// decommission in progress (the simulated nodes take decommissionDelay to leave, so it always should).
func (e *testEnv) scaleRackDown(scName, rack string, to int32) *scyllav1.ScyllaCluster {
	e.t.Helper()
	from := rackByName(e.t, e.getScyllaCluster(scName), rack).Members
	if to >= from {
		e.t.Fatalf("rack %q has %d members; scaling it down to %d is not a scale-down", rack, from, to)
	}
	sc := e.updateScyllaCluster(scName, func(sc *scyllav1.ScyllaCluster) { rackByName(e.t, sc, rack).Members = to })
	stsName := statefulSetName(sc, rack)

	observedInProgress := 0
	for ordinal := from - 1; ordinal >= to; ordinal-- {
		name := memberName(sc, rack, ordinal)
		var state string
		e.f.WaitFor(stepTimeout, fmt.Sprintf("the operator to ask for the decommission of node %s", name), func(ctx context.Context) (bool, error) {
			svcs, err := e.memberServices(ctx, scName)
			if err != nil {
				return false, err
			}
			var labelled []string
			for n, svc := range svcs {
				if v, ok := svc.Labels[naming.DecommissionedLabel]; ok {
					labelled = append(labelled, n)
					state = v
				}
			}
			sort.Strings(labelled)
			if want := []string{name}; !cmp.Equal(want, labelled) {
				return false, fmt.Errorf("member Services labelled %s: %v, want %v", naming.DecommissionedLabel, labelled, want)
			}
			return true, nil
		})

		if state == naming.DecommissionedLabelFalse {
			// The label only ever goes from "false" to "true". If it still reads "false" after the StatefulSet
			// and the pod were read, the node was decommissioning when they were read: the operator must have
			// kept it.
			sts, err := e.kube.AppsV1().StatefulSets(e.ns).Get(e.t.Context(), stsName, metav1.GetOptions{})
			if err != nil {
				e.t.Fatal(err)
			}
			_, podErr := e.kube.CoreV1().Pods(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
			svc, err := e.kube.CoreV1().Services(e.ns).Get(e.t.Context(), name, metav1.GetOptions{})
			if err == nil && svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelFalse {
				observedInProgress++
				if got := deref(sts.Spec.Replicas); got != ordinal+1 || podErr != nil {
					e.t.Fatalf("while node %s decommissions, StatefulSet %q has %d replicas (want %d) and its pod: %v", name, stsName, got, ordinal+1, podErr)
				}
			}
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
	if observedInProgress == 0 {
		e.t.Errorf("no decommission of rack %q was seen in progress (label %q); the check that the operator keeps decommissioning nodes proved nothing", rack, naming.DecommissionedLabelFalse)
	}
	return sc
}
