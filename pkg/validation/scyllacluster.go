package validation

import (
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaCluster returns every error of obj that the CRD schema can't catch.
func ValidateScyllaCluster(obj *scyllav1.ScyllaCluster) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaClusterUpdate returns the errors of ValidateScyllaCluster(obj) and those of changes from old that aren't allowed.
func ValidateScyllaClusterUpdate(obj, old *scyllav1.ScyllaCluster) field.ErrorList {
	allErrs := ValidateScyllaCluster(obj)
	return allErrs
}

// WarningsForScyllaCluster returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaCluster(obj *scyllav1.ScyllaCluster) []string {
	return nil
}
