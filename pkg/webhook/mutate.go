package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"

	"github.com/scyllakube/scylla-operator/pkg/validation"
)

// parallelNodeOperationsPath is the field the mutating webhook defaults, in both ScyllaCluster and
// ScyllaDBDatacenter.
var parallelNodeOperationsPath = field.NewPath("spec", "enableParallelNodeOperations")

// defaultScyllaClusterParallelNodeOperations sets spec.enableParallelNodeOperations=true on a ScyllaCluster that
// leaves it unset, when its ScyllaDB version supports it (api-reference.md). It never writes false.
func defaultScyllaClusterParallelNodeOperations(sc *scyllav1.ScyllaCluster) []PatchOperation {
	if sc.Spec.EnableParallelNodeOperations != nil {
		return nil
	}
	enabled := sc.DeepCopy()
	enabled.Spec.EnableParallelNodeOperations = ptr.To(true)
	return enableParallelNodeOperationsIfAccepted(validation.ValidateScyllaCluster(enabled))
}

// defaultScyllaDBDatacenterParallelNodeOperations is defaultScyllaClusterParallelNodeOperations for a
// ScyllaDBDatacenter, whose version is its ScyllaDB image's tag.
func defaultScyllaDBDatacenterParallelNodeOperations(sdc *scyllav1alpha1.ScyllaDBDatacenter) []PatchOperation {
	if sdc.Spec.EnableParallelNodeOperations != nil {
		return nil
	}
	enabled := sdc.DeepCopy()
	enabled.Spec.EnableParallelNodeOperations = ptr.To(true)
	return enableParallelNodeOperationsIfAccepted(validation.ValidateScyllaDBDatacenter(enabled))
}

// enableParallelNodeOperationsIfAccepted returns the patch setting enableParallelNodeOperations=true unless errs,
// the validation errors of the object with it set, refuse it. The default is thereby true exactly when validation
// accepts true (a version new enough), with one rule in one place.
func enableParallelNodeOperationsIfAccepted(errs field.ErrorList) []PatchOperation {
	for _, err := range errs {
		if err.Field == parallelNodeOperationsPath.String() {
			return nil
		}
	}
	return []PatchOperation{{Op: "add", Path: "/spec/enableParallelNodeOperations", Value: true}}
}
