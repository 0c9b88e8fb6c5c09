package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"time"
)

// HTTPGate is a reverse proxy in the test process that a program under test reaches instead of an HTTP service
// (ScyllaDB Manager, for one). It forwards every request, except that a test can arm it to hold the next request
// that matches a filter at one of two points: before the request is forwarded, so the service never sees it, or
// after the service answered and before the answer is passed on, so the service did the work and the program does
// not know yet. While a request is held, the test can kill the program at exactly that point: the two moments a
// crash must not make the program lose track of, or duplicate, what it asked for.
type HTTPGate struct {
	// URL is where the program should send its requests, such as http://127.0.0.1:41234.
	URL string

	target   *url.URL
	proxy    *httputil.ReverseProxy
	server   *http.Server
	listener net.Listener

	mu    sync.Mutex
	armed []*Hold
	all   []*Hold
}

// HoldPoint says where an armed HTTPGate holds a request.
type HoldPoint string

const (
	// HoldBeforeForwarding holds the request before the service sees it. If the client goes away while it is
	// held, the request is dropped and never forwarded.
	HoldBeforeForwarding HoldPoint = "BeforeForwarding"
	// HoldAfterResponse holds the service's answer before the client gets it.
	HoldAfterResponse HoldPoint = "AfterResponse"
)

// HeldRequest describes a request an HTTPGate holds.
type HeldRequest struct {
	Method string
	// Path is the escaped path.
	Path  string
	Query string
	// Status and Location are the service's answer to a request held after the response; zero before forwarding.
	Status   int
	Location string
	// At is when the request was caught.
	At time.Time
}

// String describes the request for logs and failure messages.
func (r HeldRequest) String() string {
	s := r.Method + " " + r.Path
	if r.Query != "" {
		s += "?" + r.Query
	}
	if r.Status != 0 {
		s += fmt.Sprintf(" -> %d", r.Status)
	}
	if r.Location != "" {
		s += " (Location " + r.Location + ")"
	}
	return s
}

// Hold is one armed hold of an HTTPGate: it catches the first matching request at its point and keeps it until
// Release, or until the client goes away.
type Hold struct {
	gate  *HTTPGate
	point HoldPoint
	match func(*http.Request) bool

	caught      chan HeldRequest
	released    chan struct{}
	releaseOnce sync.Once
}

// StartHTTPGate starts a gate in front of target (a base URL such as http://127.0.0.1:5080) on a free loopback
// port. Close it when done.
func StartHTTPGate(target string) (*HTTPGate, error) {
	return startHTTPGate(target, nil, nil)
}

// startHTTPGate starts a gate that forwards through transport, http.DefaultTransport when nil, and serves HTTPS with
// serverTLS when it is set.
func startHTTPGate(target string, transport http.RoundTripper, serverTLS *tls.Config) (*HTTPGate, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("can't parse gate target %q: %w", target, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("gate target %q must be an http or https URL with a host", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("can't listen for the gate: %w", err)
	}
	scheme := "http"
	if serverTLS != nil {
		ln = tls.NewListener(ln, serverTLS)
		scheme = "https"
	}
	g := &HTTPGate{URL: scheme + "://" + ln.Addr().String(), target: u, listener: ln}
	g.proxy = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
		},
		Transport:      transport,
		ModifyResponse: g.holdResponse,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	g.server = &http.Server{Handler: http.HandlerFunc(g.serveHTTP), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = g.server.Serve(ln) }()
	return g, nil
}

// Close releases every hold and stops the gate.
func (g *HTTPGate) Close() error {
	g.mu.Lock()
	holds := append([]*Hold(nil), g.all...)
	g.mu.Unlock()
	for _, h := range holds {
		h.Release()
	}
	return g.server.Close()
}

// Arm makes the gate hold the next request for which match returns true, at point. A request is caught by at
// most one hold; holds armed earlier catch first.
func (g *HTTPGate) Arm(point HoldPoint, match func(*http.Request) bool) *Hold {
	h := &Hold{gate: g, point: point, match: match, caught: make(chan HeldRequest, 1), released: make(chan struct{})}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = append(g.armed, h)
	g.all = append(g.all, h)
	return h
}

// take disarms and returns the first hold at point that matches r, or nil.
func (g *HTTPGate) take(point HoldPoint, r *http.Request) *Hold {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, h := range g.armed {
		if h.point == point && h.match(r) {
			g.armed = append(g.armed[:i], g.armed[i+1:]...)
			return h
		}
	}
	return nil
}

func (g *HTTPGate) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if h := g.take(HoldBeforeForwarding, r); h != nil {
		// With its body read to the end, the server notices at once when the client goes away, which cancels the
		// request's context.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.caught <- HeldRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, At: time.Now()}
		if !h.wait(r.Context()) {
			return
		}
	}
	g.proxy.ServeHTTP(w, r)
}

// holdResponse holds the service's answer when a hold after the response matches its request. Returning an error
// drops the answer; the client is gone then anyway.
func (g *HTTPGate) holdResponse(resp *http.Response) error {
	h := g.take(HoldAfterResponse, resp.Request)
	if h == nil {
		return nil
	}
	h.caught <- HeldRequest{
		Method:   resp.Request.Method,
		Path:     resp.Request.URL.EscapedPath(),
		Query:    resp.Request.URL.RawQuery,
		Status:   resp.StatusCode,
		Location: resp.Header.Get("Location"),
		At:       time.Now(),
	}
	if !h.wait(resp.Request.Context()) {
		return errors.New("the client went away while its answer was held")
	}
	return nil
}

// wait blocks until the hold is released (true) or ctx ends because the client went away (false).
func (h *Hold) wait(ctx context.Context) bool {
	select {
	case <-h.released:
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}

// Wait waits until the hold catches a request, for at most timeout.
func (h *Hold) Wait(ctx context.Context, timeout time.Duration) (HeldRequest, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case r := <-h.caught:
		// Keep it readable for Caught.
		h.caught <- r
		return r, nil
	case <-ctx.Done():
		return HeldRequest{}, fmt.Errorf("no request was held %s within %v: %w", h.point, timeout, ctx.Err())
	}
}

// Caught returns the held request, if the hold caught one.
func (h *Hold) Caught() (HeldRequest, bool) {
	select {
	case r := <-h.caught:
		h.caught <- r
		return r, true
	default:
		return HeldRequest{}, false
	}
}

// Release lets the held request go on, if its client is still there, and disarms a hold that caught nothing yet.
func (h *Hold) Release() {
	h.gate.mu.Lock()
	for i, armed := range h.gate.armed {
		if armed == h {
			h.gate.armed = append(h.gate.armed[:i], h.gate.armed[i+1:]...)
			break
		}
	}
	h.gate.mu.Unlock()
	h.releaseOnce.Do(func() { close(h.released) })
}
