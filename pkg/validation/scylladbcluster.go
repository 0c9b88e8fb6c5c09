package validation

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBCluster returns every error of obj that the CRD schema can't catch.
func ValidateScyllaDBCluster(obj *scyllav1alpha1.ScyllaDBCluster) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaDBClusterUpdate returns the errors of ValidateScyllaDBCluster(obj) and those of changes from old that aren't allowed.
func ValidateScyllaDBClusterUpdate(obj, old *scyllav1alpha1.ScyllaDBCluster) field.ErrorList {
	allErrs := ValidateScyllaDBCluster(obj)
	return allErrs
}

// WarningsForScyllaDBCluster returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaDBCluster(obj *scyllav1alpha1.ScyllaDBCluster) []string {
	return nil
}
