package serving

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	h := Handler([]Checker{ok}, []Checker{ok, notSynced})

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

func TestOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		address string
		wantErr bool
	}{
		{address: ":8080"},
		{address: "127.0.0.1:0"},
		{address: ""},
		{address: "8080", wantErr: true},
	} {
		o := NewOptions(tc.address)
		if err := o.Validate(); (err != nil) != tc.wantErr {
			t.Errorf("Validate(%q) = %v, want error: %v", tc.address, err, tc.wantErr)
		}
	}
}
