package scylladbbackupentry

import (
	"context"
	"encoding/json"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// When a directory is inventoried: once, when its cluster's deletion starts the grace period, so that status.objects
// and status.bytes say what is kept and what the purge will remove. The design allows no object-store call at rest
// beyond the bucket's existence check, so a directory in use is never listed, and a finished inventory is not
// repeated: lastOperation records it, across restarts. A failed inventory is retried with back-off like a purge,
// until it succeeds or the grace period ends; it never delays the purge.

// inventoryCounts are what an inventory counted in a directory.
type inventoryCounts struct {
	objects int64
	bytes   int64
}

// needsInventory tells whether the directory of entry, whose grace period runs, still has to be inventoried: no
// operation was recorded since the cluster was deleted, or the last one is an unfinished inventory.
func needsInventory(entry *scyllav1alpha1.ScyllaDBBackupEntry) bool {
	op := entry.Status.LastOperation
	return op == nil || (op.Type == scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory && op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded)
}

// inventory counts up to purgeBatchesPerSync batches of the directory of entry, resuming where the inventory cursor
// annotation says when the last operation is an unfinished inventory, and records the progress there when more is
// left. Once nothing is left, the counts and a succeeded Inventory operation are returned for the status, and
// the cursor annotation is removed. A failure keeps the cursor and is returned so that the queue backs off.
func (c *Controller) inventory(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, bucket *scyllav1alpha1.ScyllaDBBackupBucket, prefixes []string, o *outcome) (*outcome, error) {
	logger := klog.FromContext(ctx).WithValues("scyllaDBBackupEntry", klog.KObj(entry), "bucket", bucket.Spec.BucketName)
	directory := describeDirectory(prefixes, bucket.Spec.BucketName)

	var progress inventoryProgress
	if op := entry.Status.LastOperation; op != nil && op.Type == scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory &&
		op.State != scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded {
		progress = parseInventoryProgress(entry.Annotations[naming.ScyllaDBBackupInventoryCursorAnnotation])
	}

	failed := func(reason string, err error) (*outcome, error) {
		o.fail(reason, "%v", err)
		o.lastOperation = inventoryOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateFailed, err.Error())
		return o, fmt.Errorf("can't inventory the directory of ScyllaDBBackupEntry %q: %w", klog.KObj(entry), err)
	}

	store, reason, err := c.openStore(ctx, bucket, inventoryFailedReason)
	if err != nil {
		return failed(reason, fmt.Errorf("can't inventory %s: %w", directory, err))
	}

	for range c.purgeBatchesPerSync {
		batchCtx, cancel := context.WithTimeout(ctx, c.storeTimeout)
		result, err := objectstore.InventoryBatch(batchCtx, store, bucket.Spec.BucketName, entry.Spec.ManagerClusterID, progress.After, c.purgeBatchSize)
		cancel()
		if err != nil {
			return failed(storeErrorReason(err, inventoryFailedReason), err)
		}
		progress.Objects += int64(result.Objects)
		progress.Bytes += result.Bytes
		progress.After = result.Cursor
		if len(result.Skipped) != 0 {
			c.recordSkipped(entry, result.Skipped)
		}
		c.recordVersioningRefused(entry, "inventory", result.VersioningRefused)
		logger.V(2).Info("Inventoried a batch", "objects", result.Objects, "cursor", result.Cursor, "done", result.Done)

		if result.Done {
			if err := c.writeAnnotation(ctx, entry, naming.ScyllaDBBackupInventoryCursorAnnotation, nil); err != nil {
				return o, err
			}
			message := fmt.Sprintf("%d objects, %d bytes in %s", progress.Objects, progress.Bytes, directory)
			o.inventory = &inventoryCounts{objects: progress.Objects, bytes: progress.Bytes}
			o.lastOperation = inventoryOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateSucceeded, message)
			c.eventRecorder.Eventf(entry, corev1.EventTypeNormal, directoryCountedReason, "Kept for the grace period: %s", message)
			return o, nil
		}
	}

	// More is left: record where to resume with what was counted before it, in one write, and take the entry up again
	// at once.
	value, err := json.Marshal(progress)
	if err != nil {
		return o, fmt.Errorf("can't record the inventory progress of ScyllaDBBackupEntry %q: %w", klog.KObj(entry), err)
	}
	if err := c.writeAnnotation(ctx, entry, naming.ScyllaDBBackupInventoryCursorAnnotation, new(string(value))); err != nil {
		return o, err
	}
	o.inventory = &inventoryCounts{objects: progress.Objects, bytes: progress.Bytes}
	o.lastOperation = inventoryOperation(scyllav1alpha1.ScyllaDBBackupEntryOperationStateRunning,
		fmt.Sprintf("counted %d objects, %d bytes of %s so far; resuming after %q", progress.Objects, progress.Bytes, directory, progress.After))
	o.wait(inventoryingReason, "counting %s: %d objects so far", directory, progress.Objects)
	o.requeueNow = true
	return o, nil
}

// inventoryProgress is the value of the inventory cursor annotation: the last key counted, and the objects and bytes
// counted up to it. They are written together so that an interrupted inventory neither skips nor counts twice.
type inventoryProgress struct {
	After   string `json:"after"`
	Objects int64  `json:"objects"`
	Bytes   int64  `json:"bytes"`
}

// parseInventoryProgress reads the inventory cursor annotation. A missing or unreadable value, or one that does not
// add up, starts the count over: the annotation is the controller's own, and recounting is always safe.
func parseInventoryProgress(value string) inventoryProgress {
	var p inventoryProgress
	if len(value) == 0 || json.Unmarshal([]byte(value), &p) != nil || len(p.After) == 0 || p.Objects < 0 || p.Bytes < 0 {
		return inventoryProgress{}
	}
	return p
}

func inventoryOperation(state scyllav1alpha1.ScyllaDBBackupEntryOperationState, message string) *scyllav1alpha1.ScyllaDBBackupEntryOperation {
	return &scyllav1alpha1.ScyllaDBBackupEntryOperation{
		Type:    scyllav1alpha1.ScyllaDBBackupEntryOperationTypeInventory,
		State:   state,
		Message: truncateMessage(message),
	}
}
