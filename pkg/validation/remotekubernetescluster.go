package validation

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRemoteKubernetesCluster returns every error of rkc that the CRD schema can't catch: the kubeconfig Secret
// reference must name a Secret that can exist.
func ValidateRemoteKubernetesCluster(rkc *scyllav1alpha1.RemoteKubernetesCluster) field.ErrorList {
	var allErrs field.ErrorList
	ref := rkc.Spec.KubeconfigSecretRef
	path := field.NewPath("spec", "kubeconfigSecretRef")
	if len(ref.Name) != 0 {
		for _, msg := range validation.IsDNS1123Subdomain(ref.Name) {
			allErrs = append(allErrs, field.Invalid(path.Child("name"), ref.Name, msg))
		}
	}
	if len(ref.Namespace) != 0 {
		for _, msg := range validation.IsDNS1123Label(ref.Namespace) {
			allErrs = append(allErrs, field.Invalid(path.Child("namespace"), ref.Namespace, msg))
		}
	}
	return allErrs
}

// ValidateRemoteKubernetesClusterUpdate returns the errors of ValidateRemoteKubernetesCluster(rkc); every field may
// change.
func ValidateRemoteKubernetesClusterUpdate(rkc, old *scyllav1alpha1.RemoteKubernetesCluster) field.ErrorList {
	return ValidateRemoteKubernetesCluster(rkc)
}

// WarningsForRemoteKubernetesCluster returns admission warnings for rkc; it has no deprecated fields.
func WarningsForRemoteKubernetesCluster(rkc *scyllav1alpha1.RemoteKubernetesCluster) []string {
	return nil
}
