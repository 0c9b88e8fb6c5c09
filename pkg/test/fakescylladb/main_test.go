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
			var stderr lockedBuffer
			until := ""
			if tc.wantCode == 0 {
				until = "joined"
			}
			if got := runMainUntil(t, []string{"--seeds=" + tc.seeds, "--broadcast-address=10.0.0.2"}, env, until, &stderr); got != tc.wantCode {
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

// runMainUntil runs a node through Main with env and returns its exit code. With until set it waits for until in
// the output, failing the test if Main exits first, and then stops the node.
func runMainUntil(t *testing.T, args []string, env map[string]string, until string, stderr *lockedBuffer) int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	code := make(chan int, 1)
	go func() { code <- Main(ctx, args, func(k string) string { return env[k] }, stderr) }()
	if until != "" {
		for !strings.Contains(stderr.String(), until) {
			select {
			case c := <-code:
				t.Fatalf("exited with %d before %q appeared in the output: %s", c, until, stderr.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
		cancel()
	}
	return <-code
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

func TestMainNodeReplacesAHostIDGivenOnTheCommandLine(t *testing.T) {
	t.Parallel()
	const (
		founder = "5b0c2a44-1f3e-4d6a-9b8c-7e6f5d4c3b2a"
		dead    = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a"
	)
	tests := []struct {
		name        string
		replaceArgs []string
		wantCode    int
		wantStderr  string
		// wantReplaced says whether the dead node is replaced.
		wantReplaced bool
		// wantRecordReplace is the refused node's record's ReplaceHostID.
		wantRecordReplace string
	}{
		{
			name:         "dashes",
			replaceArgs:  []string{"--replace-node-first-boot", dead},
			wantStderr:   "replacing node " + dead,
			wantReplaced: true,
		},
		{
			name:         "underscores",
			replaceArgs:  []string{"--replace_node_first_boot=" + dead},
			wantStderr:   "replacing node " + dead,
			wantReplaced: true,
		},
		{
			name:        "not a host ID",
			replaceArgs: []string{"--replace-node-first-boot=10.0.0.9"},
			wantCode:    1,
			wantStderr:  `error: invalid replace_node_first_boot "10.0.0.9": it must be the host ID (a UUID) of the node to replace`,
		},
		{
			name:              "a live node",
			replaceArgs:       []string{"--replace-node-first-boot=" + founder},
			wantCode:          1,
			wantRecordReplace: founder,
			wantStderr:        "error: can't join a ring: registry POST /v1/join: cannot replace a live node " + founder + " (10.0.0.1): it is Up, a replaced node must be Down",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry(0)
			regURL := serveRegistry(t, reg)
			for _, req := range []JoinRequest{join(founder, "prod", "10.0.0.1", "10.0.0.1"), join(dead, "prod", "10.0.0.9", "10.0.0.1")} {
				if _, err := reg.Join(req); err != nil {
					t.Fatal(err)
				}
			}
			if err := reg.SetState(dead, StateRequest{Status: StatusDown}); err != nil {
				t.Fatal(err)
			}
			dir := writeConfig(t, "cluster_name: prod\napi_address: 127.0.0.1\napi_port: 0\nworkdir: "+filepath.Join(t.TempDir(), "data")+"\n", "")
			record := filepath.Join(t.TempDir(), "record.json")
			env := map[string]string{ConfigDirEnv: dir, EnvRegistryURL: regURL, EnvRecordPath: record}
			var stderr lockedBuffer
			until := ""
			if tc.wantCode == 0 {
				until = "replaced node " + dead
			}
			args := append([]string{"--seeds=10.0.0.1", "--broadcast-address=10.0.0.9"}, tc.replaceArgs...)
			if got := runMainUntil(t, args, env, until, &stderr); got != tc.wantCode {
				t.Errorf("exit code %d, want %d: %s", got, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("want %q in the output, got %s", tc.wantStderr, stderr.String())
			}
			records, err := ReadRecords(record)
			if err != nil {
				t.Fatal(err)
			}
			last := records[len(records)-1]
			rings := ringsOf(reg)
			if !tc.wantReplaced {
				if diff := cmp.Diff([][]string{sortedIDs(founder, dead)}, rings); diff != "" {
					t.Errorf("unexpected rings (-want +got):\n%s", diff)
				}
				if want := strings.TrimPrefix(tc.wantStderr, "error: "); !strings.HasPrefix(last.Error, want) {
					t.Errorf("the record's error is %q, want %q", last.Error, want)
				}
				if last.ReplaceHostID != tc.wantRecordReplace {
					t.Errorf("the record's replaceHostID is %q, want %q", last.ReplaceHostID, tc.wantRecordReplace)
				}
				return
			}
			if last.ReplaceHostID != dead || last.HostID == "" {
				t.Errorf("the record has host ID %q replacing %q, want a new host ID replacing %s", last.HostID, last.ReplaceHostID, dead)
			}
			if diff := cmp.Diff([][]string{sortedIDs(founder, last.HostID)}, rings); diff != "" {
				t.Errorf("unexpected rings (-want +got):\n%s", diff)
			}
		})
	}
}
