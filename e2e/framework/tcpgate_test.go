package framework

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// hostRecorder is a service that records, per request, its method, target, Host and body.
type hostRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (s *hostRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, fmt.Sprintf("%s %s host=%s body=%q", r.Method, r.URL.RequestURI(), r.Host, body))
	s.mu.Unlock()
	fmt.Fprintf(w, "got %d bytes", len(body))
}

func (s *hostRecorder) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func startGatedRecorder(t *testing.T) (*TCPGate, *hostRecorder, *http.Client) {
	t.Helper()
	rec := &hostRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	g, err := StartTCPGate(strings.TrimPrefix(srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	t.Cleanup(client.CloseIdleConnections)
	return g, rec, client
}

func do(client *http.Client, method, url, body string) (string, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestTCPGatePassesRequestsUnchangedAndLogsThem(t *testing.T) {
	t.Parallel()
	g, rec, client := startGatedRecorder(t)

	for _, r := range []struct{ method, target, body string }{
		{"GET", "/bucket?list-type=2&start-after=a%2Fb", ""},
		{"PUT", "/bucket/key", "data"},
		{"POST", "/bucket?delete=", "<Delete/>"},
	} {
		if _, err := do(client, r.method, g.URL()+r.target, r.body); err != nil {
			t.Fatalf("%s %s: %v", r.method, r.target, err)
		}
	}
	// A body of unknown length goes chunked, and the rest of the connection is passed through.
	req, _ := http.NewRequest("PUT", g.URL()+"/bucket/chunked", io.MultiReader(strings.NewReader("chu"), strings.NewReader("nked")))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	// The service sees the gate's address as Host: what the client signed.
	host := g.Addr
	want := []string{
		`GET /bucket?list-type=2&start-after=a%2Fb host=` + host + ` body=""`,
		`PUT /bucket/key host=` + host + ` body="data"`,
		`POST /bucket?delete= host=` + host + ` body="<Delete/>"`,
		`PUT /bucket/chunked host=` + host + ` body="chunked"`,
	}
	if diff := cmp.Diff(want, rec.requests()); diff != "" {
		t.Errorf("the service saw (-want +got):\n%s", diff)
	}
	var logged []string
	for _, r := range g.Requests() {
		logged = append(logged, r.Method+" "+r.Target)
	}
	wantLogged := []string{"GET /bucket?list-type=2&start-after=a%2Fb", "PUT /bucket/key", "POST /bucket?delete=", "PUT /bucket/chunked"}
	if diff := cmp.Diff(wantLogged, logged); diff != "" {
		t.Errorf("the gate logged (-want +got):\n%s", diff)
	}
}

func TestTCPGateHoldsMatchingRequestsAfterLettingSomeThrough(t *testing.T) {
	t.Parallel()
	g, rec, client := startGatedRecorder(t)
	isDelete := func(method, target string) bool { return method == "POST" && strings.Contains(target, "?delete") }

	hold := g.Arm(isDelete, 1)
	if _, err := do(client, "POST", g.URL()+"/b?delete=", "first"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		_, err := do(client, "POST", g.URL()+"/b?delete=", "second")
		second <- err
	}()
	if err := hold.Wait(t.Context(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	// Other requests go on while one is held.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	if _, err := do(other, "GET", g.URL()+"/b?list-type=2", ""); err != nil {
		t.Fatal(err)
	}
	if got := rec.requests(); len(got) != 2 || strings.Contains(strings.Join(got, "\n"), "second") {
		t.Fatalf("expected the held request not to reach the service, it saw %q", got)
	}
	hold.Release()
	if err := <-second; err != nil {
		t.Fatalf("the released request failed: %v", err)
	}
	if got := rec.requests(); len(got) != 3 || !strings.Contains(got[2], `body="second"`) {
		t.Errorf("expected the released request to reach the service, it saw %q", got)
	}

	// A dropped request never reaches the service, and its client sees its connection go.
	drop := g.Arm(isDelete, 0)
	third := make(chan error, 1)
	go func() {
		_, err := do(client, "POST", g.URL()+"/b?delete=", "third")
		third <- err
	}()
	if err := drop.Wait(t.Context(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	drop.Drop()
	if err := <-third; err == nil {
		t.Error("expected the dropped request to fail")
	}
	if got := rec.requests(); len(got) != 3 {
		t.Errorf("expected the dropped request never to reach the service, it saw %q", got)
	}
	reqs := g.Requests()
	if last := reqs[len(reqs)-1]; !last.Held || !last.Dropped {
		t.Errorf("expected the gate to log the last request as held and dropped, got %s", last)
	}
	// Disarmed: the next one goes through.
	if _, err := do(client, "POST", g.URL()+"/b?delete=", "fourth"); err != nil {
		t.Fatal(err)
	}
}

func TestReadRequestHeadRefusesWhatItCantFollow(t *testing.T) {
	t.Parallel()
	for _, head := range []string{
		"garbage\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
		"GET / HTTP/1.1\r\nno colon\r\n\r\n",
		"GET / SPDY/3\r\n\r\n",
	} {
		raw, _, err := readRequestHead(bufioReader(head))
		if err == nil {
			t.Errorf("%q: expected an error", head)
		}
		if string(raw) != head {
			t.Errorf("%q: expected the bytes read returned for passing through, got %q", head, raw)
		}
	}
}

func bufioReader(s string) *bufio.Reader {
	return bufio.NewReader(strings.NewReader(s))
}
