package fakescylladb

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMainServesARegistry(t *testing.T) {
	t.Parallel()
	addressFile := filepath.Join(t.TempDir(), "address")
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		code <- Main(ctx, []string{"registry", "--listen-address=127.0.0.1:0", "--address-file=" + addressFile, "--ttl=0"}, func(string) string { return "" }, &stderr)
	}()
	var url string
	for url == "" {
		if data, err := os.ReadFile(addressFile); err == nil && strings.HasSuffix(string(data), "\n") {
			url = strings.TrimSpace(string(data))
		}
		time.Sleep(5 * time.Millisecond)
	}
	c, err := NewRegistryClient(url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(context.Background(), join("a", "c", "10.0.0.1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	rings, err := c.Rings(context.Background())
	if err != nil || len(rings) != 1 {
		t.Fatalf("Rings() = %v, %v", rings, err)
	}
	cancel()
	if got := <-code; got != 0 {
		t.Errorf("registry exited with %d: %s", got, stderr.String())
	}
}

func TestMainNodeRecordsAndHonoursTheExitCodeKnob(t *testing.T) {
	t.Parallel()
	dir := writeConfig(t, "cluster_name: prod\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "dc=dc1\nrack=r1\n")
	record := filepath.Join(t.TempDir(), "record.json")
	env := map[string]string{
		ConfigDirEnv:   dir,
		EnvRecordPath:  record,
		EnvRegistryURL: "http://127.0.0.1:1",
		EnvExitCode:    "9",
	}
	var stderr bytes.Buffer
	args := []string{"--seeds=10.0.0.1", "--broadcast-address=10.0.0.1"}
	for i := 0; i < 2; i++ {
		if code := Main(context.Background(), args, func(k string) string { return env[k] }, &stderr); code != 9 {
			t.Fatalf("exit code %d, want 9: %s", code, stderr.String())
		}
	}
	records, err := ReadRecords(record)
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 2 || records[0].HostID == "" || records[0].HostID != records[1].HostID {
		t.Fatalf("want two starts with one host ID, got %+v", records)
	}
	if s := records[1].Invocation.Settings; s.ClusterName != "prod" || s.BroadcastAddress != "10.0.0.1" || s.Datacenter != "dc1" {
		t.Errorf("unexpected settings %+v", s)
	}
}

func TestMainNodeFailsWithoutALiveSeed(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	srvURL := serveRegistry(t, reg)
	dir := writeConfig(t, "cluster_name: prod\napi_address: 127.0.0.1\napi_port: 0\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "")
	env := map[string]string{ConfigDirEnv: dir, EnvRegistryURL: srvURL}
	var stderr bytes.Buffer
	code := Main(context.Background(), []string{"--seeds=10.0.0.1", "--broadcast-address=10.0.0.2"}, func(k string) string { return env[k] }, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "no live node at any of its seeds [10.0.0.1]") {
		t.Errorf("exit code %d, stderr %s", code, stderr.String())
	}
}

func serveRegistry(t *testing.T, reg *Registry) string {
	t.Helper()
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestMainNodeResolvesSeedNamesThroughTheResolverURL(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	regURL := serveRegistry(t, reg)
	if _, err := reg.Join(join("founder", "prod", "10.0.0.1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /dns/{namespace}", NewResolverHandler(func(req *http.Request, name string) ([]string, error) {
		if req.PathValue("namespace") == "db" && name == "seed.db.svc" {
			return []string{"10.0.0.1"}, nil
		}
		return nil, ErrNotFound
	}))
	resolver := httptest.NewServer(mux)
	t.Cleanup(resolver.Close)

	tests := []struct {
		name        string
		resolverURL string
		seeds       string
		wantCode    int
		wantStderr  string
		// wantResolved are the record's ResolvedSeeds; nil when the node fails before resolving.
		wantResolved []string
	}{
		{
			name:         "a seed name resolved by the resolver joins the ring",
			resolverURL:  resolver.URL + "/dns/db",
			seeds:        "seed.db.svc,unknown.db.svc",
			wantStderr:   `leaving out seed "unknown.db.svc"`,
			wantResolved: []string{"10.0.0.1"},
		},
		{
			name:        "no seed resolves",
			resolverURL: resolver.URL + "/dns/other",
			seeds:       "seed.db.svc",
			wantCode:    1,
			wantStderr:  "none of the seeds [seed.db.svc] resolved to an address",
		},
		{
			name:        "a bad resolver URL",
			resolverURL: "127.0.0.1:1",
			seeds:       "seed.db.svc",
			wantCode:    1,
			wantStderr:  EnvResolverURL + `: resolver URL must be http://host:port[/path], got "127.0.0.1:1"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeConfig(t, "cluster_name: prod\napi_address: 127.0.0.1\napi_port: 0\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "")
			record := filepath.Join(t.TempDir(), "record.json")
			env := map[string]string{ConfigDirEnv: dir, EnvRegistryURL: regURL, EnvResolverURL: tc.resolverURL, EnvRecordPath: record}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stderr lockedBuffer
			code := make(chan int, 1)
			go func() {
				code <- Main(ctx, []string{"--seeds=" + tc.seeds, "--broadcast-address=10.0.0.2"}, func(k string) string { return env[k] }, &stderr)
			}()
			if tc.wantCode == 0 {
				for !strings.Contains(stderr.String(), "joined") {
					select {
					case c := <-code:
						t.Fatalf("exited with %d before joining: %s", c, stderr.String())
					case <-time.After(5 * time.Millisecond):
					}
				}
				cancel()
			}
			if got := <-code; got != tc.wantCode {
				t.Errorf("exit code %d, want %d: %s", got, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("want %q in the output, got %s", tc.wantStderr, stderr.String())
			}
			records, err := ReadRecords(record)
			if tc.wantResolved == nil && os.IsNotExist(err) {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			last := records[len(records)-1]
			if diff := cmp.Diff(SplitList(tc.seeds), last.Invocation.Settings.Seeds); diff != "" {
				t.Errorf("the recorded seeds aren't the seeds as given (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResolved, last.ResolvedSeeds); diff != "" {
				t.Errorf("the recorded resolved seeds differ (-want +got):\n%s", diff)
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer that Main can write to while the test reads it.
type lockedBuffer struct {
	lock sync.Mutex
	buf  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.lock.Lock()
	defer b.lock.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.lock.Lock()
	defer b.lock.Unlock()
	return b.buf.String()
}
