package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// Requests returns the fake ScyllaDB Manager's request log, oldest first, through its /fake/requests endpoint. The
// log holds the fake's own /fake requests too; ManagerAPIRequests leaves them out.
func (m *FakeScyllaDBManager) Requests(ctx context.Context) ([]fakescyllamanager.Request, error) {
	var reqs []fakescyllamanager.Request
	if err := m.fakeCall(ctx, http.MethodGet, "/fake/requests", nil, &reqs); err != nil {
		return nil, fmt.Errorf("can't get the fake ScyllaDB Manager's requests: %w", err)
	}
	return reqs, nil
}

// ResetRequests empties the fake ScyllaDB Manager's request log.
func (m *FakeScyllaDBManager) ResetRequests(ctx context.Context) error {
	if err := m.fakeCall(ctx, http.MethodDelete, "/fake/requests", nil, nil); err != nil {
		return fmt.Errorf("can't reset the fake ScyllaDB Manager's requests: %w", err)
	}
	return nil
}

// Knobs returns the fake ScyllaDB Manager's current knobs.
func (m *FakeScyllaDBManager) Knobs(ctx context.Context) (fakescyllamanager.Knobs, error) {
	var k fakescyllamanager.Knobs
	if err := m.fakeCall(ctx, http.MethodGet, "/fake/knobs", nil, &k); err != nil {
		return k, fmt.Errorf("can't get the fake ScyllaDB Manager's knobs: %w", err)
	}
	return k, nil
}

// SetKnobs replaces all of the fake ScyllaDB Manager's knobs; the zero Knobs make it healthy again.
func (m *FakeScyllaDBManager) SetKnobs(ctx context.Context, k fakescyllamanager.Knobs) error {
	if err := m.fakeCall(ctx, http.MethodPut, "/fake/knobs", k, nil); err != nil {
		return fmt.Errorf("can't set the fake ScyllaDB Manager's knobs: %w", err)
	}
	return nil
}

// UpdateKnobs reads the knobs, changes them with mutate and writes them back. It is not atomic: only the test
// should set the knobs of its fake.
func (m *FakeScyllaDBManager) UpdateKnobs(ctx context.Context, mutate func(k *fakescyllamanager.Knobs)) error {
	k, err := m.Knobs(ctx)
	if err != nil {
		return err
	}
	mutate(&k)
	return m.SetKnobs(ctx, k)
}

// fakeCall sends a request to one of the fake's own endpoints, with in encoded as JSON when not nil, and decodes a
// 2xx answer into out when not nil.
func (m *FakeScyllaDBManager) fakeCall(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, m.URL+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(data)))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("can't decode the answer to %s %s: %w", method, path, err)
	}
	return nil
}

// ManagerAPIRequests returns the requests of reqs that reached ScyllaDB Manager's API, leaving out those to the
// fake's own /fake endpoints.
func ManagerAPIRequests(reqs []fakescyllamanager.Request) []fakescyllamanager.Request {
	var out []fakescyllamanager.Request
	for _, r := range reqs {
		if r.Path == "/fake" || strings.HasPrefix(r.Path, "/fake/") {
			continue
		}
		out = append(out, r)
	}
	return out
}

// ScyllaDBManagerRequestsOfCluster returns the requests of reqs about the ScyllaDB Manager cluster with ID
// clusterID: those whose path is under /api/v1/cluster/<clusterID>, and cluster creates whose Location names it.
func ScyllaDBManagerRequestsOfCluster(reqs []fakescyllamanager.Request, clusterID string) []fakescyllamanager.Request {
	prefix := "/api/v1/cluster/" + clusterID
	var out []fakescyllamanager.Request
	for _, r := range reqs {
		if r.Path == prefix || strings.HasPrefix(r.Path, prefix+"/") || r.Location == prefix || strings.HasSuffix(r.Location, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// ScyllaDBManagerWrites returns the requests of reqs that could change ScyllaDB Manager's state.
func ScyllaDBManagerWrites(reqs []fakescyllamanager.Request) []fakescyllamanager.Request {
	var out []fakescyllamanager.Request
	for _, r := range reqs {
		if r.IsWrite() {
			out = append(out, r)
		}
	}
	return out
}

// DescribeScyllaDBManagerRequests lists requests one per line, for failure messages.
func DescribeScyllaDBManagerRequests(reqs []fakescyllamanager.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		fmt.Fprintf(&b, "  %s %s", r.Method, r.Path)
		if r.Query != "" {
			fmt.Fprintf(&b, "?%s", r.Query)
		}
		fmt.Fprintf(&b, " -> %d", r.Status)
		if r.Location != "" {
			fmt.Fprintf(&b, " (Location %s)", r.Location)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}
