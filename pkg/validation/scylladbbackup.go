package validation

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBBackupBucket returns every error of obj that the CRD schema can't catch.
func ValidateScyllaDBBackupBucket(obj *scyllav1alpha1.ScyllaDBBackupBucket) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaDBBackupBucketUpdate returns the errors of ValidateScyllaDBBackupBucket(obj) and those of changes from old that aren't allowed.
func ValidateScyllaDBBackupBucketUpdate(obj, old *scyllav1alpha1.ScyllaDBBackupBucket) field.ErrorList {
	allErrs := ValidateScyllaDBBackupBucket(obj)
	return allErrs
}

// WarningsForScyllaDBBackupBucket returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaDBBackupBucket(obj *scyllav1alpha1.ScyllaDBBackupBucket) []string {
	return nil
}

// ValidateScyllaDBBackupEntry returns every error of obj that the CRD schema can't catch.
func ValidateScyllaDBBackupEntry(obj *scyllav1alpha1.ScyllaDBBackupEntry) field.ErrorList {
	var allErrs field.ErrorList
	return allErrs
}

// ValidateScyllaDBBackupEntryUpdate returns the errors of ValidateScyllaDBBackupEntry(obj) and those of changes from old that aren't allowed.
func ValidateScyllaDBBackupEntryUpdate(obj, old *scyllav1alpha1.ScyllaDBBackupEntry) field.ErrorList {
	allErrs := ValidateScyllaDBBackupEntry(obj)
	return allErrs
}

// WarningsForScyllaDBBackupEntry returns admission warnings for deprecated fields obj uses.
func WarningsForScyllaDBBackupEntry(obj *scyllav1alpha1.ScyllaDBBackupEntry) []string {
	return nil
}
