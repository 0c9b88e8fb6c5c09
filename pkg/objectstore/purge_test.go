package objectstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
)

const (
	bucket  = "shared"
	idA     = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
	idB     = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7d" // shares all but the last character with idA
	metaA   = "backup/meta/cluster/" + idA + "/"
	schemaA = "backup/schema/cluster/" + idA + "/"
	sstA    = "backup/sst/cluster/" + idA + "/"
)

// keysOf returns a small Manager-like directory of cluster id.
func keysOf(id string) []string {
	return []string{
		"backup/meta/cluster/" + id + "/dc/dc1/node/h1/task_t1_tag_sm_20260101000000UTC_manifest.json.gz",
		"backup/meta/cluster/" + id + "/dc/dc1/node/h2/task_t1_tag_sm_20260101000000UTC_manifest.json.gz",
		"backup/schema/cluster/" + id + "/task_t1_tag_sm_20260101000000UTC_schema.tar.gz",
		"backup/sst/cluster/" + id + "/dc/dc1/node/h1/keyspace/ks/table/t/v1/me-1-big-Data.db",
		"backup/sst/cluster/" + id + "/dc/dc1/node/h1/keyspace/ks/table/t/v1/me-1-big-Index.db",
		"backup/sst/cluster/" + id + "/dc/dc1/node/h2/keyspace/ks/table/t/v1/me-1-big-Data.db",
	}
}

// otherKeys are keys of the bucket that belong to no purged directory.
var otherKeys = []string{
	".permission-check/cluster/" + idA + "/x",
	"backup/meta/cluster/" + idA + "0/x",
	"backup/sst/cluster/" + idA[:35] + "/x",
	"backup/sst/cluster/" + strings.ToUpper(idA) + "/x",
	"unrelated",
}

func newStore(t *testing.T, keys ...[]string) *fake.Store {
	t.Helper()
	s := fake.New(bucket)
	for _, ks := range keys {
		for _, k := range ks {
			if err := s.PutObject(context.Background(), bucket, k, []byte("0123456789")); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.ResetCalls()
	return s
}

// purgeAll runs batches of limit until done and returns the results.
func purgeAll(t *testing.T, s objectstore.Interface, id, cursor string, limit int) []objectstore.PurgeResult {
	t.Helper()
	var results []objectstore.PurgeResult
	for range 100 {
		r, err := objectstore.PurgeBatch(context.Background(), s, bucket, id, cursor, limit)
		if err != nil {
			t.Fatalf("batch %d: %v", len(results), err)
		}
		results = append(results, r)
		if r.Done {
			return results
		}
		cursor = r.Cursor
	}
	t.Fatal("purge did not finish in 100 batches")
	return nil
}

func totals(results []objectstore.PurgeResult) (deleted int, bytes int64, skipped []string) {
	for _, r := range results {
		deleted += r.Deleted
		bytes += r.DeletedBytes
		skipped = append(skipped, r.Skipped...)
	}
	return deleted, bytes, skipped
}

func TestPurgeBatchRemovesExactlyTheClustersKeys(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 2, 3, 5, 6, 7, 1000} {
		t.Run(fmt.Sprintf("batches of %d", limit), func(t *testing.T) {
			t.Parallel()
			s := newStore(t, keysOf(idA), keysOf(idB), otherKeys)
			results := purgeAll(t, s, idA, "", limit)

			want := append(append([]string{}, keysOf(idB)...), otherKeys...)
			if diff := cmp.Diff(sorted(want), s.Keys(bucket)); diff != "" {
				t.Errorf("keys left differ (-want +got):\n%s", diff)
			}
			deleted, bytes, skipped := totals(results)
			if deleted != len(keysOf(idA)) || bytes != int64(10*len(keysOf(idA))) || len(skipped) != 0 {
				t.Errorf("want %d deleted, %d bytes, none skipped; got %d, %d, %q", len(keysOf(idA)), 10*len(keysOf(idA)), deleted, bytes, skipped)
			}
			for i, r := range results[:len(results)-1] {
				if r.Deleted > limit {
					t.Errorf("batch %d deleted %d objects, more than the limit %d", i, r.Deleted, limit)
				}
			}
			for _, c := range s.Calls() {
				for _, k := range c.Keys {
					if !objectstore.IsClusterKey(idA, k) {
						t.Errorf("asked to delete %q, not a key of cluster %s", k, idA)
					}
				}
			}
		})
	}
}

func TestPurgeBatchResumesFromCursor(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idA), keysOf(idB))
	first, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	want := objectstore.PurgeResult{Cursor: keysOf(idA)[2], Deleted: 3, DeletedBytes: 30}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Fatalf("first batch differs (-want +got):\n%s", diff)
	}

	// A restarted controller only has the cursor it recorded; a fresh store client continues from it.
	s.ResetCalls()
	rest := purgeAll(t, s, idA, first.Cursor, 3)
	if deleted, _, _ := totals(rest); deleted != 3 {
		t.Errorf("want the remaining 3 objects deleted, got %d", deleted)
	}
	if got := s.Calls()[0]; got.Op != fake.OpListObjects || got.Key != schemaA || got.StartAfter != first.Cursor {
		t.Errorf("want the resumed purge to skip the meta prefix and list %q after the cursor, got %+v", schemaA, got)
	}
	if diff := cmp.Diff(sorted(keysOf(idB)), s.Keys(bucket)); diff != "" {
		t.Errorf("keys left differ (-want +got):\n%s", diff)
	}
}

func TestPurgeBatchStartsAfterCursorWithinAPrefix(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idA))
	cursor := keysOf(idA)[0] // the first manifest
	r, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, cursor, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Done || r.Deleted != 5 {
		t.Errorf("want the 5 keys after the cursor deleted and done, got %+v", r)
	}
	// Keys at or before the cursor were done by an earlier batch as far as the purge knows.
	if diff := cmp.Diff([]string{cursor}, s.Keys(bucket)); diff != "" {
		t.Errorf("keys left differ (-want +got):\n%s", diff)
	}
}

func TestPurgeBatchFailingHalfwayKeepsCursorAndResumes(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idA), keysOf(idB))
	failing := keysOf(idA)[1]
	s.SetErrorFunc(func(c fake.Call) error {
		if c.Op == fake.OpDeleteObjects && c.Key == failing {
			return fake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied", 403)
		}
		return nil
	})

	r, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, "", 4)
	if err == nil {
		t.Fatal("want an error when a deletion fails")
	}
	if got := objectstore.ErrorCode(err); got != objectstore.ErrorCodeAccessDenied {
		t.Errorf("want the store's error code to survive wrapping, got %q from %v", got, err)
	}
	if !strings.Contains(err.Error(), failing) || !strings.Contains(err.Error(), bucket) {
		t.Errorf("want the error to name the key and the bucket, got %v", err)
	}
	want := objectstore.PurgeResult{Cursor: "", Deleted: 3, DeletedBytes: 30}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("failed batch differs (-want +got):\n%s", diff)
	}

	// The store recovers; the retry lists again from the unchanged cursor and finishes.
	s.SetErrorFunc(nil)
	results := purgeAll(t, s, idA, r.Cursor, 4)
	if deleted, _, _ := totals(results); deleted != 3 {
		t.Errorf("want the 3 objects left deleted by the retry, got %d", deleted)
	}
	if diff := cmp.Diff(sorted(keysOf(idB)), s.Keys(bucket)); diff != "" {
		t.Errorf("keys left differ (-want +got):\n%s", diff)
	}
}

func TestPurgeBatchFailures(t *testing.T) {
	t.Parallel()
	storeDown := errors.New("connection refused")
	tests := []struct {
		name    string
		fail    fake.ErrorFunc
		id      string
		cursor  string
		wantErr string
		// wantCalls are the operations made.
		wantCalls []fake.Op
	}{
		{
			name:      "store unreachable while listing",
			fail:      func(fake.Call) error { return storeDown },
			id:        idA,
			wantErr:   "connection refused",
			wantCalls: []fake.Op{fake.OpGetBucketVersioning},
		},
		{
			name: "whole deletion refused",
			fail: func(c fake.Call) error {
				if c.Op == fake.OpDeleteObjects && c.Key == "" {
					return storeDown
				}
				return nil
			},
			id:        idA,
			wantErr:   "can't delete 6 objects",
			wantCalls: []fake.Op{fake.OpGetBucketVersioning, fake.OpListObjects, fake.OpListObjects, fake.OpListObjects, fake.OpDeleteObjects},
		},
		{
			name:    "malformed ID makes no call",
			id:      strings.ToUpper(idA),
			wantErr: "not in canonical lowercase form",
		},
		{
			name:    "empty ID makes no call",
			id:      "",
			wantErr: "is not a UUID",
		},
		{
			name:    "cursor of another cluster makes no call",
			id:      idA,
			cursor:  "backup/sst/cluster/" + idB + "/x",
			wantErr: "outside its directory",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t, keysOf(idA), keysOf(idB))
			s.SetErrorFunc(tc.fail)
			r, err := objectstore.PurgeBatch(context.Background(), s, bucket, tc.id, tc.cursor, 100)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(objectstore.PurgeResult{Cursor: tc.cursor}, r); diff != "" {
				t.Errorf("result differs (-want +got):\n%s", diff)
			}
			var ops []fake.Op
			for _, c := range s.Calls() {
				ops = append(ops, c.Op)
			}
			if diff := cmp.Diff(tc.wantCalls, ops); diff != "" {
				t.Errorf("calls differ (-want +got):\n%s", diff)
			}
			s.SetErrorFunc(nil)
			if got := len(s.Keys(bucket)); got != 12 {
				t.Errorf("want nothing deleted, %d keys left of 12", got)
			}
		})
	}
}

func TestPurgeBatchIsIdempotent(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idB))
	for i := range 2 {
		r, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(objectstore.PurgeResult{Done: true}, r); diff != "" {
			t.Errorf("purge %d of an empty directory differs (-want +got):\n%s", i, diff)
		}
	}
	for _, c := range s.Calls() {
		if c.Op != fake.OpListObjects && c.Op != fake.OpGetBucketVersioning {
			t.Errorf("want only listings for an empty directory, got %+v", c)
		}
	}

	// Purging again after a finished purge finds nothing, whatever cursor was kept.
	s = newStore(t, keysOf(idA))
	results := purgeAll(t, s, idA, "", 2)
	again := purgeAll(t, s, idA, results[len(results)-1].Cursor, 2)
	fresh := purgeAll(t, s, idA, "", 2)
	for _, r := range append(again, fresh...) {
		if r.Deleted != 0 {
			t.Errorf("want nothing deleted by a repeated purge, got %+v", r)
		}
	}
}

func TestPurgeBatchLeavesKeysIsClusterKeyRejects(t *testing.T) {
	t.Parallel()
	suspicious := []string{
		sstA, // the prefix itself, as a directory marker object
		sstA + "../" + idB + "/x",
		sstA + "a//b",
		metaA + "./m",
	}
	s := newStore(t, keysOf(idA), keysOf(idB), suspicious)
	results := purgeAll(t, s, idA, "", 2)
	_, _, skipped := totals(results)
	if diff := cmp.Diff(sorted(suspicious), sorted(skipped)); diff != "" {
		t.Errorf("skipped keys differ (-want +got):\n%s", diff)
	}
	want := append(append([]string{}, keysOf(idB)...), suspicious...)
	if diff := cmp.Diff(sorted(want), s.Keys(bucket)); diff != "" {
		t.Errorf("keys left differ (-want +got):\n%s", diff)
	}
}

// lyingStore lists keys that do not match the prefix it was asked for, as a broken store or proxy might.
type lyingStore struct {
	*fake.Store
}

func (l lyingStore) ListObjects(ctx context.Context, b, prefix, startAfter string, limit int) (objectstore.ObjectList, error) {
	list, err := l.Store.ListObjects(ctx, b, "", startAfter, limit)
	return list, err
}

func TestPurgeBatchRefusesAListingOutsideThePrefix(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idA), keysOf(idB), otherKeys)
	_, err := objectstore.PurgeBatch(context.Background(), lyingStore{s}, bucket, idA, "", 100)
	if err == nil || !strings.Contains(err.Error(), "outside what was asked for") {
		t.Fatalf("want the batch refused, got %v", err)
	}
	if got := len(s.Keys(bucket)); got != 17 {
		t.Errorf("want nothing deleted, %d keys left of 17", got)
	}
}

func TestPurgeBatchDoneOnlyWhenEveryPrefixIsExhausted(t *testing.T) {
	t.Parallel()
	s := newStore(t, keysOf(idA)[:2]) // two manifests only
	r, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The budget ran out on the meta prefix: the other prefixes were not looked at yet.
	if r.Done || r.Deleted != 2 {
		t.Errorf("want 2 deleted and not done, got %+v", r)
	}
	r, err = objectstore.PurgeBatch(context.Background(), s, bucket, idA, r.Cursor, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Done || r.Deleted != 0 {
		t.Errorf("want the next batch to find nothing and be done, got %+v", r)
	}
}

func sorted(keys []string) []string {
	out := append([]string{}, keys...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestInventoryBatchCountsTheDirectoryWithoutDeleting(t *testing.T) {
	t.Parallel()
	suspicious := []string{sstA, sstA + "../" + idB + "/x"}
	s := newStore(t, keysOf(idA), keysOf(idB), otherKeys, suspicious)
	var objects int
	var bytes int64
	var skipped []string
	cursor := ""
	for i := 0; ; i++ {
		r, err := objectstore.InventoryBatch(context.Background(), s, bucket, idA, cursor, 4)
		if err != nil {
			t.Fatal(err)
		}
		objects += r.Objects
		bytes += r.Bytes
		skipped = append(skipped, r.Skipped...)
		cursor = r.Cursor
		if r.Done {
			break
		}
		if i > 20 {
			t.Fatal("inventory did not finish")
		}
	}
	if objects != len(keysOf(idA)) || bytes != int64(10*len(keysOf(idA))) {
		t.Errorf("want %d objects of %d bytes, got %d of %d", len(keysOf(idA)), 10*len(keysOf(idA)), objects, bytes)
	}
	if diff := cmp.Diff(sorted(suspicious), sorted(skipped)); diff != "" {
		t.Errorf("skipped keys differ (-want +got):\n%s", diff)
	}
	for _, c := range s.Calls() {
		if c.Op != fake.OpListObjects && c.Op != fake.OpGetBucketVersioning {
			t.Errorf("want only listings, got %+v", c)
		}
	}
	if _, err := objectstore.InventoryBatch(context.Background(), s, bucket, "", "", 4); err == nil {
		t.Error("want a malformed ID refused")
	}
}
