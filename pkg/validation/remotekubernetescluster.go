package validation

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRemoteKubernetesCluster returns every error of obj that the CRD schema can't catch.
func ValidateRemoteKubernetesCluster(obj *scyllav1alpha1.RemoteKubernetesCluster) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateRemoteKubernetesClusterUpdate returns the errors of ValidateRemoteKubernetesCluster(obj) and those of changes from old that aren't allowed.
func ValidateRemoteKubernetesClusterUpdate(obj, old *scyllav1alpha1.RemoteKubernetesCluster) field.ErrorList {
	allErrs := ValidateRemoteKubernetesCluster(obj)
	return allErrs
}

// WarningsForRemoteKubernetesCluster returns admission warnings for deprecated fields obj uses.
func WarningsForRemoteKubernetesCluster(obj *scyllav1alpha1.RemoteKubernetesCluster) []string {
	return nil
}
