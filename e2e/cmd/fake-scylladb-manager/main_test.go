package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		mutate  func(o *options)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(o *options) {}},
		{name: "a listen address without port", mutate: func(o *options) { o.listenAddress = "127.0.0.1" }, wantErr: "--listen-address"},
		{name: "an empty version", mutate: func(o *options) { o.managerVersion = "" }, wantErr: "--manager-version"},
		{name: "a certificate without key", mutate: func(o *options) { o.tlsCertFile = "c.pem" }, wantErr: "set together"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOptions()
			tc.mutate(o)
			err := o.validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunRejectsBadInput(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		mutate  func(t *testing.T, o *options)
		wantErr string
	}{
		{name: "a missing knobs file", mutate: func(t *testing.T, o *options) { o.knobsFile = filepath.Join(t.TempDir(), "none.json") }, wantErr: "--knobs-file"},
		{name: "a knobs file with unknown fields", mutate: func(t *testing.T, o *options) { o.knobsFile = writeFile(t, "k.json", `{"latencies":{}}`) }, wantErr: "unknown field"},
		{name: "invalid knobs", mutate: func(t *testing.T, o *options) { o.knobsFile = writeFile(t, "k.json", `{"downNodes":["x"]}`) }, wantErr: "not an IP address"},
		{name: "an S3 endpoint for a location of another provider", mutate: func(t *testing.T, o *options) {
			o.knobsFile = writeFile(t, "k.json", `{"s3Endpoints":{"gcs:b":{"endpoint":"http://127.0.0.1:7070"}}}`)
		}, wantErr: "must be s3:<bucket>"},
		{name: "an invalid default topology", mutate: func(t *testing.T, o *options) { o.defaultTopologyFile = writeFile(t, "t.json", `{"datacenters":[]}`) }, wantErr: "default topology"},
		{name: "an unknown timezone", mutate: func(t *testing.T, o *options) { o.serverTimezone = "Mars/Olympus" }, wantErr: "server timezone"},
		{name: "a busy port", mutate: func(t *testing.T, o *options) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			o.listenAddress = ln.Addr().String()
		}, wantErr: "can't listen"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := newOptions()
			tc.mutate(t, o)
			err := run(t.Context(), o, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	t.Parallel()
	o := newOptions()
	o.addressFile = filepath.Join(t.TempDir(), "address")
	o.managerVersion = "3.99.1"
	o.knobsFile = writeFile(t, "knobs.json", `{"failures":{"Ping":{"status":503,"times":1}}}`)
	o.defaultTopologyFile = writeFile(t, "topology.json", `{"datacenters":[{"name":"solo","nodes":[{"address":"10.7.0.1"},{"address":"10.7.0.2"}]}]}`)

	var (
		mu     sync.Mutex
		logged []fakescyllamanager.Request
	)
	onRequest := func(r fakescyllamanager.Request) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, r)
	}
	ctx, cancel := context.WithCancel(t.Context())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, o, pw, onRequest)
		pw.Close()
	}()

	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("can't read the address line: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	url, found := strings.CutPrefix(strings.TrimSpace(line), "Listening on ")
	if !found || !strings.HasPrefix(url, "http://127.0.0.1:") || strings.HasSuffix(url, ":0") {
		t.Fatalf("unexpected address line %q", line)
	}
	written, err := os.ReadFile(o.addressFile)
	if err != nil || strings.TrimSpace(string(written)) != url {
		t.Errorf("address file %q, %v; want %q", written, err, url)
	}

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	if status, _ := get("/ping"); status != http.StatusServiceUnavailable {
		t.Errorf("first ping %d, want the knobs file's 503", status)
	}
	if status, _ := get("/ping"); status != http.StatusNoContent {
		t.Errorf("second ping %d, want 204", status)
	}
	if status, body := get("/version"); status != http.StatusOK || !strings.Contains(body, "3.99.1") {
		t.Errorf("version %d %s", status, body)
	}
	resp, err := http.Post(url+"/api/v1/clusters", "application/json", strings.NewReader(`{"name":"c","host":"h","auth_token":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cid := resp.Header.Get("Location")[len("/api/v1/cluster/"):]
	var hosts []map[string]any
	_, body := get("/api/v1/cluster/" + cid + "/status")
	if err := json.Unmarshal([]byte(body), &hosts); err != nil || len(hosts) != 2 || hosts[0]["dc"] != "solo" {
		t.Errorf("status of the default topology: %s (%v)", body, err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run ended with %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	var seen []string
	for _, r := range logged {
		seen = append(seen, r.Method+" "+r.Path)
	}
	want := []string{"GET /ping", "GET /ping", "GET /version", "POST /api/v1/clusters", "GET /api/v1/cluster/" + cid + "/status"}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged requests %q, want %q", seen, want)
	}
}
