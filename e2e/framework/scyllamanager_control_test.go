package framework

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

func TestScyllaDBManagerRequestFilters(t *testing.T) {
	t.Parallel()
	const cid = "11111111-1111-4111-8111-111111111111"
	const other = "22222222-2222-4222-8222-222222222222"
	reqs := []fakescyllamanager.Request{
		{Method: http.MethodGet, Path: "/fake/state"},
		{Method: http.MethodPost, Path: "/api/v1/clusters", Status: 201, Location: "/api/v1/cluster/" + cid},
		{Method: http.MethodPost, Path: "/api/v1/clusters", Status: 201, Location: "/api/v1/cluster/" + other},
		{Method: http.MethodPost, Path: "/api/v1/clusters", Status: 503},
		{Method: http.MethodGet, Path: "/api/v1/cluster/" + cid, Status: 200},
		{Method: http.MethodPut, Path: "/api/v1/cluster/" + cid + "/task/backup/t1", Status: 200},
		{Method: http.MethodDelete, Path: "/api/v1/cluster/" + other, Status: 200},
		{Method: http.MethodPut, Path: "/fake/knobs", Status: 200},
	}
	describe := func(reqs []fakescyllamanager.Request) []string {
		var out []string
		for _, r := range reqs {
			out = append(out, r.Method+" "+r.Path)
		}
		return out
	}

	api := ManagerAPIRequests(reqs)
	if diff := cmp.Diff(describe(reqs[1:7]), describe(api)); diff != "" {
		t.Errorf("ManagerAPIRequests differs (-want +got):\n%s", diff)
	}
	ofCluster := ScyllaDBManagerRequestsOfCluster(api, cid)
	want := []string{"POST /api/v1/clusters", "GET /api/v1/cluster/" + cid, "PUT /api/v1/cluster/" + cid + "/task/backup/t1"}
	if diff := cmp.Diff(want, describe(ofCluster)); diff != "" {
		t.Errorf("ScyllaDBManagerRequestsOfCluster differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"POST /api/v1/clusters", "PUT /api/v1/cluster/" + cid + "/task/backup/t1"}, describe(ScyllaDBManagerWrites(ofCluster))); diff != "" {
		t.Errorf("ScyllaDBManagerWrites differs (-want +got):\n%s", diff)
	}
	if got := DescribeScyllaDBManagerRequests(ofCluster[:1]); !strings.Contains(got, "POST /api/v1/clusters -> 201 (Location /api/v1/cluster/"+cid+")") {
		t.Errorf("DescribeScyllaDBManagerRequests gave %q", got)
	}
	if got := DescribeScyllaDBManagerRequests(nil); !strings.Contains(got, "(none)") {
		t.Errorf("DescribeScyllaDBManagerRequests of nothing gave %q", got)
	}
}

func TestFakeScyllaDBManagerControl(t *testing.T) {
	t.Parallel()
	srv, err := fakescyllamanager.NewServer(fakescyllamanager.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	m := &FakeScyllaDBManager{URL: ts.URL}
	ctx := t.Context()

	if err := m.SetKnobs(ctx, fakescyllamanager.Knobs{Latency: map[fakescyllamanager.Endpoint]fakescyllamanager.Duration{fakescyllamanager.EndpointPing: {Duration: time.Millisecond}}}); err != nil {
		t.Fatal(err)
	}
	err = m.UpdateKnobs(ctx, func(k *fakescyllamanager.Knobs) {
		k.Failures = map[fakescyllamanager.Endpoint]fakescyllamanager.Failure{fakescyllamanager.EndpointPing: {Status: 503, Times: 1}}
	})
	if err != nil {
		t.Fatal(err)
	}
	k, err := m.Knobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if k.Latency[fakescyllamanager.EndpointPing].Duration != time.Millisecond || k.Failures[fakescyllamanager.EndpointPing].Status != 503 {
		t.Errorf("UpdateKnobs lost or did not set knobs: %+v", k)
	}
	if err := m.SetKnobs(ctx, fakescyllamanager.Knobs{DownNodes: []string{"not-an-ip"}}); err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("want invalid knobs refused with HTTP 400, got %v", err)
	}

	resp, err := http.Get(ts.URL + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	reqs, err := m.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	api := ManagerAPIRequests(reqs)
	if len(api) != 1 || api[0].Path != "/ping" || api[0].Status != 503 {
		t.Errorf("want the one ping answered 503 by the injected failure, got %+v", api)
	}
	if err := m.ResetRequests(ctx); err != nil {
		t.Fatal(err)
	}
	reqs, err = m.Requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The reset and the read are logged, but no API request.
	if len(ManagerAPIRequests(reqs)) != 0 {
		t.Errorf("the log still holds API requests after the reset: %+v", reqs)
	}
}
