package framework

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TCPGate is a TCP proxy in the test process in front of a plain-HTTP/1.1 service, such as versitygw. Unlike HTTPGate,
// a reverse proxy that sends requests on with the target's Host, it passes every byte on unchanged, so requests
// signed over their Host header (S3 signature v4) stay valid: the service checks the signature against the Host the
// client signed, the gate's address. It reads the request heads on their way through, to log every request and, when
// armed, to hold matching requests before any of their bytes reach the service, so that a test can kill a client
// between two requests of a multi-request operation.
//
// It understands requests whose body has a Content-Length or none. A connection that sends a chunked body, or
// something that is not an HTTP/1.1 request head, is passed through as is from then on, and its later requests are
// neither logged nor held.
type TCPGate struct {
	// Addr is the gate's host:port on loopback.
	Addr string

	target   string
	listener net.Listener

	mu       sync.Mutex
	requests []GateRequest
	holds    []*TCPHold
	conns    map[net.Conn]struct{}
	closed   bool
	wg       sync.WaitGroup
}

// GateRequest is a request the gate saw.
type GateRequest struct {
	Method string
	// Target is the request target of the request line: the escaped path and query.
	Target string
	At     time.Time
	// Held tells that a hold caught the request; Dropped that it was then dropped, never reaching the service.
	Held    bool
	Dropped bool
}

// String describes the request for logs.
func (r GateRequest) String() string {
	s := r.At.UTC().Format("15:04:05.000") + " " + r.Method + " " + r.Target
	switch {
	case r.Dropped:
		s += " (held, dropped)"
	case r.Held:
		s += " (held)"
	}
	return s
}

// TCPHold holds the requests that match it, after letting a number of them through, until Release or Drop.
type TCPHold struct {
	gate  *TCPGate
	match func(method, target string) bool
	// pass is how many matching requests still go through before the hold catches the next ones.
	pass int

	// done is closed by Release or Drop; drop tells which.
	done chan struct{}
	drop bool
	// caught counts the requests held so far; changed is signalled on each.
	caught  int
	changed chan struct{}
}

// StartTCPGate starts a gate in front of target (host:port) on a free loopback port. Close it when done.
func StartTCPGate(target string) (*TCPGate, error) {
	if _, _, err := net.SplitHostPort(target); err != nil {
		return nil, fmt.Errorf("gate target %q must be host:port: %w", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("can't listen for the gate: %w", err)
	}
	g := &TCPGate{Addr: ln.Addr().String(), target: target, listener: ln, conns: map[net.Conn]struct{}{}}
	g.wg.Add(1)
	go g.serve()
	return g, nil
}

// URL returns the gate's address as an http URL.
func (g *TCPGate) URL() string {
	return "http://" + g.Addr
}

// Requests returns the requests the gate saw so far, oldest first.
func (g *TCPGate) Requests() []GateRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GateRequest(nil), g.requests...)
}

// Arm makes the gate let the next pass requests for which match returns true through, and hold every later one
// until the hold is released or dropped. A request is caught by at most one hold; holds armed earlier go first.
func (g *TCPGate) Arm(match func(method, target string) bool, pass int) *TCPHold {
	h := &TCPHold{gate: g, match: match, pass: pass, done: make(chan struct{}), changed: make(chan struct{}, 1)}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holds = append(g.holds, h)
	return h
}

// Close stops the gate and closes every connection through it; held requests are dropped.
func (g *TCPGate) Close() error {
	g.mu.Lock()
	g.closed = true
	holds := append([]*TCPHold(nil), g.holds...)
	for c := range g.conns {
		_ = c.Close()
	}
	g.mu.Unlock()
	for _, h := range holds {
		h.finish(true)
	}
	err := g.listener.Close()
	g.wg.Wait()
	return err
}

func (g *TCPGate) serve() {
	defer g.wg.Done()
	for {
		client, err := g.listener.Accept()
		if err != nil {
			return
		}
		if !g.track(client) {
			_ = client.Close()
			return
		}
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.handle(client)
		}()
	}
}

// track records an open connection so that Close can close it; false once the gate is closed.
func (g *TCPGate) track(c net.Conn) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.conns[c] = struct{}{}
	return true
}

func (g *TCPGate) untrack(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.conns, c)
}

// handle proxies one client connection: the service's bytes back as they come, the client's request by request.
func (g *TCPGate) handle(client net.Conn) {
	defer g.untrack(client)
	defer client.Close()
	server, err := net.DialTimeout("tcp", g.target, 10*time.Second)
	if err != nil {
		return
	}
	if !g.track(server) {
		_ = server.Close()
		return
	}
	defer g.untrack(server)
	defer server.Close()

	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		_, _ = io.Copy(client, server)
		// The service hung up: so does the gate.
		_ = client.Close()
	}()

	r := bufio.NewReader(client)
	for {
		head, req, err := readRequestHead(r)
		if err != nil {
			if head != nil {
				// Not a request head the gate understands: pass the rest through untouched.
				if _, err := server.Write(head); err == nil {
					_, _ = io.Copy(server, r)
				}
			}
			return
		}
		if !g.admit(req) {
			// Dropped: the service never sees the request, and the client loses its connection.
			return
		}
		if _, err := server.Write(head); err != nil {
			return
		}
		if req.chunked {
			_, _ = io.Copy(server, r)
			return
		}
		if req.contentLength > 0 {
			if _, err := io.CopyN(server, r, req.contentLength); err != nil {
				return
			}
		}
	}
}

// requestHead is what the gate reads of a request head.
type requestHead struct {
	method, target string
	contentLength  int64
	chunked        bool
}

// readRequestHead reads one request head from r and returns its bytes as they came and what it says. On an error
// after some bytes were read, those bytes are returned with it.
func readRequestHead(r *bufio.Reader) ([]byte, requestHead, error) {
	var raw bytes.Buffer
	var lines []string
	for {
		line, err := r.ReadString('\n')
		raw.WriteString(line)
		if err != nil {
			if raw.Len() == 0 {
				return nil, requestHead{}, err
			}
			return raw.Bytes(), requestHead{}, err
		}
		trimmed := strings.TrimRight(line, "\r\n")
		if trimmed == "" {
			if len(lines) == 0 {
				// Stray blank lines before a request are allowed.
				continue
			}
			break
		}
		lines = append(lines, trimmed)
		if raw.Len() > 1<<20 {
			return raw.Bytes(), requestHead{}, errors.New("request head too long")
		}
	}
	parts := strings.Fields(lines[0])
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "HTTP/1.") {
		return raw.Bytes(), requestHead{}, fmt.Errorf("not a request line: %q", lines[0])
	}
	req := requestHead{method: parts[0], target: parts[1]}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return raw.Bytes(), requestHead{}, fmt.Errorf("not a header line: %q", l)
		}
		value = strings.TrimSpace(value)
		switch textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name)) {
		case "Content-Length":
			n, err := strconv.ParseInt(value, 10, 64)
			if err != nil || n < 0 {
				return raw.Bytes(), requestHead{}, fmt.Errorf("bad Content-Length %q", value)
			}
			req.contentLength = n
		case "Transfer-Encoding":
			req.chunked = true
		}
	}
	return raw.Bytes(), req, nil
}

// admit logs req and, when a hold catches it, waits until the hold is released (true) or dropped (false).
func (g *TCPGate) admit(req requestHead) bool {
	g.mu.Lock()
	var hold *TCPHold
	for _, h := range g.holds {
		if h.match(req.method, req.target) {
			if h.pass > 0 {
				h.pass--
				break
			}
			hold = h
			break
		}
	}
	i := len(g.requests)
	g.requests = append(g.requests, GateRequest{Method: req.method, Target: req.target, At: time.Now(), Held: hold != nil})
	if hold == nil {
		g.mu.Unlock()
		return true
	}
	hold.caught++
	g.mu.Unlock()
	select {
	case hold.changed <- struct{}{}:
	default:
	}

	<-hold.done
	g.mu.Lock()
	defer g.mu.Unlock()
	if hold.drop {
		g.requests[i].Dropped = true
		return false
	}
	return true
}

// Caught returns how many requests the hold holds, or held.
func (h *TCPHold) Caught() int {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	return h.caught
}

// Wait waits until the hold caught a request, for at most timeout.
func (h *TCPHold) Wait(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for h.Caught() == 0 {
		select {
		case <-h.changed:
		case <-ctx.Done():
			return fmt.Errorf("the gate held no request within %v: %w", timeout, ctx.Err())
		}
	}
	return nil
}

// Release lets the held requests through, and the later matching ones: the hold is disarmed. A held request goes
// on even if its client went away meanwhile (a TCP proxy can't tell without reading its body); Drop does not.
func (h *TCPHold) Release() {
	h.finish(false)
}

// Drop closes the connections of the held requests without passing them on, so that the service never sees them,
// and disarms the hold.
func (h *TCPHold) Drop() {
	h.finish(true)
}

func (h *TCPHold) finish(drop bool) {
	h.gate.mu.Lock()
	defer h.gate.mu.Unlock()
	for i, armed := range h.gate.holds {
		if armed == h {
			h.gate.holds = append(h.gate.holds[:i], h.gate.holds[i+1:]...)
			h.drop = drop
			close(h.done)
			return
		}
	}
}
