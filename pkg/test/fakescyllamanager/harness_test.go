package fakescyllamanager

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testNow is the fake's clock in tests: a Wednesday noon.
var testNow = time.Date(2025, time.January, 1, 12, 0, 0, 0, time.UTC)

// harness drives a fake over real HTTP with net/http only, so the fake's wire behaviour is tested on its own.
type harness struct {
	t   *testing.T
	srv *Server
	url string
	// client has a transport of its own: closing another test's httptest.Server closes the idle connections of
	// http.DefaultTransport, and with them, once, a request of this test in flight.
	client *http.Client

	mu  sync.Mutex
	now time.Time
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, now: testNow}
	if opts.Clock == nil {
		opts.Clock = h.clock
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	ts := httptest.NewServer(h.srv)
	t.Cleanup(ts.Close)
	h.url = ts.URL
	h.client = ts.Client()
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

func (h *harness) setNow(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = now
}

// rawResponse is a response as it came over the wire.
type rawResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// do sends a request; body is sent verbatim when it is a string, as JSON otherwise, and not at all when nil.
func (h *harness) do(method, p string, body any) *rawResponse {
	h.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			h.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(h.t.Context(), method, h.url+p, r)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return &rawResponse{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// expectStatus fails the test unless the response has the status.
func (r *rawResponse) expectStatus(t *testing.T, status int) *rawResponse {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// expectError fails the test unless the response is an error document with the status and a message containing
// each of the fragments.
func (r *rawResponse) expectError(t *testing.T, status int, fragments ...string) errorDocument {
	t.Helper()
	r.expectStatus(t, status)
	var doc map[string]any
	if err := json.Unmarshal(r.Body, &doc); err != nil {
		t.Fatalf("error body is not JSON: %s", r.Body)
	}
	for _, key := range []string{"message", "details", "trace_id"} {
		if _, ok := doc[key].(string); !ok {
			t.Errorf("error body has no string %q: %s", key, r.Body)
		}
	}
	msg, _ := doc["message"].(string)
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("message %q does not contain %q", msg, f)
		}
	}
	if doc["trace_id"] == "" {
		t.Errorf("empty trace_id in %s", r.Body)
	}
	details, _ := doc["details"].(string)
	traceID, _ := doc["trace_id"].(string)
	return errorDocument{Message: msg, Details: details, TraceID: traceID}
}

// object decodes the body as a JSON object.
func (r *rawResponse) object(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %s", r.Body)
	}
	return v
}

// list decodes the body as a JSON array of objects; JSON null decodes to nil.
func (r *rawResponse) list(t *testing.T) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not a JSON array: %s", r.Body)
	}
	return v
}

// locationID checks a create response, 201 with an empty body and a Location, and returns the Location's last
// segment.
func (r *rawResponse) locationID(t *testing.T, wantPrefix string) string {
	t.Helper()
	r.expectStatus(t, http.StatusCreated)
	if len(bytes.TrimSpace(r.Body)) != 0 {
		t.Errorf("create response has a body: %s", r.Body)
	}
	loc := r.Header.Get("Location")
	u, err := url.Parse(loc)
	if err != nil || loc == "" {
		t.Fatalf("bad Location %q: %v", loc, err)
	}
	if !strings.HasPrefix(u.EscapedPath(), wantPrefix) {
		t.Errorf("Location %q does not start with %q", loc, wantPrefix)
	}
	id := path.Base(u.Path)
	if !isUUID(id) {
		t.Fatalf("Location %q does not end in a UUID", loc)
	}
	return id
}

// createCluster registers a cluster from a raw JSON body and returns its ID.
func (h *harness) createCluster(body string) string {
	h.t.Helper()
	return h.do(http.MethodPost, "/api/v1/clusters", body).locationID(h.t, "/api/v1/cluster/")
}

// createTask creates a task from a raw JSON body and returns its ID.
func (h *harness) createTask(clusterID, body string) string {
	h.t.Helper()
	return h.do(http.MethodPost, "/api/v1/cluster/"+clusterID+"/tasks", body).locationID(h.t, "/api/v1/cluster/"+clusterID+"/task/")
}

// newCluster registers a cluster without the default repair task and returns its ID.
func (h *harness) newCluster() string {
	h.t.Helper()
	return h.createCluster(`{"name":"c1","host":"10.0.0.1","auth_token":"token","without_repair":true}`)
}

// taskNames returns "type/name" of the listed tasks, in order.
func taskNames(items []map[string]any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it["type"].(string)+"/"+it["name"].(string))
	}
	return out
}

func diffOrFail(t *testing.T, what string, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}
