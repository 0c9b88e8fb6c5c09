package validation

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBManagerTask returns every error of obj that the CRD schema can't catch.
func ValidateScyllaDBManagerTask(obj *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaDBManagerTaskUpdate returns the errors of ValidateScyllaDBManagerTask(obj) and those of changes from old that aren't allowed.
func ValidateScyllaDBManagerTaskUpdate(obj, old *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
	allErrs := ValidateScyllaDBManagerTask(obj)
	return allErrs
}

// WarningsForScyllaDBManagerTask returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaDBManagerTask(obj *scyllav1alpha1.ScyllaDBManagerTask) []string {
	return nil
}

// ValidateScyllaDBManagerTaskReferences returns errors for objects task refers to that don't exist.
func ValidateScyllaDBManagerTaskReferences(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, lookup Lookup) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}
