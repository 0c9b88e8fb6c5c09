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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	waitForS3(t, cfg, p)
	return cfg
}

// restartWithVersioning stops the stack's versitygw and serves the same data, on the same port with the same keys
// and access log, with bucket versioning (kept in a directory of its own, which framework.StartS3Server does not
// give it), for the rest of the test. Clients configured before reach it unchanged.
func restartWithVersioning(t *testing.T, s3 *framework.S3Server) {
	t.Helper()
	if err := s3.Stop(); err != nil {
		t.Fatal(err)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	binary, err := framework.EnsureVersityGW(t.Context(), root, filepath.Join(s3.Dir, "build-versitygw.log"))
	if err != nil {
		t.Fatalf("can't build the S3 server: %v", err)
	}
	versions := filepath.Join(s3.Dir, "versions")
	if err := os.MkdirAll(versions, 0o755); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(s3.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p, err := framework.StartProcess(framework.ProcessSpec{
		Name: "versitygw-versioned",
		Path: binary,
		Args: []string{
			"--port", u.Host,
			"--region", framework.S3Region,
			"--access-log", s3.AccessLogPath,
			"--quiet",
			"posix", "--versioning-dir", versions, s3.DataDir,
		},
		Env:     []string{"ROOT_ACCESS_KEY_ID=" + s3.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s3.SecretKey},
		LogPath: s3.LogPath,
	})
	if err != nil {
		t.Fatalf("can't start the S3 server with versioning: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Stop(10 * time.Second); err != nil {
			t.Errorf("can't stop the S3 server: %v", err)
		}
	})
	waitForS3(t, s3.Config(), p)
	t.Logf("versitygw serves %s again, with bucket versioning (versions in %s)", s3.Endpoint, versions)
}

// waitForS3 waits until the S3 server of cfg, run by p, answers.
func waitForS3(t *testing.T, cfg objectstore.Config, p *framework.Process) {
	t.Helper()
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := store.BucketExists(t.Context(), "probe")
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the S3 server did not answer: %v\n%s", err, p.LogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// versionsClient returns a minio-go client of cfg, for the calls objectstore.Interface does not make.
func versionsClient(t *testing.T, cfg objectstore.Config) *minio.Client {
	t.Helper()
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	client, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""), Region: cfg.Region})
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// enableVersioning enables the versioning of bucketName and checks that the store says so.
func enableVersioning(t *testing.T, cfg objectstore.Config, bucketName string) {
	t.Helper()
	ctx := t.Context()
	if err := versionsClient(t, cfg).SetBucketVersioning(ctx, bucketName, minio.BucketVersioningConfiguration{Status: minio.Enabled}); err != nil {
		t.Fatalf("can't enable the versioning of bucket %q: %v", bucketName, err)
	}
	store, err := objectstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if versioned, err := objectstore.BucketVersioned(ctx, store, bucketName); err != nil || !versioned {
		t.Fatalf("want bucket %q versioned, got %v, %v", bucketName, versioned, err)
	}
}

// listAllVersions lists every version and delete marker of the bucket under prefix, through minio-go's own paging.
func listAllVersions(ctx context.Context, client *minio.Client, bucketName, prefix string) ([]objectstore.ObjectVersion, error) {
	var out []objectstore.ObjectVersion
	for obj := range client.ListObjectsIter(ctx, bucketName, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, WithVersions: true}) {
		if obj.Err != nil {
			return nil, obj.Err
		}
		out = append(out, objectstore.ObjectVersion{Key: obj.Key, VersionID: obj.VersionID, Size: obj.Size, DeleteMarker: obj.IsDeleteMarker})
	}
	// versitygw does not list delete markers in key order.
	slices.SortStableFunc(out, func(a, b objectstore.ObjectVersion) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

// splitVersions returns the versions under prefixes, and the others.
func splitVersions(versions []objectstore.ObjectVersion, prefixes []string) (in, out []objectstore.ObjectVersion) {
	for _, v := range versions {
		if slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(v.Key, p) }) {
			in = append(in, v)
		} else {
			out = append(out, v)
		}
	}
	return in, out
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
	client := versionsClient(t, cfg)
	const bucketName = "versioned-backups"
	if err := store.MakeBucket(ctx, bucketName, cfg.Region); err != nil {
		t.Fatal(err)
	}
	enableVersioning(t, cfg, bucketName)

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
	directory, others := splitVersions(before, prefixes)
	if want := 3*len(doomedKeys) + len(doomedKeys)/5; len(directory) != want {
		t.Fatalf("the directory holds %d versions and markers, want %d", len(directory), want)
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

// TestManagerControllerPurgesEveryVersionOfAVersionedBucket: the scenario's bucket has S3 versioning enabled before
// the clusters back up into it; every key of both directories then gets two more versions, and every third a
// delete marker. Once one cluster is deleted, its entry inventories every version that holds data, noncurrent ones
// included, and after the grace period the manager-controller purges the directory: no version and no delete
// marker of it is left, and every version of the other directory is as it was.
func TestManagerControllerPurgesEveryVersionOfAVersionedBucket(t *testing.T) {
	sc := newScenarioWith(t, scenarioOptions{versioned: true}, "e2e-versioned", "doomed", "survivor")
	ctx := t.Context()
	s, scylla, ns := sc.s, sc.scylla, sc.ns
	doomed, survivor := sc.clusters["doomed"], sc.clusters["survivor"]
	client := versionsClient(t, s.s3.Config())

	keys := append(slices.Clone(doomed.keys), survivor.keys...)
	for range 2 {
		uploadKeys(t, sc.store, sc.bucketName, keys)
	}
	var deleted []string
	for i, k := range keys {
		if i%3 == 0 {
			deleted = append(deleted, k)
		}
	}
	if err := sc.store.DeleteObjects(ctx, sc.bucketName, deleted); err != nil {
		t.Fatal(err)
	}
	prefixes, err := objectstore.ClusterPrefixes(doomed.clusterID)
	if err != nil {
		t.Fatal(err)
	}
	before, err := listAllVersions(ctx, client, sc.bucketName, "")
	if err != nil {
		t.Fatal(err)
	}
	directory, others := splitVersions(before, prefixes)
	var objects, bytes, markers int64
	for _, v := range directory {
		if v.DeleteMarker {
			markers++
			continue
		}
		objects++
		bytes += v.Size
	}
	if objects != 3*int64(len(doomed.keys)) || markers == 0 {
		t.Fatalf("the doomed directory holds %d versions and %d delete markers, want %d versions and some markers", objects, markers, 3*len(doomed.keys))
	}
	t.Logf("the doomed directory holds %d versions (%d bytes) and %d delete markers of %d keys; %d other versions", objects, bytes, markers, len(doomed.keys), len(others))

	deletedAt := time.Now()
	if err := scylla.ScyllaV1().ScyllaClusters(ns).Delete(ctx, doomed.name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("can't delete ScyllaCluster %q: %v", doomed.name, err)
	}
	purgeAfter := sc.waitForHeld(doomed, deletedAt)
	sc.waitForInventory(doomed, objects, bytes)
	sc.waitForEntryGone(doomed.entry, time.Until(purgeAfter)+purgeTimeout, fmt.Sprintf("ScyllaDBBackupEntry %q to purge every version of its directory and be gone", doomed.entry))

	after, err := listAllVersions(ctx, client, sc.bucketName, "")
	if err != nil {
		t.Fatal(err)
	}
	left, afterOthers := splitVersions(after, prefixes)
	if len(left) != 0 {
		t.Errorf("%d versions and delete markers of the purged directory remain, for example %+v", len(left), left[:min(5, len(left))])
	}
	if diff := cmp.Diff(others, afterOthers); diff != "" {
		t.Errorf("after the purge, the other versions are not as they were (-before +now):\n%s", diff)
	}
	s.waitFor(stepTimeout, "the DirectoryPurged event to count every version", func(ctx context.Context) (bool, error) {
		events, err := sc.c.Clients.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		want := fmt.Sprintf("Purged %d objects", objects)
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool {
			return e.InvolvedObject.Name == doomed.entry && e.Reason == "DirectoryPurged" && strings.HasPrefix(e.Message, want)
		}) {
			return false, fmt.Errorf("no DirectoryPurged event of %q saying %q", doomed.entry, want)
		}
		return true, nil
	})
	requests, err := s.s3.Requests()
	if err != nil {
		t.Fatal(err)
	}
	operations := map[string]int{}
	for _, r := range requests {
		if r.Bucket == sc.bucketName {
			operations[r.Operation]++
		}
	}
	t.Logf("versitygw served, for the bucket: %v", operations)
	// The test asked the versioning once; the inventory and the purge once each, not per batch or sync. The test
	// sent one DeleteObjects (the delete markers), the purge one (every version of the directory).
	if got := operations["s3_GetBucketVersioning"]; got != 3 {
		t.Errorf("versitygw answered GetBucketVersioning %d times, want 3: the test's, the inventory's and the purge's", got)
	}
	if got := operations["s3_DeleteObjects"]; got != 2 {
		t.Errorf("versitygw served %d DeleteObjects, want 2: the test's and the purge's one batch", got)
	}
}
