package operator

import (
	"bytes"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

func TestManagerControllerOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*ManagerControllerOptions)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(*ManagerControllerOptions) {}},
		{name: "https with a CA file is valid", mutate: func(o *ManagerControllerOptions) {
			o.ScyllaDBManagerURL = "https://scylla-manager.scylla-manager.svc"
			o.ScyllaDBManagerCAFile = "/etc/ca.crt"
		}},
		{name: "a URL without /api/v1 is valid", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://127.0.0.1:5080" }},
		{name: "URL with another scheme", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "ftp://scylla-manager/api/v1" }, wantErr: `--scylladb-manager-url "ftp://scylla-manager/api/v1" must use http or https`},
		{name: "URL without a scheme", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "scylla-manager:5080" }, wantErr: "must use http or https"},
		{name: "empty URL", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "" }, wantErr: `--scylladb-manager-url "" must use http or https`},
		{name: "URL that does not parse", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://[::1" }, wantErr: "is not a URL"},
		{name: "URL without a host", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http:///api/v1" }, wantErr: "has no host"},
		{name: "URL with credentials, which are not echoed", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://admin:hunter2@scylla-manager/api/v1" }, wantErr: `"http://admin:xxxxx@scylla-manager/api/v1" must not carry credentials`},
		{name: "URL with a query", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "http://scylla-manager/api/v1?x=1" }, wantErr: "must not have a query or fragment"},
		{name: "CA file with plain http", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerCAFile = "/etc/ca.crt" }, wantErr: `--scylladb-manager-ca-file is only used with an https --scylladb-manager-url, got scheme "http"`},
		{name: "no workers", mutate: func(o *ManagerControllerOptions) { o.ConcurrentSyncs = 0 }, wantErr: "--concurrent-syncs must be at least 1, got 0"},
		{name: "resync too short", mutate: func(o *ManagerControllerOptions) { o.ResyncPeriod = 30 * time.Second }, wantErr: "--resync-period must be at least 1m, got 30s"},
		{name: "bad qps", mutate: func(o *ManagerControllerOptions) { o.QPS = 0 }, wantErr: "--qps must be greater than 0"},
		{name: "bad burst", mutate: func(o *ManagerControllerOptions) { o.Burst = 0 }, wantErr: "--burst must be at least 1"},
		{name: "bad serving address", mutate: func(o *ManagerControllerOptions) { o.Serving.Address = "8080" }, wantErr: "--serving-address"},
		{name: "bad lease timing", mutate: func(o *ManagerControllerOptions) { o.LeaderElection.LeaseDuration = time.Second }, wantErr: "--leader-election-lease-duration"},
		{name: "empty lease name", mutate: func(o *ManagerControllerOptions) { o.LeaderElection.LeaseName = "" }, wantErr: "--leader-election-lease-name must not be empty"},
		{name: "every error is reported at once", mutate: func(o *ManagerControllerOptions) { o.ScyllaDBManagerURL = "ftp://x"; o.ConcurrentSyncs = -1 }, wantErr: "--concurrent-syncs must be at least 1, got -1\n--scylladb-manager-url \"ftp://x\" must use http or https"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewManagerControllerOptions()
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error reveals the URL's password: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestManagerControllerRejectsUnusableTokenAndCAFiles(t *testing.T) {
	t.Parallel()
	const secretToken = "s3cr3t-token"
	for _, tc := range []struct {
		name      string
		tokenFile func(t *testing.T) string
		caFile    func(t *testing.T) string
		wantErr   string
	}{
		{name: "missing token file", tokenFile: func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }, wantErr: "can't read --scylladb-manager-auth-token-file"},
		{name: "empty token file", tokenFile: func(t *testing.T) string { return writeFile(t, "token", nil) }, wantErr: "holds no token"},
		{name: "token file of whitespace", tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(" \n\t\n")) }, wantErr: "holds no token"},
		{name: "token of two lines", tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(secretToken+"\n"+secretToken)) }, wantErr: "token must not contain line breaks"},
		{name: "missing CA file", caFile: func(t *testing.T) string { return filepath.Join(t.TempDir(), "absent") }, wantErr: "can't read --scylladb-manager-ca-file"},
		{name: "CA file that is not PEM", caFile: func(t *testing.T) string { return writeFile(t, "ca.crt", []byte("not a certificate")) }, wantErr: "holds no PEM certificate"},
		{name: "CA file with a PEM key only", caFile: func(t *testing.T) string {
			return writeFile(t, "ca.crt", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("x")}))
		}, wantErr: "holds no PEM certificate"},
		{
			name:      "every problem of both files at once",
			tokenFile: func(t *testing.T) string { return writeFile(t, "token", []byte(secretToken+"\n"+secretToken)) },
			caFile:    func(t *testing.T) string { return writeFile(t, "ca.crt", []byte("not a certificate")) },
			wantErr:   "the token must not contain line breaks\n--scylladb-manager-ca-file",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewManagerControllerOptions()
			if tc.tokenFile != nil {
				o.ScyllaDBManagerAuthTokenFile = tc.tokenFile(t)
			}
			if tc.caFile != nil {
				o.ScyllaDBManagerURL = "https://scylla-manager"
				o.ScyllaDBManagerCAFile = tc.caFile(t)
			}
			err := o.completeScyllaDBManager()
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			if strings.Contains(err.Error(), secretToken) {
				t.Errorf("the error reveals the token: %v", err)
			}
		})
	}
}

// requestRecorder serves ScyllaDB Manager's /ping and remembers the headers of the last request.
type requestRecorder struct {
	header http.Header
}

func (r *requestRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.header = req.Header.Clone()
	if req.URL.Path != "/ping" {
		http.NotFound(w, req)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func TestManagerControllerClientSendsTheTrimmedTokenAndItsUserAgentAndCountsRequests(t *testing.T) {
	t.Parallel()
	rec := &requestRecorder{}
	server := httptest.NewServer(rec)
	defer server.Close()

	o := NewManagerControllerOptions()
	o.ScyllaDBManagerURL = server.URL + "/api/v1"
	o.ScyllaDBManagerAuthTokenFile = writeFile(t, "token", []byte("  the-token\n"))
	if err := o.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	before := pingsCounted(t)
	if err := o.managerClient.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if got, want := rec.header.Get("Authorization"), "Bearer the-token"; got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	if got := rec.header.Get("User-Agent"); !strings.HasPrefix(got, "scylla-manager-controller/") {
		t.Errorf("User-Agent = %q, want scylla-manager-controller/<version>", got)
	}
	if got := pingsCounted(t) - before; got < 1 {
		t.Errorf("the ping was not counted in scylla_operator_scylladb_manager_requests_total")
	}
}

// pingsCounted returns how many successful pings of ScyllaDB Manager the process counted.
func pingsCounted(t *testing.T) float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != "scylla_operator_scylladb_manager_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			if testutil.LabelsMatch(m, map[string]string{"method": http.MethodGet, "endpoint": "/ping", "code": "204"}) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func TestManagerControllerTrustsTheCAFile(t *testing.T) {
	t.Parallel()
	server := httptest.NewTLSServer(&requestRecorder{})
	defer server.Close()
	caFile := writeFile(t, "ca.crt", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: server.Certificate().Raw}))

	withCA := NewManagerControllerOptions()
	withCA.ScyllaDBManagerURL = server.URL
	withCA.ScyllaDBManagerCAFile = caFile
	if err := withCA.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := withCA.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	if err := withCA.managerClient.Ping(t.Context()); err != nil {
		t.Errorf("Ping with the CA file: %v", err)
	}

	withoutCA := NewManagerControllerOptions()
	withoutCA.ScyllaDBManagerURL = server.URL
	if err := withoutCA.completeScyllaDBManager(); err != nil {
		t.Fatal(err)
	}
	if err := withoutCA.managerClient.Ping(t.Context()); err == nil {
		t.Error("Ping without the CA file succeeded; the test server's certificate should be untrusted")
	}
}

// Flags are also read from SCYLLA_OPERATOR_* variables, and their errors come before anything is contacted.
func TestManagerControllerCommandReadsFlagsFromTheEnvironment(t *testing.T) {
	t.Setenv("SCYLLA_OPERATOR_SCYLLADB_MANAGER_URL", "ftp://from-env")
	t.Setenv("SCYLLA_OPERATOR_CONCURRENT_SYNCS", "0")
	var out bytes.Buffer
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"manager-controller", "--kubeconfig=/nonexistent"})
	err := root.Execute()
	for _, want := range []string{`--scylladb-manager-url "ftp://from-env" must use http or https`, "--concurrent-syncs must be at least 1, got 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
}

func TestManagerControllerCommandIsRegistered(t *testing.T) {
	t.Parallel()
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{})
	cmd, _, err := root.Find([]string{"manager-controller"})
	if err != nil || cmd == root {
		t.Fatalf("the root command has no manager-controller subcommand: %v", err)
	}
	for _, flag := range []string{
		"scylladb-manager-url", "scylladb-manager-auth-token-file", "scylladb-manager-ca-file", "kubeconfig", "qps", "burst",
		"concurrent-syncs", "resync-period", "leader-elect", "leader-election-namespace", "leader-election-lease-name",
		"leader-election-lease-duration", "leader-election-renew-deadline", "leader-election-retry-period", "serving-address",
		"profiling",
	} {
		if cmd.Flags().Lookup(flag) == nil {
			t.Errorf("manager-controller has no flag --%s", flag)
		}
	}
	if got := cmd.Flags().Lookup("profiling").DefValue; got != "false" {
		t.Errorf("--profiling defaults to %s, want false: profiles are served only when asked for", got)
	}
	if got := cmd.Flags().Lookup("leader-election-lease-name").DefValue; got != "scylla-manager-controller-lock" {
		t.Errorf("the default lease is %q, want its own, scylla-manager-controller-lock", got)
	}
}
