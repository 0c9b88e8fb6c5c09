package managerclient

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// projectedDir lays files out as the kubelet does for a mounted Secret: <dir>/<key> is a symlink to ..data/<key>,
// ..data a symlink to a timestamped directory, and an update writes a new directory and renames a new ..data link
// over the old one, so the file's path never changes while its content does.
type projectedDir struct {
	t   *testing.T
	dir string
	gen int
}

func newProjectedDir(t *testing.T, key string, data []byte) (*projectedDir, string) {
	t.Helper()
	d := &projectedDir{t: t, dir: t.TempDir()}
	d.update(key, data)
	if err := os.Symlink(filepath.Join("..data", key), filepath.Join(d.dir, key)); err != nil {
		t.Fatal(err)
	}
	return d, filepath.Join(d.dir, key)
}

// update publishes data as key's new content with the kubelet's symlink swap; nil publishes the directory without
// the key, which leaves the key's link dangling.
func (d *projectedDir) update(key string, data []byte) {
	d.t.Helper()
	d.gen++
	ts := fmt.Sprintf("..2026_11_25_15_00_%02d.%d", d.gen, d.gen)
	if err := os.Mkdir(filepath.Join(d.dir, ts), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if data != nil {
		if err := os.WriteFile(filepath.Join(d.dir, ts, key), data, 0o600); err != nil {
			d.t.Fatal(err)
		}
	}
	tmp := filepath.Join(d.dir, "..data_tmp")
	if err := os.Symlink(ts, tmp); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(d.dir, "..data")); err != nil {
		d.t.Fatal(err)
	}
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// errorLog collects what OnError and OnReload report.
type errorLog struct {
	mu      sync.Mutex
	errs    []string
	reloads int
}

func (l *errorLog) options(clock *fakeClock) FileOptions {
	return FileOptions{
		CheckInterval: 5 * time.Second,
		OnError: func(err error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.errs = append(l.errs, err.Error())
		},
		OnReload: func() {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.reloads++
		},
		now: clock.Now,
	}
}

func (l *errorLog) get() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...), l.reloads
}

// tokenServer answers /ping with 204 to the one token it accepts and 401 to any other, and records the tokens sent.
type tokenServer struct {
	mu       sync.Mutex
	accepted string
	sent     []string
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.sent = append(s.sent, token)
	if token != s.accepted {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"unauthorized"}`))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *tokenServer) accept(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accepted = token
}

func (s *tokenServer) takeSent() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	sent := s.sent
	s.sent = nil
	return sent
}

func TestFileTokenSourceFollowsARotatedTokenWithoutARestart(t *testing.T) {
	t.Parallel()
	server := &tokenServer{accepted: "old-token"}
	srv := httptest.NewServer(server)
	t.Cleanup(srv.Close)
	dir, path := newProjectedDir(t, "token", []byte("old-token\n"))
	clock := &fakeClock{now: time.Unix(1000, 0)}
	log := &errorLog{}
	source, err := NewFileTokenSource(path, log.options(clock))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: srv.URL, TokenSource: source})
	if err != nil {
		t.Fatal(err)
	}
	ping := func() error { return c.Ping(t.Context()) }

	if err := ping(); err != nil {
		t.Fatalf("ping with the first token: %v", err)
	}

	// ScyllaDB Manager and the Secret move to a new token; within the check interval the file is not read again, so
	// the old token is sent and refused, once, and the 401 makes the source read the file at once.
	server.accept("new-token")
	dir.update("token", []byte("new-token\n"))
	if err := ping(); StatusCode(err) != http.StatusUnauthorized {
		t.Fatalf("ping right after the rotation: want a 401 for the old token, got %v", err)
	}
	if err := ping(); err != nil {
		t.Fatalf("ping after the 401: %v", err)
	}
	if diff := cmp.Diff([]string{"old-token", "old-token", "new-token"}, server.takeSent()); diff != "" {
		t.Errorf("tokens sent (-want +got):\n%s", diff)
	}

	// Without a 401, the file is read again once the check interval has passed, and not before.
	dir.update("token", []byte("third-token"))
	if err := ping(); err != nil {
		t.Fatalf("ping before the interval passed: %v", err)
	}
	clock.Step(5 * time.Second)
	server.accept("third-token")
	if err := ping(); err != nil {
		t.Fatalf("ping after the interval: %v", err)
	}
	if diff := cmp.Diff([]string{"new-token", "third-token"}, server.takeSent()); diff != "" {
		t.Errorf("tokens sent (-want +got):\n%s", diff)
	}
	if errs, reloads := log.get(); len(errs) != 0 || reloads != 2 {
		t.Errorf("want no errors and 2 reloads, got %q and %d", errs, reloads)
	}
}

func TestFileTokenSourceKeepsTheLastGoodTokenAndReportsEachProblemOnce(t *testing.T) {
	t.Parallel()
	dir, path := newProjectedDir(t, "token", []byte("good-token"))
	clock := &fakeClock{now: time.Unix(1000, 0)}
	log := &errorLog{}
	source, err := NewFileTokenSource(path, log.options(clock))
	if err != nil {
		t.Fatal(err)
	}
	tokenAfterInterval := func() string {
		clock.Step(5 * time.Second)
		return source.Token()
	}

	for _, bad := range [][]byte{[]byte(" \n"), []byte("secret-a\nsecret-b"), nil} {
		dir.update("token", bad)
		for range 3 {
			if got := tokenAfterInterval(); got != "good-token" {
				t.Fatalf("after the file became %q: token %q, want the last good one", bad, got)
			}
		}
	}
	errs, reloads := log.get()
	if len(errs) != 3 || !strings.Contains(errs[0], "holds no token") || !strings.Contains(errs[1], "must not contain line breaks") || !strings.Contains(errs[2], "can't read file") {
		t.Fatalf("want each of the 3 problems reported once, got %q", errs)
	}
	for _, e := range errs {
		if strings.Contains(e, "secret-") {
			t.Errorf("an error quotes the file's content: %q", e)
		}
	}
	if reloads != 0 {
		t.Errorf("reloads = %d, want 0", reloads)
	}

	dir.update("token", []byte("next-token"))
	if got := tokenAfterInterval(); got != "next-token" {
		t.Fatalf("token after a good file came back = %q, want next-token", got)
	}
	// A problem reported before is reported again once a good file was loaded in between.
	dir.update("token", nil)
	if got := tokenAfterInterval(); got != "next-token" {
		t.Fatalf("token = %q, want next-token", got)
	}
	if errs, reloads := log.get(); len(errs) != 4 || reloads != 1 {
		t.Errorf("want 4 errors and 1 reload, got %q and %d", errs, reloads)
	}
}

func TestFileTokenSourceReadsTheFileOnceForARefusedToken(t *testing.T) {
	t.Parallel()
	dir, path := newProjectedDir(t, "token", []byte("wrong-token"))
	clock := &fakeClock{now: time.Unix(1000, 0)}
	source, err := NewFileTokenSource(path, (&errorLog{}).options(clock))
	if err != nil {
		t.Fatal(err)
	}
	source.Unauthorized("wrong-token")
	// The file changes after the forced read; a second 401 for the same token does not read it again, so a token
	// that is simply wrong costs one read, not one per request.
	dir.update("token", []byte("other-token"))
	source.Unauthorized("wrong-token")
	if got := source.Token(); got != "wrong-token" {
		t.Fatalf("token = %q, want wrong-token until the check interval passes", got)
	}
	clock.Step(5 * time.Second)
	if got := source.Token(); got != "other-token" {
		t.Fatalf("token = %q, want other-token once the interval passed", got)
	}
	// A 401 for a token that is no longer current does not read the file either.
	dir.update("token", []byte("third-token"))
	source.Unauthorized("wrong-token")
	if got := source.Token(); got != "other-token" {
		t.Fatalf("token = %q, want other-token", got)
	}
	source.Unauthorized("other-token")
	if got := source.Token(); got != "third-token" {
		t.Fatalf("token = %q, want third-token after a 401 for the current token", got)
	}
}

func TestFileSourcesRejectUnusableFilesAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newTransport := func(cfg *tls.Config) *http.Transport { return &http.Transport{TLSClientConfig: cfg} }
	for _, tc := range []struct {
		name    string
		new     func() error
		wantErr string
	}{
		{name: "missing token file", new: func() error { _, err := NewFileTokenSource(filepath.Join(dir, "absent"), FileOptions{}); return err }, wantErr: "can't read file"},
		{name: "empty token file", new: func() error { _, err := NewFileTokenSource(write("empty", "\n"), FileOptions{}); return err }, wantErr: "holds no token"},
		{name: "no token path", new: func() error { _, err := NewFileTokenSource("", FileOptions{}); return err }, wantErr: "file path must not be empty"},
		{name: "negative interval", new: func() error {
			_, err := NewFileTokenSource(write("t", "x"), FileOptions{CheckInterval: -time.Second})
			return err
		}, wantErr: "check interval must not be negative"},
		{name: "missing CA file", new: func() error {
			_, err := NewCAFileTransport(filepath.Join(dir, "absent"), nil, newTransport, FileOptions{})
			return err
		}, wantErr: "can't read file"},
		{name: "CA file that is not PEM", new: func() error {
			_, err := NewCAFileTransport(write("ca", "not a certificate"), nil, newTransport, FileOptions{})
			return err
		}, wantErr: "holds no PEM certificate"},
		{name: "no transport builder", new: func() error {
			_, err := NewCAFileTransport(write("ca2", "x"), nil, nil, FileOptions{})
			return err
		}, wantErr: "newTransport must not be nil"},
		{name: "a token and a token source", new: func() error {
			_, err := New(Options{URL: "http://m", Token: "t", TokenSource: &FileTokenSource{}})
			return err
		}, wantErr: "mutually exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.new()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// testCA is a self-signed certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// serving returns a certificate for 127.0.0.1 signed by ca.
func (ca *testCA) serving(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "scylla-manager"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// newTLSServer serves /ping with a certificate signed by ca and counts the connections it closed.
func newTLSServer(t *testing.T, ca *testCA) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	closed := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.serving(t)}}
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateClosed {
			mu.Lock()
			defer mu.Unlock()
			closed++
		}
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, func() int {
		mu.Lock()
		defer mu.Unlock()
		return closed
	}
}

func TestCAFileTransportTrustsARotatedBundleWithoutARestart(t *testing.T) {
	t.Parallel()
	oldCA, newCA := newTestCA(t, "old-ca"), newTestCA(t, "new-ca")
	srv, _ := newTLSServer(t, newCA)
	dir, path := newProjectedDir(t, "ca.crt", oldCA.pem)
	clock := &fakeClock{now: time.Unix(1000, 0)}
	log := &errorLog{}
	transport, err := NewCAFileTransport(path, nil, newTransport, log.options(clock))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: srv.URL, HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	ping := func() error { return c.Ping(t.Context()) }

	if err := ping(); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("ping with the old bundle: want an unknown authority, got %v", err)
	}

	// The new bundle is used once the check interval has passed, and not before.
	dir.update("ca.crt", append(append([]byte(nil), oldCA.pem...), newCA.pem...))
	if err := ping(); err == nil {
		t.Fatal("ping succeeded before the check interval passed")
	}
	clock.Step(5 * time.Second)
	if err := ping(); err != nil {
		t.Fatalf("ping with the new bundle: %v", err)
	}

	// A file that does not parse keeps the last good bundle, and is reported once.
	dir.update("ca.crt", []byte("not a certificate"))
	for range 2 {
		clock.Step(5 * time.Second)
		if err := ping(); err != nil {
			t.Fatalf("ping after the file stopped parsing: want the last good bundle kept, got %v", err)
		}
	}
	if errs, reloads := log.get(); len(errs) != 1 || !strings.Contains(errs[0], "holds no PEM certificate") || reloads != 1 {
		t.Fatalf("want one error for the bad file and one reload, got %q and %d", errs, reloads)
	}

	// A bundle without the server's CA is followed too: trust is withdrawn, not only added.
	dir.update("ca.crt", oldCA.pem)
	clock.Step(5 * time.Second)
	if err := ping(); err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Fatalf("ping after the server's CA left the bundle: want an unknown authority, got %v", err)
	}
}

func TestCAFileTransportClosesTheIdleConnectionsOfTheOldBundle(t *testing.T) {
	t.Parallel()
	ca := newTestCA(t, "ca")
	srv, closedConns := newTLSServer(t, ca)
	dir, path := newProjectedDir(t, "ca.crt", ca.pem)
	clock := &fakeClock{now: time.Unix(1000, 0)}
	transport, err := NewCAFileTransport(path, nil, newTransport, (&errorLog{}).options(clock))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{URL: srv.URL, HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := closedConns(); got != 0 {
		t.Fatalf("%d connections closed before the rotation, want the first one kept alive", got)
	}
	dir.update("ca.crt", append(append([]byte(nil), ca.pem...), newTestCA(t, "other").pem...))
	clock.Step(5 * time.Second)
	if err := c.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for closedConns() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the old transport's idle connection was not closed: %d closed", closedConns())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
