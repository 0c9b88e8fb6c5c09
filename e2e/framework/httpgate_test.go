package framework

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gateTarget is a service that records the requests it handles and answers creates with a Location.
type gateTarget struct {
	mu   sync.Mutex
	seen []string
}

func (s *gateTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.Path+" "+string(body))
	s.mu.Unlock()
	if r.Method == http.MethodPost {
		w.Header().Set("Location", r.URL.Path+"/new")
		w.WriteHeader(http.StatusCreated)
		return
	}
	_, _ = w.Write([]byte("ok"))
}

func (s *gateTarget) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

func startGate(t *testing.T) (*HTTPGate, *gateTarget) {
	t.Helper()
	target := &gateTarget{}
	ts := httptest.NewServer(target)
	t.Cleanup(ts.Close)
	g, err := StartHTTPGate(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, target
}

func isPost(r *http.Request) bool { return r.Method == http.MethodPost }

// post sends a POST through the gate in the background and reports its status, or an error, on the channel.
func post(ctx context.Context, url, body string) <-chan error {
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		if err != nil {
			done <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			done <- errors.New(resp.Status)
			return
		}
		done <- nil
	}()
	return done
}

func TestHTTPGateForwardsWhatNoHoldMatches(t *testing.T) {
	t.Parallel()
	g, target := startGate(t)
	g.Arm(HoldBeforeForwarding, isPost)
	resp, err := http.Get(g.URL + "/api/v1/clusters")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("got body %q through the gate, want %q", body, "ok")
	}
	if diff := cmp.Diff([]string{"GET /api/v1/clusters "}, target.requests()); diff != "" {
		t.Errorf("target requests differ (-want +got):\n%s", diff)
	}
}

func TestHTTPGateHoldsBeforeForwarding(t *testing.T) {
	t.Parallel()

	t.Run("a released request reaches the service", func(t *testing.T) {
		t.Parallel()
		g, target := startGate(t)
		h := g.Arm(HoldBeforeForwarding, isPost)
		done := post(t.Context(), g.URL+"/tasks", "one")
		held, err := h.Wait(t.Context(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if held.Method != http.MethodPost || held.Path != "/tasks" || held.Status != 0 {
			t.Errorf("held %s, want POST /tasks without an answer", held)
		}
		if got := target.requests(); len(got) != 0 {
			t.Fatalf("the service saw %v while the request was held", got)
		}
		h.Release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"POST /tasks one"}, target.requests()); diff != "" {
			t.Errorf("target requests differ (-want +got):\n%s", diff)
		}
		// The hold caught one request; the next passes.
		if err := <-post(t.Context(), g.URL+"/tasks", "two"); err != nil {
			t.Fatal(err)
		}
		if n := len(target.requests()); n != 2 {
			t.Errorf("the service saw %d requests, want 2", n)
		}
	})

	t.Run("a request whose client went away never reaches the service", func(t *testing.T) {
		t.Parallel()
		g, target := startGate(t)
		h := g.Arm(HoldBeforeForwarding, isPost)
		ctx, cancel := context.WithCancel(t.Context())
		done := post(ctx, g.URL+"/tasks", "lost")
		if _, err := h.Wait(t.Context(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled request succeeded")
		}
		// Give the gate time to notice; releasing late must not forward the request either.
		time.Sleep(200 * time.Millisecond)
		h.Release()
		time.Sleep(200 * time.Millisecond)
		if got := target.requests(); len(got) != 0 {
			t.Errorf("the service saw %v, want nothing", got)
		}
	})
}

func TestHTTPGateHoldsAfterResponse(t *testing.T) {
	t.Parallel()
	g, target := startGate(t)
	h := g.Arm(HoldAfterResponse, isPost)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := post(ctx, g.URL+"/tasks", "done")
	held, err := h.Wait(t.Context(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if held.Status != http.StatusCreated || held.Location != "/tasks/new" {
		t.Errorf("held %s, want the service's 201 with Location /tasks/new", held)
	}
	if diff := cmp.Diff([]string{"POST /tasks done"}, target.requests()); diff != "" {
		t.Errorf("the service should have handled the held request (-want +got):\n%s", diff)
	}
	select {
	case err := <-done:
		t.Fatalf("the client got its answer while it was held (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
	if got, ok := h.Caught(); !ok || got.Path != "/tasks" {
		t.Errorf("Caught returned %s, %v", got, ok)
	}
	h.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestHTTPGateReleaseDisarms(t *testing.T) {
	t.Parallel()
	g, target := startGate(t)
	h := g.Arm(HoldBeforeForwarding, isPost)
	h.Release()
	if err := <-post(t.Context(), g.URL+"/tasks", "free"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Caught(); ok {
		t.Error("a released hold caught a request")
	}
	if n := len(target.requests()); n != 1 {
		t.Errorf("the service saw %d requests, want 1", n)
	}
}
