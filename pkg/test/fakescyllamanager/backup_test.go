package fakescyllamanager

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
)

const testS3Secret = "s3-secret-never-shown"

// uploadHarness is a harness whose backup uploads go to in-memory buckets.
type uploadHarness struct {
	*harness
	store *objectstorefake.Store

	mu      sync.Mutex
	configs []objectstore.Config
}

func newUploadHarness(t *testing.T, opts Options, buckets ...string) *uploadHarness {
	t.Helper()
	u := &uploadHarness{store: objectstorefake.New(buckets...)}
	opts.NewObjectStore = func(cfg objectstore.Config) (objectstore.Interface, error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.configs = append(u.configs, cfg)
		return u.store, nil
	}
	u.harness = newHarness(t, opts)
	return u
}

func testEndpoint() S3Endpoint {
	return S3Endpoint{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", AccessKeyID: "AKID", SecretAccessKey: testS3Secret}
}

// backupTask creates a scheduled (not yet run) backup task with the given properties and returns its ID.
func (h *harness) backupTask(clusterID, props string) string {
	h.t.Helper()
	return h.createTask(clusterID, `{"type":"backup","name":"b`+newUUID()[:8]+`","enabled":true,"schedule":{"cron":"0 2 * * *"},"properties":`+props+`}`)
}

func (h *harness) startTask(clusterID, taskType, taskID string) {
	h.t.Helper()
	h.do(http.MethodPut, "/api/v1/cluster/"+clusterID+"/task/"+taskType+"/"+taskID+"/start", nil).expectStatus(h.t, http.StatusOK)
}

// lastRun returns the newest run of a task in the fake's state.
func lastRun(t *testing.T, s *Server, taskID string) RunState {
	t.Helper()
	for _, ts := range s.State().Tasks {
		if ts.ID == taskID {
			if len(ts.Runs) == 0 {
				t.Fatalf("task %s has no runs", taskID)
			}
			return ts.Runs[0]
		}
	}
	t.Fatalf("no task %s", taskID)
	return RunState{}
}

var (
	metaKey   = regexp.MustCompile(`^backup/meta/cluster/([0-9a-f-]{36})/dc/([^/]+)/node/([0-9a-f-]{36})/task_([0-9a-f-]{36})_tag_(sm_\d{14}UTC)_manifest\.json\.gz$`)
	sstKey    = regexp.MustCompile(`^backup/sst/cluster/([0-9a-f-]{36})/dc/([^/]+)/node/([0-9a-f-]{36})/keyspace/([^/]+)/table/([^/]+)/([0-9a-f]{32})/me-\d+-big-(Data\.db|TOC\.txt)$`)
	schemaKey = regexp.MustCompile(`^backup/schema/cluster/([0-9a-f-]{36})/task_([0-9a-f-]{36})_tag_(sm_\d{14}UTC)_schema\.tar\.gz$`)
)

func TestStartedBackupUploadsAManagerLikeBackup(t *testing.T) {
	t.Parallel()
	h := newUploadHarness(t, Options{}, "bkt")
	mustNot(t, h.srv.SetS3Endpoint("s3:bkt", testEndpoint()))
	cid := h.newCluster()
	tid := h.backupTask(cid, `{"location":["s3:bkt"]}`)
	if keys := h.store.Keys("bkt"); len(keys) != 0 {
		t.Fatalf("want nothing uploaded before the task runs, got %q", keys)
	}
	h.startTask(cid, "backup", tid)

	keys := h.store.Keys("bkt")
	// The default topology: one datacenter of 3 nodes, 3 keyspaces of one table, 2 files per table, a manifest
	// per node, one schema.
	if want := 3*(3*2+1) + 1; len(keys) != want {
		t.Fatalf("want %d objects, got %d: %q", want, len(keys), keys)
	}
	hosts := map[string]bool{}
	var meta, sst, schema int
	for _, k := range keys {
		if !objectstore.IsClusterKey(cid, k) {
			t.Errorf("key %q is outside the directory of cluster %s", k, cid)
		}
		switch {
		case metaKey.MatchString(k):
			m := metaKey.FindStringSubmatch(k)
			if m[1] != cid || m[2] != "dc1" || m[4] != tid {
				t.Errorf("manifest %q names the wrong cluster, datacenter or task", k)
			}
			hosts[m[3]] = true
			meta++
			checkManifest(t, h.store, k, cid, tid)
		case sstKey.MatchString(k):
			sst++
		case schemaKey.MatchString(k):
			schema++
			checkSchemaArchive(t, h.store, k)
		default:
			t.Errorf("key %q is not laid out as ScyllaDB Manager lays out backups", k)
		}
	}
	if meta != 3 || sst != 18 || schema != 1 || len(hosts) != 3 {
		t.Errorf("want 3 manifests of 3 hosts, 18 sstable files and 1 schema; got %d of %d, %d and %d", meta, len(hosts), sst, schema)
	}
	for _, n := range DefaultTopology().Datacenters[0].Nodes {
		if !hosts[n.HostID] {
			t.Errorf("no manifest for host %s", n.HostID)
		}
	}

	run := lastRun(t, h.srv, tid)
	if run.Status != statusDone || run.EndTime == nil {
		t.Errorf("want the run DONE with an end time, got %+v", run)
	}
	if len(run.Uploads) != 1 || run.Uploads[0].Location != "s3:bkt" || run.Uploads[0].Error != "" {
		t.Fatalf("want one successful upload to s3:bkt, got %+v", run.Uploads)
	}
	got := slices.Clone(run.Uploads[0].Keys)
	slices.Sort(got)
	diffOrFail(t, "keys recorded in the run", keys, got)
	diffOrFail(t, "uploaded keys of the state", keys, h.srv.State().UploadedKeys(cid, "bkt"))
	if run.Uploads[0].Bytes <= 0 {
		t.Errorf("want the uploaded bytes counted, got %d", run.Uploads[0].Bytes)
	}
	h.mu.Lock()
	diffOrFail(t, "object store configuration", []objectstore.Config{testEndpoint().config()}, h.configs)
	h.mu.Unlock()

	progress := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/backup/"+tid+"/latest", nil).expectStatus(t, http.StatusOK).object(t)
	p := progress["progress"].(map[string]any)
	if p["stage"] != "DONE" || p["uploaded"].(float64) != float64(run.Uploads[0].Bytes) {
		t.Errorf("want progress DONE with the uploaded bytes, got %v", p)
	}
	if m := metaKey.FindStringSubmatch(keys[0]); m == nil || p["snapshot_tag"] != m[5] {
		t.Errorf("want the snapshot tag of the progress %v in the keys", p["snapshot_tag"])
	}
}

func checkManifest(t *testing.T, store *objectstorefake.Store, key, cid, tid string) {
	t.Helper()
	data, _ := store.Object("bkt", key)
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("manifest %q is not gzipped: %v", key, err)
	}
	var m struct {
		ClusterID string          `json:"cluster_id"`
		TaskID    string          `json:"task_id"`
		Index     []manifestIndex `json:"index"`
	}
	if err := json.NewDecoder(zr).Decode(&m); err != nil {
		t.Fatalf("manifest %q is not JSON: %v", key, err)
	}
	if m.ClusterID != cid || m.TaskID != tid || len(m.Index) != 3 {
		t.Errorf("manifest %q: want cluster %s, task %s and 3 tables, got %+v", key, cid, tid, m)
	}
	nodeDir := strings.Replace(key[:strings.LastIndex(key, "/")+1], "backup/meta/", "backup/sst/", 1)
	for _, mi := range m.Index {
		for _, f := range mi.Files {
			k := fmt.Sprintf("%skeyspace/%s/table/%s/%s/%s", nodeDir, mi.Keyspace, mi.Table, mi.Version, f)
			if _, ok := store.Object("bkt", k); !ok {
				t.Errorf("manifest %q lists %q, which was not uploaded", key, k)
			}
		}
	}
}

func checkSchemaArchive(t *testing.T, store *objectstorefake.Store, key string) {
	t.Helper()
	data, _ := store.Object("bkt", key)
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("schema %q is not gzipped: %v", key, err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("schema %q is not a tar archive: %v", key, err)
		}
		names = append(names, hdr.Name)
	}
	diffOrFail(t, "schema files", []string{"system_auth.cql", "system_distributed.cql", "system_traces.cql"}, names)
}

func TestBackupUploadsFollowLocationsAndKnobs(t *testing.T) {
	t.Parallel()
	twoDCs := Topology{
		Datacenters: []Datacenter{
			{Name: "dc1", Nodes: []Node{{Address: "10.0.1.1", HostID: "00000000-0000-4000-8000-000000000011"}}},
			// Without a host ID the fake derives one from the address.
			{Name: "dc2", Nodes: []Node{{Address: "10.0.2.1"}}},
		},
		Keyspaces: []string{"ks"},
	}
	tests := []struct {
		name      string
		endpoints []string
		runStatus string
		props     string
		// wantObjects counts objects per bucket.
		wantObjects map[string]int
		wantStatus  string
		wantUploads int
	}{
		{
			name:        "location without an S3 endpoint uploads nothing",
			endpoints:   nil,
			props:       `{"location":["s3:a"]}`,
			wantObjects: map[string]int{"a": 0, "b": 0},
			wantStatus:  statusDone,
		},
		{
			name:        "per-datacenter locations get their datacenter's nodes and the schema",
			endpoints:   []string{"s3:a", "s3:b"},
			props:       `{"location":["dc1:s3:a","dc2:s3:b"]}`,
			wantObjects: map[string]int{"a": 2 + 1 + 1, "b": 2 + 1 + 1},
			wantStatus:  statusDone,
			wantUploads: 2,
		},
		{
			name:        "datacenter whose location has no S3 endpoint is left out",
			endpoints:   []string{"s3:a"},
			props:       `{"location":["dc1:s3:a","dc2:s3:b"]}`,
			wantObjects: map[string]int{"a": 4, "b": 0},
			wantStatus:  statusDone,
			wantUploads: 1,
		},
		{
			name:        "location without a datacenter serves every datacenter",
			endpoints:   []string{"s3:a"},
			props:       `{"location":["s3:a"]}`,
			wantObjects: map[string]int{"a": 2*3 + 1},
			wantStatus:  statusDone,
			wantUploads: 1,
		},
		{
			name:        "datacenter filter limits the nodes",
			endpoints:   []string{"s3:a"},
			props:       `{"location":["s3:a"],"dc":["dc2"]}`,
			wantObjects: map[string]int{"a": 3 + 1},
			wantStatus:  statusDone,
			wantUploads: 1,
		},
		{
			name:        "skip_schema uploads no schema",
			endpoints:   []string{"s3:a"},
			props:       `{"location":["s3:a"],"skip_schema":true}`,
			wantObjects: map[string]int{"a": 2 * 3},
			wantStatus:  statusDone,
			wantUploads: 1,
		},
		{
			name:        "run failing by the knobs uploads nothing",
			endpoints:   []string{"s3:a"},
			runStatus:   statusError,
			props:       `{"location":["s3:a"]}`,
			wantObjects: map[string]int{"a": 0},
			wantStatus:  statusError,
		},
		{
			name:        "run left running by the knobs has uploaded",
			endpoints:   []string{"s3:a"},
			runStatus:   statusRunning,
			props:       `{"location":["s3:a"]}`,
			wantObjects: map[string]int{"a": 7},
			wantStatus:  statusRunning,
			wantUploads: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newUploadHarness(t, Options{DefaultTopology: &twoDCs}, "a", "b")
			for _, e := range tc.endpoints {
				mustNot(t, h.srv.SetS3Endpoint(e, testEndpoint()))
			}
			mustNot(t, h.srv.SetRunStatus(tc.runStatus))
			cid := h.newCluster()
			tid := h.backupTask(cid, tc.props)
			h.startTask(cid, "backup", tid)
			for bucket, want := range tc.wantObjects {
				keys := h.store.Keys(bucket)
				if len(keys) != want {
					t.Errorf("bucket %s: want %d objects, got %d: %q", bucket, want, len(keys), keys)
				}
				for _, k := range keys {
					if !objectstore.IsClusterKey(cid, k) {
						t.Errorf("key %q is outside the directory of cluster %s", k, cid)
					}
				}
			}
			run := lastRun(t, h.srv, tid)
			if run.Status != tc.wantStatus || len(run.Uploads) != tc.wantUploads {
				t.Errorf("want run %s with %d uploads, got %s with %+v", tc.wantStatus, tc.wantUploads, run.Status, run.Uploads)
			}
		})
	}
}

func TestBackupRunningAtCreationUploads(t *testing.T) {
	t.Parallel()
	h := newUploadHarness(t, Options{}, "bkt")
	mustNot(t, h.srv.SetS3Endpoint("s3:bkt", testEndpoint()))
	cid := h.newCluster()
	// No cron and no start date: ScyllaDB Manager runs the task at once.
	tid := h.createTask(cid, `{"type":"backup","enabled":true,"properties":{"location":["s3:bkt"]}}`)
	if got := len(h.store.Keys("bkt")); got != 22 {
		t.Errorf("want the backup uploaded by the time the create returns, got %d objects", got)
	}
	if run := lastRun(t, h.srv, tid); run.Status != statusDone {
		t.Errorf("want the run DONE, got %+v", run)
	}
}

func TestBackupUploadFailureFailsTheRun(t *testing.T) {
	t.Parallel()
	h := newUploadHarness(t, Options{}, "bkt")
	mustNot(t, h.srv.SetS3Endpoint("s3:bkt", testEndpoint()))
	puts := 0
	h.store.SetErrorFunc(func(c objectstorefake.Call) error {
		if c.Op != objectstorefake.OpPutObject {
			return nil
		}
		puts++
		if puts > 5 {
			return objectstorefake.ErrorResponse(objectstore.ErrorCodeAccessDenied, "Access Denied.", http.StatusForbidden)
		}
		return nil
	})
	cid := h.newCluster()
	tid := h.backupTask(cid, `{"location":["s3:bkt"]}`)
	h.startTask(cid, "backup", tid)

	run := lastRun(t, h.srv, tid)
	if run.Status != statusError || run.EndTime == nil {
		t.Fatalf("want the run in ERROR with an end time, got %+v", run)
	}
	for _, want := range []string{"upload to s3:bkt", "Access Denied", `bucket "bkt"`} {
		if !strings.Contains(run.Cause, want) {
			t.Errorf("want the cause to contain %q, got %q", want, run.Cause)
		}
	}
	if strings.Contains(run.Cause, testS3Secret) {
		t.Errorf("cause reveals the secret: %q", run.Cause)
	}
	if len(run.Uploads) != 1 || len(run.Uploads[0].Keys) != 5 || run.Uploads[0].Error == "" {
		t.Errorf("want the 5 keys uploaded before the failure and the error recorded, got %+v", run.Uploads)
	}
	if got := len(h.store.Keys("bkt")); got != 5 {
		t.Errorf("want 5 objects in the bucket, got %d", got)
	}

	// The store recovers; the next run uploads everything.
	h.store.SetErrorFunc(nil)
	h.setNow(testNow.Add(time.Hour))
	h.startTask(cid, "backup", tid)
	if run := lastRun(t, h.srv, tid); run.Status != statusDone || len(run.Uploads[0].Keys) != 22 {
		t.Errorf("want the next run DONE with 22 objects, got %s with %d", run.Status, len(run.Uploads[0].Keys))
	}
}

func TestSecondBackupAddsASnapshot(t *testing.T) {
	t.Parallel()
	h := newUploadHarness(t, Options{}, "bkt")
	mustNot(t, h.srv.SetS3Endpoint("s3:bkt", testEndpoint()))
	cid := h.newCluster()
	tid := h.backupTask(cid, `{"location":["s3:bkt"]}`)
	h.startTask(cid, "backup", tid)
	h.setNow(testNow.Add(24 * time.Hour))
	h.startTask(cid, "backup", tid)
	// Two snapshots: manifests, schemas and sstables of both generations.
	if got := len(h.store.Keys("bkt")); got != 44 {
		t.Errorf("want 44 objects after two backups, got %d", got)
	}
	if got := len(h.srv.State().UploadedKeys(cid, "")); got != 44 {
		t.Errorf("want 44 uploaded keys in the state, got %d", got)
	}
}

func TestS3EndpointKnobValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		location string
		endpoint S3Endpoint
		wantErr  string
	}{
		{name: "valid", location: "s3:bkt", endpoint: testEndpoint()},
		{name: "AWS with environment credentials", location: "s3:bkt", endpoint: S3Endpoint{Region: "eu-west-1"}},
		{name: "location with a datacenter", location: "dc1:s3:bkt", endpoint: testEndpoint(), wantErr: "must be s3:<bucket>"},
		{name: "other provider", location: "gcs:bkt", endpoint: testEndpoint(), wantErr: "must be s3:<bucket>"},
		{name: "malformed location", location: "bkt", endpoint: testEndpoint(), wantErr: "invalid location"},
		{name: "endpoint that is not a URL", location: "s3:bkt", endpoint: S3Endpoint{Endpoint: "localhost:7070"}, wantErr: "http or https"},
		{name: "access key without secret", location: "s3:bkt", endpoint: S3Endpoint{AccessKeyID: "a"}, wantErr: "together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t)
			err := s.SetS3Endpoint(tc.location, tc.endpoint)
			if tc.wantErr == "" {
				mustNot(t, err)
				diffOrFail(t, "knob", map[string]S3Endpoint{tc.location: tc.endpoint}, s.Knobs().S3Endpoints)
				s.RemoveS3Endpoint(tc.location)
				if len(s.Knobs().S3Endpoints) != 0 {
					t.Errorf("want the endpoint removed, got %v", s.Knobs().S3Endpoints)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
