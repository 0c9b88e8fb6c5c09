//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

const (
	s3TestBucket = "shared-backups"
	s3ClusterA   = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7c"
	s3ClusterB   = "7b3c1a52-9d4e-4f6a-8b1c-2d3e4f5a6b7d" // shares all but the last character with A
)

// s3ManagerKeys is a small directory laid out as ScyllaDB Manager lays out a cluster's backup.
func s3ManagerKeys(id string) []string {
	const tag = "sm_20260101000000UTC"
	task := "0d9c6c2e-2b51-4a5e-9a43-4a0f6f1c2e11"
	var keys []string
	for _, host := range []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"} {
		node := "dc/dc1/node/" + host + "/"
		keys = append(keys,
			"backup/meta/cluster/"+id+"/"+node+"task_"+task+"_tag_"+tag+"_manifest.json.gz",
			"backup/sst/cluster/"+id+"/"+node+"keyspace/ks/table/t/5f0b1c7e0b4a11ef8e1a000000000001/me-3gq1_0abc_1-big-Data.db",
			"backup/sst/cluster/"+id+"/"+node+"keyspace/ks/table/t/5f0b1c7e0b4a11ef8e1a000000000001/me-3gq1_0abc_1-big-TOC.txt",
		)
	}
	return append(keys, "backup/schema/cluster/"+id+"/task_"+task+"_tag_"+tag+"_schema.tar.gz")
}

// s3OtherKeys belong to neither cluster's directory, however close they look.
var s3OtherKeys = []string{
	".permission-check/cluster/" + s3ClusterA + "/probe",
	"backup/sst/cluster/" + s3ClusterA + "0/x",
	"backup/sst/cluster/" + strings.ToUpper(s3ClusterA) + "/x",
	"backup/sst/cluster/" + s3ClusterA + ".old/x",
	"notes.txt",
}

func startTestS3Server(t *testing.T) *S3Server {
	t.Helper()
	ctx := t.Context()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start := time.Now()
	binary, err := EnsureVersityGW(ctx, root, filepath.Join(dir, "build-versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("versitygw ready in %s: %s", time.Since(start).Round(time.Millisecond), binary)
	s, err := StartS3Server(ctx, binary, filepath.Join(dir, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("can't stop versitygw: %v", err)
		}
	})
	return s
}

// listAll lists every key under prefix in pages of limit.
func listAll(ctx context.Context, store objectstore.Interface, prefix string, limit int) ([]string, error) {
	var keys []string
	startAfter := ""
	for {
		page, err := store.ListObjects(ctx, s3TestBucket, prefix, startAfter, limit)
		if err != nil {
			return nil, err
		}
		if len(page.Objects) > limit {
			return nil, fmt.Errorf("page of %d objects exceeds the limit %d", len(page.Objects), limit)
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
			startAfter = o.Key
		}
		if !page.More {
			return keys, nil
		}
	}
}

func TestS3ServerRoundTripAndClusterDirectories(t *testing.T) {
	s := startTestS3Server(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	store, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}

	if ok, err := store.BucketExists(ctx, s3TestBucket); err != nil || ok {
		t.Fatalf("want no bucket yet, got %v, %v", ok, err)
	}
	if err := s.CreateBucket(ctx, s3TestBucket); err != nil {
		t.Fatal(err)
	}
	if ok, err := store.BucketExists(ctx, s3TestBucket); err != nil || !ok {
		t.Fatalf("want the bucket to exist, got %v, %v", ok, err)
	}

	all := slices.Concat(s3ManagerKeys(s3ClusterA), s3ManagerKeys(s3ClusterB), s3OtherKeys)
	slices.Sort(all)
	for _, k := range all {
		if err := store.PutObject(ctx, s3TestBucket, k, []byte("content of "+k)); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("listing pages through every key in order", func(t *testing.T) {
		for _, limit := range []int{1, 2, 5, 1000} {
			got, err := listAll(ctx, store, "", limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all, got); diff != "" {
				t.Errorf("listing in pages of %d differs (-want +got):\n%s", limit, diff)
			}
		}
		page, err := store.ListObjects(ctx, s3TestBucket, "backup/schema/", "", 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Objects) != 2 || page.More {
			t.Errorf("want exactly the 2 schema objects and no more, got %+v", page)
		}
		want := int64(len("content of " + page.Objects[0].Key))
		if page.Objects[0].Size != want {
			t.Errorf("want size %d, got %d", want, page.Objects[0].Size)
		}
	})

	t.Run("the safety rules agree with real listings", func(t *testing.T) {
		prefixes, err := objectstore.ClusterPrefixes(s3ClusterA)
		if err != nil {
			t.Fatal(err)
		}
		var underPrefixes []string
		for _, p := range prefixes {
			keys, err := listAll(ctx, store, p, 1000)
			if err != nil {
				t.Fatal(err)
			}
			underPrefixes = append(underPrefixes, keys...)
		}
		want := slices.Clone(s3ManagerKeys(s3ClusterA))
		slices.Sort(want)
		if diff := cmp.Diff(want, underPrefixes); diff != "" {
			t.Errorf("keys under the prefixes of cluster A differ (-want +got):\n%s", diff)
		}
		for _, k := range all {
			wantA := slices.Contains(s3ManagerKeys(s3ClusterA), k)
			if got := objectstore.IsClusterKey(s3ClusterA, k); got != wantA {
				t.Errorf("IsClusterKey(A, %q) = %v, want %v", k, got, wantA)
			}
		}
	})

	t.Run("purge removes exactly one cluster's directory", func(t *testing.T) {
		before, err := listAll(ctx, store, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		cursor, deleted, batches := "", 0, 0
		for {
			r, err := objectstore.PurgeBatch(ctx, store, s3TestBucket, s3ClusterA, cursor, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Skipped) > 0 {
				t.Errorf("want nothing skipped, got %q", r.Skipped)
			}
			deleted += r.Deleted
			cursor = r.Cursor
			batches++
			if r.Done {
				break
			}
			if batches > 20 {
				t.Fatal("purge did not finish")
			}
		}
		after, err := listAll(ctx, store, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.DeleteFunc(slices.Clone(before), func(k string) bool { return slices.Contains(s3ManagerKeys(s3ClusterA), k) })
		if diff := cmp.Diff(want, after); diff != "" {
			t.Errorf("keys left after the purge differ (-want +got):\n%s", diff)
		}
		if deleted != len(s3ManagerKeys(s3ClusterA)) {
			t.Errorf("want %d objects deleted, got %d", len(s3ManagerKeys(s3ClusterA)), deleted)
		}
		r, err := objectstore.PurgeBatch(ctx, store, s3TestBucket, s3ClusterA, "", 3)
		if err != nil || !r.Done || r.Deleted != 0 {
			t.Errorf("want a second purge to find nothing, got %+v, %v", r, err)
		}
	})

	t.Run("the store resolves dot-dot segments, which IsClusterKey refuses", func(t *testing.T) {
		victim := "backup/sst/cluster/" + s3ClusterB + "/victim"
		trick := "backup/sst/cluster/" + s3ClusterA + "/../" + s3ClusterB + "/victim"
		if objectstore.IsClusterKey(s3ClusterA, trick) {
			t.Fatalf("IsClusterKey(A, %q) must be false", trick)
		}
		if err := store.PutObject(ctx, s3TestBucket, victim, []byte("v")); err != nil {
			t.Fatal(err)
		}
		// What the safety rule protects against: a key under A's prefix that the store takes for one of B's.
		if err := store.DeleteObjects(ctx, s3TestBucket, []string{trick}); err != nil {
			t.Fatal(err)
		}
		keys, err := listAll(ctx, store, "backup/sst/cluster/"+s3ClusterB+"/", 1000)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after deleting %q, cluster B's %q is still there: %v", trick, victim, slices.Contains(keys, victim))
		if err := store.DeleteObjects(ctx, s3TestBucket, []string{victim}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("deleting missing keys succeeds", func(t *testing.T) {
		if err := store.DeleteObjects(ctx, s3TestBucket, []string{"missing/1", "missing/2"}); err != nil {
			t.Errorf("want deleting missing keys to succeed, got %v", err)
		}
	})

	t.Run("wrong credentials are an auth error without the secret", func(t *testing.T) {
		cfg := s.Config()
		cfg.SecretAccessKey = "wrong-secret-never-shown"
		bad, err := objectstore.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, err = bad.ListObjects(ctx, s3TestBucket, "backup/", "", 10)
		if !objectstore.IsAuthError(err) {
			t.Errorf("want an auth error, got code %q: %v", objectstore.ErrorCode(err), err)
		}
		if err != nil && (strings.Contains(err.Error(), cfg.SecretAccessKey) || strings.Contains(err.Error(), s.SecretKey)) {
			t.Errorf("error reveals a secret: %v", err)
		}
	})

	t.Run("a stopped server fails calls and comes back with its data", func(t *testing.T) {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
		callCtx, callCancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := store.ListObjects(callCtx, s3TestBucket, "", "", 10)
		callCancel()
		if err == nil {
			t.Fatal("want an error while the server is stopped")
		}
		if !strings.Contains(err.Error(), s3TestBucket) {
			t.Errorf("want the error to name the bucket, got %v", err)
		}
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		keys, err := listAll(ctx, store, "backup/", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(keys, s3ManagerKeys(s3ClusterB)[0]) {
			t.Errorf("want cluster B's keys back after a restart, got %q", keys)
		}
	})

	t.Run("the access log records the requests", func(t *testing.T) {
		var reqs []S3Request
		// The access log is written asynchronously.
		err := WaitFor(ctx, 10*time.Second, func(context.Context) (bool, error) {
			var err error
			reqs, err = s.Requests()
			if err != nil {
				return false, err
			}
			return slices.ContainsFunc(reqs, func(r S3Request) bool { return r.Operation == "s3_DeleteObjects" }), nil
		})
		if err != nil {
			t.Fatalf("want s3_DeleteObjects in the access log: %v; got %+v", err, reqs)
		}
		puts := 0
		for _, r := range reqs {
			if r.Operation == "s3_PutObject" && r.Bucket == s3TestBucket && slices.Contains(all, r.Key) {
				puts++
			}
		}
		if puts != len(all) {
			t.Errorf("want %d logged uploads, got %d", len(all), puts)
		}
	})
}

func TestParseS3AccessLogLine(t *testing.T) {
	line := `- shared-backups [24/November/2026:17:45:52 +0000] 127.0.0.1 - D8J5RCJTG8I6ZGC7 s3_PutObject backup/sst/x /shared-backups/backup/sst/x 200 - 0 0 0 0 - minio-go - x SigV4 - AuthHeader h - arn Yes`
	got, ok := parseS3AccessLogLine(line)
	want := S3Request{Operation: "s3_PutObject", Bucket: "shared-backups", Key: "backup/sst/x", Status: 200}
	if !ok {
		t.Fatal("want the line parsed")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("request differs (-want +got):\n%s", diff)
	}
	if _, ok := parseS3AccessLogLine("log starts 2026-11-24"); ok {
		t.Error("want a non-request line refused")
	}
}

// TestFakeScyllaDBManagerUploadsBackupsToS3Server runs the fake ScyllaDB Manager's backup uploads against the real
// S3 server: two clusters back up into one bucket, each into its own directory, and purging one leaves the other.
func TestFakeScyllaDBManagerUploadsBackupsToS3Server(t *testing.T) {
	s := startTestS3Server(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	const bucket = "fake-manager-backups"
	if err := s.CreateBucket(ctx, bucket); err != nil {
		t.Fatal(err)
	}
	manager, err := fakescyllamanager.NewServer(fakescyllamanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := manager.SetS3Endpoint("s3:"+bucket, s.FakeManagerEndpoint()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(manager)
	defer srv.Close()

	do := func(method, path, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: status %d", method, path, resp.StatusCode)
		}
		return resp
	}
	var clusters []string
	for i, id := range []string{s3ClusterA, s3ClusterB} {
		do(http.MethodPost, "/api/v1/clusters", fmt.Sprintf(`{"id":%q,"name":"c%d","host":"10.0.0.1","auth_token":"t","without_repair":true}`, id, i))
		// No schedule: the task runs, and uploads, at once.
		do(http.MethodPost, "/api/v1/cluster/"+id+"/tasks", `{"type":"backup","enabled":true,"properties":{"location":["s3:`+bucket+`"]}}`)
		clusters = append(clusters, id)
	}

	store, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	listBucket := func() []string {
		t.Helper()
		page, err := store.ListObjects(ctx, bucket, "", "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		return keys
	}
	state := manager.State()
	for _, ts := range state.Tasks {
		for _, r := range ts.Runs {
			if r.Status != "DONE" {
				t.Errorf("task %s run %s: %s %s", ts.ID, r.ID, r.Status, r.Cause)
			}
		}
	}
	before := listBucket()
	if diff := cmp.Diff(state.UploadedKeys("", bucket), before); diff != "" {
		t.Fatalf("bucket differs from what the fake says it uploaded (-want +got):\n%s", diff)
	}
	for _, id := range clusters {
		n := 0
		for _, k := range before {
			if objectstore.IsClusterKey(id, k) {
				n++
			}
		}
		if n != 22 {
			t.Errorf("want 22 objects in the directory of cluster %s, got %d", id, n)
		}
	}

	cursor := ""
	for {
		r, err := objectstore.PurgeBatch(ctx, store, bucket, s3ClusterA, cursor, 10)
		if err != nil {
			t.Fatal(err)
		}
		cursor = r.Cursor
		if r.Done {
			break
		}
	}
	after := listBucket()
	if diff := cmp.Diff(state.UploadedKeys(s3ClusterB, bucket), after); diff != "" {
		t.Errorf("want exactly cluster B's backup left (-want +got):\n%s", diff)
	}
}
