package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// PurgeResult is the outcome of one PurgeBatch.
type PurgeResult struct {
	// Cursor is the last key the batch went past; the next batch starts after it. It only moves when every
	// deletion of the batch succeeded, so a failed batch is retried from where it started.
	Cursor string
	// Deleted and DeletedBytes count the objects this batch deleted.
	Deleted      int
	DeletedBytes int64
	// Skipped lists the keys under the cluster's prefixes that IsClusterKey refuses (the prefix itself, a ".."
	// segment, ...): they are left in place, reported, and passed over by the cursor.
	Skipped []string
	// Done reports that nothing is left after Cursor under any of the cluster's prefixes.
	Done bool
}

// PurgeBatch deletes from bucket up to limit objects of the directory of the cluster with managerClusterID, in key
// order, starting after cursor ("" to start from the beginning), and returns the new cursor and what it did. Call it
// again with the returned cursor until Done. It is idempotent and resumable: deleted keys no longer list, and a
// batch that fails (listing, or deleting some keys) leaves the cursor where it was, so that a retry, even after a
// restart, lists again whatever is left.
//
// It never deletes a key IsClusterKey rejects, and refuses the whole batch when the store lists a key outside the
// prefix it was asked for.
func PurgeBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (PurgeResult, error) {
	result := PurgeResult{Cursor: cursor}
	batch, err := listClusterBatch(ctx, store, bucket, managerClusterID, cursor, limit)
	if err != nil {
		return result, fmt.Errorf("can't purge cluster %q from bucket %q: %w", managerClusterID, bucket, err)
	}
	toDelete, skipped, last, done := batch.objects, batch.skipped, batch.last, batch.done

	keys := make([]string, 0, len(toDelete))
	for _, obj := range toDelete {
		keys = append(keys, obj.Key)
	}
	if err := deleteObjects(ctx, store, bucket, keys); err != nil {
		failed := map[string]bool{}
		var doe *DeleteObjectsError
		if errors.As(err, &doe) {
			for _, k := range doe.FailedKeys() {
				failed[k] = true
			}
		} else {
			for _, k := range keys {
				failed[k] = true
			}
		}
		for _, obj := range toDelete {
			if !failed[obj.Key] {
				result.Deleted++
				result.DeletedBytes += obj.Size
			}
		}
		result.Skipped = skipped
		return result, fmt.Errorf("can't purge cluster %q from bucket %q: %w", managerClusterID, bucket, err)
	}
	for _, obj := range toDelete {
		result.Deleted++
		result.DeletedBytes += obj.Size
	}
	result.Skipped = skipped
	result.Cursor = last
	result.Done = done
	return result, nil
}

// clusterBatch is one listing step through a cluster's directory.
type clusterBatch struct {
	// objects are the keys IsClusterKey accepts, skipped those it refuses.
	objects []Object
	skipped []string
	// last is the last key listed, or the cursor when none was.
	last string
	// done reports that nothing is left after last.
	done bool
}

// listClusterBatch lists up to limit keys of the directory of the cluster with managerClusterID after cursor,
// through its prefixes in lexical order. Its errors do not name the cluster and bucket: callers say what they were
// doing to which.
func listClusterBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (clusterBatch, error) {
	b := clusterBatch{last: cursor, done: true}
	prefixes, err := ClusterPrefixes(managerClusterID)
	if err != nil {
		return clusterBatch{}, err
	}
	if limit <= 0 {
		return clusterBatch{}, fmt.Errorf("limit must be positive, got %d", limit)
	}
	if cursor != "" && !hasAnyPrefix(cursor, prefixes) {
		return clusterBatch{}, fmt.Errorf("cursor %q is outside its directory", cursor)
	}
	budget := limit
	for _, prefix := range prefixes {
		var startAfter string
		switch {
		case strings.HasPrefix(cursor, prefix):
			startAfter = cursor
		case cursor > prefix:
			// The prefixes are in lexical order: a cursor past this prefix means it is done.
			continue
		}
		if budget == 0 {
			// Out of budget before this prefix was even looked at.
			b.done = false
			break
		}
		list, err := store.ListObjects(ctx, bucket, prefix, startAfter, budget)
		if err != nil {
			return clusterBatch{}, err
		}
		for _, obj := range list.Objects {
			if !strings.HasPrefix(obj.Key, prefix) || obj.Key <= startAfter {
				return clusterBatch{}, fmt.Errorf("listing %q returned key %q after %q, outside what was asked for; refusing the batch",
					prefix, obj.Key, startAfter)
			}
			if IsClusterKey(managerClusterID, obj.Key) {
				b.objects = append(b.objects, obj)
			} else {
				b.skipped = append(b.skipped, obj.Key)
			}
			b.last = obj.Key
		}
		budget -= len(list.Objects)
		if list.More {
			b.done = false
			break
		}
	}
	return b, nil
}

// InventoryResult is the outcome of one InventoryBatch.
type InventoryResult struct {
	// Cursor is the last key counted; the next batch starts after it.
	Cursor string
	// Objects and Bytes count the keys of the batch IsClusterKey accepts.
	Objects int
	Bytes   int64
	// Skipped lists the keys under the prefixes that IsClusterKey refuses, not counted.
	Skipped []string
	// Done reports that nothing is left after Cursor under any of the cluster's prefixes.
	Done bool
}

// InventoryBatch counts up to limit objects of the directory of the cluster with managerClusterID after cursor, as
// PurgeBatch walks them, without deleting anything. Sum the batches until Done for the directory's size.
func InventoryBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (InventoryResult, error) {
	batch, err := listClusterBatch(ctx, store, bucket, managerClusterID, cursor, limit)
	if err != nil {
		return InventoryResult{Cursor: cursor}, fmt.Errorf("can't inventory cluster %q in bucket %q: %w", managerClusterID, bucket, err)
	}
	result := InventoryResult{Cursor: batch.last, Objects: len(batch.objects), Skipped: batch.skipped, Done: batch.done}
	for _, obj := range batch.objects {
		result.Bytes += obj.Size
	}
	return result, nil
}

// deleteObjects deletes keys, making no call when there are none.
func deleteObjects(ctx context.Context, store Interface, bucket string, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return store.DeleteObjects(ctx, bucket, keys)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
