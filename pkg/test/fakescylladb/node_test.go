package fakescylladb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

type testNode struct {
	node   *Node
	client *scyllaclient.Client
	url    string
	cancel context.CancelFunc
	// finished is closed when Run returned runErr.
	finished chan struct{}
	runErr   error
}

func startTestNode(t *testing.T, registryURL, workdir, broadcast string, knobs Knobs, seeds ...string) *testNode {
	t.Helper()
	return runTestNode(t, registryURL, NodeOptions{Invocation: testInvocation(workdir, broadcast, seeds...), Knobs: knobs})
}

func testInvocation(workdir, broadcast string, seeds ...string) *Invocation {
	return &Invocation{Settings: Settings{
		ClusterName: "c", Datacenter: "dc1", Rack: "r1", BroadcastAddress: broadcast, BroadcastRPCAddress: broadcast,
		ListenAddress: "0.0.0.0", RPCAddress: "0.0.0.0", Seeds: seeds, Workdir: workdir,
	}}
}

// runTestNode runs a node with opts, filling in the registry client, heartbeat interval and logger.
func runTestNode(t *testing.T, registryURL string, opts NodeOptions) *testNode {
	t.Helper()
	rc, err := NewRegistryClient(registryURL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Registry = rc
	opts.HeartbeatInterval = 10 * time.Millisecond
	if opts.Logger == nil {
		opts.Logger = log.New(io.Discard, "", 0)
	}
	n, err := NewNode(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tn := &testNode{node: n, url: "http://" + l.Addr().String(), cancel: cancel, finished: make(chan struct{})}
	tn.client, err = scyllaclient.NewClient(l.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		tn.runErr = n.Run(ctx, l)
		close(tn.finished)
	}()
	t.Cleanup(func() { _ = tn.stop() })
	return tn
}

// stop cancels the node and returns what Run returned.
func (tn *testNode) stop() error {
	tn.cancel()
	return tn.wait()
}

// wait returns what Run returned once it returns on its own.
func (tn *testNode) wait() error {
	<-tn.finished
	return tn.runErr
}

// waitForMode polls until the node reports mode or the node's Run ends.
func (tn *testNode) waitForMode(t *testing.T, mode scyllaclient.OperationMode) {
	t.Helper()
	for {
		select {
		case <-tn.finished:
			t.Fatalf("node stopped while waiting for %s: %v", mode, tn.runErr)
		default:
		}
		got, err := tn.client.OperationMode(context.Background())
		if err == nil && got == mode {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNodeFormsRingAndServesStatus(t *testing.T) {
	t.Parallel()
	reg := httptest.NewServer(NewRegistry(0).Handler())
	defer reg.Close()
	ctx := context.Background()

	a := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.1", Knobs{}, "10.0.0.1")
	a.waitForMode(t, scyllaclient.OperationModeNormal)
	b := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.2", Knobs{}, "10.0.0.1")
	b.waitForMode(t, scyllaclient.OperationModeNormal)

	status, err := b.client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []scyllaclient.NodeStatusInfo{
		{HostID: a.node.HostID(), Addr: "10.0.0.1", Status: scyllaclient.NodeStatusUp, State: scyllaclient.NodeStateNormal},
		{HostID: b.node.HostID(), Addr: "10.0.0.2", Status: scyllaclient.NodeStatusUp, State: scyllaclient.NodeStateNormal},
	}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("unexpected status (-want +got):\n%s", diff)
	}
	hostID, err := b.client.LocalHostID(ctx)
	if err != nil || hostID != b.node.HostID() {
		t.Errorf("LocalHostID() = %q, %v; want %q", hostID, err, b.node.HostID())
	}
	nt, err := b.client.IsNativeTransportEnabled(ctx)
	if err != nil || !nt {
		t.Errorf("IsNativeTransportEnabled() = %v, %v; want true", nt, err)
	}

	if err := b.stop(); err != nil {
		t.Fatal(err)
	}
	status, err = a.client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status[1].Status != scyllaclient.NodeStatusDown {
		t.Errorf("a stopped node reads %s, want Down", status[1].Status)
	}
}

func TestNodeWithoutLiveSeedFailsToStart(t *testing.T) {
	t.Parallel()
	reg := httptest.NewServer(NewRegistry(0).Handler())
	defer reg.Close()
	n := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.2", Knobs{}, "10.0.0.1")
	err := n.wait()
	if err == nil || !strings.Contains(err.Error(), "no live node at any of its seeds [10.0.0.1]") {
		t.Errorf("unexpected error %v", err)
	}
}

// TestNodeStoppedWhileItJoinsExitsCleanly: a node registered in the ring but stopped before it reported itself
// Normal (its state request still in flight) returns nil, as when it is stopped at any later point; a caller that
// waited for it to show in the ring and stopped it must not read a failure to start.
func TestNodeStoppedWhileItJoinsExitsCleanly(t *testing.T) {
	t.Parallel()
	registry := NewRegistry(0).Handler()
	stateRequested := make(chan struct{}, 1)
	release := make(chan struct{})
	var slowState atomic.Bool
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if slowState.Load() && strings.HasSuffix(req.URL.Path, "/state") {
			select {
			case stateRequested <- struct{}{}:
			default:
			}
			// Slow to answer: the node is stopped meanwhile.
			select {
			case <-req.Context().Done():
			case <-release:
			}
			http.Error(w, "too late", http.StatusServiceUnavailable)
			return
		}
		registry.ServeHTTP(w, req)
	}))
	defer reg.Close()
	defer close(release)
	a := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.1", Knobs{}, "10.0.0.1")
	a.waitForMode(t, scyllaclient.OperationModeNormal)
	slowState.Store(true)
	// A bootstrap delay makes the node join Joining and then report itself Normal.
	n := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.2", Knobs{BootstrapDelay: Duration(time.Millisecond)}, "10.0.0.1")
	select {
	case <-stateRequested:
	case <-n.finished:
		t.Fatalf("the node stopped before it reported its state: %v", n.runErr)
	case <-time.After(10 * time.Second):
		t.Fatal("the node never reported its state")
	}
	if err := n.stop(); err != nil {
		t.Errorf("want a node stopped while it joins to return nil, got %v", err)
	}
}

func setKnobs(t *testing.T, tn *testNode, body string) {
	t.Helper()
	resp, err := http.Post(tn.url+PathKnobs, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting knobs answered %d", resp.StatusCode)
	}
}

func TestNodeKnobs(t *testing.T) {
	t.Parallel()
	reg := httptest.NewServer(NewRegistry(0).Handler())
	defer reg.Close()
	ctx := context.Background()
	a := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.1", Knobs{Down: true, NativeTransportDisabled: true}, "10.0.0.1")
	a.waitForMode(t, scyllaclient.OperationModeNormal)

	status, err := a.client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status[0].Status != scyllaclient.NodeStatusDown {
		t.Errorf("with the down knob the node reads %s, want Down", status[0].Status)
	}
	if nt, _ := a.client.IsNativeTransportEnabled(ctx); nt {
		t.Error("native transport is on despite the knob")
	}

	setKnobs(t, a, `{"down": false}`)
	status, err = a.client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !status[0].IsUN() {
		t.Errorf("after clearing the down knob the node reads %+v, want UN", status[0])
	}
	if nt, _ := a.client.IsNativeTransportEnabled(ctx); !nt {
		t.Error("native transport is off after clearing the knob")
	}

	setKnobs(t, a, `{"apiFailure": true}`)
	var se *scyllaclient.StatusError
	if _, err := a.client.LocalHostID(ctx); !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError {
		t.Errorf("with the API failure knob LocalHostID() = %v, want a 500", err)
	}
}

func TestNodeDecommission(t *testing.T) {
	t.Parallel()
	registry := NewRegistry(0)
	reg := httptest.NewServer(registry.Handler())
	defer reg.Close()
	ctx := context.Background()
	a := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.1", Knobs{}, "10.0.0.1")
	a.waitForMode(t, scyllaclient.OperationModeNormal)
	bDir := t.TempDir()
	b := startTestNode(t, reg.URL, bDir, "10.0.0.2", Knobs{}, "10.0.0.1")
	b.waitForMode(t, scyllaclient.OperationModeNormal)
	bID := b.node.HostID()

	if err := b.client.Decommission(ctx); err != nil {
		t.Fatal(err)
	}
	if mode, err := b.client.OperationMode(ctx); err != nil || mode != scyllaclient.OperationModeDecommissioned {
		t.Errorf("OperationMode() = %q, %v; want DECOMMISSIONED", mode, err)
	}
	if err := b.client.Decommission(ctx); err == nil {
		t.Error("a second decommission should fail")
	}
	if diff := cmp.Diff([][]string{{a.node.HostID()}}, ringsOf(registry)); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
	if err := b.stop(); err != nil {
		t.Fatal(err)
	}

	restarted := startTestNode(t, reg.URL, bDir, "10.0.0.2", Knobs{}, "10.0.0.1")
	if restarted.node.HostID() != bID {
		t.Errorf("restarted node has host ID %s, want %s", restarted.node.HostID(), bID)
	}
	err := restarted.wait()
	if !errors.Is(err, ErrDecommissioned) {
		t.Errorf("restarting a decommissioned node: %v, want ErrDecommissioned", err)
	}
}

func TestNodeRecordIsServed(t *testing.T) {
	t.Parallel()
	reg := httptest.NewServer(NewRegistry(0).Handler())
	defer reg.Close()
	a := startTestNode(t, reg.URL, t.TempDir(), "10.0.0.1", Knobs{}, "10.0.0.1")
	a.waitForMode(t, scyllaclient.OperationModeNormal)
	resp, err := http.Get(a.url + PathRecord)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `"seeds":["10.0.0.1"]`) {
		t.Errorf("record %s lacks the seeds", body)
	}
}

// startReplacingNode starts a node whose first boot replaces the node with host ID replace.
func startReplacingNode(t *testing.T, registryURL, workdir, broadcast, replace string, knobs Knobs, logger *log.Logger, seeds ...string) *testNode {
	t.Helper()
	inv := testInvocation(workdir, broadcast, seeds...)
	inv.Settings.ReplaceNodeFirstBoot = replace
	return runTestNode(t, registryURL, NodeOptions{Invocation: inv, Knobs: knobs, Logger: logger})
}

// threeNodeRing starts a ring of three Normal nodes at 10.0.0.1-3, seeded from the first.
func threeNodeRing(t *testing.T, registryURL string) []*testNode {
	t.Helper()
	var nodes []*testNode
	for _, addr := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"} {
		n := startTestNode(t, registryURL, t.TempDir(), addr, Knobs{}, "10.0.0.1")
		n.waitForMode(t, scyllaclient.OperationModeNormal)
		nodes = append(nodes, n)
	}
	return nodes
}

// ringWithDeadNode serves a registry with a ring of three Normal nodes at 10.0.0.1-3, the third stopped: a dead
// node to replace, whose host ID it returns.
func ringWithDeadNode(t *testing.T) (reg *Registry, url string, ring []*testNode, deadID string) {
	t.Helper()
	reg = NewRegistry(0)
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(srv.Close)
	ring = threeNodeRing(t, srv.URL)
	if err := ring[2].stop(); err != nil {
		t.Fatal(err)
	}
	return reg, srv.URL, ring, ring[2].node.HostID()
}

// waitForMember polls until the registry has the node as a member.
func waitForMember(t *testing.T, reg *Registry, tn *testNode) {
	t.Helper()
	for {
		select {
		case <-tn.finished:
			t.Fatalf("node stopped before joining: %v", tn.runErr)
		default:
		}
		if _, err := reg.RingOf(tn.node.HostID()); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func statusOf(t *testing.T, tn *testNode) []scyllaclient.NodeStatusInfo {
	t.Helper()
	status, err := tn.client.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return status
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s answered %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}

func downEndpoints(t *testing.T, tn *testNode) []string {
	t.Helper()
	var down []string
	getJSON(t, tn.url+scyllaclient.PathDownEndpoints, &down)
	return down
}

// tokenOwners returns the node's answer to PathTokensEndpoint as token -> address.
func tokenOwners(t *testing.T, tn *testNode) map[string]string {
	t.Helper()
	var kvs []map[string]string
	getJSON(t, tn.url+PathTokensEndpoint, &kvs)
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv["key"]] = kv["value"]
	}
	return out
}

func tokensOf(t *testing.T, reg *Registry, hostID string) []string {
	t.Helper()
	ring, err := reg.RingOf(hostID)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ring.Members, func(m Member) bool { return m.HostID == hostID })
	return ring.Members[i].Tokens
}

func owning(addr string, tokens []string) map[string]string {
	out := map[string]string{}
	for _, tok := range tokens {
		out[tok] = addr
	}
	return out
}

func TestNodeReplacesADeadNode(t *testing.T) {
	t.Parallel()
	up := func(id, addr string, state scyllaclient.NodeState) scyllaclient.NodeStatusInfo {
		return scyllaclient.NodeStatusInfo{HostID: id, Addr: addr, Status: scyllaclient.NodeStatusUp, State: state}
	}
	tt := []struct {
		name    string
		address string
		// dead says whether the replaced node shows as Down while the replacing node is Joining; at the same
		// address it doesn't, as ScyllaDB lists nodes by address.
		dead bool
	}{
		{name: "at the replaced node's address", address: "10.0.0.3"},
		{name: "at a new address", address: "10.0.0.4", dead: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg, url, nodes, cID := ringWithDeadNode(t)
			a, b := nodes[0], nodes[1]
			cDir := nodes[2].node.opts.Invocation.Settings.Workdir
			cTokens := tokensOf(t, reg, cID)

			dDir := t.TempDir()
			d := startReplacingNode(t, url, dDir, tc.address, cID, Knobs{BootstrapDelay: Duration(time.Hour)}, nil, "10.0.0.1")
			waitForMember(t, reg, d)
			dID := d.node.HostID()
			if dID == cID {
				t.Fatalf("the replacing node took the replaced node's host ID %s", cID)
			}

			want := []scyllaclient.NodeStatusInfo{
				up(a.node.HostID(), "10.0.0.1", scyllaclient.NodeStateNormal),
				up(b.node.HostID(), "10.0.0.2", scyllaclient.NodeStateNormal),
			}
			if tc.dead {
				want = append(want, scyllaclient.NodeStatusInfo{HostID: cID, Addr: "10.0.0.3", Status: scyllaclient.NodeStatusDown, State: scyllaclient.NodeStateNormal})
			}
			want = append(want, up(dID, tc.address, scyllaclient.NodeStateJoining))
			if diff := cmp.Diff(want, statusOf(t, a)); diff != "" {
				t.Errorf("unexpected status while replacing (-want +got):\n%s", diff)
			}
			wantDown := []string{}
			if tc.dead {
				wantDown = []string{"10.0.0.3"}
			}
			if diff := cmp.Diff(wantDown, downEndpoints(t, a)); diff != "" {
				t.Errorf("unexpected Down endpoints while replacing (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(cTokens, tokensOf(t, reg, dID)); diff != "" {
				t.Errorf("the replacing node doesn't hold the replaced node's tokens (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(owning("10.0.0.3", cTokens), subset(tokenOwners(t, a), cTokens)); diff != "" {
				t.Errorf("while replacing, the replaced node's tokens don't belong to its address (-want +got):\n%s", diff)
			}
			var record Record
			getJSON(t, d.url+PathRecord, &record)
			if record.ReplaceHostID != cID || record.HostID != dID || record.Invocation.Settings.ReplaceNodeFirstBoot != cID {
				t.Errorf("the record has host ID %s replacing %s (option %q), want %s replacing %s", record.HostID, record.ReplaceHostID, record.Invocation.Settings.ReplaceNodeFirstBoot, dID, cID)
			}
			if _, err := os.Stat(filepath.Join(dDir, ReplacingFile)); err != nil {
				t.Errorf("the workdir doesn't remember the replacement: %v", err)
			}

			setKnobs(t, d, `{"bootstrapDelay": "0s"}`)
			d.waitForMode(t, scyllaclient.OperationModeNormal)

			want = []scyllaclient.NodeStatusInfo{
				up(a.node.HostID(), "10.0.0.1", scyllaclient.NodeStateNormal),
				up(b.node.HostID(), "10.0.0.2", scyllaclient.NodeStateNormal),
				up(dID, tc.address, scyllaclient.NodeStateNormal),
			}
			for _, n := range []*testNode{a, b, d} {
				if diff := cmp.Diff(want, statusOf(t, n)); diff != "" {
					t.Errorf("unexpected status on %s once replaced (-want +got):\n%s", n.node.HostID(), diff)
				}
				if diff := cmp.Diff([]string{}, downEndpoints(t, n)); diff != "" {
					t.Errorf("unexpected Down endpoints on %s once replaced (-want +got):\n%s", n.node.HostID(), diff)
				}
				if diff := cmp.Diff(owning(tc.address, cTokens), subset(tokenOwners(t, n), cTokens)); diff != "" {
					t.Errorf("once replaced, the replaced node's tokens don't belong to the replacing node (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff([][]string{sortedIDs(a.node.HostID(), b.node.HostID(), dID)}, ringsOf(reg)); diff != "" {
				t.Errorf("unexpected rings (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(filepath.Join(dDir, ReplacingFile)); !os.IsNotExist(err) {
				t.Errorf("the workdir still remembers the finished replacement: %v", err)
			}

			restartedC := startTestNode(t, url, cDir, "10.0.0.3", Knobs{}, "10.0.0.1")
			if err := restartedC.wait(); err == nil || !strings.Contains(err.Error(), "node "+cID+" was replaced by "+dID+" and will not rejoin the ring") {
				t.Errorf("restarting the replaced node: %v, want a refusal", err)
			}
		})
	}
}

// subset returns the entries of m with the given keys.
func subset(m map[string]string, keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

func sortedIDs(ids ...string) []string {
	slices.Sort(ids)
	return ids
}

func TestNodeReplaceIsRefused(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name string
		// replace picks the host ID to replace; it may start other nodes first.
		replace func(t *testing.T, registryURL string, ring []*testNode) string
		wantErr string
	}{
		{
			name:    "a live node",
			replace: func(t *testing.T, _ string, ring []*testNode) string { return ring[2].node.HostID() },
			wantErr: "cannot replace a live node %s (10.0.0.3): it is Up, a replaced node must be Down",
		},
		{
			name:    "an unknown host ID",
			replace: func(*testing.T, string, []*testNode) string { return "0b8e3c1a-5d4f-4e2b-8a7c-9f6e5d4c3b2a" },
			wantErr: `cannot replace node %s: host ID not found in cluster "c"`,
		},
		{
			name: "a node another live node is replacing",
			replace: func(t *testing.T, registryURL string, ring []*testNode) string {
				cID := ring[2].node.HostID()
				if err := ring[2].stop(); err != nil {
					t.Fatal(err)
				}
				first := startReplacingNode(t, registryURL, t.TempDir(), "10.0.0.3", cID, Knobs{BootstrapDelay: Duration(time.Hour)}, nil, "10.0.0.1")
				first.waitForMode(t, scyllaclient.OperationModeJoining)
				for !strings.Contains(fmt.Sprint(statusOf(t, ring[0])), first.node.HostID()) {
					time.Sleep(5 * time.Millisecond)
				}
				return cID
			},
			wantErr: "cannot replace node %s: node ",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			reg := NewRegistry(0)
			srv := httptest.NewServer(reg.Handler())
			defer srv.Close()
			ring := threeNodeRing(t, srv.URL)
			id := tc.replace(t, srv.URL, ring)
			before := reg.Rings()

			n := startReplacingNode(t, srv.URL, t.TempDir(), "10.0.0.5", id, Knobs{}, nil, "10.0.0.1")
			err := n.wait()
			if want := fmt.Sprintf(tc.wantErr, id); err == nil || !strings.Contains(err.Error(), "can't join a ring: registry POST /v1/join: "+want) {
				t.Fatalf("Run() = %v, want an error with %q", err, want)
			}
			if diff := cmp.Diff(before, reg.Rings()); diff != "" {
				t.Errorf("a refused replacement changed the rings (-before +after):\n%s", diff)
			}
		})
	}
}

func TestNodeIgnoresReplaceOnARestartWithItsIdentity(t *testing.T) {
	t.Parallel()
	reg, url, ring, cID := ringWithDeadNode(t)
	eDir := t.TempDir()
	e := startTestNode(t, url, eDir, "10.0.0.5", Knobs{}, "10.0.0.1")
	e.waitForMode(t, scyllaclient.OperationModeNormal)
	eID := e.node.HostID()
	if err := e.stop(); err != nil {
		t.Fatal(err)
	}

	var logs lockedBuffer
	restarted := startReplacingNode(t, url, eDir, "10.0.0.5", cID, Knobs{}, log.New(&logs, "", 0), "10.0.0.1")
	restarted.waitForMode(t, scyllaclient.OperationModeNormal)
	if got := restarted.node.HostID(); got != eID {
		t.Errorf("the restarted node has host ID %s, want %s", got, eID)
	}
	if got := restarted.node.ReplaceHostID(); got != "" {
		t.Errorf("the restarted node replaces %s, want nothing", got)
	}
	if want := fmt.Sprintf("ignoring replace_node_first_boot=%s: this node already has host ID %s, so this isn't its first boot", cID, eID); !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
	if _, err := os.Stat(filepath.Join(eDir, ReplacingFile)); !os.IsNotExist(err) {
		t.Errorf("the workdir records a replacement: %v", err)
	}
	wantRing := sortedIDs(ring[0].node.HostID(), ring[1].node.HostID(), cID, eID)
	if diff := cmp.Diff([][]string{wantRing}, ringsOf(reg)); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
}

func TestNodeReplacingRestartedMidwayResumesTheReplacement(t *testing.T) {
	t.Parallel()
	reg, url, ring, cID := ringWithDeadNode(t)
	cTokens := tokensOf(t, reg, cID)
	dDir := t.TempDir()
	d := startReplacingNode(t, url, dDir, "10.0.0.3", cID, Knobs{BootstrapDelay: Duration(time.Hour)}, nil, "10.0.0.1")
	waitForMember(t, reg, d)
	dID := d.node.HostID()
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}

	// Another replacement can't be started from the same workdir.
	inv := testInvocation(dDir, "10.0.0.3", "10.0.0.1")
	inv.Settings.ReplaceNodeFirstBoot = ring[1].node.HostID()
	rc, err := NewRegistryClient(url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewNode(NodeOptions{Invocation: inv, Registry: rc, Logger: log.New(io.Discard, "", 0)})
	if want := fmt.Sprintf("this node started replacing %s and hasn't finished; it can't replace %s (replace_node_first_boot) instead", cID, ring[1].node.HostID()); err == nil || err.Error() != want {
		t.Errorf("NewNode() error = %v, want %q", err, want)
	}

	// Restarted without the option, as when its supervisor forgot it, it still resumes with its own host ID.
	var logs lockedBuffer
	restarted := startReplacingNode(t, url, dDir, "10.0.0.3", "", Knobs{}, log.New(&logs, "", 0), "10.0.0.1")
	restarted.waitForMode(t, scyllaclient.OperationModeNormal)
	if got, gotReplace := restarted.node.HostID(), restarted.node.ReplaceHostID(); got != dID || gotReplace != cID {
		t.Errorf("the restarted node is %s replacing %q, want %s replacing %s", got, gotReplace, dID, cID)
	}
	if want := "resuming the unfinished replacement of node " + cID; !strings.Contains(logs.String(), want) {
		t.Errorf("the log lacks %q:\n%s", want, logs.String())
	}
	wantRing := sortedIDs(ring[0].node.HostID(), ring[1].node.HostID(), dID)
	if diff := cmp.Diff([][]string{wantRing}, ringsOf(reg)); diff != "" {
		t.Errorf("unexpected rings (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(cTokens, tokensOf(t, reg, dID)); diff != "" {
		t.Errorf("the replacing node doesn't hold the replaced node's tokens (-want +got):\n%s", diff)
	}
}
