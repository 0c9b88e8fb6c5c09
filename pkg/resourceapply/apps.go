package resourceapply

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// statefulSetImmutableFieldChange reports the first field the API server refuses to update on a StatefulSet (all of
// spec except replicas, ordinals, template, updateStrategy, revisionHistoryLimit, minReadySeconds and
// persistentVolumeClaimRetentionPolicy) that differs between existing, as the API server stored and defaulted it, and
// required. Defaults the API server applies to these fields are applied to required before comparing, so that an
// unset field never reads as a change: a false positive would delete the StatefulSet for nothing.
func statefulSetImmutableFieldChange(existing, required *appsv1.StatefulSet) (string, bool) {
	if !apiequality.Semantic.DeepEqual(existing.Spec.Selector, required.Spec.Selector) {
		return "spec.selector", true
	}
	if existing.Spec.ServiceName != required.Spec.ServiceName {
		return "spec.serviceName", true
	}
	if podManagementPolicyOrDefault(existing.Spec.PodManagementPolicy) != podManagementPolicyOrDefault(required.Spec.PodManagementPolicy) {
		return "spec.podManagementPolicy", true
	}
	if len(existing.Spec.VolumeClaimTemplates) != len(required.Spec.VolumeClaimTemplates) {
		return "spec.volumeClaimTemplates", true
	}
	for i := range required.Spec.VolumeClaimTemplates {
		if !volumeClaimTemplatesEqual(&existing.Spec.VolumeClaimTemplates[i], &required.Spec.VolumeClaimTemplates[i]) {
			return "spec.volumeClaimTemplates", true
		}
	}
	return "", false
}

func podManagementPolicyOrDefault(policy appsv1.PodManagementPolicyType) appsv1.PodManagementPolicyType {
	if len(policy) == 0 {
		return appsv1.OrderedReadyPodManagement
	}
	return policy
}

// volumeClaimTemplatesEqual compares the parts of a volume claim template a controller sets: name, labels,
// annotations and spec, with spec.volumeMode defaulted to Filesystem as the API server does. The status the API
// server defaults (phase Pending) and the type meta it may fill in are ignored. Quantities compare by value.
func volumeClaimTemplatesEqual(existing, required *corev1.PersistentVolumeClaim) bool {
	if existing.Name != required.Name ||
		!apiequality.Semantic.DeepEqual(existing.Labels, required.Labels) ||
		!apiequality.Semantic.DeepEqual(existing.Annotations, required.Annotations) {
		return false
	}

	existingSpec := withDefaultVolumeMode(existing.Spec)
	requiredSpec := withDefaultVolumeMode(required.Spec)
	return apiequality.Semantic.DeepEqual(existingSpec, requiredSpec)
}

func withDefaultVolumeMode(spec corev1.PersistentVolumeClaimSpec) corev1.PersistentVolumeClaimSpec {
	if spec.VolumeMode == nil {
		mode := corev1.PersistentVolumeFilesystem
		spec.VolumeMode = &mode
	}
	return spec
}
