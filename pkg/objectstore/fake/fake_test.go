package fake

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

func TestListObjectsPagesLikeS3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New("b")
	for _, k := range []string{"p/c", "p/a", "q/a", "p/b", "pp"} {
		if err := s.PutObject(ctx, "b", k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	obj := func(k string) objectstore.Object { return objectstore.Object{Key: k, Size: int64(len(k))} }
	tests := []struct {
		name       string
		prefix     string
		startAfter string
		limit      int
		want       objectstore.ObjectList
	}{
		{name: "first page", prefix: "p/", limit: 2, want: objectstore.ObjectList{Objects: []objectstore.Object{obj("p/a"), obj("p/b")}, More: true}},
		{name: "page after a key", prefix: "p/", startAfter: "p/b", limit: 2, want: objectstore.ObjectList{Objects: []objectstore.Object{obj("p/c")}}},
		{name: "exact fit has no more", prefix: "p/", limit: 3, want: objectstore.ObjectList{Objects: []objectstore.Object{obj("p/a"), obj("p/b"), obj("p/c")}}},
		{name: "start after a key that does not exist", prefix: "p/", startAfter: "p/aa", limit: 5, want: objectstore.ObjectList{Objects: []objectstore.Object{obj("p/b"), obj("p/c")}}},
		{name: "nothing under the prefix", prefix: "r/", limit: 5, want: objectstore.ObjectList{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := s.ListObjects(ctx, "b", tc.prefix, tc.startAfter, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("listing differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteObjectsFailsPerKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New("b")
	for _, k := range []string{"a", "b", "c"} {
		if err := s.PutObject(ctx, "b", k, nil); err != nil {
			t.Fatal(err)
		}
	}
	s.SetErrorFunc(func(c Call) error {
		if c.Key == "b" {
			return errors.New("injected")
		}
		return nil
	})
	err := s.DeleteObjects(ctx, "b", []string{"a", "b", "missing"})
	var doe *objectstore.DeleteObjectsError
	if !errors.As(err, &doe) {
		t.Fatalf("want a DeleteObjectsError, got %v", err)
	}
	if diff := cmp.Diff([]string{"b"}, doe.FailedKeys()); diff != "" {
		t.Errorf("failed keys differ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c"}, s.Keys("b")); diff != "" {
		t.Errorf("keys left differ (-want +got):\n%s", diff)
	}
	if _, err := s.ListObjects(ctx, "nope", "", "", 1); objectstore.ErrorCode(err) != objectstore.ErrorCodeNoSuchBucket {
		t.Errorf("want NoSuchBucket for a missing bucket, got %v", err)
	}
}

func TestVersionedBucketKeepsVersionsAndDeleteMarkers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := New("b")
	put := func(key, data string) {
		t.Helper()
		if err := s.PutObject(ctx, "b", key, []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	put("k", "unversioned")
	s.SetVersioning("b", objectstore.VersioningEnabled)
	put("k", "one")
	put("k", "two")
	if err := s.DeleteObjects(ctx, "b", []string{"k"}); err != nil {
		t.Fatal(err)
	}
	want := []objectstore.ObjectVersion{
		{Key: "k", VersionID: "v000003", DeleteMarker: true},
		{Key: "k", VersionID: "v000002", Size: 3},
		{Key: "k", VersionID: "v000001", Size: 3},
		{Key: "k", VersionID: "null", Size: 11},
	}
	if diff := cmp.Diff(want, s.Versions("b")); diff != "" {
		t.Errorf("a deletion without version ID must add a delete marker (-want +got):\n%s", diff)
	}
	if keys := s.Keys("b"); len(keys) != 0 {
		t.Errorf("want no current key under a delete marker, got %v", keys)
	}
	list, err := s.ListObjects(ctx, "b", "", "", 10)
	if err != nil || len(list.Objects) != 0 {
		t.Errorf("want a listing of current objects to hide the deleted key, got %v, %v", list, err)
	}

	// Suspended: a write or a deletion replaces the null version.
	s.SetVersioning("b", objectstore.VersioningSuspended)
	put("k", "three")
	if err := s.DeleteObjects(ctx, "b", []string{"k"}); err != nil {
		t.Fatal(err)
	}
	want = append([]objectstore.ObjectVersion{{Key: "k", VersionID: "null", DeleteMarker: true}}, want[:3]...)
	if diff := cmp.Diff(want, s.Versions("b")); diff != "" {
		t.Errorf("versions of a suspended bucket differ (-want +got):\n%s", diff)
	}

	versions, err := s.ListObjectVersions(ctx, "b", "", "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(objectstore.ObjectVersionList{Versions: want[:2], More: true, NextKey: "k"}, versions); diff != "" {
		t.Errorf("version listing differs (-want +got):\n%s", diff)
	}
	if err := s.DeleteObjectVersions(ctx, "b", []objectstore.ObjectVersion{want[0], want[1], {Key: "k", VersionID: "missing"}}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]objectstore.ObjectVersion{want[2], want[3]}, s.Versions("b")); diff != "" {
		t.Errorf("versions left differ (-want +got):\n%s", diff)
	}
	if data, ok := s.Object("b", "k"); !ok || string(data) != "two" {
		t.Errorf("want the newest version left current, got %q, %v", data, ok)
	}
}
