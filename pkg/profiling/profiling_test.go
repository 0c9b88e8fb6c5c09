package profiling

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRegisterServesTheProfilesOnTheGivenMux(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	Register(mux)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/symbol"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusOK {
				t.Errorf("GET %s = %d, want 200", path, rec.Code)
			}
		})
	}
}
