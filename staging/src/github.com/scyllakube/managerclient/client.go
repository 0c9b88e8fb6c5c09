package managerclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

const (
	// APIPath is the base path of ScyllaDB Manager's versioned API.
	APIPath = "/api/v1"

	// DefaultRequestTimeout bounds every call except task create and update.
	DefaultRequestTimeout = 30 * time.Second
	// DefaultTaskWriteTimeout bounds task create and update. ScyllaDB Manager validates the target against the live
	// cluster before storing a task; for a backup task that means checking every location from every node, which can
	// take many seconds.
	DefaultTaskWriteTimeout = 5 * time.Minute

	// maxErrorBody bounds how much of an error response is read.
	maxErrorBody = 1 << 20
	// maxRawErrorMessage bounds the raw body quoted when an error response is not an error document.
	maxRawErrorMessage = 512
)

// Options configure a Client.
type Options struct {
	// URL locates ScyllaDB Manager, with or without the /api/v1 suffix, for example "http://127.0.0.1:5080".
	// Only http and https are accepted.
	URL string
	// Token, when set, is sent as "Authorization: Bearer <Token>".
	Token string
	// TokenSource, when set, supplies the token of each request instead of Token (for example a FileTokenSource
	// that follows a rotated file), and is told about 401 answers. It can't be combined with Token.
	TokenSource TokenSource
	// TLSConfig configures HTTPS. It can't be combined with HTTPClient; configure that client's transport instead.
	TLSConfig *tls.Config
	// HTTPClient replaces the default client. Its Timeout should be zero: the per-call timeouts below apply.
	HTTPClient *http.Client
	// RequestTimeout bounds each call; zero means DefaultRequestTimeout. A shorter deadline on the call's
	// context wins.
	RequestTimeout time.Duration
	// TaskWriteTimeout bounds task create and update; zero means DefaultTaskWriteTimeout.
	TaskWriteTimeout time.Duration
	// UserAgent is sent as the User-Agent header when set.
	UserAgent string
}

// Client calls the ScyllaDB Manager REST API. It is safe for concurrent use.
type Client struct {
	root             *url.URL
	httpClient       *http.Client
	token            string
	tokenSource      TokenSource
	userAgent        string
	requestTimeout   time.Duration
	taskWriteTimeout time.Duration
}

// New returns a Client for opts.
func New(opts Options) (*Client, error) {
	root, err := parseRootURL(opts.URL)
	if err != nil {
		return nil, err
	}
	if opts.RequestTimeout < 0 {
		return nil, fmt.Errorf("request timeout must not be negative, got %v", opts.RequestTimeout)
	}
	if opts.TaskWriteTimeout < 0 {
		return nil, fmt.Errorf("task write timeout must not be negative, got %v", opts.TaskWriteTimeout)
	}
	if opts.TLSConfig != nil && opts.HTTPClient != nil {
		return nil, errors.New("TLSConfig and HTTPClient are mutually exclusive: set TLS on the given client's transport")
	}
	if strings.ContainsAny(opts.Token, "\r\n") {
		return nil, errors.New("token must not contain line breaks")
	}
	if opts.TokenSource != nil && len(opts.Token) != 0 {
		return nil, errors.New("Token and TokenSource are mutually exclusive")
	}

	c := &Client{
		root:             root,
		httpClient:       opts.HTTPClient,
		token:            opts.Token,
		tokenSource:      opts.TokenSource,
		userAgent:        opts.UserAgent,
		requestTimeout:   opts.RequestTimeout,
		taskWriteTimeout: opts.TaskWriteTimeout,
	}
	if c.requestTimeout == 0 {
		c.requestTimeout = DefaultRequestTimeout
	}
	if c.taskWriteTimeout == 0 {
		c.taskWriteTimeout = DefaultTaskWriteTimeout
	}
	if c.httpClient == nil {
		c.httpClient = &http.Client{Transport: newTransport(opts.TLSConfig)}
	}
	return c, nil
}

// newTransport returns a transport with bounded connection set-up; response time is bounded per call instead,
// because task creation legitimately takes long.
func newTransport(tlsConfig *tls.Config) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = 10 * time.Second
	if tlsConfig != nil {
		t.TLSClientConfig = tlsConfig.Clone()
	}
	return t
}

func parseRootURL(raw string) (*url.URL, error) {
	if raw == "" {
		return nil, errors.New("ScyllaDB Manager URL must not be empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("can't parse ScyllaDB Manager URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("ScyllaDB Manager URL %q must use http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("ScyllaDB Manager URL %q has no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("ScyllaDB Manager URL %q must not have a query or fragment", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("ScyllaDB Manager URL %q must not carry credentials; use Options.Token", u.Redacted())
	}
	p := strings.TrimSuffix(u.Path, "/")
	p = strings.TrimSuffix(p, APIPath)
	u.Path = strings.TrimSuffix(p, "/")
	u.RawPath = ""
	return u, nil
}

// URL returns the root URL of ScyllaDB Manager (without /api/v1).
func (c *Client) URL() string {
	return c.root.String()
}

// request is one API call.
type request struct {
	method string
	// path is escaped and relative to /api/v1, or to the root when unversioned is set.
	path        string
	unversioned bool
	query       url.Values
	body        any
	timeout     time.Duration
}

// response is what a call returns besides the decoded body.
type response struct {
	header http.Header
	status int
}

// do sends req and decodes a 2xx body into out when out is not nil. Any other status is an *APIError.
func (c *Client) do(ctx context.Context, req request, out any) (*response, error) {
	timeout := req.timeout
	if timeout == 0 {
		timeout = c.requestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	displayPath := req.path
	if !req.unversioned {
		displayPath = APIPath + req.path
	}
	u, err := url.Parse(c.root.String() + displayPath)
	if err != nil {
		return nil, fmt.Errorf("can't build URL for %s %s: %w", req.method, displayPath, err)
	}
	if len(req.query) > 0 {
		u.RawQuery = req.query.Encode()
	}

	var body io.Reader
	if req.body != nil {
		data, err := json.Marshal(req.body)
		if err != nil {
			return nil, fmt.Errorf("can't encode body of %s %s: %w", req.method, displayPath, err)
		}
		body = bytes.NewReader(data)
	}
	httpReq, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("can't build request %s %s: %w", req.method, displayPath, err)
	}
	httpReq.Header.Set("Accept", "application/json")
	if req.body != nil {
		httpReq.Header.Set("Content-Type", "application/json")
	}
	token := c.token
	if c.tokenSource != nil {
		token = c.tokenSource.Token()
	}
	if token != "" {
		httpReq.Header.Set("Authorization", "Bearer "+token)
	}
	if c.userAgent != "" {
		httpReq.Header.Set("User-Agent", c.userAgent)
	}

	resp, err := c.httpClient.Do(httpReq)
	if err != nil {
		return nil, fmt.Errorf("can't %s %s: %w", req.method, displayPath, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode == http.StatusUnauthorized && c.tokenSource != nil {
		// The request is not sent again: the next one carries the token the source has then.
		c.tokenSource.Unauthorized(token)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, readAPIError(resp, req.method, displayPath)
	}
	if out != nil {
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("can't read response of %s %s: %w", req.method, displayPath, err)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, fmt.Errorf("can't decode response of %s %s: empty body", req.method, displayPath)
		}
		if err := json.Unmarshal(data, out); err != nil {
			return nil, fmt.Errorf("can't decode response of %s %s: %w", req.method, displayPath, err)
		}
	} else {
		// Drain so the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	}
	return &response{header: resp.Header, status: resp.StatusCode}, nil
}

func readAPIError(resp *http.Response, method, displayPath string) error {
	apiErr := &APIError{Method: method, Path: displayPath, StatusCode: resp.StatusCode}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil {
		apiErr.Message = fmt.Sprintf("can't read error body: %v", err)
		return apiErr
	}
	var eb errorBody
	if json.Unmarshal(data, &eb) == nil && (eb.Message != "" || eb.TraceID != "") {
		apiErr.Message = eb.Message
		apiErr.Details = eb.Details
		apiErr.TraceID = eb.TraceID
		return apiErr
	}
	msg := strings.TrimSpace(string(data))
	if len(msg) > maxRawErrorMessage {
		msg = msg[:maxRawErrorMessage] + "…"
	}
	apiErr.Message = msg
	return apiErr
}

// idFromLocation returns the UUID in the last path segment of the Location header, the only place ScyllaDB
// Manager reports the ID of a created object.
func idFromLocation(resp *response) (string, error) {
	loc := resp.header.Get("Location")
	if loc == "" {
		return "", fmt.Errorf("response %d has no Location header", resp.status)
	}
	u, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Errorf("can't parse Location %q: %w", loc, err)
	}
	id := path.Base(strings.TrimSuffix(u.Path, "/"))
	if !IsUUID(id) {
		return "", fmt.Errorf("last segment of Location %q is not a UUID", loc)
	}
	return id, nil
}

// IsUUID reports whether s is a UUID in its canonical textual form (8-4-4-4-12 hexadecimal digits).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			isHex := (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
			if !isHex {
				return false
			}
		}
	}
	return true
}

// requireArgs returns an error naming the first empty argument; names and values alternate.
func requireArgs(nameValues ...string) error {
	for i := 0; i+1 < len(nameValues); i += 2 {
		if nameValues[i+1] == "" {
			return fmt.Errorf("%s must not be empty", nameValues[i])
		}
	}
	return nil
}

// Ping checks that ScyllaDB Manager answers (GET /ping, 204).
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/ping", unversioned: true}, nil)
	return err
}

// Version returns the version of ScyllaDB Manager's server.
func (c *Client) Version(ctx context.Context) (string, error) {
	var v struct {
		Version string `json:"version"`
	}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/version"}, &v); err != nil {
		return "", err
	}
	return v.Version, nil
}
