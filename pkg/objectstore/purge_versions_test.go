package objectstore_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
)

// newVersionedStore returns a bucket with the given versioning, whose keys of ks each have three versions of 10
// bytes; the keys of deleted then got a delete marker (or, suspended, lost their null version to one).
func newVersionedStore(t *testing.T, versioning string, deleted []string, ks ...[]string) *fake.Store {
	t.Helper()
	ctx := context.Background()
	s := fake.New(bucket)
	s.SetVersioning(bucket, objectstore.VersioningEnabled)
	for range 3 {
		for _, keys := range ks {
			for _, k := range keys {
				if err := s.PutObject(ctx, bucket, k, []byte("0123456789")); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if versioning == objectstore.VersioningSuspended {
		s.SetVersioning(bucket, objectstore.VersioningSuspended)
		// A write while suspended adds a null version.
		if err := s.PutObject(ctx, bucket, ks[0][0], []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteObjects(ctx, bucket, deleted); err != nil {
		t.Fatal(err)
	}
	s.ResetCalls()
	return s
}

// versionsUnder returns the versions of bucket whose key starts with one of prefixes, or with none when not.
func versionsUnder(s *fake.Store, prefixes []string, under bool) []objectstore.ObjectVersion {
	var out []objectstore.ObjectVersion
	for _, v := range s.Versions(bucket) {
		has := false
		for _, p := range prefixes {
			has = has || strings.HasPrefix(v.Key, p)
		}
		if has == under {
			out = append(out, v)
		}
	}
	return out
}

func TestPurgeBatchFreesEveryVersionOfAVersionedBucket(t *testing.T) {
	t.Parallel()
	suspicious := []string{sstA, sstA + "../" + idB + "/x"}
	deleted := []string{keysOf(idA)[0], keysOf(idA)[3], keysOf(idB)[0]}
	for _, versioning := range []string{objectstore.VersioningEnabled, objectstore.VersioningSuspended} {
		// Batches smaller than a key's versions (3, and 4 for a suspended bucket's first key) end within them.
		for _, limit := range []int{1, 2, 3, 4, 5, 7, 13, 999} {
			t.Run(fmt.Sprintf("%s, batches of %d", versioning, limit), func(t *testing.T) {
				t.Parallel()
				s := newVersionedStore(t, versioning, deleted, keysOf(idA), keysOf(idB), otherKeys)
				// Keys left in place, with one version each.
				for _, k := range suspicious {
					if err := s.PutObject(context.Background(), bucket, k, []byte("x")); err != nil {
						t.Fatal(err)
					}
				}
				s.ResetCalls()
				prefixes, err := objectstore.ClusterPrefixes(idA)
				if err != nil {
					t.Fatal(err)
				}
				var wantDeleted, wantMarkers int
				var wantLeft []objectstore.ObjectVersion
				for _, v := range versionsUnder(s, prefixes, true) {
					switch {
					case !objectstore.IsClusterKey(idA, v.Key):
						wantLeft = append(wantLeft, v)
					case v.DeleteMarker:
						wantMarkers++
					default:
						wantDeleted++
					}
				}
				if wantMarkers != 2 {
					t.Fatalf("the directory holds %d delete markers, want 2", wantMarkers)
				}
				others := versionsUnder(s, prefixes, false)

				results := purgeAll(t, s, idA, "", limit)
				deletedTotal, bytes, skipped := totals(results)
				var markers int
				for _, r := range results {
					markers += r.DeletedMarkers
				}
				if deletedTotal != wantDeleted || bytes != int64(10*wantDeleted) || markers != wantMarkers {
					t.Errorf("limit %d: deleted %d versions of %d bytes and %d markers, want %d, %d and %d",
						limit, deletedTotal, bytes, markers, wantDeleted, 10*wantDeleted, wantMarkers)
				}
				if diff := cmp.Diff(wantLeft, versionsUnder(s, prefixes, true)); diff != "" {
					t.Errorf("limit %d: versions left in the directory differ (-want +got):\n%s", limit, diff)
				}
				if diff := cmp.Diff(others, versionsUnder(s, prefixes, false)); diff != "" {
					t.Errorf("limit %d: versions outside the directory differ (-want +got):\n%s", limit, diff)
				}
				if len(skipped) == 0 {
					t.Errorf("limit %d: want the suspicious keys reported", limit)
				}
				askedVersioning := 0
				for _, c := range s.Calls() {
					switch c.Op {
					case fake.OpGetBucketVersioning:
						askedVersioning++
					case fake.OpListObjectVersions:
						if c.Limit > limit {
							t.Errorf("limit %d: a listing asked for %d versions", limit, c.Limit)
						}
					case fake.OpDeleteObjectVersions:
						if len(c.Versions) > limit {
							t.Errorf("limit %d: a deletion of %d versions", limit, len(c.Versions))
						}
					default:
						t.Errorf("limit %d: unexpected call %+v in a versioned bucket", limit, c)
					}
				}
				if askedVersioning != 1 {
					t.Errorf("limit %d: asked the versioning %d times, want once per purge", limit, askedVersioning)
				}
			})
		}
	}
}

func TestPurgeBatchResumesWithinTheVersionsOfOneKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keysOf(idA)[2]
	s := fake.New(bucket)
	s.SetVersioning(bucket, objectstore.VersioningEnabled)
	for range 5 {
		if err := s.PutObject(ctx, bucket, key, []byte("0123456789")); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutObject(ctx, bucket, keysOf(idA)[0], []byte("x")); err != nil {
		t.Fatal(err)
	}
	first, err := objectstore.PurgeBatch(ctx, s, bucket, idA, "", 2)
	if err != nil {
		t.Fatal(err)
	}
	// The batch deleted the meta key and the newest version of the schema key: the cursor stays after the meta key,
	// not after the schema key, whose other versions the next batches list.
	if want := (objectstore.PurgeResult{Cursor: "versions:" + keysOf(idA)[0], Deleted: 2, DeletedBytes: 11}); !cmp.Equal(want, first) {
		t.Errorf("first batch differs (-want +got):\n%s", cmp.Diff(want, first))
	}
	results := purgeAll(t, s, idA, first.Cursor, 2)
	if deleted, _, _ := totals(results); deleted != 4 {
		t.Errorf("want the 4 other versions deleted, got %d", deleted)
	}
	if left := s.Versions(bucket); len(left) != 0 {
		t.Errorf("want nothing left, got %v", left)
	}
}

func TestPurgeBatchRefusesAKeptKeyWithMoreVersionsThanABatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := fake.New(bucket)
	s.SetVersioning(bucket, objectstore.VersioningEnabled)
	for range 3 {
		if err := s.PutObject(ctx, bucket, sstA, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	// Two versions fit: the key is passed over.
	if _, err := objectstore.PurgeBatch(ctx, s, bucket, idA, "", 3); err != nil {
		t.Fatalf("want the kept key passed over, got %v", err)
	}
	r, err := objectstore.PurgeBatch(ctx, s, bucket, idA, "", 2)
	if err == nil || !strings.Contains(err.Error(), "has more versions than a batch of 2 holds, so the purge can't go past it") {
		t.Fatalf("want an error saying the kept key can't be passed, got %v", err)
	}
	if r.Cursor != "" {
		t.Errorf("want the cursor unchanged, got %q", r.Cursor)
	}
	if len(s.Versions(bucket)) != 3 {
		t.Errorf("want the kept key's versions left, got %v", s.Versions(bucket))
	}
}

func TestPurgeBatchAsksTheVersioningOnlyWhenItStarts(t *testing.T) {
	t.Parallel()
	notImplemented := fake.ErrorResponse(objectstore.ErrorCodeNotImplemented, "A header you provided implies functionality that is not implemented", http.StatusNotImplemented)
	tests := []struct {
		name       string
		versioning string
		cursor     string
		fail       error
		wantErr    string
		wantOps    []fake.Op
	}{
		{
			name:    "unversioned bucket",
			wantOps: []fake.Op{fake.OpGetBucketVersioning, fake.OpListObjects, fake.OpListObjects, fake.OpListObjects, fake.OpDeleteObjects},
		},
		{
			name:    "a store without versioning answers NotImplemented",
			fail:    notImplemented,
			wantOps: []fake.Op{fake.OpGetBucketVersioning, fake.OpListObjects, fake.OpListObjects, fake.OpListObjects, fake.OpDeleteObjects},
		},
		{
			// ScyllaDB Manager's documented S3 policy has no s3:GetBucketVersioning: such credentials purged before
			// versioned buckets were, and still do.
			name:    "credentials that may not read the versioning purge as before",
			fail:    fake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied.", http.StatusForbidden),
			wantOps: []fake.Op{fake.OpGetBucketVersioning, fake.OpListObjects, fake.OpListObjects, fake.OpListObjects, fake.OpDeleteObjects},
		},
		{
			name:    "another answer is an error",
			fail:    fake.ErrorResponse("InternalError", "We encountered an internal error. Please try again.", http.StatusInternalServerError),
			wantErr: "We encountered an internal error. Please try again.",
			wantOps: []fake.Op{fake.OpGetBucketVersioning},
		},
		{
			name:       "versioned bucket",
			versioning: objectstore.VersioningEnabled,
			wantOps:    []fake.Op{fake.OpGetBucketVersioning, fake.OpListObjectVersions, fake.OpListObjectVersions, fake.OpListObjectVersions, fake.OpDeleteObjectVersions},
		},
		{
			name:       "a versioned cursor says so without asking",
			versioning: objectstore.VersioningEnabled,
			cursor:     "versions:",
			wantOps:    []fake.Op{fake.OpListObjectVersions, fake.OpListObjectVersions, fake.OpListObjectVersions, fake.OpDeleteObjectVersions},
		},
		{
			name:    "a key cursor says unversioned without asking",
			cursor:  metaA,
			wantOps: []fake.Op{fake.OpListObjects, fake.OpListObjects, fake.OpListObjects, fake.OpDeleteObjects},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t, keysOf(idA))
			if tc.versioning != "" {
				s.SetVersioning(bucket, tc.versioning)
			}
			s.SetErrorFunc(func(c fake.Call) error {
				if c.Op == fake.OpGetBucketVersioning {
					return tc.fail
				}
				return nil
			})
			_, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, tc.cursor, 100)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			var ops []fake.Op
			for _, c := range s.Calls() {
				ops = append(ops, c.Op)
			}
			if diff := cmp.Diff(tc.wantOps, ops); diff != "" {
				t.Errorf("calls differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPurgeBatchReportsAVersionObjectLockKeeps(t *testing.T) {
	t.Parallel()
	s := newVersionedStore(t, objectstore.VersioningEnabled, nil, keysOf(idA))
	locked := s.Versions(bucket)[1]
	const lockMessage = "Access Denied because object protected by object lock."
	s.SetErrorFunc(func(c fake.Call) error {
		if c.Op == fake.OpDeleteObjectVersions && c.Key == locked.Key && c.VersionID == locked.VersionID {
			return fake.ErrorResponse(objectstore.ErrorCodeAccessDenied, lockMessage, http.StatusForbidden)
		}
		return nil
	})
	r, err := objectstore.PurgeBatch(context.Background(), s, bucket, idA, "versions:", 100)
	if err == nil || !strings.Contains(err.Error(), lockMessage) || !strings.Contains(err.Error(), locked.VersionID) || !strings.Contains(err.Error(), locked.Key) {
		t.Fatalf("want an error naming the locked version and saying the store's message, got %v", err)
	}
	if want := (objectstore.PurgeResult{Cursor: "versions:", Deleted: 17, DeletedBytes: 170}); !cmp.Equal(want, r) {
		t.Errorf("result differs (-want +got):\n%s", cmp.Diff(want, r))
	}
	if diff := cmp.Diff([]objectstore.ObjectVersion{locked}, s.Versions(bucket)); diff != "" {
		t.Errorf("versions left differ (-want +got):\n%s", diff)
	}
}

func TestInventoryBatchCountsEveryVersionOfAVersionedBucket(t *testing.T) {
	t.Parallel()
	deleted := []string{keysOf(idA)[0]}
	s := newVersionedStore(t, objectstore.VersioningEnabled, deleted, keysOf(idA), keysOf(idB))
	var objects int
	var bytes int64
	cursor := ""
	for i := 0; ; i++ {
		r, err := objectstore.InventoryBatch(context.Background(), s, bucket, idA, cursor, 4)
		if err != nil {
			t.Fatal(err)
		}
		objects += r.Objects
		bytes += r.Bytes
		cursor = r.Cursor
		if r.Done {
			break
		}
		if i > 20 {
			t.Fatal("inventory did not finish")
		}
	}
	// Three versions of each key, current or not; the delete marker holds nothing.
	if want := 3 * len(keysOf(idA)); objects != want || bytes != int64(10*want) {
		t.Errorf("want %d objects of %d bytes, got %d of %d", want, 10*want, objects, bytes)
	}
	if _, err := objectstore.InventoryBatch(context.Background(), s, bucket, idA, "", 2); err == nil ||
		!strings.Contains(err.Error(), "has more versions than a batch of 2 holds, so the inventory can't go past it") {
		t.Errorf("want an inventory that can't count a key refused, got %v", err)
	}
	versioningCalls := 0
	for _, c := range s.Calls() {
		switch c.Op {
		case fake.OpGetBucketVersioning:
			versioningCalls++
		case fake.OpListObjectVersions:
		default:
			t.Errorf("want only listings, got %+v", c)
		}
	}
	if versioningCalls != 2 {
		t.Errorf("asked the versioning %d times, want once per inventory", versioningCalls)
	}
}

// inclusiveMarkerStore lists the versions of the key-marker's own key too, as versitygw does.
type inclusiveMarkerStore struct {
	*fake.Store
}

func (s inclusiveMarkerStore) ListObjectVersions(ctx context.Context, bucket, prefix, startAfter string, limit int) (objectstore.ObjectVersionList, error) {
	all, err := s.Store.ListObjectVersions(ctx, bucket, prefix, "", 1<<20)
	if err != nil {
		return all, err
	}
	var out objectstore.ObjectVersionList
	for _, v := range all.Versions {
		if v.Key < startAfter {
			continue
		}
		if len(out.Versions) == limit {
			out.More, out.NextKey = true, v.Key
			break
		}
		out.Versions = append(out.Versions, v)
	}
	return out, nil
}

func TestPurgeAndInventoryPassOverAKeyMarkerTheStoreListsAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, limit := range []int{1, 2, 3, 4, 5, 999} {
		s := newVersionedStore(t, objectstore.VersioningEnabled, []string{keysOf(idA)[1]}, keysOf(idA), keysOf(idB))
		kept := []string{sstA, sstA + "../x"}
		for _, k := range kept {
			if err := s.PutObject(ctx, bucket, k, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		store := inclusiveMarkerStore{Store: s}
		// The versions of the cursor's key fill part of every listing: batches must hold more than the versions of
		// two keys (3 each) to count, and more than a kept key's (1) to purge.
		var objects int
		cursor := ""
		for i := 0; ; i++ {
			r, err := objectstore.InventoryBatch(ctx, store, bucket, idA, cursor, limit)
			if err != nil {
				if limit < 7 && strings.Contains(err.Error(), "has more versions than a batch") {
					break
				}
				t.Fatalf("limit %d: %v", limit, err)
			}
			objects += r.Objects
			cursor = r.Cursor
			if r.Done {
				if want := 3 * len(keysOf(idA)); objects != want {
					t.Errorf("limit %d: counted %d objects, want %d", limit, objects, want)
				}
				break
			}
			if i > 100 {
				t.Fatalf("limit %d: inventory did not finish", limit)
			}
		}
		if limit == 1 {
			if _, err := objectstore.PurgeBatch(ctx, store, bucket, idA, "versions:"+sstA, limit); err == nil ||
				!strings.Contains(err.Error(), "has more versions than a batch of 1 holds, so the purge can't go past it") {
				t.Errorf("want a purge stuck on a kept key refused, got %v", err)
			}
			continue
		}
		purgeAll(t, store, idA, "", limit)
		var left []string
		for _, v := range s.Versions(bucket) {
			if strings.Contains(v.Key, idA+"/") {
				left = append(left, v.Key)
			}
		}
		if diff := cmp.Diff(kept, left); diff != "" {
			t.Errorf("limit %d: versions left in the directory differ (-want +got):\n%s", limit, diff)
		}
	}
}
