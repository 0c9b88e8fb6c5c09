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
	prefixes, err := ClusterPrefixes(managerClusterID)
	if err != nil {
		return result, fmt.Errorf("can't purge bucket %q: %w", bucket, err)
	}
	if limit <= 0 {
		return result, fmt.Errorf("can't purge bucket %q: limit must be positive, got %d", bucket, limit)
	}
	if cursor != "" && !hasAnyPrefix(cursor, prefixes) {
		return result, fmt.Errorf("can't purge cluster %q from bucket %q: cursor %q is outside its directory", managerClusterID, bucket, cursor)
	}

	var toDelete []Object
	var skipped []string
	last := cursor
	done := true
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
			done = false
			break
		}
		list, err := store.ListObjects(ctx, bucket, prefix, startAfter, budget)
		if err != nil {
			return result, fmt.Errorf("can't purge cluster %q from bucket %q: %w", managerClusterID, bucket, err)
		}
		for _, obj := range list.Objects {
			if !strings.HasPrefix(obj.Key, prefix) || obj.Key <= startAfter {
				return result, fmt.Errorf("can't purge cluster %q from bucket %q: listing %q returned key %q after %q, outside what was asked for; nothing deleted",
					managerClusterID, bucket, prefix, obj.Key, startAfter)
			}
			if IsClusterKey(managerClusterID, obj.Key) {
				toDelete = append(toDelete, obj)
			} else {
				skipped = append(skipped, obj.Key)
			}
			last = obj.Key
		}
		budget -= len(list.Objects)
		if list.More {
			done = false
			break
		}
	}

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
