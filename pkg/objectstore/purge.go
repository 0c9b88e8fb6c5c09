package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// versionsCursorPrefix starts the cursor of a walk through every version of a directory: a versioned bucket's.
// Keys of a directory start with "backup/", so the two kinds of cursors can't be mistaken for one another, and a
// cursor says the bucket's versioning for the rest of the walk: it is asked only when a walk starts.
const versionsCursorPrefix = "versions:"

// PurgeResult is the outcome of one PurgeBatch.
type PurgeResult struct {
	// Cursor is where the next batch starts: the last key the batch went past, all of its versions in a versioned
	// bucket (then prefixed with "versions:"). It only moves when every deletion of the batch succeeded, so a failed
	// batch is retried from where it started.
	Cursor string
	// Deleted and DeletedBytes count the objects this batch deleted: in a versioned bucket, the versions that hold
	// data, current or not.
	Deleted      int
	DeletedBytes int64
	// DeletedMarkers counts the delete markers this batch deleted in a versioned bucket.
	DeletedMarkers int
	// Skipped lists the keys under the cluster's prefixes that IsClusterKey refuses (the prefix itself, a ".."
	// segment, ...): they are left in place, with every version, reported, and passed over by the cursor.
	Skipped []string
	// Done reports that nothing is left after Cursor under any of the cluster's prefixes.
	Done bool
	// VersioningRefused is the store's refusal to tell the bucket's versioning (AccessDenied), when this batch, the
	// walk's first, asked: the walk goes through current keys only, which in a versioned bucket frees nothing.
	VersioningRefused error
}

// PurgeBatch deletes from bucket up to limit objects of the directory of the cluster with managerClusterID, in key
// order, starting after cursor ("" to start from the beginning), and returns the new cursor and what it did. Call it
// again with the returned cursor until Done. It is idempotent and resumable: deleted keys no longer list, and a
// batch that fails (listing, or deleting some keys) leaves the cursor where it was, so that a retry, even after a
// restart, lists again whatever is left.
//
// In a bucket whose versioning is Enabled or Suspended, deleting a key only adds a delete marker and frees nothing,
// so the batch lists and deletes up to limit versions and delete markers instead, each by its version ID. Whether
// the bucket is versioned is asked (GetBucketVersioning; NotImplemented means unversioned) only when cursor is "":
// the cursor of a versioned bucket records it. A batch may end within the versions of a key; the cursor then stays
// before that key, whose deleted versions no longer list, so that the next batch lists the rest of them.
//
// It never deletes a key IsClusterKey rejects, and refuses the whole batch when the store lists a key outside the
// prefix it was asked for.
func PurgeBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (PurgeResult, error) {
	result := PurgeResult{Cursor: cursor}
	fail := func(err error) (PurgeResult, error) {
		return result, fmt.Errorf("can't purge cluster %q from bucket %q: %w", managerClusterID, bucket, err)
	}
	versioned, after, refused, err := startWalk(ctx, store, bucket, managerClusterID, cursor, limit)
	if err != nil {
		return fail(err)
	}
	result.VersioningRefused = refused
	if versioned {
		return purgeVersionsBatch(ctx, store, bucket, managerClusterID, after, limit, result)
	}
	batch, err := listClusterBatch(ctx, store, bucket, managerClusterID, after, limit)
	if err != nil {
		return fail(err)
	}
	toDelete, skipped, last, done := batch.objects, batch.skipped, batch.last, batch.done

	keys := make([]string, 0, len(toDelete))
	for _, obj := range toDelete {
		keys = append(keys, obj.Key)
	}
	result.Skipped = skipped
	if err := deleteObjects(ctx, store, bucket, keys); err != nil {
		failed := failedDeletions(err)
		for _, obj := range toDelete {
			if failed != nil && !failed[versionRef{key: obj.Key}] {
				result.Deleted++
				result.DeletedBytes += obj.Size
			}
		}
		return fail(err)
	}
	for _, obj := range toDelete {
		result.Deleted++
		result.DeletedBytes += obj.Size
	}
	result.Cursor = last
	result.Done = done
	return result, nil
}

// purgeVersionsBatch is PurgeBatch in a versioned bucket, after the key after.
func purgeVersionsBatch(ctx context.Context, store Interface, bucket, managerClusterID, after string, limit int, result PurgeResult) (PurgeResult, error) {
	fail := func(err error) (PurgeResult, error) {
		return result, fmt.Errorf("can't purge cluster %q from bucket %q: %w", managerClusterID, bucket, err)
	}
	batch, err := listClusterVersionsBatch(ctx, store, bucket, managerClusterID, after, limit)
	if err != nil {
		return fail(err)
	}
	if !batch.done && batch.last == after && len(batch.versions) == 0 {
		// Only a key left in place fills the batch: the next one would list the same versions.
		return fail(fmt.Errorf("%w; it is not a plain key of the directory and is left in place: delete its versions by hand", tooManyVersions(batch.stuckKey(after), "the purge", limit)))
	}
	result.Skipped = batch.skipped
	count := func(v ObjectVersion) {
		if v.DeleteMarker {
			result.DeletedMarkers++
			return
		}
		result.Deleted++
		result.DeletedBytes += v.Size
	}
	if len(batch.versions) != 0 {
		if err := store.DeleteObjectVersions(ctx, bucket, batch.versions); err != nil {
			failed := failedDeletions(err)
			for _, v := range batch.versions {
				if failed != nil && !failed[versionRef{key: v.Key, versionID: v.VersionID}] {
					count(v)
				}
			}
			return fail(err)
		}
	}
	for _, v := range batch.versions {
		count(v)
	}
	result.Cursor = versionsCursorPrefix + batch.last
	result.Done = batch.done
	return result, nil
}

// failedDeletions returns the keys, or versions, a failed deletion names, or nil when it names none: then none was
// confirmed deleted.
func failedDeletions(err error) map[versionRef]bool {
	var doe *DeleteObjectsError
	if !errors.As(err, &doe) {
		return nil
	}
	failed := map[versionRef]bool{}
	for _, ke := range doe.Errors {
		failed[versionRef{key: ke.Key, versionID: ke.VersionID}] = true
	}
	return failed
}

// startWalk checks the arguments of a walk through the directory of managerClusterID and tells from cursor whether
// it goes through every version of a versioned bucket, asking the store when the walk starts; it returns the key the
// walk resumes after, and the store's refusal to tell the versioning (bucketVersioning) when it asked and was
// refused. Bad arguments make no store call.
func startWalk(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (bool, string, error, error) {
	after, versioned := strings.CutPrefix(cursor, versionsCursorPrefix)
	if _, err := checkWalk(managerClusterID, after, limit); err != nil {
		return false, "", nil, err
	}
	if versioned || cursor != "" {
		return versioned, after, nil, nil
	}
	versioned, refused, err := bucketVersioning(ctx, store, bucket)
	return versioned, "", refused, err
}

// BucketVersioned reports whether bucket keeps versions of its keys: its versioning is Enabled, or Suspended after
// having been enabled (the versions kept meanwhile stay). A store that answers NotImplemented, as some
// S3-compatible stores without versioning do, has an unversioned bucket, and so does one whose credentials may not
// read the versioning (bucketVersioning).
func BucketVersioned(ctx context.Context, store Interface, bucket string) (bool, error) {
	versioned, _, err := bucketVersioning(ctx, store, bucket)
	return versioned, err
}

// bucketVersioning is BucketVersioned, which also returns the store's refusal (AccessDenied) when the credentials may
// not read the versioning: ScyllaDB Manager's S3 policy grants no s3:GetBucketVersioning, and such credentials purge
// current keys, as before versioned buckets were purged; the caller tells the user, since in a versioned bucket that
// frees nothing.
func bucketVersioning(ctx context.Context, store Interface, bucket string) (bool, error, error) {
	status, err := store.GetBucketVersioning(ctx, bucket)
	if err != nil {
		switch ErrorCode(err) {
		case ErrorCodeNotImplemented:
			return false, nil, nil
		case ErrorCodeAccessDenied:
			return false, err, nil
		}
		return false, nil, err
	}
	switch status {
	case "":
		return false, nil, nil
	case VersioningEnabled, VersioningSuspended:
		return true, nil, nil
	}
	return false, nil, fmt.Errorf("bucket %q has an unknown versioning status %q", bucket, status)
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

// checkWalk checks the arguments of a walk through the directory of managerClusterID and returns its prefixes.
func checkWalk(managerClusterID, cursor string, limit int) ([]string, error) {
	prefixes, err := ClusterPrefixes(managerClusterID)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, fmt.Errorf("limit must be positive, got %d", limit)
	}
	if cursor != "" && !hasAnyPrefix(cursor, prefixes) {
		return nil, fmt.Errorf("cursor %q is outside its directory", cursor)
	}
	return prefixes, nil
}

// listClusterBatch lists up to limit keys of the directory of the cluster with managerClusterID after cursor,
// through its prefixes in lexical order. Its errors do not name the cluster and bucket: callers say what they were
// doing to which.
func listClusterBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (clusterBatch, error) {
	b := clusterBatch{last: cursor}
	prefixes, err := checkWalk(managerClusterID, cursor, limit)
	if err != nil {
		return clusterBatch{}, err
	}
	b.done, err = walkPrefixes(prefixes, cursor, limit, func(prefix, startAfter string, budget int) (int, bool, error) {
		list, err := store.ListObjects(ctx, bucket, prefix, startAfter, budget)
		if err != nil {
			return 0, false, err
		}
		for _, obj := range list.Objects {
			if !strings.HasPrefix(obj.Key, prefix) || obj.Key <= startAfter {
				return 0, false, fmt.Errorf("listing %q returned key %q after %q, outside what was asked for; refusing the batch",
					prefix, obj.Key, startAfter)
			}
			if IsClusterKey(managerClusterID, obj.Key) {
				b.objects = append(b.objects, obj)
			} else {
				b.skipped = append(b.skipped, obj.Key)
			}
			b.last = obj.Key
		}
		return len(list.Objects), list.More, nil
	})
	if err != nil {
		return clusterBatch{}, err
	}
	return b, nil
}

// walkPrefixes walks prefixes, a cluster's directory in lexical order, from cursor with a budget of limit entries:
// it skips the prefixes before the cursor's, and calls list for each prefix from there, with the cursor as startAfter
// in the cursor's own prefix ("" in the later ones) and what is left of the budget. list returns how many entries
// it took and whether more remain under its prefix. The walk stops at a prefix with more left, or once the budget is
// spent, and tells whether it reached the end of the directory.
func walkPrefixes(prefixes []string, cursor string, limit int, list func(prefix, startAfter string, budget int) (int, bool, error)) (bool, error) {
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
			return false, nil
		}
		n, more, err := list(prefix, startAfter, budget)
		if err != nil {
			return false, err
		}
		budget -= n
		if more {
			return false, nil
		}
	}
	return true, nil
}

// versionBatch is one step through every version of a cluster's directory.
type versionBatch struct {
	// versions are the versions and delete markers of the keys IsClusterKey accepts; skipped are the keys it
	// refuses, once each.
	versions []ObjectVersion
	skipped  []string
	// last is the last key all of whose versions were listed, or the cursor when there is none.
	last string
	// partial is the key after last when the batch holds only some of its versions.
	partial string
	// done reports that nothing is left after last.
	done bool
}

// stuckKey names the key a batch that could not move its cursor from after is stuck on: the key whose versions it
// holds part of, or the cursor's own key, which some stores list again.
func (b versionBatch) stuckKey(after string) string {
	if b.partial != "" {
		return b.partial
	}
	return after
}

// tooManyVersions is the error of a batch that can't move its cursor because it holds nothing but some versions of
// one key, which it does not delete: minio-go can't resume a listing within a key's versions.
func tooManyVersions(key, what string, limit int) error {
	return fmt.Errorf("key %q has more versions than a batch of %d holds, so %s can't go past it", key, limit, what)
}

// listClusterVersionsBatch is listClusterBatch through versions: it lists up to limit versions and delete markers
// of the keys of the directory after cursor. When the listing stops within the versions of a key, last stays
// before that key, named by partial.
func listClusterVersionsBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (versionBatch, error) {
	b := versionBatch{last: cursor}
	prefixes, err := checkWalk(managerClusterID, cursor, limit)
	if err != nil {
		return versionBatch{}, err
	}
	b.done, err = walkPrefixes(prefixes, cursor, limit, func(prefix, startAfter string, budget int) (int, bool, error) {
		list, err := store.ListObjectVersions(ctx, bucket, prefix, startAfter, budget)
		if err != nil {
			return 0, false, err
		}
		var key string
		for _, v := range list.Versions {
			if !strings.HasPrefix(v.Key, prefix) || v.Key < startAfter || v.Key < key {
				return 0, false, fmt.Errorf("listing the versions of %q returned key %q after %q, outside what was asked for; refusing the batch",
					prefix, v.Key, max(startAfter, key))
			}
			if v.VersionID == "" {
				return 0, false, fmt.Errorf("listing the versions of %q returned a version of key %q without version ID; refusing the batch", prefix, v.Key)
			}
			if startAfter != "" && v.Key == startAfter {
				// Some stores (versitygw) list the key-marker's own versions too: the cursor's key was done with
				// already, and what is left of it is a key left in place.
				key = v.Key
				continue
			}
			clusterKey := IsClusterKey(managerClusterID, v.Key)
			if v.Key != key {
				if key != "" {
					// A new key: every version of the previous one was listed.
					b.last = key
				}
				key = v.Key
				if !clusterKey {
					b.skipped = append(b.skipped, v.Key)
				}
			}
			if clusterKey {
				b.versions = append(b.versions, v)
			}
		}
		switch {
		case !list.More:
			if key != "" {
				b.last = key
			}
		case list.NextKey != "" && list.NextKey != key:
			b.last = key
		default:
			b.partial = key
		}
		return len(list.Versions), list.More, nil
	})
	if err != nil {
		return versionBatch{}, err
	}
	return b, nil
}

// InventoryResult is the outcome of one InventoryBatch.
type InventoryResult struct {
	// Cursor is where the next batch starts, as PurgeResult's.
	Cursor string
	// Objects and Bytes count the objects of the batch IsClusterKey accepts: in a versioned bucket, every version
	// that holds data, current or not, since the purge deletes them all; delete markers are not counted.
	Objects int
	Bytes   int64
	// Skipped lists the keys under the prefixes that IsClusterKey refuses, not counted.
	Skipped []string
	// Done reports that nothing is left after Cursor under any of the cluster's prefixes.
	Done bool
	// VersioningRefused is as PurgeResult's: the inventory counts current keys only.
	VersioningRefused error
}

// InventoryBatch counts up to limit objects (versions and delete markers, in a versioned bucket) of the directory of
// the cluster with managerClusterID after cursor, as PurgeBatch walks them, without deleting anything. Sum the
// batches until Done for what the purge will free.
func InventoryBatch(ctx context.Context, store Interface, bucket, managerClusterID, cursor string, limit int) (InventoryResult, error) {
	fail := func(err error) (InventoryResult, error) {
		return InventoryResult{Cursor: cursor}, fmt.Errorf("can't inventory cluster %q in bucket %q: %w", managerClusterID, bucket, err)
	}
	versioned, after, refused, err := startWalk(ctx, store, bucket, managerClusterID, cursor, limit)
	if err != nil {
		return fail(err)
	}
	if versioned {
		batch, err := listClusterVersionsBatch(ctx, store, bucket, managerClusterID, after, limit)
		if err != nil {
			return fail(err)
		}
		if !batch.done && batch.last == after {
			return fail(tooManyVersions(batch.stuckKey(after), "the inventory", limit))
		}
		result := InventoryResult{Cursor: versionsCursorPrefix + batch.last, Skipped: batch.skipped, Done: batch.done}
		for _, v := range batch.versions {
			// The next batch lists the versions of a key this one holds only some of again: they are counted then.
			if !v.DeleteMarker && v.Key != batch.partial {
				result.Objects++
				result.Bytes += v.Size
			}
		}
		return result, nil
	}
	batch, err := listClusterBatch(ctx, store, bucket, managerClusterID, after, limit)
	if err != nil {
		return fail(err)
	}
	result := InventoryResult{Cursor: batch.last, Objects: len(batch.objects), Skipped: batch.skipped, Done: batch.done, VersioningRefused: refused}
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
