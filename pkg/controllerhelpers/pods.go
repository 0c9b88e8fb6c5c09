package controllerhelpers

import corev1 "k8s.io/api/core/v1"

// IsPodReady tells whether pod exists and its Ready condition is True.
func IsPodReady(pod *corev1.Pod) bool {
	if pod == nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
