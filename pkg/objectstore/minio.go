package objectstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// defaultAWSEndpoint is the endpoint used when Config.Endpoint is empty; minio-go turns it into the regional
// endpoint of the bucket.
const defaultAWSEndpoint = "s3.amazonaws.com"

// defaultMaxAttempts bounds minio-go's own retries: a controller's sync must not sleep long, and its queue backs
// off anyway.
const defaultMaxAttempts = 3

// Config says how to reach an object store.
type Config struct {
	// Endpoint is the URL of an S3-compatible store, such as "http://127.0.0.1:7070" or "https://minio.example:9000";
	// empty means AWS S3 in Region. Only the scheme, host and port are used: a path, query or user info is refused.
	Endpoint string
	// Region is the bucket region; empty lets the store say (AWS) or means its default.
	Region string
	// AccessKeyID and SecretAccessKey are static credentials. When both are empty, credentials come from the
	// environment as minio-go's chain finds them: AWS_* and MINIO_* variables, ~/.aws/credentials, then IAM (web
	// identity tokens, ECS and EC2 instance roles).
	AccessKeyID     string
	SecretAccessKey string
	// InsecureSkipVerify disables TLS certificate verification, for test stores with self-signed certificates.
	InsecureSkipVerify bool
	// MaxAttempts bounds the attempts of each request; zero means 3.
	MaxAttempts int
}

// String describes the configuration without its secret.
func (c Config) String() string {
	endpoint := c.Endpoint
	if endpoint == "" {
		endpoint = "AWS S3"
	}
	creds := "environment credentials"
	if c.AccessKeyID != "" {
		creds = "static credentials"
	}
	return fmt.Sprintf("%s (region %q, %s)", endpoint, c.Region, creds)
}

// endpoint returns the host[:port] and whether TLS is used.
func (c Config) endpoint() (string, bool, error) {
	if c.Endpoint == "" {
		return defaultAWSEndpoint, true, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		// url.Error repeats the input, which is not secret (user info is refused below).
		return "", false, fmt.Errorf("can't parse endpoint: %w", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", false, fmt.Errorf("endpoint %q must be an http or https URL", c.Endpoint)
	case u.Host == "":
		return "", false, fmt.Errorf("endpoint %q has no host", c.Endpoint)
	case u.User != nil:
		// Never echo user info: it may hold a secret.
		return "", false, errors.New("endpoint must not contain user info; use the access and secret keys")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "", false, fmt.Errorf("endpoint %q must not have a path, query or fragment", c.Endpoint)
	}
	return u.Host, u.Scheme == "https", nil
}

func (c Config) credentials() (*credentials.Credentials, error) {
	switch {
	case c.AccessKeyID != "" && c.SecretAccessKey != "":
		return credentials.NewStaticV4(c.AccessKeyID, c.SecretAccessKey, ""), nil
	case c.AccessKeyID != "" || c.SecretAccessKey != "":
		return nil, errors.New("access key ID and secret access key must be given together")
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.IAM{},
	}), nil
}

// minioStore is the Interface on minio-go.
type minioStore struct {
	client *minio.Client
}

var _ Interface = &minioStore{}

// New returns an Interface for the store cfg describes. It makes no request.
func New(cfg Config) (Interface, error) {
	host, secure, err := cfg.endpoint()
	if err != nil {
		return nil, fmt.Errorf("can't configure object store: %w", err)
	}
	creds, err := cfg.credentials()
	if err != nil {
		return nil, fmt.Errorf("can't configure object store %s: %w", host, err)
	}
	transport, err := minio.DefaultTransport(secure)
	if err != nil {
		return nil, fmt.Errorf("can't configure object store %s: %w", host, err)
	}
	if cfg.InsecureSkipVerify && transport.TLSClientConfig != nil {
		transport.TLSClientConfig.InsecureSkipVerify = true
	}
	maxAttempts := cfg.MaxAttempts
	if maxAttempts <= 0 {
		maxAttempts = defaultMaxAttempts
	}
	client, err := minio.New(host, &minio.Options{
		Creds:      creds,
		Secure:     secure,
		Transport:  transport,
		Region:     cfg.Region,
		MaxRetries: maxAttempts,
	})
	if err != nil {
		return nil, fmt.Errorf("can't configure object store %s: %w", host, err)
	}
	return &minioStore{client: client}, nil
}

func (s *minioStore) BucketExists(ctx context.Context, bucket string) (bool, error) {
	exists, err := s.client.BucketExists(ctx, bucket)
	if err != nil {
		return false, fmt.Errorf("can't check bucket %q: %w", bucket, err)
	}
	return exists, nil
}

func (s *minioStore) MakeBucket(ctx context.Context, bucket, region string) error {
	if err := s.client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{Region: region}); err != nil {
		return fmt.Errorf("can't create bucket %q in region %q: %w", bucket, region, err)
	}
	return nil
}

// maxListKeys is the most keys an S3 listing request returns.
const maxListKeys = 1000

func (s *minioStore) ListObjects(ctx context.Context, bucket, prefix, startAfter string, limit int) (ObjectList, error) {
	if limit <= 0 {
		return ObjectList{}, fmt.Errorf("can't list objects under %q in bucket %q: limit must be positive, got %d", prefix, bucket, limit)
	}
	// One more key than returned tells whether more remain. A request returns at most maxListKeys: asking for as
	// many, minio-go would fetch a second page for that one key, doubling the requests of a full batch; returning one
	// key less keeps each listing one request.
	limit = min(limit, maxListKeys-1)
	// Stopping the iteration or cancelling ctx ends the listing; this context ends what minio-go started.
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var out ObjectList
	for obj := range s.client.ListObjectsIter(listCtx, bucket, minio.ListObjectsOptions{
		Prefix:     prefix,
		StartAfter: startAfter,
		Recursive:  true,
		MaxKeys:    limit + 1,
	}) {
		if obj.Err != nil {
			return ObjectList{}, fmt.Errorf("can't list objects under %q in bucket %q: %w", prefix, bucket, obj.Err)
		}
		if len(out.Objects) == limit {
			out.More = true
			break
		}
		out.Objects = append(out.Objects, Object{Key: obj.Key, Size: obj.Size})
	}
	// minio-go's iterator ends silently when the context is cancelled: an incomplete listing must not pass as
	// complete.
	if err := ctx.Err(); err != nil {
		return ObjectList{}, fmt.Errorf("can't list objects under %q in bucket %q: %w", prefix, bucket, err)
	}
	return out, nil
}

func (s *minioStore) DeleteObjects(ctx context.Context, bucket string, keys []string) error {
	versions := make([]ObjectVersion, 0, len(keys))
	for _, k := range keys {
		versions = append(versions, ObjectVersion{Key: k})
	}
	return s.removeObjects(ctx, bucket, versions)
}

func (s *minioStore) DeleteObjectVersions(ctx context.Context, bucket string, versions []ObjectVersion) error {
	for _, v := range versions {
		if v.VersionID == "" {
			// Without a version ID a versioned bucket would add a delete marker instead of freeing anything.
			return fmt.Errorf("can't delete versions from bucket %q: object %q has no version ID", bucket, v.Key)
		}
	}
	return s.removeObjects(ctx, bucket, versions)
}

// versionRef identifies one deletion of a DeleteObjects request.
type versionRef struct {
	key, versionID string
}

// removeObjects deletes versions (or keys, when VersionID is empty) with DeleteObjects requests of up to 1000.
func (s *minioStore) removeObjects(ctx context.Context, bucket string, versions []ObjectVersion) error {
	if len(versions) == 0 {
		return nil
	}
	objects := make(chan minio.ObjectInfo)
	go func() {
		defer close(objects)
		for _, v := range versions {
			select {
			case objects <- minio.ObjectInfo{Key: v.Key, VersionID: v.VersionID}:
			case <-ctx.Done():
				return
			}
		}
	}()
	requested := make(map[versionRef]bool, len(versions))
	for _, v := range versions {
		requested[versionRef{v.Key, v.VersionID}] = true
	}
	var failed []KeyError
	var other []error
	for res := range s.client.RemoveObjectsWithResult(ctx, bucket, objects, minio.RemoveObjectsOptions{}) {
		ref := versionRef{res.ObjectName, res.ObjectVersionID}
		switch {
		case res.Err == nil:
			delete(requested, ref)
		case res.ObjectName == "":
			other = append(other, res.Err)
		default:
			failed = append(failed, KeyError{Key: res.ObjectName, VersionID: res.ObjectVersionID, Err: res.Err})
			delete(requested, ref)
		}
	}
	// Keys without any result (an undecodable response, a cancelled context) were not confirmed deleted.
	cause := errors.Join(append(other, ctx.Err())...)
	if cause == nil && len(requested) > 0 {
		cause = errors.New("no result from the store")
	}
	for _, v := range versions {
		if requested[versionRef{v.Key, v.VersionID}] {
			failed = append(failed, KeyError{Key: v.Key, VersionID: v.VersionID, Err: cause})
		}
	}
	if len(failed) > 0 {
		return &DeleteObjectsError{Bucket: bucket, Errors: failed}
	}
	return nil
}

func (s *minioStore) GetBucketVersioning(ctx context.Context, bucket string) (string, error) {
	cfg, err := s.client.GetBucketVersioning(ctx, bucket)
	if err != nil {
		return "", fmt.Errorf("can't get the versioning of bucket %q: %w", bucket, err)
	}
	return cfg.Status, nil
}

func (s *minioStore) ListObjectVersions(ctx context.Context, bucket, prefix, startAfter string, limit int) (ObjectVersionList, error) {
	fail := func(err error) (ObjectVersionList, error) {
		return ObjectVersionList{}, fmt.Errorf("can't list object versions under %q in bucket %q: %w", prefix, bucket, err)
	}
	if limit <= 0 {
		return fail(fmt.Errorf("limit must be positive, got %d", limit))
	}
	// As in ListObjects: one version more than returned, in one request of at most maxListKeys, tells whether more
	// remain, and under which key. StartAfter is the request's key-marker.
	limit = min(limit, maxListKeys-1)
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var versions []ObjectVersion
	for obj := range s.client.ListObjectsIter(listCtx, bucket, minio.ListObjectsOptions{
		Prefix:       prefix,
		StartAfter:   startAfter,
		Recursive:    true,
		WithVersions: true,
		MaxKeys:      limit + 1,
	}) {
		if obj.Err != nil {
			return fail(obj.Err)
		}
		versions = append(versions, ObjectVersion{Key: obj.Key, VersionID: obj.VersionID, Size: obj.Size, DeleteMarker: obj.IsDeleteMarker})
		if len(versions) == limit+1 {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	// S3 lists keys in lexical order, but some stores (versitygw) put a page's delete markers before its versions:
	// the page is put in key order, each key's versions kept in the order listed, before the one past the limit is
	// set apart.
	slices.SortStableFunc(versions, func(a, b ObjectVersion) int { return strings.Compare(a.Key, b.Key) })
	out := ObjectVersionList{Versions: versions}
	if len(versions) > limit {
		out = ObjectVersionList{Versions: versions[:limit], More: true, NextKey: versions[limit].Key}
	}
	return out, nil
}

func (s *minioStore) PutObject(ctx context.Context, bucket, key string, data []byte) error {
	_, err := s.client.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
		ContentType: contentType(key),
	})
	if err != nil {
		return fmt.Errorf("can't put object %q into bucket %q: %w", key, bucket, err)
	}
	return nil
}

func contentType(key string) string {
	switch {
	case strings.HasSuffix(key, ".json"):
		return "application/json"
	case strings.HasSuffix(key, ".gz"):
		return "application/gzip"
	}
	return "application/octet-stream"
}
