// Package fake is an in-memory objectstore.Interface for unit tests: buckets of keys in lexical order with S3's
// listing and deletion semantics, versioning included (versions, the "null" version of an unversioned or suspended
// bucket, delete markers), a record of every call, and injected failures per call (or per key of a DeleteObjects
// or DeleteObjectVersions).
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
	// OpGetBucketVersioning and the others below are the calls of versioned buckets.
	OpGetBucketVersioning  Op = "GetBucketVersioning"
	OpListObjectVersions   Op = "ListObjectVersions"
	OpDeleteObjectVersions Op = "DeleteObjectVersions"
)

// nullVersionID is the version ID S3 gives the version written while a bucket was unversioned or suspended.
const nullVersionID = "null"

// Call is a recorded call.
type Call struct {
	Op     Op
	Bucket string
	// Key is the key of PutObject, the prefix of ListObjects and ListObjectVersions, and one key of DeleteObjects or
	// DeleteObjectVersions when passed to an error function.
	Key string
	// VersionID is the version of Key DeleteObjectVersions deletes, when passed to an error function.
	VersionID string
	// StartAfter and Limit are those of ListObjects and ListObjectVersions.
	StartAfter string
	Limit      int
	// Keys are the keys of DeleteObjects.
	Keys []string
	// Versions are the versions of DeleteObjectVersions.
	Versions []objectstore.ObjectVersion
}

// ErrorFunc decides whether a call fails. It is called once per call, and for DeleteObjects and
// DeleteObjectVersions once per key or version (with Key and VersionID set and Keys and Versions empty), so that a
// deletion can fail for some keys only.
type ErrorFunc func(call Call) error

// Version is a stored version of a key, or a delete marker.
type Version struct {
	ID           string
	Data         []byte
	DeleteMarker bool
}

// versionedBucket holds the versions of each key, newest first. An unversioned bucket holds one "null" version per key.
type versionedBucket struct {
	versioning string
	objects    map[string][]Version
}

// current returns the keys whose newest version is not a delete marker.
func (b *versionedBucket) current() map[string][]byte {
	out := map[string][]byte{}
	for k, vs := range b.objects {
		if len(vs) > 0 && !vs[0].DeleteMarker {
			out[k] = vs[0].Data
		}
	}
	return out
}

// Store is an in-memory object store. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex
	buckets map[string]*versionedBucket
	errFunc ErrorFunc
	calls   []Call
	// lastVersion numbers the version IDs the store gives.
	lastVersion int
}

var _ objectstore.Interface = &Store{}

// New returns a store holding the given (empty) buckets.
func New(buckets ...string) *Store {
	s := &Store{buckets: map[string]*versionedBucket{}}
	for _, b := range buckets {
		s.buckets[b] = &versionedBucket{objects: map[string][]Version{}}
	}
	return s
}

// SetVersioning sets the versioning of an existing bucket to objectstore.VersioningEnabled or
// objectstore.VersioningSuspended, as PutBucketVersioning does; S3 can't make a bucket unversioned again.
func (s *Store) SetVersioning(bucket, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status != objectstore.VersioningEnabled && status != objectstore.VersioningSuspended {
		panic(fmt.Sprintf("versioning %q is neither Enabled nor Suspended", status))
	}
	s.buckets[bucket].versioning = status
}

// Versions returns every version and delete marker of bucket, keys in lexical order and newest first within a key.
func (s *Store) Versions(bucket string) []objectstore.ObjectVersion {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil
	}
	var out []objectstore.ObjectVersion
	for _, k := range slices.Sorted(maps.Keys(b.objects)) {
		for _, v := range b.objects[k] {
			out = append(out, objectstore.ObjectVersion{Key: k, VersionID: v.ID, Size: int64(len(v.Data)), DeleteMarker: v.DeleteMarker})
		}
	}
	return out
}

// newVersionID returns the ID of a new version: "null" unless versioning is enabled; the caller holds s.mu.
func (s *Store) newVersionID(b *versionedBucket) string {
	if b.versioning != objectstore.VersioningEnabled {
		return nullVersionID
	}
	s.lastVersion++
	return fmt.Sprintf("v%06d", s.lastVersion)
}

// addVersion makes v the newest version of key, replacing its null version unless versioning is enabled, as S3
// does; the caller holds s.mu.
func (s *Store) addVersion(b *versionedBucket, key string, v Version) {
	vs := b.objects[key]
	if v.ID == nullVersionID {
		vs = slices.DeleteFunc(vs, func(old Version) bool { return old.ID == nullVersionID })
	}
	b.objects[key] = append([]Version{v}, vs...)
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
		c.Versions = slices.Clone(c.Versions)
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
	b, ok := s.buckets[bucket]
	if !ok {
		return nil
	}
	return slices.Sorted(maps.Keys(b.current()))
}

// Object returns the data stored under key and whether it exists.
func (s *Store) Object(bucket, key string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.buckets[bucket]
	if !ok {
		return nil, false
	}
	data, ok := b.current()[key]
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
	s.buckets[bucket] = &versionedBucket{objects: map[string][]Version{}}
	return nil
}

// startListing records call, a listing, and returns its bucket, or why it fails: an injected error, ctx done, a
// limit that is not positive, or no such bucket. s.mu is held.
func (s *Store) startListing(ctx context.Context, call Call) (*versionedBucket, error) {
	if err := s.record(call); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if call.Limit <= 0 {
		return nil, fmt.Errorf("limit must be positive, got %d", call.Limit)
	}
	b, ok := s.buckets[call.Bucket]
	if !ok {
		return nil, NoSuchBucket(call.Bucket)
	}
	return b, nil
}

func (s *Store) ListObjects(ctx context.Context, bucket, prefix, startAfter string, limit int) (objectstore.ObjectList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (objectstore.ObjectList, error) {
		return objectstore.ObjectList{}, fmt.Errorf("can't list objects under %q in bucket %q: %w", prefix, bucket, err)
	}
	b, err := s.startListing(ctx, Call{Op: OpListObjects, Bucket: bucket, Key: prefix, StartAfter: startAfter, Limit: limit})
	if err != nil {
		return fail(err)
	}
	objects := b.current()
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
	b, ok := s.buckets[bucket]
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
		// A deletion without version ID frees nothing in a versioned bucket: it adds a delete marker (replacing
		// the null version when suspended), as S3 does, unless the newest version is a marker already.
		switch vs := b.objects[k]; {
		case b.versioning == "":
			delete(b.objects, k)
		case len(vs) == 0 || (vs[0].DeleteMarker && b.versioning == objectstore.VersioningEnabled):
		default:
			s.addVersion(b, k, Version{ID: s.newVersionID(b), DeleteMarker: true})
		}
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
	b, ok := s.buckets[bucket]
	if !ok {
		return fmt.Errorf("can't put object %q into bucket %q: %w", key, bucket, NoSuchBucket(bucket))
	}
	s.addVersion(b, key, Version{ID: s.newVersionID(b), Data: slices.Clone(data)})
	return nil
}

func (s *Store) GetBucketVersioning(ctx context.Context, bucket string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.record(Call{Op: OpGetBucketVersioning, Bucket: bucket}); err != nil {
		return "", fmt.Errorf("can't get the versioning of bucket %q: %w", bucket, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("can't get the versioning of bucket %q: %w", bucket, err)
	}
	b, ok := s.buckets[bucket]
	if !ok {
		return "", fmt.Errorf("can't get the versioning of bucket %q: %w", bucket, NoSuchBucket(bucket))
	}
	return b.versioning, nil
}

func (s *Store) ListObjectVersions(ctx context.Context, bucket, prefix, startAfter string, limit int) (objectstore.ObjectVersionList, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(err error) (objectstore.ObjectVersionList, error) {
		return objectstore.ObjectVersionList{}, fmt.Errorf("can't list object versions under %q in bucket %q: %w", prefix, bucket, err)
	}
	b, err := s.startListing(ctx, Call{Op: OpListObjectVersions, Bucket: bucket, Key: prefix, StartAfter: startAfter, Limit: limit})
	if err != nil {
		return fail(err)
	}
	var out objectstore.ObjectVersionList
	for _, k := range slices.Sorted(maps.Keys(b.objects)) {
		if !strings.HasPrefix(k, prefix) || k <= startAfter {
			continue
		}
		for _, v := range b.objects[k] {
			if len(out.Versions) == limit {
				out.More = true
				out.NextKey = k
				return out, nil
			}
			out.Versions = append(out.Versions, objectstore.ObjectVersion{Key: k, VersionID: v.ID, Size: int64(len(v.Data)), DeleteMarker: v.DeleteMarker})
		}
	}
	return out, nil
}

func (s *Store) DeleteObjectVersions(ctx context.Context, bucket string, versions []objectstore.ObjectVersion) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	failAll := func(err error) error {
		errs := make([]objectstore.KeyError, 0, len(versions))
		for _, v := range versions {
			errs = append(errs, objectstore.KeyError{Key: v.Key, VersionID: v.VersionID, Err: err})
		}
		return &objectstore.DeleteObjectsError{Bucket: bucket, Errors: errs}
	}
	if err := s.record(Call{Op: OpDeleteObjectVersions, Bucket: bucket, Versions: slices.Clone(versions)}); err != nil {
		return failAll(err)
	}
	if err := ctx.Err(); err != nil {
		return failAll(err)
	}
	b, ok := s.buckets[bucket]
	if !ok {
		return failAll(NoSuchBucket(bucket))
	}
	var failed []objectstore.KeyError
	for _, v := range versions {
		if v.VersionID == "" {
			return fmt.Errorf("can't delete versions from bucket %q: object %q has no version ID", bucket, v.Key)
		}
		if s.errFunc != nil {
			if err := s.errFunc(Call{Op: OpDeleteObjectVersions, Bucket: bucket, Key: v.Key, VersionID: v.VersionID}); err != nil {
				failed = append(failed, objectstore.KeyError{Key: v.Key, VersionID: v.VersionID, Err: err})
				continue
			}
		}
		vs := slices.DeleteFunc(b.objects[v.Key], func(old Version) bool { return old.ID == v.VersionID })
		if len(vs) == 0 {
			delete(b.objects, v.Key)
		} else {
			b.objects[v.Key] = vs
		}
	}
	if len(failed) > 0 {
		return &objectstore.DeleteObjectsError{Bucket: bucket, Errors: failed}
	}
	return nil
}
