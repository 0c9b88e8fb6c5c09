package fakescylladb

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func join(hostID, cluster, addr string, seeds ...string) JoinRequest {
	return JoinRequest{NodeInfo: NodeInfo{HostID: hostID, ClusterName: cluster, Datacenter: "dc1", Rack: "r1", BroadcastAddress: addr, Seeds: seeds}}
}

func ringMembers(r Ring) []string {
	var ids []string
	for _, m := range r.Members {
		ids = append(ids, m.HostID)
	}
	return ids
}

func ringsOf(reg *Registry) [][]string {
	var out [][]string
	for _, r := range reg.Rings() {
		out = append(out, ringMembers(r))
	}
	return out
}

func TestRegistryJoin(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		setup     []JoinRequest
		down      []string
		join      JoinRequest
		wantErr   string
		wantRings [][]string
	}{
		{
			name:      "a node seeding only from itself founds a ring",
			join:      join("a", "c", "10.0.0.1", "10.0.0.1"),
			wantRings: [][]string{{"a"}},
		},
		{
			name:      "a node seeding from a live node joins its ring",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1")},
			join:      join("b", "c", "10.0.0.2", "10.0.0.1"),
			wantRings: [][]string{{"a", "b"}},
		},
		{
			name:      "a seed matches a node's alias address",
			setup:     []JoinRequest{{NodeInfo: NodeInfo{HostID: "a", ClusterName: "c", BroadcastAddress: "10.0.0.1", Addresses: []string{"10.96.0.1"}, Seeds: []string{"10.0.0.1"}}}},
			join:      join("b", "c", "10.0.0.2", "10.96.0.1"),
			wantRings: [][]string{{"a", "b"}},
		},
		{
			name:      "the first live seed wins when the earlier ones are dead",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1")},
			join:      join("b", "c", "10.0.0.2", "192.168.0.9", "10.0.0.1"),
			wantRings: [][]string{{"a", "b"}},
		},
		{
			name:      "a node with no live seed is refused",
			join:      join("b", "c", "10.0.0.2", "10.0.0.1"),
			wantErr:   "node b can't join a ring: no live node at any of its seeds [10.0.0.1]",
			wantRings: nil,
		},
		{
			name:      "a node seeding from itself and a dead node is refused instead of founding a ring",
			join:      join("b", "c", "10.0.0.2", "10.0.0.2", "10.0.0.1"),
			wantErr:   "node b can't join a ring: no live node at any of its seeds [10.0.0.2 10.0.0.1]",
			wantRings: nil,
		},
		{
			name:      "a Down seed doesn't count",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1")},
			down:      []string{"a"},
			join:      join("b", "c", "10.0.0.2", "10.0.0.1"),
			wantErr:   "node b can't join a ring: no live node at any of its seeds [10.0.0.1]",
			wantRings: [][]string{{"a"}},
		},
		{
			name:      "a seed of another cluster is refused",
			setup:     []JoinRequest{join("a", "other", "10.0.0.1", "10.0.0.1")},
			join:      join("b", "c", "10.0.0.2", "10.0.0.1"),
			wantErr:   `seed 10.0.0.1 belongs to cluster "other", not "c"`,
			wantRings: [][]string{{"a"}},
		},
		{
			name:      "a broadcast address taken by a live node is refused",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1")},
			join:      join("b", "c", "10.0.0.1", "10.0.0.1"),
			wantErr:   "a live node a already has address 10.0.0.1",
			wantRings: [][]string{{"a"}},
		},
		{
			name:      "a known node rejoins its ring whatever its seeds",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1"), join("b", "c", "10.0.0.2", "10.0.0.1")},
			down:      []string{"a", "b"},
			join:      join("b", "c", "10.0.0.3", "10.0.0.9"),
			wantRings: [][]string{{"a", "b"}},
		},
		{
			name:      "two nodes seeding only from themselves split the cluster",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1")},
			join:      join("b", "c", "10.0.0.2", "10.0.0.2"),
			wantRings: [][]string{{"a"}, {"b"}},
		},
		{
			name:    "a node without seeds is refused",
			join:    join("a", "c", "10.0.0.1"),
			wantErr: "node a has no seeds",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry(0)
			for _, req := range tc.setup {
				if _, err := reg.Join(req); err != nil {
					t.Fatalf("setup join %s: %v", req.HostID, err)
				}
			}
			for _, id := range tc.down {
				if err := reg.SetState(id, StateRequest{Status: StatusDown}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := reg.Join(tc.join)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr {
				t.Errorf("Join() error = %q, want %q", gotErr, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantRings, ringsOf(reg)); diff != "" {
				t.Errorf("unexpected rings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRegistryDecommissionedNodeNeverRejoins(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	for _, req := range []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1"), join("b", "c", "10.0.0.2", "10.0.0.1")} {
		if _, err := reg.Join(req); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.SetState("b", StateRequest{State: StateDecommissioned}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"a"}}, ringsOf(reg)); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
	_, err := reg.Join(join("b", "c", "10.0.0.2", "10.0.0.1"))
	if err == nil || err.Error() != "node b was decommissioned and will not rejoin the ring" {
		t.Errorf("unexpected error %v", err)
	}
}

func TestRegistryHeartbeatExpiry(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	reg := NewRegistry(5 * time.Second)
	reg.now = func() time.Time { return now }
	if _, err := reg.Join(join("a", "c", "10.0.0.1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	status := func() NodeStatus {
		r, err := reg.RingOf("a")
		if err != nil {
			t.Fatal(err)
		}
		return r.Members[0].Status
	}
	now = now.Add(5 * time.Second)
	if got := status(); got != StatusUp {
		t.Errorf("status at the TTL = %s, want Up", got)
	}
	now = now.Add(time.Second)
	if got := status(); got != StatusDown {
		t.Errorf("status past the TTL = %s, want Down", got)
	}
	if err := reg.Heartbeat("a"); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != StatusUp {
		t.Errorf("status after a heartbeat = %s, want Up", got)
	}
	if err := reg.Heartbeat("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("heartbeat of an unknown node: %v, want ErrNotFound", err)
	}
}

func TestRegistryOverHTTP(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	c, err := NewRegistryClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Join(ctx, join("a", "c", "10.0.0.1", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	ring, err := c.Join(ctx, join("b", "c", "10.0.0.2", "10.0.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a", "b"}, ringMembers(ring)); diff != "" {
		t.Errorf("unexpected ring (-want +got):\n%s", diff)
	}
	if _, err := c.Join(ctx, join("x", "c", "10.0.0.3", "10.0.0.9")); err == nil || err.Error() != "registry POST /v1/join: node x can't join a ring: no live node at any of its seeds [10.0.0.9]" {
		t.Errorf("unexpected join error %v", err)
	}
	if err := c.Heartbeat(ctx, "a"); err != nil {
		t.Error(err)
	}
	if err := c.SetState(ctx, "b", StateRequest{Status: StatusDown, State: StateLeaving}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetState(ctx, "b", StateRequest{State: "Bogus"}); err == nil {
		t.Error("expected an error for an unknown state")
	}
	if _, err := c.RingOf(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RingOf(unknown) = %v, want ErrNotFound", err)
	}
	rings, err := c.Rings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rings) != 1 {
		t.Fatalf("want one ring, got %+v", rings)
	}
	i := slices.IndexFunc(rings[0].Members, func(m Member) bool { return m.HostID == "b" })
	if got := rings[0].Members[i]; got.Status != StatusDown || got.State != StateLeaving {
		t.Errorf("b is %s/%s, want Down/Leaving", got.Status, got.State)
	}
}
