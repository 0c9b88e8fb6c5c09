package framework

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// S3Region is the region the S3 server answers for.
const S3Region = "us-east-1"

// EnsureVersityGW runs hack/build-versitygw.sh, which returns at once when _output/bin/versitygw is up to date and
// otherwise builds it from the Go module proxy (about a minute and a half on 2 cores, once per machine), and
// returns the binary's path. The script's output goes to logPath.
func EnsureVersityGW(ctx context.Context, repoRoot, logPath string) (string, error) {
	binDir := os.Getenv("VERSITYGW_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(repoRoot, "_output", "bin")
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return "", fmt.Errorf("can't create log directory: %w", err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", fmt.Errorf("can't create build log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", "build-versitygw.sh"))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "VERSITYGW_BIN_DIR="+binDir)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("can't build versitygw: %w\n%s", err, FileTail(logPath, 30))
	}
	return filepath.Join(binDir, "versitygw"), nil
}

// S3Server is versitygw, a real S3 server, running on loopback with its POSIX backend: buckets are directories of
// DataDir. It speaks S3 with signature v4, path-style, in region S3Region, for one root account whose keys are
// generated per server.
type S3Server struct {
	// Endpoint is the server's URL, such as http://127.0.0.1:41234.
	Endpoint string
	// AccessKey and SecretKey are the root account's credentials.
	AccessKey string
	SecretKey string
	// Dir holds the server's data, log and access log.
	Dir string
	// DataDir is the POSIX backend's root: one directory per bucket.
	DataDir string
	// LogPath receives the server's output.
	LogPath string
	// AccessLogPath receives one line per S3 request (see Requests).
	AccessLogPath string

	binary string
	port   int

	mu      sync.Mutex
	process *Process
}

// StartS3Server starts versitygw (binary, see EnsureVersityGW) with its data and logs in dir, on a free loopback
// port with newly generated keys, and waits until it answers S3 requests. Stop it with Stop.
func StartS3Server(ctx context.Context, binary, dir string) (*S3Server, error) {
	s := &S3Server{
		Dir:           dir,
		DataDir:       filepath.Join(dir, "data"),
		LogPath:       filepath.Join(dir, "versitygw.log"),
		AccessLogPath: filepath.Join(dir, "access.log"),
		binary:        binary,
	}
	if err := os.MkdirAll(s.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("can't create S3 data directory: %w", err)
	}
	var err error
	if s.AccessKey, err = randomKey(20, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"); err != nil {
		return nil, err
	}
	if s.SecretKey, err = randomKey(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"); err != nil {
		return nil, err
	}
	// The port is free a moment before the server binds it; another process may take it in between, so retry.
	var lastErr error
	for range 3 {
		ports, err := freePorts(1)
		if err != nil {
			return nil, err
		}
		s.port = ports[0]
		s.Endpoint = "http://127.0.0.1:" + strconv.Itoa(s.port)
		lastErr = s.start(ctx)
		if lastErr == nil || !strings.Contains(lastErr.Error(), "address already in use") {
			return s, lastErr
		}
	}
	return nil, lastErr
}

// start runs the server on s.port and waits until it answers.
func (s *S3Server) start(ctx context.Context) error {
	p, err := StartProcess(ProcessSpec{
		Name: "versitygw",
		Path: s.binary,
		Args: []string{
			"--port", "127.0.0.1:" + strconv.Itoa(s.port),
			"--region", S3Region,
			"--access-log", s.AccessLogPath,
			"--quiet",
			"posix", s.DataDir,
		},
		// The keys go through the environment, not the command line that any local user can read.
		Env:     []string{"ROOT_ACCESS_KEY_ID=" + s.AccessKey, "ROOT_SECRET_ACCESS_KEY=" + s.SecretKey},
		LogPath: s.LogPath,
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.process = p
	s.mu.Unlock()
	store, err := s.Client()
	if err != nil {
		_ = p.Stop(5 * time.Second)
		return err
	}
	err = WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		if exited, err := p.Exited(); exited {
			return false, StopPolling(fmt.Errorf("versitygw exited: %v\n%s", err, p.LogTail(20)))
		}
		callCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		// Any answer to a signed request means the server is up and takes the keys.
		_, err := store.BucketExists(callCtx, "readiness-probe")
		return err == nil, nil
	})
	if err != nil {
		_ = p.Stop(5 * time.Second)
		return fmt.Errorf("versitygw on %s did not become ready: %w\n%s", s.Endpoint, err, p.LogTail(20))
	}
	return nil
}

// Config returns the objectstore configuration that reaches the server with the root account.
func (s *S3Server) Config() objectstore.Config {
	return objectstore.Config{
		Endpoint:        s.Endpoint,
		Region:          S3Region,
		AccessKeyID:     s.AccessKey,
		SecretAccessKey: s.SecretKey,
		// A test that stops the server wants to see the failure, not minio-go's retries.
		MaxAttempts: 1,
	}
}

// FakeManagerEndpoint returns the fake ScyllaDB Manager's S3Endpoints knob value that makes it upload backups to
// this server, for "s3:<bucket>" locations.
func (s *S3Server) FakeManagerEndpoint() fakescyllamanager.S3Endpoint {
	return fakescyllamanager.S3Endpoint{Endpoint: s.Endpoint, Region: S3Region, AccessKeyID: s.AccessKey, SecretAccessKey: s.SecretKey}
}

// Client returns an objectstore client of the server with the root account.
func (s *S3Server) Client() (objectstore.Interface, error) {
	return objectstore.New(s.Config())
}

// CreateBucket creates a bucket.
func (s *S3Server) CreateBucket(ctx context.Context, bucket string) error {
	store, err := s.Client()
	if err != nil {
		return err
	}
	return store.MakeBucket(ctx, bucket, S3Region)
}

// Process returns the running server process (a new one after Restart).
func (s *S3Server) Process() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.process
}

// Stop stops the server; its data stays in DataDir, so Restart brings the same buckets back.
func (s *S3Server) Stop() error {
	p := s.Process()
	if p == nil {
		return nil
	}
	return p.Stop(10 * time.Second)
}

// Restart starts a stopped server again on the same port, with the same keys and data, so that clients configured
// before it stopped reach it again.
func (s *S3Server) Restart(ctx context.Context) error {
	if p := s.Process(); p != nil {
		if exited, _ := p.Exited(); !exited {
			return errors.New("versitygw is still running; stop it before restarting it")
		}
	}
	return s.start(ctx)
}

// S3Request is one line of the server's access log.
type S3Request struct {
	// Operation is the S3 operation, such as s3_ListObjectsV2, s3_DeleteObjects or s3_HeadBucket.
	Operation string
	Bucket    string
	Key       string
	Status    int
}

// Requests returns the requests the server has logged so far, oldest first, across restarts.
func (s *S3Server) Requests() ([]S3Request, error) {
	f, err := os.Open(s.AccessLogPath)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("can't read the S3 access log: %w", err)
	}
	defer f.Close()
	var out []S3Request
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if r, ok := parseS3AccessLogLine(sc.Text()); ok {
			out = append(out, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("can't read the S3 access log: %w", err)
	}
	return out, nil
}

// parseS3AccessLogLine parses versitygw's S3 server access log format, that of AWS: bucket owner, bucket,
// [time], remote IP, requester, request ID, operation, key, request URI, status, ...
func parseS3AccessLogLine(line string) (S3Request, bool) {
	open, end := strings.Index(line, " ["), strings.Index(line, "] ")
	if open < 0 || end < open {
		return S3Request{}, false
	}
	head := strings.Fields(line[:open])
	tail := strings.Fields(line[end+2:])
	if len(head) != 2 || len(tail) < 7 {
		return S3Request{}, false
	}
	status, err := strconv.Atoi(tail[6])
	if err != nil {
		return S3Request{}, false
	}
	dash := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	return S3Request{Operation: tail[3], Bucket: dash(head[1]), Key: dash(tail[4]), Status: status}, true
}

func randomKey(n int, alphabet string) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("can't generate a key: %w", err)
	}
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b), nil
}

// StartS3Server starts versitygw for the rest of the test (building it first if needed), with its data and logs in
// the suite's directory.
func (f *Framework) StartS3Server() *S3Server {
	f.t.Helper()
	ctx := f.t.Context()
	dir := filepath.Join(f.suite.Dir, "s3-"+sanitizeName(f.t.Name(), 60))
	binary, err := EnsureVersityGW(ctx, f.suite.RepoRoot, filepath.Join(f.suite.Dir, "build-versitygw.log"))
	if err != nil {
		f.t.Fatalf("can't build the S3 server: %v", err)
	}
	s, err := StartS3Server(ctx, binary, dir)
	if err != nil {
		f.t.Fatalf("can't start the S3 server: %v", err)
	}
	f.t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			f.t.Errorf("can't stop the S3 server: %v", err)
		}
		// The objects are test data; the logs stay.
		_ = os.RemoveAll(s.DataDir)
	})
	return s
}
