package framework

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestSimulatedNodeCarriesItsTaints(t *testing.T) {
	taints := []corev1.Taint{{Key: "e2e.example.com/pool", Value: "mine", Effect: corev1.TaintEffectNoSchedule}}
	if diff := cmp.Diff(taints, makeNode(NodeSpec{Name: "n", Taints: taints}).Spec.Taints); diff != "" {
		t.Errorf("the Node's taints differ (-want +got):\n%s", diff)
	}
	if got := makeNode(NodeSpec{Name: "n"}).Spec.Taints; len(got) != 0 {
		t.Errorf("a node without taints in its spec got %v", got)
	}
}
