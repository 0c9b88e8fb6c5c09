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

func replaceJoin(hostID, replace, addr string, state NodeState, seeds ...string) JoinRequest {
	req := join(hostID, "c", addr, seeds...)
	req.ReplaceHostID = replace
	req.State = state
	return req
}

// threeNodes is a ring of a, b and c; c is Down, as a dead node to replace.
var threeNodes = []JoinRequest{
	join("a", "c", "10.0.0.1", "10.0.0.1"),
	join("b", "c", "10.0.0.2", "10.0.0.1"),
	join("c", "c", "10.0.0.3", "10.0.0.1"),
}

func TestRegistryReplace(t *testing.T) {
	t.Parallel()

	type step struct {
		join  *JoinRequest
		state map[string]StateRequest
	}
	joinStep := func(req JoinRequest) step { return step{join: &req} }
	stateStep := func(hostID string, req StateRequest) step { return step{state: map[string]StateRequest{hostID: req}} }
	downC := stateStep("c", StateRequest{Status: StatusDown})
	// dStopped: d started replacing the Down c and stopped before it was Normal.
	dStopped := []step{downC, joinStep(replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1")), stateStep("d", StateRequest{Status: StatusDown})}
	// dReplacedC: d replaced c and stopped.
	dReplacedC := []step{downC, joinStep(replaceJoin("d", "c", "10.0.0.3", StateNormal, "10.0.0.1")), stateStep("d", StateRequest{Status: StatusDown})}

	tt := []struct {
		name    string
		setup   []JoinRequest
		steps   []step
		join    JoinRequest
		wantErr string
		// wantRings lists each ring's members, wantStates each member's status/state.
		wantRings  [][]string
		wantStates map[string]string
		// wantTokensOf maps a member to the node whose own tokens it must hold.
		wantTokensOf map[string]string
	}{
		{
			name:         "a replacing node joins with the replaced node's tokens and the replaced node stays until it is Normal",
			setup:        threeNodes,
			steps:        []step{downC},
			join:         replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantRings:    [][]string{{"a", "b", "c", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Down/Normal", "d": "Up/Joining"},
			wantTokensOf: map[string]string{"a": "a", "b": "b", "c": "c", "d": "c"},
		},
		{
			name:         "the replaced node leaves the ring for good once the replacing node is Normal",
			setup:        threeNodes,
			steps:        []step{downC, joinStep(replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1")), stateStep("d", StateRequest{State: StateNormal})},
			join:         join("c", "c", "10.0.0.3", "10.0.0.1"),
			wantErr:      "node c was replaced by d and will not rejoin the ring",
			wantRings:    [][]string{{"a", "b", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "d": "Up/Normal"},
			wantTokensOf: map[string]string{"a": "a", "b": "b", "d": "c"},
		},
		{
			name:         "a replacing node that joins Normal replaces at once",
			setup:        threeNodes,
			steps:        []step{downC},
			join:         replaceJoin("d", "c", "10.0.0.9", StateNormal, "10.0.0.2"),
			wantRings:    [][]string{{"a", "b", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "d": "Up/Normal"},
			wantTokensOf: map[string]string{"a": "a", "b": "b", "d": "c"},
		},
		{
			name:       "replacing a live node is refused",
			setup:      threeNodes,
			join:       replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantErr:    "cannot replace a live node c (10.0.0.3): it is Up, a replaced node must be Down",
			wantRings:  [][]string{{"a", "b", "c"}},
			wantStates: map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Up/Normal"},
		},
		{
			name:       "replacing an unknown host ID is refused",
			setup:      threeNodes,
			steps:      []step{downC},
			join:       replaceJoin("d", "x", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantErr:    `cannot replace node x: host ID not found in cluster "c"`,
			wantRings:  [][]string{{"a", "b", "c"}},
			wantStates: map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Down/Normal"},
		},
		{
			name:      "replacing a node of another cluster is refused",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1"), join("x", "other", "10.1.0.1", "10.1.0.1")},
			steps:     []step{stateStep("x", StateRequest{Status: StatusDown})},
			join:      replaceJoin("d", "x", "10.1.0.1", StateJoining, "10.0.0.1"),
			wantErr:   `cannot replace node x: host ID not found in cluster "c"`,
			wantRings: [][]string{{"a"}, {"x"}},
		},
		{
			name:      "replacing a node outside the ring the seeds lead to is refused",
			setup:     []JoinRequest{join("a", "c", "10.0.0.1", "10.0.0.1"), join("x", "c", "10.1.0.1", "10.1.0.1"), join("y", "c", "10.1.0.2", "10.1.0.1")},
			steps:     []step{stateStep("y", StateRequest{Status: StatusDown})},
			join:      replaceJoin("d", "y", "10.1.0.2", StateJoining, "10.0.0.1"),
			wantErr:   `cannot replace node y: host ID not found in ring ring-1 of cluster "c" that the seeds [10.0.0.1] lead to`,
			wantRings: [][]string{{"a"}, {"x", "y"}},
		},
		{
			name:      "a replacing node with no live seed is refused instead of founding a ring",
			setup:     threeNodes,
			steps:     []step{downC},
			join:      replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.3"),
			wantErr:   "node d can't join a ring: no live node at any of its seeds [10.0.0.3]",
			wantRings: [][]string{{"a", "b", "c"}},
		},
		{
			name:    "a node can't replace itself",
			join:    replaceJoin("d", "d", "10.0.0.4", StateJoining, "10.0.0.1"),
			wantErr: "node d can't replace itself",
		},
		{
			name:       "a second node replacing the same host is refused while the first is Up",
			setup:      threeNodes,
			steps:      []step{downC, joinStep(replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1"))},
			join:       replaceJoin("e", "c", "10.0.0.5", StateJoining, "10.0.0.1"),
			wantErr:    "cannot replace node c: node d (10.0.0.3) is replacing it already",
			wantRings:  [][]string{{"a", "b", "c", "d"}},
			wantStates: map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Down/Normal", "d": "Up/Joining"},
		},
		{
			name:         "a second node takes over a replacement whose node went Down before it finished",
			setup:        threeNodes,
			steps:        dStopped,
			join:         replaceJoin("e", "c", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantRings:    [][]string{{"a", "b", "c", "e"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Down/Normal", "e": "Up/Joining"},
			wantTokensOf: map[string]string{"e": "c"},
		},
		{
			name:  "a node replacing a host that was replaced already is refused",
			setup: threeNodes,
			steps: []step{downC, joinStep(replaceJoin("d", "c", "10.0.0.3", StateNormal, "10.0.0.1"))},
			join:  replaceJoin("e", "c", "10.0.0.5", StateJoining, "10.0.0.1"),
			// Refused, not found: the registry remembers what happened to c.
			wantErr:   "cannot replace node c: it was already replaced by d",
			wantRings: [][]string{{"a", "b", "d"}},
		},
		{
			name:         "a replacing node restarted before it was Normal resumes the replacement",
			setup:        threeNodes,
			steps:        dStopped,
			join:         replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.2"),
			wantRings:    [][]string{{"a", "b", "c", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "c": "Down/Normal", "d": "Up/Joining"},
			wantTokensOf: map[string]string{"d": "c"},
		},
		{
			name:         "a replacing node restarted Normal before it was Normal finishes the replacement",
			setup:        threeNodes,
			steps:        dStopped,
			join:         replaceJoin("d", "c", "10.0.0.3", StateNormal, "10.0.0.2"),
			wantRings:    [][]string{{"a", "b", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "d": "Up/Normal"},
			wantTokensOf: map[string]string{"d": "c"},
		},
		{
			name:      "a replacing node restarted before it was Normal can't replace another node instead",
			setup:     threeNodes,
			steps:     append(slices.Clone(dStopped), stateStep("b", StateRequest{Status: StatusDown})),
			join:      replaceJoin("d", "b", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantErr:   "node d hasn't finished replacing c and can't replace b instead",
			wantRings: [][]string{{"a", "b", "c", "d"}},
		},
		{
			name:      "a replacing node restarted before it was Normal can't forget the replacement",
			setup:     threeNodes,
			steps:     dStopped,
			join:      join("d", "c", "10.0.0.3", "10.0.0.1"),
			wantErr:   "node d hasn't finished replacing c and must restart with replace_node_first_boot=c",
			wantRings: [][]string{{"a", "b", "c", "d"}},
		},
		{
			name:      "a replacing node restarted before it was Normal is refused while the replaced node is back Up",
			setup:     threeNodes,
			steps:     append(slices.Clone(dStopped), stateStep("c", StateRequest{Status: StatusUp})),
			join:      replaceJoin("d", "c", "10.0.0.9", StateJoining, "10.0.0.1"),
			wantErr:   "cannot replace a live node c (10.0.0.3): it is Up, a replaced node must be Down",
			wantRings: [][]string{{"a", "b", "c", "d"}},
		},
		{
			name:         "a node that finished replacing restarts Normal when it still names the node it replaced",
			setup:        threeNodes,
			steps:        dReplacedC,
			join:         replaceJoin("d", "c", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantRings:    [][]string{{"a", "b", "d"}},
			wantStates:   map[string]string{"a": "Up/Normal", "b": "Up/Normal", "d": "Up/Normal"},
			wantTokensOf: map[string]string{"d": "c"},
		},
		{
			name:      "a node that finished replacing can't replace another node",
			setup:     threeNodes,
			steps:     append(slices.Clone(dReplacedC), stateStep("b", StateRequest{Status: StatusDown})),
			join:      replaceJoin("d", "b", "10.0.0.3", StateJoining, "10.0.0.1"),
			wantErr:   "node d replaced c, not b",
			wantRings: [][]string{{"a", "b", "d"}},
		},
		{
			name:      "a node that bootstrapped without replacing can't replace on a restart",
			setup:     threeNodes,
			steps:     []step{downC, stateStep("b", StateRequest{Status: StatusDown})},
			join:      replaceJoin("b", "c", "10.0.0.2", StateJoining, "10.0.0.1"),
			wantErr:   "node b has already bootstrapped and can't replace c",
			wantRings: [][]string{{"a", "b", "c"}},
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
			for _, s := range tc.steps {
				if s.join != nil {
					if _, err := reg.Join(*s.join); err != nil {
						t.Fatalf("step join %s: %v", s.join.HostID, err)
					}
				}
				for id, req := range s.state {
					if err := reg.SetState(id, req); err != nil {
						t.Fatalf("step state of %s: %v", id, err)
					}
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
			gotStates := map[string]string{}
			gotTokens := map[string][]string{}
			for _, r := range reg.Rings() {
				for _, m := range r.Members {
					gotStates[m.HostID] = string(m.Status) + "/" + string(m.State)
					gotTokens[m.HostID] = m.Tokens
				}
			}
			if tc.wantStates != nil {
				if diff := cmp.Diff(tc.wantStates, gotStates); diff != "" {
					t.Errorf("unexpected states (-want +got):\n%s", diff)
				}
			}
			for id, origin := range tc.wantTokensOf {
				if diff := cmp.Diff(tokensFor(origin), gotTokens[id]); diff != "" {
					t.Errorf("tokens of %s aren't %s's (-want +got):\n%s", id, origin, diff)
				}
			}
		})
	}
}

func TestRegistryTokensAreStablePerNodeAndDistinct(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(0)
	for _, req := range threeNodes {
		if _, err := reg.Join(req); err != nil {
			t.Fatal(err)
		}
	}
	before := reg.Rings()[0]
	seen := map[string]string{}
	for _, m := range before.Members {
		if len(m.Tokens) != TokensPerNode {
			t.Errorf("node %s has %d tokens, want %d", m.HostID, len(m.Tokens), TokensPerNode)
		}
		for _, tok := range m.Tokens {
			if other, ok := seen[tok]; ok {
				t.Errorf("token %s belongs to both %s and %s", tok, other, m.HostID)
			}
			seen[tok] = m.HostID
		}
	}
	if err := reg.SetState("b", StateRequest{Status: StatusDown}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Join(join("b", "c", "10.0.0.7", "10.0.0.1")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before.Members[1].Tokens, reg.Rings()[0].Members[1].Tokens); diff != "" {
		t.Errorf("a restarted node's tokens changed (-want +got):\n%s", diff)
	}
}
