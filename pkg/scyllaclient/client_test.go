package scyllaclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestClient(t *testing.T, responses map[string]any) (*Client, *[]string) {
	t.Helper()
	var calls []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		calls = append(calls, key)
		resp, ok := responses[key]
		if !ok {
			http.Error(w, "no such endpoint", http.StatusNotFound)
			return
		}
		if err, ok := resp.(error); ok {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if resp == nil {
			return
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	c, err := NewClient(strings.TrimPrefix(srv.URL, "http://"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, &calls
}

func TestNewClientRejectsBadAddresses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"", "localhost", ":10000", "localhost:"} {
		if _, err := NewClient(addr, nil); err == nil {
			t.Errorf("address %q: expected an error, got none", addr)
		}
	}
}

func TestStatusCombinesGossipAndRingState(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, map[string]any{
		"GET " + PathHostIDs: []keyValue{
			{Key: "10.0.0.3", Value: "host-c"},
			{Key: "10.0.0.1", Value: "host-a"},
			{Key: "10.0.0.2", Value: "host-b"},
			{Key: "10.0.0.4", Value: "host-d"},
		},
		"GET " + PathLiveEndpoints: []string{"10.0.0.1", "10.0.0.2", "10.0.0.4"},
		"GET " + PathJoiningNodes:  []string{"10.0.0.2"},
		"GET " + PathLeavingNodes:  []string{"10.0.0.4"},
		"GET " + PathMovingNodes:   []string{},
	})
	got, err := c.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []NodeStatusInfo{
		{HostID: "host-a", Addr: "10.0.0.1", Status: NodeStatusUp, State: NodeStateNormal},
		{HostID: "host-b", Addr: "10.0.0.2", Status: NodeStatusUp, State: NodeStateJoining},
		{HostID: "host-c", Addr: "10.0.0.3", Status: NodeStatusDown, State: NodeStateNormal},
		{HostID: "host-d", Addr: "10.0.0.4", Status: NodeStatusUp, State: NodeStateLeaving},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected status (-want +got):\n%s", diff)
	}
	if !got[0].IsUN() || got[1].IsUN() || got[2].IsUN() || got[3].IsUN() {
		t.Errorf("IsUN is wrong for %+v", got)
	}
}

func TestScalarEndpoints(t *testing.T) {
	t.Parallel()
	c, calls := newTestClient(t, map[string]any{
		"GET " + PathLocalHostID:     "host-a",
		"GET " + PathNativeTransport: true,
		"GET " + PathOperationMode:   "LEAVING",
		"POST " + PathDecommission:   nil,
	})
	ctx := context.Background()
	hostID, err := c.LocalHostID(ctx)
	if err != nil || hostID != "host-a" {
		t.Errorf("LocalHostID() = %q, %v; want host-a", hostID, err)
	}
	nt, err := c.IsNativeTransportEnabled(ctx)
	if err != nil || !nt {
		t.Errorf("IsNativeTransportEnabled() = %v, %v; want true", nt, err)
	}
	mode, err := c.OperationMode(ctx)
	if err != nil || mode != OperationModeLeaving {
		t.Errorf("OperationMode() = %q, %v; want LEAVING", mode, err)
	}
	if err := c.Decommission(ctx); err != nil {
		t.Errorf("Decommission() = %v", err)
	}
	want := []string{"GET " + PathLocalHostID, "GET " + PathNativeTransport, "GET " + PathOperationMode, "POST " + PathDecommission}
	if diff := cmp.Diff(want, *calls); diff != "" {
		t.Errorf("unexpected calls (-want +got):\n%s", diff)
	}
}

func TestErrorsCarryStatusAndBody(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, map[string]any{
		"GET " + PathLocalHostID: errors.New("storage service not ready"),
	})
	_, err := c.LocalHostID(context.Background())
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("expected a StatusError, got %v", err)
	}
	if se.StatusCode != http.StatusInternalServerError || se.Body != "storage service not ready\n" {
		t.Errorf("unexpected StatusError %+v", se)
	}
}

func TestEmptyHostIDIsAnError(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, map[string]any{"GET " + PathLocalHostID: ""})
	if _, err := c.LocalHostID(context.Background()); err == nil {
		t.Error("expected an error for an empty host ID")
	}
}
