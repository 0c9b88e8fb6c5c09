package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

// ScyllaDBManagerTransportError is the code label of requests that got no HTTP response (connection refused, timeout,
// cancelled).
const ScyllaDBManagerTransportError = "error"

// ScyllaDBManagerOtherEndpoint is the endpoint label of paths that are not part of the ScyllaDB Manager API the
// client calls.
const ScyllaDBManagerOtherEndpoint = "other"

var (
	scyllaDBManagerRequestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "scylladb_manager",
		Name:           "requests_total",
		Help:           "Number of requests to ScyllaDB Manager by method, endpoint (path template) and status code (\"error\" when no response came).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "endpoint", "code"})

	scyllaDBManagerRequestDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace: namespace,
		Subsystem: "scylladb_manager",
		Name:      "request_duration_seconds",
		Help:      "Time from sending a request to ScyllaDB Manager until its response headers arrive, by method, endpoint (path template) and status code.",
		// Task creation validates backup locations from every node and may take minutes.
		Buckets:        metrics.ExponentialBuckets(0.005, 2, 16),
		StabilityLevel: metrics.ALPHA,
	}, []string{"method", "endpoint", "code"})

	registerScyllaDBManagerOnce sync.Once
)

func registerScyllaDBManager() {
	registerScyllaDBManagerOnce.Do(func() {
		legacyregistry.MustRegister(scyllaDBManagerRequestsTotal, scyllaDBManagerRequestDuration)
	})
}

// InstrumentScyllaDBManagerTransport returns next wrapped so that every request to ScyllaDB Manager is counted and
// timed by method, endpoint and status code. The endpoint is the path template (ScyllaDBManagerEndpoint), never the
// raw path, so that cluster and task IDs don't multiply the series.
func InstrumentScyllaDBManagerTransport(next http.RoundTripper) http.RoundTripper {
	registerScyllaDBManager()
	return &scyllaDBManagerRoundTripper{next: next}
}

type scyllaDBManagerRoundTripper struct {
	next http.RoundTripper
}

// RoundTrip sends req and records it.
func (rt *scyllaDBManagerRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := rt.next.RoundTrip(req)
	code := ScyllaDBManagerTransportError
	if err == nil {
		code = strconv.Itoa(resp.StatusCode)
	}
	endpoint := ScyllaDBManagerEndpoint(req.URL.EscapedPath())
	scyllaDBManagerRequestsTotal.WithLabelValues(req.Method, endpoint, code).Inc()
	scyllaDBManagerRequestDuration.WithLabelValues(req.Method, endpoint, code).Observe(time.Since(start).Seconds())
	return resp, err
}

// scyllaDBManagerEndpoints are the path templates of the ScyllaDB Manager API under /api/v1.
var scyllaDBManagerEndpoints = map[string]bool{
	"/version":                               true,
	"/clusters":                              true,
	"/cluster/{id}":                          true,
	"/cluster/{id}/status":                   true,
	"/cluster/{id}/tasks":                    true,
	"/cluster/{id}/task/{type}/{id}":         true,
	"/cluster/{id}/task/{type}/{id}/start":   true,
	"/cluster/{id}/task/{type}/{id}/stop":    true,
	"/cluster/{id}/task/{type}/{id}/history": true,
	"/cluster/{id}/task/{type}/{id}/{run}":   true,
}

// ScyllaDBManagerEndpoint returns the template of an escaped ScyllaDB Manager request path, relative to its /api/v1
// base and with IDs, names, task types and run IDs replaced by placeholders: "/cluster/{id}/task/{type}/{id}" for
// "/api/v1/cluster/0b6f…/task/backup/daily". A prefix in front of /api/v1 (a proxy's) is dropped. Paths outside the
// API are ScyllaDBManagerOtherEndpoint.
func ScyllaDBManagerEndpoint(escapedPath string) string {
	segments := strings.Split(strings.Trim(escapedPath, "/"), "/")
	api := -1
	for i := 0; i+1 < len(segments); i++ {
		if segments[i] == "api" && segments[i+1] == "v1" {
			api = i
			break
		}
	}
	if api < 0 {
		// Unversioned endpoints, under whatever prefix ScyllaDB Manager is reached at.
		if last := segments[len(segments)-1]; last == "ping" || last == "version" {
			return "/" + last
		}
		return ScyllaDBManagerOtherEndpoint
	}
	segments = segments[api+2:]
	for i, s := range segments {
		switch {
		case len(s) == 0:
			return ScyllaDBManagerOtherEndpoint
		case i == 1 || i == 4:
			segments[i] = "{id}"
		case i == 3:
			segments[i] = "{type}"
		case i == 5 && s != "start" && s != "stop" && s != "history":
			segments[i] = "{run}"
		}
	}
	endpoint := "/" + strings.Join(segments, "/")
	if !scyllaDBManagerEndpoints[endpoint] {
		return ScyllaDBManagerOtherEndpoint
	}
	return endpoint
}
