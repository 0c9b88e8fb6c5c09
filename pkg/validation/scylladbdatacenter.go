package validation

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBDatacenter returns every error of obj that the CRD schema can't catch.
func ValidateScyllaDBDatacenter(obj *scyllav1alpha1.ScyllaDBDatacenter) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaDBDatacenterUpdate returns the errors of ValidateScyllaDBDatacenter(obj) and those of changes from old that aren't allowed.
func ValidateScyllaDBDatacenterUpdate(obj, old *scyllav1alpha1.ScyllaDBDatacenter) field.ErrorList {
	allErrs := ValidateScyllaDBDatacenter(obj)
	return allErrs
}

// WarningsForScyllaDBDatacenter returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaDBDatacenter(obj *scyllav1alpha1.ScyllaDBDatacenter) []string {
	return nil
}
