package resourceapply

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file is the only place where Apply knows about particular kinds. Kinds not listed here, including our own
// custom resources, need nothing beyond the generic path.

// preserveAllocatedFields copies into required, about to be sent as an update, the fields the API server allocated on
// existing and that required leaves unset. existing and required are of the same kind.
func preserveAllocatedFields(existing, required any) {
	switch required := required.(type) {
	case *corev1.Service:
		preserveServiceFields(existing.(*corev1.Service), required)
	}
}

// immutableFieldChange names the first field that must change from existing to required but that the API server
// refuses to update, and the propagation policy with which existing is deleted so that it can be recreated.
func immutableFieldChange(existing, required any) (string, metav1.DeletionPropagation, bool) {
	var field string
	var changed bool
	propagation := metav1.DeletePropagationBackground

	switch required := required.(type) {
	case *appsv1.StatefulSet:
		field, changed = statefulSetImmutableFieldChange(existing.(*appsv1.StatefulSet), required)
		// The pods must survive: the recreated StatefulSet adopts them.
		propagation = metav1.DeletePropagationOrphan
	case *corev1.Service:
		field, changed = serviceImmutableFieldChange(existing.(*corev1.Service), required)
	case *corev1.Secret:
		field, changed = secretImmutableFieldChange(existing.(*corev1.Secret), required)
	case *corev1.ConfigMap:
		field, changed = configMapImmutableFieldChange(existing.(*corev1.ConfigMap), required)
	case *rbacv1.RoleBinding:
		field, changed = roleBindingImmutableFieldChange(existing.(*rbacv1.RoleBinding), required)
	}

	return field, propagation, changed
}

// specDrifted tells whether existing has a field that other actors commonly change without touching the metadata
// Apply compares, and that differs from required's: the hash alone can't see such a change. A StatefulSet's replicas
// change through the scale subresource (kubectl scale, autoscalers), and the controller that applies it decides them.
func specDrifted(existing, required any) bool {
	switch required := required.(type) {
	case *appsv1.StatefulSet:
		existing := existing.(*appsv1.StatefulSet)
		return required.Spec.Replicas != nil && (existing.Spec.Replicas == nil || *existing.Spec.Replicas != *required.Spec.Replicas)
	}
	return false
}
