package scylladbbackupentry

import (
	"context"
	"encoding/json"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// maxSkippedKeysInEvent bounds the keys a Warning event about skipped keys lists.
const maxSkippedKeysInEvent = 5

// purge deletes up to purgeBatchesPerSync batches of the directory of entry, resuming after the cursor annotation,
// and writes the progress after each batch. In a versioned bucket the batches delete every version and delete
// marker, and the cursor (prefixed "versions:") records that the bucket is versioned, so that only a purge's
// first batch asks. Once nothing is left it records the success and removes the finalizer.
// A failure keeps the finalizer and the cursor where the last successful batch left it, and is returned so that the
// queue backs off.
func (c *Controller) purge(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, bucket *scyllav1alpha1.ScyllaDBBackupBucket, prefixes []string, o *outcome) (*outcome, error) {
	logger := klog.FromContext(ctx).WithValues("scyllaDBBackupEntry", klog.KObj(entry), "bucket", bucket.Spec.BucketName)
	directory := describeDirectory(prefixes, bucket.Spec.BucketName)

	var deleted int64
	if op := entry.Status.LastOperation; op != nil && op.Type == scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge && op.ObjectsDeleted != nil {
		deleted = *op.ObjectsDeleted
	}
	cursor := entry.Annotations[naming.ScyllaDBBackupPurgeCursorAnnotation]

	failed := func(reason string, err error) (*outcome, error) {
		// err names the cluster and the bucket, and says what failed.
		o.fail(reason, "%v", err)
		o.lastOperation = purgeOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed, deleted, err.Error())
		return o, fmt.Errorf("can't purge the directory of ScyllaDBBackupEntry %q: %w", klog.KObj(entry), err)
	}

	store, reason, err := c.openStore(ctx, bucket, purgeFailedReason)
	if err != nil {
		return failed(reason, fmt.Errorf("can't purge %s: %w", directory, err))
	}

	if op := entry.Status.LastOperation; op == nil || op.Type != scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge {
		c.eventRecorder.Eventf(entry, corev1.EventTypeNormal, purgeStartedReason, "Purging %s", directory)
	}

	for range c.purgeBatchesPerSync {
		batchCtx, cancel := context.WithTimeout(ctx, c.storeTimeout)
		result, err := objectstore.PurgeBatch(batchCtx, store, bucket.Spec.BucketName, entry.Spec.ManagerClusterID, cursor, c.purgeBatchSize)
		cancel()
		deleted += int64(result.Deleted)
		if len(result.Skipped) != 0 {
			c.recordSkipped(entry, result.Skipped)
		}
		c.recordVersioningRefused(entry, "purge", result.VersioningRefused)
		if err != nil {
			return failed(storeErrorReason(err, purgeFailedReason), err)
		}
		logger.V(2).Info("Purged a batch", "deleted", result.Deleted, "deletedMarkers", result.DeletedMarkers, "cursor", result.Cursor, "done", result.Done)

		if result.Done {
			o.lastOperation = purgeOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded, deleted,
				fmt.Sprintf("purged %d objects of %s", deleted, directory))
			// The success is recorded before the finalizer goes, so that a failure to remove it leaves a true status.
			if err := c.writeStatus(ctx, entry, o); err != nil {
				return o, err
			}
			if err := c.refresh(&entry); err != nil {
				return o, err
			}
			c.eventRecorder.Eventf(entry, corev1.EventTypeNormal, directoryPurgedReason, "Purged %d objects of %s", deleted, directory)
			return c.release(ctx, entry, o)
		}

		// The count is written before the cursor: a cursor left behind by a failed write or a restart only costs
		// listing again from where the batch started, whose keys are gone, while a count left behind would miss the
		// batch for good.
		cursor = result.Cursor
		o.lastOperation = purgeOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning, deleted,
			fmt.Sprintf("deleted %d objects of %s so far; resuming after %q", deleted, directory, cursor))
		o.waiting = []condition{{reason: purgingReason, message: fmt.Sprintf("purging %s: %d objects deleted so far", directory, deleted)}}
		if err := c.writeStatus(ctx, entry, o); err != nil {
			return o, err
		}
		if err := c.refresh(&entry); err != nil {
			return o, err
		}
		if err := c.writeCursor(ctx, entry, cursor); err != nil {
			return o, err
		}
		if err := c.refresh(&entry); err != nil {
			return o, err
		}
	}

	// More is left: take the entry up again at once, after the other keys queued meanwhile.
	o.requeueNow = true
	return o, nil
}

// refresh replaces *entry with the newest copy the controller knows, its own writes included.
func (c *Controller) refresh(entry **scyllav1alpha1.ScyllaDBBackupEntry) error {
	latest, err := c.entries.Get((*entry).Namespace, (*entry).Name)
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", klog.KObj(*entry), err)
	}
	*entry = latest
	return nil
}

func purgeOperation(state scyllav1alpha1.ScyllaDBBackupEntryOperationState, deleted int64, message string) *scyllav1alpha1.ScyllaDBBackupEntryOperation {
	return &scyllav1alpha1.ScyllaDBBackupEntryOperation{
		Type:           scyllav1alpha1.ScyllaDBBackupEntryOperationTypePurge,
		State:          state,
		Message:        truncateMessage(message),
		ObjectsDeleted: new(deleted),
	}
}

// recordSkipped reports keys under the directory's prefixes that are not safe to delete and were left in place.
func (c *Controller) recordSkipped(entry *scyllav1alpha1.ScyllaDBBackupEntry, skipped []string) {
	shown := skipped
	if len(shown) > maxSkippedKeysInEvent {
		shown = shown[:maxSkippedKeysInEvent]
	}
	c.eventRecorder.Eventf(entry, corev1.EventTypeWarning, "ObjectsSkipped",
		"Left %d objects under the directory's prefixes that are not plain keys of it, for example %q", len(skipped), shown)
}

// recordVersioningRefused tells, in a Warning event, that the store refused to say whether entry's bucket keeps
// versions (refused, when not nil), so that operation goes through current keys only: in a versioned bucket their
// older versions stay, and nothing is freed.
func (c *Controller) recordVersioningRefused(entry *scyllav1alpha1.ScyllaDBBackupEntry, operation string, refused error) {
	if refused == nil {
		return
	}
	c.eventRecorder.Eventf(entry, corev1.EventTypeWarning, bucketVersioningUnknownReason,
		"The credentials may not read the bucket's versioning (%v): the %s goes through current keys only, so in a versioned bucket the older versions stay and nothing is freed; grant s3:GetBucketVersioning, s3:ListBucketVersions and s3:DeleteObjectVersion to remove every version",
		refused, operation)
}

// writeCursor records cursor in entry's purge cursor annotation, unless it holds it already.
func (c *Controller) writeCursor(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, cursor string) error {
	return c.writeAnnotation(ctx, entry, naming.ScyllaDBBackupPurgeCursorAnnotation, &cursor)
}

// writeAnnotation sets entry's annotation key to *value, or removes it when value is nil, unless entry has it so
// already. A JSON merge patch of the one annotation leaves every other annotation alone.
func (c *Controller) writeAnnotation(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, key string, value *string) error {
	current, ok := entry.Annotations[key]
	if (value == nil && !ok) || (value != nil && ok && current == *value) {
		return nil
	}
	// The UID makes the patch fail rather than land on another object recreated under the same name; a null removes
	// the annotation.
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"uid":         entry.UID,
			"annotations": map[string]*string{key: value},
		},
	})
	if err != nil {
		return fmt.Errorf("can't make the patch of annotation %q: %w", key, err)
	}
	_, err = c.entryPatcher(entry.Namespace).Patch(ctx, entry.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: naming.ManagerControllerFieldManager})
	if err != nil {
		return fmt.Errorf("can't write annotation %q of ScyllaDBBackupEntry %q: %w", key, klog.KObj(entry), err)
	}
	return nil
}

// openStore returns the object store of bucket, or the error with the reason of the condition it makes: a credentials
// error, or failedReason when the store can't be configured.
func (c *Controller) openStore(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket, failedReason string) (objectstore.Interface, string, error) {
	cfg, err := c.storeConfig(ctx, bucket)
	if err != nil {
		return nil, credentialsErrorReason, err
	}
	store, err := c.newStore(cfg)
	if err != nil {
		return nil, failedReason, err
	}
	return store, "", nil
}

// storeErrorReason returns the condition reason of err, the error of a store call: storeAuthErrorReason when the
// store refused the credentials, failedReason otherwise.
func storeErrorReason(err error, failedReason string) string {
	if objectstore.IsAuthError(err) {
		return storeAuthErrorReason
	}
	return failedReason
}

// storeConfig returns how to reach bucket's store. Credentials are read from the API on each purge, not from a
// cache, so that the manager-controller does not watch Secrets; without a credentialsSecretRef the
// manager-controller's own role is used.
func (c *Controller) storeConfig(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket) (objectstore.Config, error) {
	var data map[string][]byte
	if ref := bucket.Spec.CredentialsSecretRef; ref != nil {
		secret, err := c.kubeClient.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return objectstore.Config{}, fmt.Errorf("can't get the credentials Secret %q of ScyllaDBBackupBucket %q: %w", ref.Namespace+"/"+ref.Name, bucket.Name, err)
		}
		data = secret.Data
	}
	cfg, missing := backupstorage.StoreConfig(bucket, data)
	if len(missing) != 0 {
		ref := bucket.Spec.CredentialsSecretRef
		return cfg, fmt.Errorf("the credentials Secret %q of ScyllaDBBackupBucket %q has no key %q", ref.Namespace+"/"+ref.Name, bucket.Name, missing[0])
	}
	return cfg, nil
}
