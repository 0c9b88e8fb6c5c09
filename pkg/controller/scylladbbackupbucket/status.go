package scylladbbackupbucket

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// conditionTypes are the condition types the controller owns in a ScyllaDBBackupBucket's status.
var conditionTypes = []string{
	controllerhelpers.AvailableCondition,
	controllerhelpers.ProgressingCondition,
	controllerhelpers.DegradedCondition,
}

// calculateStatus returns the status fields the controller owns in bucket after a sync that observed o and counted
// clusters entries using the bucket, pendingPurge of them being deleted. now is the lastTransitionTime of conditions
// that change status.
func calculateStatus(bucket *scyllav1alpha1.ScyllaDBBackupBucket, o *observation, clusters, pendingPurge int32, now metav1.Time) *scyllav1alpha1.ScyllaDBBackupBucketStatus {
	status := &scyllav1alpha1.ScyllaDBBackupBucketStatus{
		ObservedGeneration:  new(bucket.Generation),
		Clusters:            new(clusters),
		EntriesPendingPurge: new(pendingPurge),
	}

	available := metav1.Condition{Type: controllerhelpers.AvailableCondition}
	switch {
	case o.exists:
		available.Status, available.Reason = metav1.ConditionTrue, bucketAvailableReason
		available.Message = fmt.Sprintf("bucket %q exists and is reachable", bucket.Spec.BucketName)
	case o.unknown:
		available.Status = metav1.ConditionUnknown
	default:
		available.Status = metav1.ConditionFalse
	}
	if !o.exists && o.failure != nil {
		available.Reason, available.Message = o.failure.Reason, o.failure.Message
	}

	progressing := metav1.Condition{Type: controllerhelpers.ProgressingCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if o.retrying && o.failure != nil {
		progressing.Status, progressing.Reason, progressing.Message = metav1.ConditionTrue, retryingReason, o.failure.Message
	}

	degraded := metav1.Condition{Type: controllerhelpers.DegradedCondition, Status: metav1.ConditionFalse, Reason: controllerhelpers.AsExpectedReason}
	if o.failure != nil {
		degraded.Status, degraded.Reason, degraded.Message = metav1.ConditionTrue, o.failure.Reason, o.failure.Message
	}

	status.Conditions = []metav1.Condition{available, progressing, degraded}
	for i := range status.Conditions {
		status.Conditions[i].ObservedGeneration = bucket.Generation
	}
	controllerhelpers.SetTransitionTimes(status.Conditions, bucket.Status.Conditions, now)
	return status
}

// updateStatus applies status, the fields the controller owns, to bucket's status with server-side apply under the
// manager-controller's field manager, unless bucket already has them.
func (c *Controller) updateStatus(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket, status *scyllav1alpha1.ScyllaDBBackupBucketStatus) error {
	_, err := c.statusApplier().ApplyStatus(ctx, bucket, status)
	return err
}

// bucketStatusApplier applies the status fields of a ScyllaDBBackupBucket the controller owns.
type bucketStatusApplier = controllerhelpers.StatusApplier[*scyllav1alpha1.ScyllaDBBackupBucket, scyllav1alpha1.ScyllaDBBackupBucketStatus, scyllav1alpha1applyconfigurations.ScyllaDBBackupBucketStatusApplyConfiguration]

// statusApplier returns the applier of the status fields the controller owns.
func (c *Controller) statusApplier() *bucketStatusApplier {
	return &bucketStatusApplier{
		Kind:           "ScyllaDBBackupBucket",
		FieldManager:   naming.ManagerControllerFieldManager,
		ConditionTypes: conditionTypes,
		Status: func(bucket *scyllav1alpha1.ScyllaDBBackupBucket) *scyllav1alpha1.ScyllaDBBackupBucketStatus {
			return &bucket.Status
		},
		Conditions: func(status *scyllav1alpha1.ScyllaDBBackupBucketStatus) *[]metav1.Condition { return &status.Conditions },
		Apply: func(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket, status *scyllav1alpha1applyconfigurations.ScyllaDBBackupBucketStatusApplyConfiguration, opts metav1.ApplyOptions) (*scyllav1alpha1.ScyllaDBBackupBucket, error) {
			return c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().ApplyStatus(ctx, scyllav1alpha1applyconfigurations.ScyllaDBBackupBucket(bucket.Name).WithUID(bucket.UID).WithStatus(status), opts)
		},
		Written: c.buckets.Written,
	}
}
