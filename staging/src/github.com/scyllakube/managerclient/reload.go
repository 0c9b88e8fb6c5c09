package managerclient

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// DefaultFileCheckInterval is how often a followed file is read again at most.
const DefaultFileCheckInterval = 5 * time.Second

// TokenSource supplies the bearer token of each request. Implementations must be safe for concurrent use.
type TokenSource interface {
	// Token returns the token to send; empty sends none.
	Token() string
	// Unauthorized tells the source that ScyllaDB Manager answered 401 to a request that carried token.
	Unauthorized(token string)
}

// FileOptions configure how a file is followed.
type FileOptions struct {
	// CheckInterval is the shortest time between two reads of the file; zero means DefaultFileCheckInterval. The file
	// is read lazily, by the first request after the interval, so nothing runs between requests.
	CheckInterval time.Duration
	// OnError, when set, is called with each new problem with the file (it can't be read, or its content is not
	// usable); the last good content stays in use. A problem is reported again only after the file changed or was
	// usable in between. The error never quotes the file's content.
	OnError func(err error)
	// OnReload, when set, is called after a changed file was loaded.
	OnReload func()

	// now replaces time.Now in tests.
	now func() time.Time
}

// polledFile reads a file at most once per interval and tells when its content changed. Comparing the content
// rather than the modification time also catches the kubelet's symlink swap, which leaves the new file with any
// timestamp. It is not safe for concurrent use; its owner serializes calls.
type polledFile struct {
	path      string
	opts      FileOptions
	lastCheck time.Time
	content   []byte
	lastErr   string
}

func newPolledFile(path string, opts FileOptions) (*polledFile, []byte, error) {
	if len(path) == 0 {
		return nil, nil, errors.New("file path must not be empty")
	}
	if opts.CheckInterval < 0 {
		return nil, nil, fmt.Errorf("check interval must not be negative, got %v", opts.CheckInterval)
	}
	if opts.CheckInterval == 0 {
		opts.CheckInterval = DefaultFileCheckInterval
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	f := &polledFile{path: path, opts: opts}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("can't read file: %w", err)
	}
	f.content = data
	f.lastCheck = opts.now()
	return f, data, nil
}

// poll returns the file's content when it differs from the last content seen. Unless force is set, it reads the
// file only once the check interval has passed since the last read.
func (f *polledFile) poll(force bool) ([]byte, bool) {
	now := f.opts.now()
	if !force && now.Sub(f.lastCheck) < f.opts.CheckInterval {
		return nil, false
	}
	f.lastCheck = now
	data, err := os.ReadFile(f.path)
	if err != nil {
		f.report(fmt.Errorf("can't read file: %w", err))
		return nil, false
	}
	if bytes.Equal(data, f.content) {
		return nil, false
	}
	f.content = data
	return data, true
}

// report passes err to OnError unless it is the problem reported last.
func (f *polledFile) report(err error) {
	if err.Error() == f.lastErr {
		return
	}
	f.lastErr = err.Error()
	if f.opts.OnError != nil {
		f.opts.OnError(fmt.Errorf("%s: %w", f.path, err))
	}
}

// loaded records that the content was usable.
func (f *polledFile) loaded() {
	f.lastErr = ""
	if f.opts.OnReload != nil {
		f.opts.OnReload()
	}
}

// ParseToken returns the token data holds, without surrounding whitespace. The errors never quote data.
func ParseToken(data []byte) (string, error) {
	token := strings.TrimSpace(string(data))
	switch {
	case len(token) == 0:
		return "", errors.New("holds no token")
	case strings.ContainsAny(token, "\r\n"):
		return "", errors.New("holds more than one line: the token must not contain line breaks")
	}
	return token, nil
}

// FileTokenSource is a TokenSource that follows a file, such as a mounted Secret's key, which the kubelet replaces
// when the Secret changes. The file is read again at most once per check interval, and at once after a 401 answer
// to its current token (once per token), so a rotated token is used from the next request on.
type FileTokenSource struct {
	mu          sync.Mutex
	file        *polledFile
	token       string
	forcedAfter string
}

var _ TokenSource = &FileTokenSource{}

// NewFileTokenSource reads the token in path. A file that can't be read or holds no usable token is an error.
func NewFileTokenSource(path string, opts FileOptions) (*FileTokenSource, error) {
	f, data, err := newPolledFile(path, opts)
	if err != nil {
		return nil, err
	}
	token, err := ParseToken(data)
	if err != nil {
		return nil, err
	}
	return &FileTokenSource{file: f, token: token}, nil
}

// Token returns the last good token, reading the file first when the check interval has passed.
func (s *FileTokenSource) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshLocked(false)
	return s.token
}

// Unauthorized reads the file at once if token is the current one and no 401 forced a read for it yet: a token
// the server refuses is most likely a rotated one, but a token that is simply wrong must not cost a read per request.
func (s *FileTokenSource) Unauthorized(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token != s.token || token == s.forcedAfter {
		return
	}
	s.forcedAfter = token
	s.refreshLocked(true)
}

func (s *FileTokenSource) refreshLocked(force bool) {
	data, changed := s.file.poll(force)
	if !changed {
		return
	}
	token, err := ParseToken(data)
	if err != nil {
		s.file.report(err)
		return
	}
	if token == s.token {
		// Only whitespace changed.
		s.file.lastErr = ""
		return
	}
	s.token = token
	s.file.loaded()
}

// CAFileTransport is an http.RoundTripper that trusts the certificate authorities of a PEM file and follows it: once
// the file changed and parses, later requests go through a new transport whose RootCAs is the new bundle, and the
// idle connections of the previous one are closed. Until then the previous bundle stays in use.
type CAFileTransport struct {
	mu           sync.Mutex
	file         *polledFile
	newTransport func(*tls.Config) *http.Transport
	tlsConfig    *tls.Config
	current      *http.Transport
}

var _ http.RoundTripper = &CAFileTransport{}

// NewCAFileTransport reads the bundle in path and returns a transport trusting it. newTransport builds each
// transport from tlsConfig, a copy of base (nil for defaults, with TLS 1.2 at least) with RootCAs set.
func NewCAFileTransport(path string, base *tls.Config, newTransport func(tlsConfig *tls.Config) *http.Transport, opts FileOptions) (*CAFileTransport, error) {
	if newTransport == nil {
		return nil, errors.New("newTransport must not be nil")
	}
	f, data, err := newPolledFile(path, opts)
	if err != nil {
		return nil, err
	}
	if base == nil {
		base = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	t := &CAFileTransport{file: f, newTransport: newTransport, tlsConfig: base.Clone()}
	if t.current, err = t.build(data); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *CAFileTransport) build(data []byte) (*http.Transport, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("holds no PEM certificate")
	}
	cfg := t.tlsConfig.Clone()
	cfg.RootCAs = pool
	return t.newTransport(cfg), nil
}

// RoundTrip sends req through the transport of the last good bundle, reading the file first when the check
// interval has passed.
func (t *CAFileTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	return t.transport().RoundTrip(req)
}

func (t *CAFileTransport) transport() *http.Transport {
	t.mu.Lock()
	defer t.mu.Unlock()
	data, changed := t.file.poll(false)
	if !changed {
		return t.current
	}
	next, err := t.build(data)
	if err != nil {
		t.file.report(err)
		return t.current
	}
	// Requests in flight on the old transport finish; its idle connections would otherwise keep trusting the old
	// bundle until they time out.
	t.current.CloseIdleConnections()
	t.current = next
	t.file.loaded()
	return t.current
}

// CloseIdleConnections closes the idle connections of the current transport.
func (t *CAFileTransport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current.CloseIdleConnections()
}
