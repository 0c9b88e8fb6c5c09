// Package fake is an in-memory objectstore.Interface for unit tests: buckets of keys in lexical order with S3's
// listing and deletion semantics, a record of every call, and injected failures per call (or per key of a
// DeleteObjects).
package fake

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

// Op names an Interface method.
type Op string

// Operations of objectstore.Interface.
const (
	OpBucketExists  Op = "BucketExists"
	OpMakeBucket    Op = "MakeBucket"
	OpListObjects   Op = "ListObjects"
	OpDeleteObjects Op = "DeleteObjects"
	OpPutObject     Op = "PutObject"
)

// Call is a recorded call.
type Call struct {
	Op     Op
	Bucket string
	// Key is the key of PutObject, the prefix of ListObjects, and one key of DeleteObjects when passed to an error
	// function.
	Key string
	// StartAfter and Limit are those of ListObjects.
	StartAfter string
	Limit      int
	// Keys are the keys of DeleteObjects.
	Keys []string
}

// ErrorFunc decides whether a call fails. It is called once per call, and for DeleteObjects once per key (with Key
// set and Keys empty), so that a deletion can fail for some keys only.
type ErrorFunc func(call Call) error

// Store is an in-memory object store. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	buckets map[string]map[string][]byte
	errFunc ErrorFunc
	calls   []Call
}

var _ objectstore.Interface = &Store{}

// New returns a store holding the given (empty) buckets.
func New(buckets ...string) *Store {
	s := &Store{buckets: map[string]map[string][]byte{}}
	for _, b := range buckets {
		s.buckets[b] = map[string][]byte{}
	}
	return s
}

// SetErrorFunc installs f (nil removes it).
func (s *Store) SetErrorFunc(f ErrorFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errFunc = f
}

// Calls returns the calls made so far.
func (s *Store) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, 0, len(s.calls))
	for _, c := range s.calls {
		c.Keys = slices.Clone(c.Keys)
		out = append(out, c)
	}
	return out
}

// ResetCalls forgets the recorded calls.
func (s *Store) ResetCalls() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = nil
}

// Keys returns the keys of bucket in lexical order (nil when it does not exist).
func (s *Store) Keys(bucket string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.buckets[bucket]))
}

// Object returns the data stored under key and whether it exists.
func (s *Store) Object(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.buckets[bucket][key]
	return slices.Clone(data), ok
}

// NoSuchBucket is the error the store answers for a missing bucket, shaped like minio-go's.
func NoSuchBucket(bucket string) error {
	return minio.ErrorResponse{
		Code:       objectstore.ErrorCodeNoSuchBucket,
		Message:    "The specified bucket does not exist",
		BucketName: bucket,
		StatusCode: http.StatusNotFound,
	}
}

// ErrorResponse returns an S3 error with the given code, shaped like minio-go's, for error functions.
func ErrorResponse(code, message string, status int) error {
	return minio.ErrorResponse{Code: code, Message: message, StatusCode: status}
}

// record appends call and returns the injected error, if any; the caller holds s.mu.
func (s *Store) record(call Call) error {
	s.calls = append(s.calls, call)
	if s.errFunc != nil {
		return s.errFunc(call)
	}
	return nil
}

func (s *Store) BucketExists(ctx context.Context, bucket string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.record(Call{Op: OpBucketExists, Bucket: bucket}); err != nil {
		return false, fmt.Errorf("can't check bucket %q: %w", bucket, err)
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("can't check bucket %q: %w", bucket, err)
	}
	_, ok := s.buckets[bucket]
	return ok, nil
}

func (s *Store) MakeBucket(ctx context.Context, bucket, region string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.record(Call{Op: OpMakeBucket, Bucket: bucket}); err != nil {
		return fmt.Errorf("can't create bucket %q in region %q: %w", bucket, region, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("can't create bucket %q in region %q: %w", bucket, region, err)
	}
	if _, ok := s.buckets[bucket]; ok {
		return fmt.Errorf("can't create bucket %q in region %q: %w", bucket, region, ErrorResponse(
			objectstore.ErrorCodeBucketAlreadyOwned, "Your previous request to create the named bucket succeeded and you already own it.", http.StatusConflict))
	}
	s.buckets[bucket] = map[string][]byte{}
	return nil
}

func (s *Store) ListObjects(ctx context.Context, bucket, prefix, startAfter string, limit int) (objectstore.ObjectList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (objectstore.ObjectList, error) {
		return objectstore.ObjectList{}, fmt.Errorf("can't list objects under %q in bucket %q: %w", prefix, bucket, err)
	}
	if err := s.record(Call{Op: OpListObjects, Bucket: bucket, Key: prefix, StartAfter: startAfter, Limit: limit}); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if limit <= 0 {
		return fail(fmt.Errorf("limit must be positive, got %d", limit))
	}
	objects, ok := s.buckets[bucket]
	if !ok {
		return fail(NoSuchBucket(bucket))
	}
	var out objectstore.ObjectList
	for _, k := range slices.Sorted(maps.Keys(objects)) {
		if !strings.HasPrefix(k, prefix) || k <= startAfter {
			continue
		}
		if len(out.Objects) == limit {
			out.More = true
			break
		}
		out.Objects = append(out.Objects, objectstore.Object{Key: k, Size: int64(len(objects[k]))})
	}
	return out, nil
}

func (s *Store) DeleteObjects(ctx context.Context, bucket string, keys []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.record(Call{Op: OpDeleteObjects, Bucket: bucket, Keys: slices.Clone(keys)}); err != nil {
		return s.failAll(bucket, keys, err)
	}
	if err := ctx.Err(); err != nil {
		return s.failAll(bucket, keys, err)
	}
	objects, ok := s.buckets[bucket]
	if !ok {
		return s.failAll(bucket, keys, NoSuchBucket(bucket))
	}
	var failed []objectstore.KeyError
	for _, k := range keys {
		if s.errFunc != nil {
			if err := s.errFunc(Call{Op: OpDeleteObjects, Bucket: bucket, Key: k}); err != nil {
				failed = append(failed, objectstore.KeyError{Key: k, Err: err})
				continue
			}
		}
		delete(objects, k)
	}
	if len(failed) > 0 {
		return &objectstore.DeleteObjectsError{Bucket: bucket, Errors: failed}
	}
	return nil
}

func (s *Store) failAll(bucket string, keys []string, err error) error {
	if len(keys) == 0 {
		return fmt.Errorf("can't delete objects from bucket %q: %w", bucket, err)
	}
	errs := make([]objectstore.KeyError, 0, len(keys))
	for _, k := range keys {
		errs = append(errs, objectstore.KeyError{Key: k, Err: err})
	}
	return &objectstore.DeleteObjectsError{Bucket: bucket, Errors: errs}
}

func (s *Store) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.record(Call{Op: OpPutObject, Bucket: bucket, Key: key}); err != nil {
		return fmt.Errorf("can't put object %q into bucket %q: %w", key, bucket, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("can't put object %q into bucket %q: %w", key, bucket, err)
	}
	objects, ok := s.buckets[bucket]
	if !ok {
		return fmt.Errorf("can't put object %q into bucket %q: %w", key, bucket, NoSuchBucket(bucket))
	}
	objects[key] = slices.Clone(data)
	return nil
}
