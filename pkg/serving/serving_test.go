package serving

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/scyllakube/scylla-operator/pkg/metrics"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHandler(t *testing.T) {
	t.Parallel()
	ok := CheckFunc{CheckName: "ping", F: func() error { return nil }}
	notSynced := CheckFunc{CheckName: "informers", F: func() error { return errors.New("caches not synced") }}
	o := NewOptions(":8080")
	h := o.Handler([]Checker{ok}, []Checker{ok, notSynced})

	if code, body := get(t, h, "/healthz"); code != http.StatusOK || strings.TrimSpace(body) != "ok" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	code, body := get(t, h, "/readyz")
	if code != http.StatusServiceUnavailable {
		t.Errorf("/readyz code = %d, want 503", code)
	}
	if !strings.Contains(body, "informers: caches not synced") || strings.Contains(body, "ping") {
		t.Errorf("/readyz body = %q, want only the failing check named", body)
	}

	metrics.ObserveSync("test-controller", time.Now(), errors.New("boom"))
	_, body = get(t, h, "/metrics")
	if !strings.Contains(body, `scylla_operator_controller_syncs_total{controller="test-controller",result="error"} 1`) {
		t.Errorf("/metrics does not count the failed sync:\n%s", body)
	}
}

func TestHandlerServesProfilesOnlyWithProfiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		profiling bool
		wantCode  int
	}{
		{name: "off by default: no profiles", wantCode: http.StatusNotFound},
		{name: "on: profiles served", profiling: true, wantCode: http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewOptions(":8080")
			o.Profiling = tc.profiling
			h := o.Handler(nil, nil)
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap"} {
				if code, _ := get(t, h, path); code != tc.wantCode {
					t.Errorf("GET %s = %d, want %d", path, code, tc.wantCode)
				}
			}
			if code, _ := get(t, h, "/healthz"); code != http.StatusOK {
				t.Errorf("/healthz = %d, want 200 whatever --profiling says", code)
			}
		})
	}
}

func TestAddFlagsRegistersProfilingOffByDefault(t *testing.T) {
	t.Parallel()
	o := NewOptions(":8080")
	cmd := &cobra.Command{}
	o.AddFlags(cmd)
	f := cmd.Flags().Lookup("profiling")
	if f == nil {
		t.Fatal("no --profiling flag")
	}
	if f.DefValue != "false" {
		t.Errorf("--profiling defaults to %s, want false", f.DefValue)
	}
	if err := cmd.Flags().Parse([]string{"--profiling"}); err != nil {
		t.Fatal(err)
	}
	if !o.Profiling {
		t.Error("--profiling did not set Options.Profiling")
	}
}

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		address   string
		profiling bool
		wantErr   bool
	}{
		{address: ":8080"},
		{address: "127.0.0.1:0"},
		{address: ""},
		{address: "8080", wantErr: true},
		{address: ":8080", profiling: true},
		{address: "", profiling: true, wantErr: true},
	} {
		o := NewOptions(tc.address)
		o.Profiling = tc.profiling
		if err := o.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("Validate(%q, profiling %v) = %v, want error: %v", tc.address, tc.profiling, err, tc.wantErr)
		}
	}
}
