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
