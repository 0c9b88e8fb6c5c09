package managerclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestNewOptions(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name     string
		opts     Options
		wantURL  string
		wantErr  string
		checkOut func(t *testing.T, c *Client)
	}{
		{name: "root URL", opts: Options{URL: "http://127.0.0.1:5080"}, wantURL: "http://127.0.0.1:5080"},
		{name: "API URL", opts: Options{URL: "http://127.0.0.1:5080/api/v1"}, wantURL: "http://127.0.0.1:5080"},
		{name: "API URL with a trailing slash", opts: Options{URL: "https://manager:5443/api/v1/"}, wantURL: "https://manager:5443"},
		{name: "a path prefix is kept", opts: Options{URL: "http://proxy/manager/api/v1"}, wantURL: "http://proxy/manager"},
		{name: "an empty URL is rejected", opts: Options{}, wantErr: "must not be empty"},
		{name: "an unparsable URL is rejected", opts: Options{URL: "http://[::1"}, wantErr: "can't parse"},
		{name: "another scheme is rejected", opts: Options{URL: "ftp://manager"}, wantErr: "must use http or https"},
		{name: "a URL without host is rejected", opts: Options{URL: "http:///api/v1"}, wantErr: "has no host"},
		{name: "a query is rejected", opts: Options{URL: "http://manager?x=1"}, wantErr: "query or fragment"},
		{name: "credentials in the URL are rejected", opts: Options{URL: "http://u:p@manager"}, wantErr: "must not carry credentials"},
		{name: "a negative request timeout is rejected", opts: Options{URL: "http://m", RequestTimeout: -time.Second}, wantErr: "request timeout"},
		{name: "a negative task write timeout is rejected", opts: Options{URL: "http://m", TaskWriteTimeout: -time.Second}, wantErr: "task write timeout"},
		{
			name:    "TLS configuration and an HTTP client are exclusive",
			opts:    Options{URL: "https://m", TLSConfig: &tls.Config{}, HTTPClient: &http.Client{}},
			wantErr: "mutually exclusive",
		},
		{name: "a token with a line break is rejected", opts: Options{URL: "http://m", Token: "a\nb"}, wantErr: "line breaks"},
		{
			name:    "defaults apply",
			opts:    Options{URL: "http://m"},
			wantURL: "http://m",
			checkOut: func(t *testing.T, c *Client) {
				if c.requestTimeout != DefaultRequestTimeout || c.taskWriteTimeout != DefaultTaskWriteTimeout {
					t.Errorf("timeouts %v and %v, want the defaults", c.requestTimeout, c.taskWriteTimeout)
				}
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := New(tc.opts)
			if expectError(t, err, tc.wantErr) {
				return
			}
			if c.URL() != tc.wantURL {
				t.Errorf("URL %q, want %q", c.URL(), tc.wantURL)
			}
			if tc.checkOut != nil {
				tc.checkOut(t, c)
			}
		})
	}
}

// failingServer fails the test on any request: it backs calls that must be rejected before sending anything.
func failingServer(t *testing.T) *Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("unexpected request %s %s", r.Method, r.URL)
		w.WriteHeader(599)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestClientRejectsBadArgumentsWithoutCallingTheServer(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		call    func(ctx context.Context, c *Client) error
		wantErr string
	}{
		{"get cluster without ID", func(ctx context.Context, c *Client) error { _, err := c.GetCluster(ctx, ""); return err }, "cluster ID must not be empty"},
		{"create nil cluster", func(ctx context.Context, c *Client) error { _, err := c.CreateCluster(ctx, nil); return err }, "must not be nil"},
		{"create cluster with a non-UUID ID", func(ctx context.Context, c *Client) error {
			_, err := c.CreateCluster(ctx, &Cluster{ID: "abc"})
			return err
		}, `cluster ID "abc" is not a UUID`},
		{"update nil cluster", func(ctx context.Context, c *Client) error { _, err := c.UpdateCluster(ctx, nil); return err }, "must not be nil"},
		{"update cluster without ID", func(ctx context.Context, c *Client) error {
			_, err := c.UpdateCluster(ctx, &Cluster{Name: "x"})
			return err
		}, "cluster ID must not be empty"},
		{"delete cluster without ID", func(ctx context.Context, c *Client) error { return c.DeleteCluster(ctx, "") }, "cluster ID must not be empty"},
		{"delete secrets without a selection", func(ctx context.Context, c *Client) error {
			return c.DeleteClusterSecrets(ctx, testClusterID, DeleteSecretsOptions{})
		}, "no secret selected"},
		{"status without ID", func(ctx context.Context, c *Client) error { _, err := c.ClusterStatus(ctx, ""); return err }, "cluster ID must not be empty"},
		{"list tasks without cluster", func(ctx context.Context, c *Client) error {
			_, err := c.ListTasks(ctx, "", ListTasksOptions{})
			return err
		}, "cluster ID must not be empty"},
		{"get task without type", func(ctx context.Context, c *Client) error {
			_, err := c.GetTask(ctx, testClusterID, "", testBackupID)
			return err
		}, "task type must not be empty"},
		{"get task without ID", func(ctx context.Context, c *Client) error {
			_, err := c.GetTask(ctx, testClusterID, TaskTypeBackup, "")
			return err
		}, "task ID must not be empty"},
		{"create nil task", func(ctx context.Context, c *Client) error {
			_, err := c.CreateTask(ctx, testClusterID, nil)
			return err
		}, "must not be nil"},
		{"create task without type", func(ctx context.Context, c *Client) error {
			_, err := c.CreateTask(ctx, testClusterID, &TaskUpdate{Name: "x"})
			return err
		}, "task type must not be empty"},
		{"update nil task", func(ctx context.Context, c *Client) error {
			_, err := c.UpdateTask(ctx, testClusterID, TaskTypeBackup, testBackupID, nil)
			return err
		}, "must not be nil"},
		{"update task with another type", func(ctx context.Context, c *Client) error {
			_, err := c.UpdateTask(ctx, testClusterID, TaskTypeBackup, testBackupID, &TaskUpdate{Type: TaskTypeRepair})
			return err
		}, "differs"},
		{"delete task without ID", func(ctx context.Context, c *Client) error {
			return c.DeleteTask(ctx, testClusterID, TaskTypeBackup, "")
		}, "task ID must not be empty"},
		{"start task without cluster", func(ctx context.Context, c *Client) error {
			return c.StartTask(ctx, "", TaskTypeBackup, testBackupID, StartTaskOptions{})
		}, "cluster ID must not be empty"},
		{"stop task without type", func(ctx context.Context, c *Client) error {
			return c.StopTask(ctx, testClusterID, "", testBackupID, StopTaskOptions{})
		}, "task type must not be empty"},
		{"history with a negative limit", func(ctx context.Context, c *Client) error {
			_, err := c.TaskHistory(ctx, testClusterID, TaskTypeBackup, testBackupID, -1)
			return err
		}, "limit must not be negative"},
		{"progress without run", func(ctx context.Context, c *Client) error {
			_, err := c.TaskRunProgress(ctx, testClusterID, TaskTypeBackup, testBackupID, "")
			return err
		}, "run must not be empty"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := failingServer(t)
			expectError(t, tc.call(t.Context(), c), tc.wantErr)
		})
	}
}

// blockingServer answers after the request's context ends or release is closed, whichever comes first.
func blockingServer(t *testing.T, release <-chan struct{}) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			return
		case <-release:
		}
		w.Header().Set("Location", "/api/v1/cluster/"+testClusterID+"/task/backup/"+testBackupID)
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestClientTransportErrors(t *testing.T) {
	t.Parallel()

	t.Run("a refused connection has no status", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		c, err := New(Options{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(t.Context())
		if err == nil || StatusCode(err) != 0 || IsNotFound(err) || IsBadRequest(err) || IsServerError(err) {
			t.Fatalf("want a transport error without status, got %v", err)
		}
		if !strings.HasPrefix(err.Error(), "can't GET /ping") {
			t.Errorf("error %q does not name the request", err)
		}
	})

	t.Run("the request timeout ends a call", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		c, err := New(Options{URL: blockingServer(t, release), RequestTimeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.ListClusters(t.Context())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a deadline error, got %v", err)
		}
	})

	t.Run("task creation is bounded by the task write timeout, not the request timeout", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		c, err := New(Options{URL: blockingServer(t, release), RequestTimeout: time.Nanosecond, TaskWriteTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		type result struct {
			id  string
			err error
		}
		done := make(chan result)
		go func() {
			id, err := c.CreateTask(context.Background(), testClusterID, &TaskUpdate{Type: TaskTypeBackup})
			done <- result{id, err}
		}()
		// A request timeout of one nanosecond fails any call bounded by it before it reaches the server.
		close(release)
		got := <-done
		if got.err != nil || got.id != testBackupID {
			t.Fatalf("got %q, %v; want %q", got.id, got.err, testBackupID)
		}
	})

	t.Run("the caller's context wins over the timeouts", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		c, err := New(Options{URL: blockingServer(t, release)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = c.CreateTask(ctx, testClusterID, &TaskUpdate{Type: TaskTypeBackup})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want a cancellation error, got %v", err)
		}
	})
}

func TestClientTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ping" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())

	t.Run("a trusted server answers", func(t *testing.T) {
		t.Parallel()
		c, err := New(Options{URL: srv.URL, TLSConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("an untrusted server is refused", func(t *testing.T) {
		t.Parallel()
		c, err := New(Options{URL: srv.URL, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12}})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Ping(t.Context())
		var certErr *tls.CertificateVerificationError
		if !errors.As(err, &certErr) {
			t.Fatalf("want a certificate verification error, got %v", err)
		}
	})
}

func TestErrorHelpers(t *testing.T) {
	t.Parallel()
	wrapped := func(code int) error {
		return errors.Join(errors.New("context"), &APIError{StatusCode: code, Message: "m"})
	}
	tt := []struct {
		name                              string
		err                               error
		notFound, badRequest, serverError bool
		status                            int
		message                           string
	}{
		{name: "nil", err: nil, message: ""},
		{name: "plain error", err: errors.New("boom"), message: "boom"},
		{name: "404", err: wrapped(404), status: 404, message: "m"},
		{
			name:     "404 of an object ScyllaDB Manager does not hold",
			err:      errors.Join(errors.New("context"), &APIError{StatusCode: 404, Message: `get resource: load cluster "x": not found`}),
			notFound: true, status: 404, message: `get resource: load cluster "x": not found`,
		},
		{
			name:   "404 of a path ScyllaDB Manager has no endpoint for",
			err:    &APIError{StatusCode: 404, Message: "find endpoint for path /v1/api/v1/cluster/x - make sure api-url is correct"},
			status: 404, message: "find endpoint for path /v1/api/v1/cluster/x - make sure api-url is correct",
		},
		{name: "404 of a proxy", err: &APIError{StatusCode: 404, Message: "404 page not found"}, status: 404, message: "404 page not found"},
		{name: "400", err: wrapped(400), badRequest: true, status: 400, message: "m"},
		{name: "500", err: wrapped(500), serverError: true, status: 500, message: "m"},
		{name: "503", err: wrapped(503), serverError: true, status: 503, message: "m"},
		{name: "409", err: wrapped(409), status: 409, message: "m"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsNotFound(tc.err); got != tc.notFound {
				t.Errorf("IsNotFound %v", got)
			}
			if got := IsBadRequest(tc.err); got != tc.badRequest {
				t.Errorf("IsBadRequest %v", got)
			}
			if got := IsServerError(tc.err); got != tc.serverError {
				t.Errorf("IsServerError %v", got)
			}
			if got := StatusCode(tc.err); got != tc.status {
				t.Errorf("StatusCode %d", got)
			}
			if got := ErrorMessage(tc.err); got != tc.message {
				t.Errorf("ErrorMessage %q", got)
			}
		})
	}

	t.Run("Error names the request, status, details and trace ID", func(t *testing.T) {
		t.Parallel()
		err := &APIError{Method: "POST", Path: "/api/v1/clusters", StatusCode: 500, Message: "m", Details: "d", TraceID: "t"}
		want := "POST /api/v1/clusters: 500 Internal Server Error: m (d) [trace_id t]"
		if err.Error() != want {
			t.Errorf("got %q, want %q", err.Error(), want)
		}
	})
}

func TestIsUUID(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"3f2504e0-4f89-41d3-9a0c-0305e82c3301": true,
		"3F2504E0-4F89-41D3-9A0C-0305E82C3301": true,
		"3f2504e0-4f89-41d3-9a0c-0305e82c330":  false,
		"3f2504e0x4f89-41d3-9a0c-0305e82c3301": false,
		"3f2504e0-4f89-41d3-9a0c-0305e82c330g": false,
		"":                                     false,
	} {
		if got := IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %v, want %v", s, got, want)
		}
	}
}
