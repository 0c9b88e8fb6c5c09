package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

func TestScyllaDBManagerEndpointIsThePathTemplate(t *testing.T) {
	t.Parallel()
	const (
		clusterID = "8a1c7a36-0d6f-4b0e-9c55-0c3b1c6f2a11"
		taskID    = "2f4b0c2e-1d3a-4e5f-8a9b-0c1d2e3f4a5b"
	)
	for _, tc := range []struct {
		path, want string
	}{
		{path: "/ping", want: "/ping"},
		{path: "/version", want: "/version"},
		{path: "/api/v1/version", want: "/version"},
		{path: "/api/v1/clusters", want: "/clusters"},
		{path: "/api/v1/cluster/" + clusterID, want: "/cluster/{id}"},
		{path: "/api/v1/cluster/scylla%2FScyllaDBDatacenter%2Fbasic", want: "/cluster/{id}"},
		{path: "/api/v1/cluster/" + clusterID + "/status", want: "/cluster/{id}/status"},
		{path: "/api/v1/cluster/" + clusterID + "/tasks", want: "/cluster/{id}/tasks"},
		{path: "/api/v1/cluster/" + clusterID + "/task/backup/" + taskID, want: "/cluster/{id}/task/{type}/{id}"},
		{path: "/api/v1/cluster/" + clusterID + "/task/repair/weekly/start", want: "/cluster/{id}/task/{type}/{id}/start"},
		{path: "/api/v1/cluster/" + clusterID + "/task/repair/weekly/stop", want: "/cluster/{id}/task/{type}/{id}/stop"},
		{path: "/api/v1/cluster/" + clusterID + "/task/repair/weekly/history", want: "/cluster/{id}/task/{type}/{id}/history"},
		{path: "/api/v1/cluster/" + clusterID + "/task/repair/weekly/" + taskID, want: "/cluster/{id}/task/{type}/{id}/{run}"},
		{path: "/api/v1/cluster/" + clusterID + "/", want: "/cluster/{id}"},
		{path: "/manager/api/v1/cluster/" + clusterID + "/tasks", want: "/cluster/{id}/tasks"},
		{path: "/manager/ping", want: "/ping"},
		{path: "/", want: "other"},
		{path: "/metrics", want: "other"},
		{path: "/api/v1", want: "other"},
		{path: "/api/v1/backups", want: "other"},
		{path: "/api/v1/cluster/" + clusterID + "/task/backup", want: "other"},
		{path: "/api/v1/cluster/" + clusterID + "/suspended", want: "other"},
		{path: "/api/v1/cluster//tasks", want: "other"},
		{path: "/api/v1/cluster/" + clusterID + "/task/backup/" + taskID + "/" + taskID + "/more", want: "other"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			if got := ScyllaDBManagerEndpoint(tc.path); got != tc.want {
				t.Errorf("ScyllaDBManagerEndpoint(%q) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// scyllaDBManagerRequests returns how many requests of method to endpoint answered with code were counted, as
// /metrics serves them; 0 when there is no such series yet.
func scyllaDBManagerRequests(t *testing.T, method, endpoint, code string) float64 {
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
			if testutil.LabelsMatch(m, map[string]string{"method": method, "endpoint": endpoint, "code": code}) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// scyllaDBManagerObservations returns how many durations of method, endpoint and code were observed.
func scyllaDBManagerObservations(t *testing.T, method, endpoint, code string) uint64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for _, f := range families {
		if f.GetName() != "scylla_operator_scylladb_manager_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			if testutil.LabelsMatch(m, map[string]string{"method": method, "endpoint": endpoint, "code": code}) {
				sum += m.GetHistogram().GetSampleCount()
			}
		}
	}
	return sum
}

// The counters are process-wide, so this test compares what it reads before and after its own requests and does
// not run in parallel with anything else that calls ScyllaDB Manager.
func TestInstrumentedTransportCountsAndTimesRequestsByEndpointAndCode(t *testing.T) {
	const clusterID = "0f5d3c1e-6a7b-4c8d-9e0f-1a2b3c4d5e6f"
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/ping":
			w.WriteHeader(http.StatusNoContent)
		case strings.HasSuffix(r.URL.Path, "/tasks"):
			_, _ = w.Write([]byte("[]"))
		case strings.Contains(r.URL.Path, "/task/"):
			http.Error(w, `{"message":"not found"}`, http.StatusNotFound)
		default:
			http.Error(w, `{"message":"boom"}`, http.StatusInternalServerError)
		}
	}))
	defer server.Close()
	unreachable := httptest.NewServer(http.NotFoundHandler())
	unreachableURL := unreachable.URL
	unreachable.Close()

	client := &http.Client{Transport: InstrumentScyllaDBManagerTransport(http.DefaultTransport)}
	type series struct{ method, endpoint, code string }
	requests := []struct {
		method, url string
		want        series
	}{
		{method: http.MethodGet, url: server.URL + "/ping", want: series{"GET", "/ping", "204"}},
		{method: http.MethodGet, url: server.URL + "/api/v1/cluster/" + clusterID + "/tasks", want: series{"GET", "/cluster/{id}/tasks", "200"}},
		{method: http.MethodGet, url: server.URL + "/api/v1/cluster/" + clusterID + "/tasks", want: series{"GET", "/cluster/{id}/tasks", "200"}},
		{method: http.MethodDelete, url: server.URL + "/api/v1/cluster/" + clusterID + "/task/backup/daily", want: series{"DELETE", "/cluster/{id}/task/{type}/{id}", "404"}},
		{method: http.MethodPut, url: server.URL + "/api/v1/cluster/" + clusterID, want: series{"PUT", "/cluster/{id}", "500"}},
		{method: http.MethodPost, url: unreachableURL + "/api/v1/clusters", want: series{"POST", "/clusters", "error"}},
	}

	want := map[series]float64{}
	before := map[series]float64{}
	beforeObservations := map[series]uint64{}
	for _, r := range requests {
		if _, ok := before[r.want]; !ok {
			before[r.want] = scyllaDBManagerRequests(t, r.want.method, r.want.endpoint, r.want.code)
			beforeObservations[r.want] = scyllaDBManagerObservations(t, r.want.method, r.want.endpoint, r.want.code)
		}
		want[r.want]++
	}

	for _, r := range requests {
		req, err := http.NewRequestWithContext(t.Context(), r.method, r.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if r.want.code == ScyllaDBManagerTransportError {
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s %s: want a transport error", r.method, r.url)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s: %v", r.method, r.url, err)
		}
		resp.Body.Close()
	}

	got := map[series]float64{}
	for s := range want {
		got[s] = scyllaDBManagerRequests(t, s.method, s.endpoint, s.code) - before[s]
		if n := scyllaDBManagerObservations(t, s.method, s.endpoint, s.code) - beforeObservations[s]; float64(n) != want[s] {
			t.Errorf("%v: %d durations observed, want %v", s, n, want[s])
		}
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(series{})); diff != "" {
		t.Errorf("unexpected request counts (-want +got):\n%s", diff)
	}

	// Bounded cardinality: no series carries a raw ID.
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "scylla_operator_scylladb_manager_") {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), clusterID) || strings.Contains(l.GetValue(), "daily") {
					t.Errorf("%s has label %s=%q, which holds a raw ID", f.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
}
