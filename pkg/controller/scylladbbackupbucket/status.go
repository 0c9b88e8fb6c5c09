package scylladbbackupbucket

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
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

// ownedStatus returns the fields of status that the controller owns: all but the conditions of other types.
func ownedStatus(status *scyllav1alpha1.ScyllaDBBackupBucketStatus) *scyllav1alpha1.ScyllaDBBackupBucketStatus {
	owned := status.DeepCopy()
	owned.Conditions = nil
	for _, condType := range conditionTypes {
		if c := meta.FindStatusCondition(status.Conditions, condType); c != nil {
			owned.Conditions = append(owned.Conditions, *c)
		}
	}
	return owned
}

// updateStatus applies status, the fields the controller owns, to bucket's status with server-side apply under the
// manager-controller's field manager, unless bucket already has them.
func (c *Controller) updateStatus(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket, status *scyllav1alpha1.ScyllaDBBackupBucketStatus) error {
	if apiequality.Semantic.DeepEqual(ownedStatus(&bucket.Status), ownedStatus(status)) {
		return nil
	}
	statusConfiguration, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBBackupBucketStatusApplyConfiguration](ownedStatus(status))
	if err != nil {
		return fmt.Errorf("can't apply status of ScyllaDBBackupBucket %q: %w", bucket.Name, err)
	}
	// The UID makes the apply fail rather than land on another object recreated under the same name.
	applyConfiguration := scyllav1alpha1applyconfigurations.ScyllaDBBackupBucket(bucket.Name).WithUID(bucket.UID).WithStatus(statusConfiguration)
	applied, err := c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().ApplyStatus(ctx, applyConfiguration, metav1.ApplyOptions{
		FieldManager: naming.ManagerControllerFieldManager,
		Force:        true,
	})
	if err != nil {
		return fmt.Errorf("can't apply status of ScyllaDBBackupBucket %q: %w", bucket.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Applied status", "scyllaDBBackupBucket", klog.KObj(bucket), "resourceVersion", applied.ResourceVersion)
	return nil
}
