package fakescyllamanager

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

const (
	// DefaultVersion is the ScyllaDB Manager version the fake reports.
	DefaultVersion = "3.12.0"

	// maxRequestLog bounds the request log; the oldest entries are dropped first.
	maxRequestLog = 10000
)

// Options configure a Server.
type Options struct {
	// Version is reported by /version; empty means DefaultVersion.
	Version string
	// Clock returns the current time; nil means time.Now. Tests pin it to get deterministic next activations.
	Clock func() time.Time
	// ServerTimezone is the IANA name of the server's local zone, given to the auto-created weekly repair task;
	// empty means UTC.
	ServerTimezone string
	// BearerToken, when set, makes the API answer 401 to requests without "Authorization: Bearer <token>".
	// ScyllaDB Manager itself has no such check; this exists to test clients that send a token.
	BearerToken string
	// DefaultTopology is the topology of hosts without one set by SetTopology; nil means DefaultTopology().
	DefaultTopology *Topology
	// OnRequest, when set, is called after every request, for example to log it. It must not block.
	OnRequest func(Request)
	// NewObjectStore makes the object store clients backup uploads go through; nil means objectstore.New. Unit
	// tests give an in-memory store.
	NewObjectStore func(objectstore.Config) (objectstore.Interface, error)
}

// Request is one handled request, as recorded in the request log.
type Request struct {
	Method string `json:"method"`
	// Path is the escaped request path.
	Path  string `json:"path"`
	Query string `json:"query,omitempty"`
	// Endpoint is the API endpoint, empty for unknown paths and the fake's own /fake endpoints.
	Endpoint Endpoint `json:"endpoint,omitempty"`
	// Status is the response status; 0 when the connection was dropped.
	Status   int           `json:"status"`
	Duration time.Duration `json:"duration"`
	// Location is the Location header of a successful create: the URL of the created cluster or task, which tells
	// apart creates whose path names no cluster (POST /api/v1/clusters).
	Location string `json:"location,omitempty"`
}

// IsWrite reports whether the request could change ScyllaDB Manager's state.
func (r Request) IsWrite() bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead
}

// Server is a fake ScyllaDB Manager. It is safe for concurrent use.
type Server struct {
	version         string
	clock           func() time.Time
	serverTimezone  string
	bearerToken     string
	defaultTopology Topology
	onRequest       func(Request)
	newObjectStore  func(objectstore.Config) (objectstore.Interface, error)

	mu           sync.Mutex
	knobs        Knobs
	clusters     map[string]*cluster
	clusterOrder []string
	tasks        map[string]*task
	taskOrder    []string
	requests     []Request
}

// NewServer returns a fake ScyllaDB Manager with no clusters and healthy knobs, or an error for invalid options.
func NewServer(opts Options) (*Server, error) {
	if err := ValidateOptions(opts); err != nil {
		return nil, fmt.Errorf("invalid fake ScyllaDB Manager options: %w", err)
	}
	s := &Server{
		version:         opts.Version,
		clock:           opts.Clock,
		serverTimezone:  opts.ServerTimezone,
		bearerToken:     opts.BearerToken,
		defaultTopology: DefaultTopology(),
		onRequest:       opts.OnRequest,
		newObjectStore:  opts.NewObjectStore,
		clusters:        map[string]*cluster{},
		tasks:           map[string]*task{},
	}
	if s.version == "" {
		s.version = DefaultVersion
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.newObjectStore == nil {
		s.newObjectStore = objectstore.New
	}
	if s.serverTimezone == "" {
		s.serverTimezone = "UTC"
	}
	if opts.DefaultTopology != nil {
		s.defaultTopology = opts.DefaultTopology.deepCopy()
	}
	return s, nil
}

// ValidateOptions returns an error describing every invalid option.
func ValidateOptions(opts Options) error {
	if opts.ServerTimezone != "" {
		if _, err := time.LoadLocation(opts.ServerTimezone); err != nil {
			return fmt.Errorf("server timezone: %w", err)
		}
	}
	if opts.DefaultTopology != nil {
		if err := opts.DefaultTopology.validate(); err != nil {
			return fmt.Errorf("default topology: %w", err)
		}
	}
	return nil
}

func (s *Server) now() time.Time {
	return s.clock().UTC()
}

// route is a matched API route.
type route struct {
	endpoint Endpoint
	// params are the unescaped path parameters: cluster, task type, task ID, run.
	clusterID, taskType, taskID, run string
	// rawClusterID is the escaped cluster path segment, which ScyllaDB Manager query-unescapes itself.
	rawClusterID string
}

// statusRecorder captures the status a handler writes.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// ServeHTTP serves the ScyllaDB Manager API and the fake's own /fake endpoints.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusRecorder{ResponseWriter: w}
	req := Request{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery}
	defer func() {
		req.Status = rec.status
		req.Duration = time.Since(start)
		req.Location = rec.Header().Get("Location")
		s.recordRequest(req)
	}()

	segments := strings.Split(strings.Trim(r.URL.EscapedPath(), "/"), "/")
	if len(segments) > 0 && segments[0] == "fake" {
		s.serveFake(rec, r, segments[1:])
		return
	}

	rec.Header().Set("Content-Type", "application/json")
	rt, allowed, found := matchRoute(r.Method, segments)
	if !found {
		s.writeError(rec, http.StatusNotFound, fmt.Sprintf("find endpoint for path %s - make sure api-url is correct", r.URL.Path), "")
		return
	}
	if !allowed {
		s.writeError(rec, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path), "")
		return
	}
	req.Endpoint = rt.endpoint

	if s.bearerToken != "" && r.Header.Get("Authorization") != "Bearer "+s.bearerToken {
		s.writeError(rec, http.StatusUnauthorized, "unauthorized: missing or invalid bearer token", "")
		return
	}

	latency, failure := s.endpointKnobs(rt.endpoint)
	if !sleepCtx(r, latency) {
		// The client gave up; nothing is served.
		return
	}
	if failure != nil {
		if failure.DropConnection {
			rec.status = 0
			req.Status = 0
			// Aborting the handler closes the connection without a response.
			panic(http.ErrAbortHandler)
		}
		msg := failure.Message
		if msg == "" {
			msg = "injected failure"
		}
		s.writeError(rec, failure.Status, msg, "")
		return
	}

	s.serveAPI(rec, r, rt)
}

// sleepCtx waits for d or until the request is cancelled; it reports whether the wait completed.
func sleepCtx(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// matchRoute maps a method and escaped path segments to a route. found is false for unknown paths; allowed is
// false when the path exists but not for this method.
func matchRoute(method string, seg []string) (rt route, allowed, found bool) {
	pick := func(byMethod map[string]Endpoint) (route, bool, bool) {
		e, ok := byMethod[method]
		rt.endpoint = e
		return rt, ok, true
	}
	switch {
	case len(seg) == 1 && seg[0] == "ping":
		return pick(map[string]Endpoint{http.MethodGet: EndpointPing})
	case len(seg) == 1 && seg[0] == "version":
		return pick(map[string]Endpoint{http.MethodGet: EndpointVersion})
	case len(seg) < 3 || seg[0] != "api" || seg[1] != "v1":
		return rt, false, false
	}
	seg = seg[2:]
	switch {
	case len(seg) == 1 && seg[0] == "version":
		return pick(map[string]Endpoint{http.MethodGet: EndpointVersion})
	case len(seg) == 1 && seg[0] == "clusters":
		return pick(map[string]Endpoint{http.MethodGet: EndpointListClusters, http.MethodPost: EndpointCreateCluster})
	case len(seg) < 2 || seg[0] != "cluster" || seg[1] == "":
		return rt, false, false
	}
	rt.rawClusterID = seg[1]
	seg = seg[2:]
	switch {
	case len(seg) == 0:
		return pick(map[string]Endpoint{http.MethodGet: EndpointGetCluster, http.MethodPut: EndpointUpdateCluster, http.MethodDelete: EndpointDeleteCluster})
	case len(seg) == 1 && seg[0] == "status":
		return pick(map[string]Endpoint{http.MethodGet: EndpointClusterStatus})
	case len(seg) == 1 && seg[0] == "tasks":
		return pick(map[string]Endpoint{http.MethodGet: EndpointListTasks, http.MethodPost: EndpointCreateTask})
	case len(seg) < 3 || seg[0] != "task" || seg[1] == "" || seg[2] == "":
		return rt, false, false
	}
	var err error
	if rt.taskType, err = url.PathUnescape(seg[1]); err != nil {
		return rt, false, false
	}
	if rt.taskID, err = url.PathUnescape(seg[2]); err != nil {
		return rt, false, false
	}
	seg = seg[3:]
	switch {
	case len(seg) == 0:
		return pick(map[string]Endpoint{http.MethodGet: EndpointGetTask, http.MethodPut: EndpointUpdateTask, http.MethodDelete: EndpointDeleteTask})
	case len(seg) == 1 && seg[0] == "start":
		return pick(map[string]Endpoint{http.MethodPut: EndpointStartTask})
	case len(seg) == 1 && seg[0] == "stop":
		return pick(map[string]Endpoint{http.MethodPut: EndpointStopTask})
	case len(seg) == 1 && seg[0] == "history":
		return pick(map[string]Endpoint{http.MethodGet: EndpointTaskHistory})
	case len(seg) == 1 && seg[0] != "":
		if rt.run, err = url.PathUnescape(seg[0]); err != nil {
			return rt, false, false
		}
		return pick(map[string]Endpoint{http.MethodGet: EndpointTaskRunProgress})
	}
	return rt, false, false
}

// apiError is an error answered with ScyllaDB Manager's error document.
type apiError struct {
	status  int
	message string
	details string
}

func (e *apiError) Error() string {
	return e.message
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: "malformed request: " + fmt.Sprintf(format, args...)}
}

func validationError(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: http.StatusNotFound, message: "get resource: " + fmt.Sprintf(format, args...) + ": not found"}
}

func internalError(format string, args ...any) *apiError {
	return &apiError{status: http.StatusInternalServerError, message: fmt.Sprintf(format, args...)}
}

// wrap prefixes the message of e, the way ScyllaDB Manager wraps errors on their way up.
func (e *apiError) wrap(format string, args ...any) *apiError {
	out := *e
	prefix := fmt.Sprintf(format, args...)
	if strings.HasPrefix(e.message, "get resource: ") {
		// Not-found errors keep "get resource" in front, as ScyllaDB Manager adds it last.
		out.message = "get resource: " + prefix + ": " + strings.TrimPrefix(e.message, "get resource: ")
		return &out
	}
	out.message = prefix + ": " + e.message
	return &out
}

// errorDocument is ScyllaDB Manager's ErrorResponse.
type errorDocument struct {
	Message string `json:"message"`
	Details string `json:"details"`
	TraceID string `json:"trace_id"`
}

func (s *Server) writeError(w http.ResponseWriter, status int, message, details string) {
	writeJSON(w, status, errorDocument{Message: message, Details: details, TraceID: newTraceID()})
}

func (s *Server) writeAPIError(w http.ResponseWriter, err *apiError) {
	s.writeError(w, err.status, err.message, err.details)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf(`{"message":%q}`, err.Error()), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}

// decodeJSON decodes a request body the way ScyllaDB Manager does: unknown fields are ignored, and an empty body
// is an error.
func decodeJSON(r *http.Request, v any) error {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return err
	}
	return json.NewDecoder(&buf).Decode(v)
}

func (s *Server) recordRequest(req Request) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	if len(s.requests) > maxRequestLog {
		s.requests = append([]Request(nil), s.requests[len(s.requests)-maxRequestLog:]...)
	}
	s.mu.Unlock()
	if s.onRequest != nil {
		s.onRequest(req)
	}
}

// Requests returns the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// ResetRequests empties the request log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// serveFake serves the fake's own endpoints under /fake.
func (s *Server) serveFake(w http.ResponseWriter, r *http.Request, seg []string) {
	switch {
	case len(seg) == 1 && seg[0] == "state":
		if r.Method != http.MethodGet {
			s.writeError(w, http.StatusMethodNotAllowed, "the state is read-only", "")
			return
		}
		writeJSON(w, http.StatusOK, s.State())
	case len(seg) == 1 && seg[0] == "knobs":
		s.serveKnobs(w, r)
	case len(seg) == 1 && seg[0] == "requests":
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, http.StatusOK, s.Requests())
		case http.MethodDelete:
			s.ResetRequests()
			w.WriteHeader(http.StatusNoContent)
		default:
			s.writeError(w, http.StatusMethodNotAllowed, "method not allowed", "")
		}
	default:
		s.writeError(w, http.StatusNotFound, fmt.Sprintf("no fake endpoint %s", r.URL.Path), "")
	}
}

func newUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("can't read random bytes: %v", err))
	}
	b[6] = (b[6] & 0x0f) | 0x40
	b[8] = (b[8] & 0x3f) | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func newTraceID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("can't read random bytes: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// isUUID reports whether s is a canonical UUID.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(c)) {
			return false
		}
	}
	return true
}

func isIP(s string) bool {
	return net.ParseIP(s) != nil
}
