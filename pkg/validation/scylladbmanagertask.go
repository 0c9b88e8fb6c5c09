package validation

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBManagerTask returns every error of task that the CRD schema can't catch.
func ValidateScyllaDBManagerTask(task *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	allErrs = append(allErrs, validateTaskAnnotations(task.Annotations)...)
	if b := task.Spec.Backup; b != nil {
		p := specPath.Child("backup")
		allErrs = append(allErrs, validateTaskSchedule(&b.ScyllaDBManagerTaskSchedule, p)...)
		allErrs = append(allErrs, validateBackupFields(b.DC, b.Keyspace, b.Location, b.RateLimit, b.SnapshotParallel, b.UploadParallel, p)...)
		if len(b.Location) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("location"), "a backup needs at least one location, e.g. s3:backups"))
		}
	}
	if r := task.Spec.Repair; r != nil {
		p := specPath.Child("repair")
		allErrs = append(allErrs, validateTaskSchedule(&r.ScyllaDBManagerTaskSchedule, p)...)
		allErrs = append(allErrs, validateDCFilters(r.DC, p.Child("dc"))...)
		allErrs = append(allErrs, validateKeyspaceFilters(r.Keyspace, p.Child("keyspace"))...)
		if q := r.SmallTableThreshold; q != nil {
			if bytes, ok := q.AsInt64(); !ok || bytes <= 0 {
				allErrs = append(allErrs, field.Invalid(p.Child("smallTableThreshold"), q.String(), "must be a positive whole number of bytes, e.g. 1Gi"))
			}
		}
	}
	return allErrs
}

func validateTaskSchedule(s *scyllav1alpha1.ScyllaDBManagerTaskSchedule, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.Cron != nil {
		allErrs = append(allErrs, validateCron(*s.Cron, path.Child("cron"))...)
	}
	allErrs = append(allErrs, validateNumRetries(s.NumRetries, path.Child("numRetries"))...)
	allErrs = append(allErrs, validateRetryWait(s.RetryWait, path.Child("retryWait"))...)
	return allErrs
}

// validateNumRetries checks that a retry count fits ScyllaDB Manager's 32-bit num_retries.
func validateNumRetries(n *int64, path *field.Path) field.ErrorList {
	if n != nil && (*n < 0 || *n > math.MaxInt32) {
		return field.ErrorList{field.Invalid(path, *n, fmt.Sprintf("must be between 0 and %d", math.MaxInt32))}
	}
	return nil
}

// validateTaskAnnotations checks the override annotations the ScyllaCluster translator sets and the
// ScyllaDBManagerTask controller parses.
func validateTaskAnnotations(annotations map[string]string) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	if v, ok := annotations[naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot]; ok {
		allErrs = append(allErrs, validateManagerDuration(v, path.Key(naming.ScyllaDBManagerTaskScheduleIntervalOverrideAnnot))...)
	}
	if v, ok := annotations[naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot]; ok && len(strings.TrimSpace(v)) != 0 {
		allErrs = append(allErrs, validateTimezone(v, path.Key(naming.ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot))...)
	}
	if v, ok := annotations[naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot]; ok {
		allErrs = append(allErrs, validateStartDate(v, path.Key(naming.ScyllaDBManagerTaskScheduleStartDateOverrideAnnot))...)
	}
	if v, ok := annotations[naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot]; ok {
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.ScyllaDBManagerTaskRepairIntensityOverrideAnnot), v, "must be a non-negative number, e.g. 1 or 0.5"))
		}
	}
	if v, ok := annotations[naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot]; ok {
		if _, err := ParseSize(v); err != nil {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.ScyllaDBManagerTaskRepairSmallTableThresholdAnnot), v, "must be a size such as 1GiB or 512MiB"))
		}
	}
	allErrs = append(allErrs, validateManagerClusterIDAnnotation(annotations, naming.ScyllaDBManagerTaskClusterIDAnnotation)...)
	if v := annotations[naming.ScyllaDBManagerTaskNameOverrideAnnotation]; len(v) != 0 {
		for _, msg := range validation.IsDNS1123Subdomain(v) {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.ScyllaDBManagerTaskNameOverrideAnnotation), v, msg))
		}
	}
	return allErrs
}

// ValidateScyllaDBManagerTaskUpdate returns the errors of ValidateScyllaDBManagerTask(task); the schema already
// refuses the changes that aren't allowed.
func ValidateScyllaDBManagerTaskUpdate(task, old *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
	return ValidateScyllaDBManagerTask(task)
}

// WarningsForScyllaDBManagerTask returns admission warnings for task; it has no deprecated fields.
func WarningsForScyllaDBManagerTask(task *scyllav1alpha1.ScyllaDBManagerTask) []string {
	return nil
}

// ValidateScyllaDBManagerTaskReferences returns an error when the cluster task refers to doesn't exist, and when
// lookup can't tell.
func ValidateScyllaDBManagerTaskReferences(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, lookup Lookup) field.ErrorList {
	ref := task.Spec.ScyllaDBClusterRef
	path := field.NewPath("spec", "scyllaDBClusterRef")
	exists, err := lookup.ScyllaDBManagerTaskTargetExists(ctx, task.Namespace, ref)
	switch {
	case err != nil:
		return field.ErrorList{field.InternalError(path, fmt.Errorf("can't check whether %s %q exists: %w", ref.Kind, task.Namespace+"/"+ref.Name, err))}
	case !exists:
		return field.ErrorList{field.NotFound(path.Child("name"), ref.Name)}
	}
	return nil
}
