package controllerhelpers

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestIsPodReady(t *testing.T) {
	t.Parallel()
	withReady := func(status corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: status},
		}}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"nil", nil, false},
		{"no conditions", &corev1.Pod{}, false},
		{"ready", withReady(corev1.ConditionTrue), true},
		{"not ready", withReady(corev1.ConditionFalse), false},
		{"unknown", withReady(corev1.ConditionUnknown), false},
	} {
		if got := IsPodReady(tc.pod); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
