// Package objectstore is the project's only access to object storage: a small Interface over the S3 calls the
// backup controllers, the fake ScyllaDB Manager and the e2e tests need, its implementation on minio-go, and the
// safety rules of shared backup buckets (ClusterPrefixes, IsClusterKey, PurgeBatch) as pure functions over it.
//
// Errors name the bucket and the key or prefix and wrap the store's error (ErrorCode reads its S3 code); they never
// contain credentials.
package objectstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Interface is an object store bucket API. Implementations are safe for concurrent use.
type Interface interface {
	// BucketExists reports whether bucket exists and is reachable with the store's credentials.
	BucketExists(ctx context.Context, bucket string) (bool, error)
	// MakeBucket creates bucket in region; an empty region means the store's default.
	MakeBucket(ctx context.Context, bucket, region string) error
	// ListObjects lists, in lexical order, at most limit objects whose key starts with prefix and sorts after
	// startAfter ("" lists from the start). More reports whether further objects remain after the last one listed;
	// a listing may hold fewer than limit objects with More set (one request returns at most 999 of the minio store).
	ListObjects(ctx context.Context, bucket, prefix, startAfter string, limit int) (ObjectList, error)
	// DeleteObjects deletes keys from bucket. Deleting a missing key succeeds, so a retry is harmless. When some
	// keys could not be deleted the error is a *DeleteObjectsError that names each of them.
	DeleteObjects(ctx context.Context, bucket string, keys []string) error
	// PutObject stores data under key in bucket.
	PutObject(ctx context.Context, bucket, key string, data []byte) error
	// GetBucketVersioning returns the versioning status of bucket: VersioningEnabled, VersioningSuspended, or ""
	// when versioning was never enabled on it.
	GetBucketVersioning(ctx context.Context, bucket string) (string, error)
	// ListObjectVersions lists at most limit versions and delete markers of the keys that start with prefix and
	// sort after startAfter (all versions of startAfter excluded; "" lists from the start): keys in lexical order,
	// the versions of a key newest first. More and NextKey say whether and under which key further versions remain;
	// like ListObjects, one request of the minio store returns at most 999.
	ListObjectVersions(ctx context.Context, bucket, prefix, startAfter string, limit int) (ObjectVersionList, error)
	// DeleteObjectVersions deletes the given versions and delete markers (Key and VersionID) for good. Deleting a
	// missing version succeeds. When some could not be deleted the error is a *DeleteObjectsError that names each of
	// them.
	DeleteObjectVersions(ctx context.Context, bucket string, versions []ObjectVersion) error
}

// Versioning states of a bucket, as S3's GetBucketVersioning says them.
const (
	VersioningEnabled   = "Enabled"
	VersioningSuspended = "Suspended"
)

// ObjectVersion is a listed version of a key, or a delete marker.
type ObjectVersion struct {
	Key       string
	VersionID string
	// Size is 0 for a delete marker.
	Size         int64
	DeleteMarker bool
}

// ObjectVersionList is one page of a version listing.
type ObjectVersionList struct {
	Versions []ObjectVersion
	// More reports whether versions remain after the last one of Versions; NextKey is then the key of the first of
	// them, which is the last key of Versions when the page ends within a key's versions.
	More    bool
	NextKey string
}

// Object is a listed object.
type Object struct {
	Key  string
	Size int64
}

// ObjectList is one page of a listing.
type ObjectList struct {
	Objects []Object
	// More reports whether objects remain after the last one of Objects.
	More bool
}

// KeyError is the failure to delete one key, or one version of it.
type KeyError struct {
	Key string
	// VersionID is the version that could not be deleted, empty for a deletion of the key.
	VersionID string
	Err       error
}

func (e KeyError) Error() string {
	if e.VersionID != "" {
		return fmt.Sprintf("can't delete version %q of object %q: %v", e.VersionID, e.Key, e.Err)
	}
	return fmt.Sprintf("can't delete object %q: %v", e.Key, e.Err)
}

func (e KeyError) Unwrap() error {
	return e.Err
}

// DeleteObjectsError aggregates the keys DeleteObjects could not delete; the others were deleted.
type DeleteObjectsError struct {
	Bucket string
	Errors []KeyError
}

func (e *DeleteObjectsError) Error() string {
	const shown = 3
	msgs := make([]string, 0, shown)
	for i, ke := range e.Errors {
		if i == shown {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(e.Errors)-shown))
			break
		}
		msgs = append(msgs, ke.Error())
	}
	return fmt.Sprintf("can't delete %d objects from bucket %q: %s", len(e.Errors), e.Bucket, strings.Join(msgs, "; "))
}

// Unwrap returns the per-key errors, so that errors.Is and ErrorCode see the store's errors.
func (e *DeleteObjectsError) Unwrap() []error {
	errs := make([]error, 0, len(e.Errors))
	for _, ke := range e.Errors {
		errs = append(errs, ke)
	}
	return errs
}

// FailedKeys returns the keys that were not deleted.
func (e *DeleteObjectsError) FailedKeys() []string {
	keys := make([]string, 0, len(e.Errors))
	for _, ke := range e.Errors {
		keys = append(keys, ke.Key)
	}
	return keys
}

// S3 error codes callers branch on.
const (
	ErrorCodeNoSuchBucket          = "NoSuchBucket"
	ErrorCodeAccessDenied          = "AccessDenied"
	ErrorCodeInvalidAccessKeyID    = "InvalidAccessKeyId"
	ErrorCodeSignatureDoesNotMatch = "SignatureDoesNotMatch"
	ErrorCodeBucketAlreadyOwned    = "BucketAlreadyOwnedByYou"
	ErrorCodeNotImplemented        = "NotImplemented"
)

// ErrorCode returns the S3 error code ("NoSuchBucket", "AccessDenied", ...) of the first store error err wraps,
// or "" when err carries none (a network error, a context deadline).
func ErrorCode(err error) string {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code
	}
	var respPtr *minio.ErrorResponse
	if errors.As(err, &respPtr) && respPtr != nil {
		return respPtr.Code
	}
	return ""
}

// IsAuthError reports whether err says the credentials were refused.
func IsAuthError(err error) bool {
	switch ErrorCode(err) {
	case ErrorCodeAccessDenied, ErrorCodeInvalidAccessKeyID, ErrorCodeSignatureDoesNotMatch:
		return true
	}
	return false
}
