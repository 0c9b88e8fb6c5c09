//go:build e2e

package backups

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

// startVersionedS3Server runs versitygw with bucket versioning (its POSIX backend keeps versions in a directory of
// their own, which framework.StartS3Server does not give it) on a free loopback port, for the rest of the test.
func startVersionedS3Server(t *testing.T) objectstore.Config {
	t.Helper()
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	binary, err := framework.EnsureVersityGW(t.Context(), root, filepath.Join(dir, "build-versitygw.log"))
	if err != nil {
		t.Fatalf("can't build the S3 server: %v", err)
	}
	for _, d := range []string{"data", "versions"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	cfg := objectstore.Config{
		Endpoint:        "http://127.0.0.1:" + strconv.Itoa(port),
		Region:          framework.S3Region,
		AccessKeyID:     "VERSIONEDROOTKEY0001",
		SecretAccessKey: fmt.Sprintf("versioned-root-secret-%d", time.Now().UnixNano()),
	}
	p, err := framework.StartProcess(framework.ProcessSpec{
		Name: "versitygw-versioned",
		Path: binary,
		Args: []string{
			"--port", "127.0.0.1:" + strconv.Itoa(port),
			"--region", framework.S3Region,
			"--quiet",
			"posix", "--versioning-dir", filepath.Join(dir, "versions"), filepath.Join(dir, "data"),
		},
		Env:     []string{"ROOT_ACCESS_KEY_ID=" + cfg.AccessKeyID, "ROOT_SECRET_ACCESS_KEY=" + cfg.SecretAccessKey},
		LogPath: filepath.Join(dir, "versitygw.log"),
	})
	if err != nil {
		t.Fatalf("can't start the S3 server: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("can't stop the S3 server: %v", err)
		}
	})
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := store.BucketExists(t.Context(), "probe")
		if err == nil {
			return cfg
		}
		if time.Now().After(deadline) {
			t.Fatalf("the S3 server did not answer: %v\n%s", err, p.LogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// listAllVersions lists every version and delete marker of the bucket under prefix, through minio-go's own paging.
func listAllVersions(ctx context.Context, client *minio.Client, bucketName, prefix string) ([]string, error) {
	var out []string
	for obj := range client.ListObjectsIter(ctx, bucketName, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithVersions: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		out = append(out, fmt.Sprintf("%s@%s marker=%t", obj.Key, obj.VersionID, obj.IsDeleteMarker))
	}
	return out, nil
}

// TestPurgeOfAVersionedBucketLeavesNoVersionBehind: in a bucket of a real S3 server with versioning enabled, a
// deleted cluster's directory holds several versions of each key and delete markers, more than a batch of 999 in
// all, next to another cluster's directory and keys just outside the directory. Purged in the manager-controller's
// batches, the directory keeps no version and no delete marker, and every other version is as it was.
func TestPurgeOfAVersionedBucketLeavesNoVersionBehind(t *testing.T) {
	ctx := t.Context()
	cfg := startVersionedS3Server(t)
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(cfg.Endpoint)
	client, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""), Region: cfg.Region})
	if err != nil {
		t.Fatal(err)
	}
	const bucketName = "versioned-backups"
	if err := store.MakeBucket(ctx, bucketName, cfg.Region); err != nil {
		t.Fatal(err)
	}
	if err := client.SetBucketVersioning(ctx, bucketName, minio.BucketVersioningConfiguration{Status: minio.Enabled}); err != nil {
		t.Fatalf("can't enable versioning: %v", err)
	}
	if versioned, err := objectstore.BucketVersioned(ctx, store, bucketName); err != nil || !versioned {
		t.Fatalf("want the bucket versioned, got %v, %v", versioned, err)
	}

	const doomed = "3f6e2a1b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"
	const survivor = "3f6e2a1b-4c5d-4e6f-8a9b-0c1d2e3f4a5c"
	var doomedKeys, otherKeys []string
	for i := range 400 {
		kind := []string{"meta", "schema", "sst", "sst"}[i%4]
		doomedKeys = append(doomedKeys, fmt.Sprintf("backup/%s/cluster/%s/dc/dc1/node/n1/object-%04d", kind, doomed, i))
	}
	for i := range 20 {
		otherKeys = append(otherKeys, fmt.Sprintf("backup/sst/cluster/%s/dc/dc1/node/n1/object-%04d", survivor, i))
	}
	otherKeys = append(otherKeys,
		"backup/sst/cluster/"+doomed+"x/object-0000",
		"backup/task/cluster/"+doomed+"/task.json",
	)
	// Three versions of every key, then a delete marker on every fifth: 1200 versions and 80 markers to purge.
	for range 3 {
		uploadKeys(t, store, bucketName, append(slices.Clone(doomedKeys), otherKeys...))
	}
	var deleted []string
	for i, k := range append(slices.Clone(doomedKeys), otherKeys...) {
		if i%5 == 0 {
			deleted = append(deleted, k)
		}
	}
	if err := store.DeleteObjects(ctx, bucketName, deleted); err != nil {
		t.Fatal(err)
	}
	before, err := listAllVersions(ctx, client, bucketName, "")
	if err != nil {
		t.Fatal(err)
	}
	prefixes, err := objectstore.ClusterPrefixes(doomed)
	if err != nil {
		t.Fatal(err)
	}
	var others []string
	directory := 0
	for _, v := range before {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(v, p) }) {
			directory++
		} else {
			others = append(others, v)
		}
	}
	if want := 3*len(doomedKeys) + len(doomedKeys)/5; directory != want {
		t.Fatalf("the directory holds %d versions and markers, want %d", directory, want)
	}

	cursor := ""
	var deletedVersions, markers, batches int
	for {
		r, err := objectstore.PurgeBatch(ctx, store, bucketName, doomed, cursor, purgeBatch)
		if err != nil {
			t.Fatalf("batch %d: %v", batches, err)
		}
		batches++
		deletedVersions += r.Deleted
		markers += r.DeletedMarkers
		cursor = r.Cursor
		if r.Done {
			break
		}
		if batches > 10 {
			t.Fatal("the purge did not finish in 10 batches")
		}
	}
	t.Logf("purged %d versions and %d delete markers in %d batches", deletedVersions, markers, batches)
	if deletedVersions != 3*len(doomedKeys) || markers != len(doomedKeys)/5 {
		t.Errorf("purged %d versions and %d markers, want %d and %d", deletedVersions, markers, 3*len(doomedKeys), len(doomedKeys)/5)
	}
	after, err := listAllVersions(ctx, client, bucketName, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(others, after); diff != "" {
		t.Errorf("after the purge, the bucket's versions are not exactly the others' (-before +now):\n%s", diff)
	}
}
