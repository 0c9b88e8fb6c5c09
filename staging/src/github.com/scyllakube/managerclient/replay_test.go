package managerclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The files in testdata/recorded hold request/response pairs written from scylla-manager-api.md. A replay server
// answers a test's requests with the named exchanges, in order, and fails the test when a request differs from
// the recorded one.

type recordedRequest struct {
	Method string `json:"method"`
	// Path is the escaped path.
	Path string `json:"path"`
	// Query is compared as parsed values, so the order of parameters does not matter.
	Query string `json:"query"`
	// Headers must be present with these values; others are ignored.
	Headers map[string]string `json:"headers"`
	// Body is compared as JSON; when absent, the request must have no body.
	Body json.RawMessage `json:"body"`
}

type recordedResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	// Body is sent verbatim; BodyText is sent as is, for bodies that are not JSON documents or are JSON null.
	Body     json.RawMessage `json:"body"`
	BodyText *string         `json:"bodyText"`
}

type exchange struct {
	Request  recordedRequest  `json:"request"`
	Response recordedResponse `json:"response"`
}

type cassette struct {
	Description string              `json:"description"`
	Exchanges   map[string]exchange `json:"exchanges"`
}

func loadCassette(t *testing.T, file string) cassette {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "recorded", file))
	if err != nil {
		t.Fatalf("can't read cassette: %v", err)
	}
	var c cassette
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("can't decode cassette %s: %v", file, err)
	}
	return c
}

// replayServer serves the named exchanges of a cassette in order.
type replayServer struct {
	t         *testing.T
	names     []string
	exchanges []exchange

	mu   sync.Mutex
	next int
}

func newReplayServer(t *testing.T, file string, names ...string) *httptest.Server {
	t.Helper()
	c := loadCassette(t, file)
	rs := &replayServer{t: t, names: names}
	for _, name := range names {
		ex, ok := c.Exchanges[name]
		if !ok {
			t.Fatalf("cassette %s has no exchange %q", file, name)
		}
		rs.exchanges = append(rs.exchanges, ex)
	}
	srv := httptest.NewServer(rs)
	t.Cleanup(func() {
		srv.Close()
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if rs.next != len(rs.exchanges) {
			t.Errorf("replayed %d of %d exchanges; %v were never requested", rs.next, len(rs.exchanges), rs.names[rs.next:])
		}
	})
	return srv
}

func (rs *replayServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rs.mu.Lock()
	if rs.next >= len(rs.exchanges) {
		rs.mu.Unlock()
		rs.t.Errorf("unexpected request %s %s", r.Method, r.URL)
		w.WriteHeader(599)
		return
	}
	name, ex := rs.names[rs.next], rs.exchanges[rs.next]
	rs.next++
	rs.mu.Unlock()

	if err := matchRequest(ex.Request, r); err != nil {
		rs.t.Errorf("request for exchange %q: %v", name, err)
		w.WriteHeader(599)
		return
	}

	w.Header().Set("Content-Type", "application/json")
	for k, v := range ex.Response.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(ex.Response.Status)
	switch {
	case ex.Response.BodyText != nil:
		_, _ = io.WriteString(w, *ex.Response.BodyText)
	case len(ex.Response.Body) != 0:
		_, _ = w.Write(ex.Response.Body)
	}
}

func matchRequest(want recordedRequest, r *http.Request) error {
	var errs []error
	if r.Method != want.Method {
		errs = append(errs, errors.New("method "+r.Method+", want "+want.Method))
	}
	if got := r.URL.EscapedPath(); got != want.Path {
		errs = append(errs, errors.New("path "+got+", want "+want.Path))
	}
	wantQuery, err := url.ParseQuery(want.Query)
	if err != nil {
		return err
	}
	if diff := cmp.Diff(wantQuery, r.URL.Query()); diff != "" {
		errs = append(errs, errors.New("query (-want +got):\n"+diff))
	}
	for k, v := range want.Headers {
		if got := r.Header.Get(k); got != v {
			errs = append(errs, errors.New("header "+k+" is "+got+", want "+v))
		}
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	if len(want.Body) == 0 {
		if len(bytes.TrimSpace(body)) != 0 {
			errs = append(errs, errors.New("unexpected body "+string(body)))
		}
		return errors.Join(errs...)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		errs = append(errs, errors.New("content type "+ct+", want application/json"))
	}
	var gotBody, wantBody any
	if err := json.Unmarshal(body, &gotBody); err != nil {
		return errors.Join(append(errs, errors.New("body is not JSON: "+string(body)))...)
	}
	if err := json.Unmarshal(want.Body, &wantBody); err != nil {
		return err
	}
	if diff := cmp.Diff(wantBody, gotBody); diff != "" {
		errs = append(errs, errors.New("body (-want +got):\n"+diff))
	}
	return errors.Join(errs...)
}

// newReplayClient returns a client of a replay server serving the named exchanges.
func newReplayClient(t *testing.T, file string, names ...string) *Client {
	t.Helper()
	srv := newReplayServer(t, file, names...)
	c, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// equateJSON compares raw JSON by value, not by formatting.
var equateJSON = cmp.Transformer("JSON", func(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	return v
})
