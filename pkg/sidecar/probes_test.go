package sidecar

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

func TestProber(t *testing.T) {
	t.Parallel()
	memberService := func(maintenance bool) *corev1.Service {
		svc := makeService(selfName, clusterIPService, baseTime, []string{"10.96.0.1"}, nil)
		if maintenance {
			svc.Labels = map[string]string{naming.NodeMaintenanceLabel: ""}
		}
		return svc
	}
	tt := []struct {
		name         string
		knobs        fakescylladb.Knobs
		runtimeKnobs string
		maintenance  bool
		notRunning   bool
		restart      error
		wantHealthz  string
		wantReadyz   func(hostID string) string
		// wantJoined: the ring reported the node Up and Normal, so the joined marker is on the volume.
		wantJoined bool
	}{
		{
			name:       "an Up and Normal node with CQL on is ready and recorded as joined",
			wantReadyz: func(string) string { return "" },
			wantJoined: true,
		},
		{
			name:  "a node reported Down is not ready",
			knobs: fakescylladb.Knobs{Down: true},
			wantReadyz: func(hostID string) string {
				return fmt.Sprintf("node %s (10.96.0.1) is Down/Normal, not Up/Normal", hostID)
			},
		},
		{
			name:        "a node reported Down in maintenance is ready",
			knobs:       fakescylladb.Knobs{Down: true},
			maintenance: true,
			wantReadyz:  func(string) string { return "" },
		},
		{
			name:       "a node without CQL is not ready, but is Normal in the ring, so recorded as joined",
			knobs:      fakescylladb.Knobs{NativeTransportDisabled: true},
			wantReadyz: func(string) string { return "native transport (CQL) is off" },
			wantJoined: true,
		},
		{
			name:       "a node still starting is not in the ring",
			knobs:      fakescylladb.Knobs{StartupDelay: fakescylladb.Duration(time.Hour)},
			wantReadyz: func(hostID string) string { return fmt.Sprintf("node %s is not in the ring", hostID) },
		},
		{
			name:  "a node still bootstrapping, as a replacing node does, is not ready",
			knobs: fakescylladb.Knobs{BootstrapDelay: fakescylladb.Duration(time.Hour)},
			wantReadyz: func(hostID string) string {
				return fmt.Sprintf("node %s (10.96.0.1) is Up/Joining, not Up/Normal", hostID)
			},
		},
		{
			name:         "a failing API is neither healthy nor ready",
			runtimeKnobs: `{"apiFailure": true}`,
			wantHealthz:  `ScyllaDB's API doesn't answer: ScyllaDB API GET /storage_service/operation_mode returned 500: {"code":500,"message":"injected failure"}`,
			wantReadyz: func(string) string {
				return `can't get the host ID: ScyllaDB API GET /storage_service/hostid/local returned 500: {"code":500,"message":"injected failure"}`
			},
		},
		{
			name:         "a failing API in maintenance is healthy and ready",
			runtimeKnobs: `{"apiFailure": true}`,
			maintenance:  true,
			wantReadyz:   func(string) string { return "" },
		},
		{
			name:        "a node restarting for a new address is healthy but not ready, even in maintenance",
			restart:     fmt.Errorf("broadcast_address changed"),
			maintenance: true,
			wantReadyz: func(string) string {
				return "the node restarts to use its member Service's new address: broadcast_address changed"
			},
		},
		{
			name:       "a decommissioned node is healthy but not ready",
			notRunning: true,
			wantReadyz: func(string) string { return "the node was decommissioned; ScyllaDB is not running" },
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := startInProcessNode(t, tc.knobs)
			if tc.runtimeKnobs != "" {
				n.setKnobs(t, tc.runtimeKnobs)
			}
			restart := NewRestart()
			if tc.restart != nil {
				restart.Request(tc.restart)
			}
			decommissioned := &atomic.Bool{}
			decommissioned.Store(tc.notRunning)
			joined := NewJoinedMarker(t.TempDir())
			p := NewProber(serviceLister(t, memberService(tc.maintenance)), testNamespace, selfName, n.client, decommissioned, restart, joined)
			ctx := context.Background()
			if got := errorString(p.Healthz(ctx)); got != tc.wantHealthz {
				t.Errorf("Healthz() = %q, want %q", got, tc.wantHealthz)
			}
			wantReadyz := tc.wantReadyz(n.node.HostID())
			if got := errorString(p.Readyz(ctx)); got != wantReadyz {
				t.Errorf("Readyz() = %q, want %q", got, wantReadyz)
			}
			if got := joinedMarkerHostID(t, joined); got != map[bool]string{true: n.node.HostID()}[tc.wantJoined] {
				t.Errorf("joined marker holds %q, want it written: %v", got, tc.wantJoined)
			}

			srv := httptest.NewServer(p.Handler())
			defer srv.Close()
			resp, err := http.Get(srv.URL + ReadyzPath)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			wantCode := http.StatusOK
			if wantReadyz != "" {
				wantCode = http.StatusServiceUnavailable
			}
			if resp.StatusCode != wantCode {
				t.Errorf("GET %s = %d, want %d", ReadyzPath, resp.StatusCode, wantCode)
			}
		})
	}
}

func TestProberFollowsTheNodeGoingDown(t *testing.T) {
	t.Parallel()
	n := startInProcessNode(t, fakescylladb.Knobs{})
	p := NewProber(serviceLister(t), testNamespace, selfName, n.client, &atomic.Bool{}, NewRestart(), NewJoinedMarker(t.TempDir()))
	ctx := context.Background()
	if err := p.Readyz(ctx); err != nil {
		t.Fatalf("a healthy node isn't ready: %v", err)
	}
	n.setKnobs(t, `{"down": true}`)
	if err := p.Readyz(ctx); err == nil {
		t.Error("a node gone Down is still ready")
	}
	n.setKnobs(t, `{"down": false}`)
	if err := p.Readyz(ctx); err != nil {
		t.Errorf("a node back Up isn't ready: %v", err)
	}
}

// TestProberJudgesAReplacingNodeByItsOwnHostID runs a node that replaces a Down node at the same broadcast address,
// as a node broadcasting its member Service's ClusterIP does: readiness follows the replacing node's own host ID,
// failing while it bootstraps and passing once it is Normal, and only then is the node recorded as joined.
func TestProberJudgesAReplacingNodeByItsOwnHostID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	registry := fakescylladb.NewRegistry(0)
	join := func(hostID, address string) {
		t.Helper()
		_, err := registry.Join(fakescylladb.JoinRequest{NodeInfo: fakescylladb.NodeInfo{
			HostID: hostID, ClusterName: "prod", Datacenter: "dc1", Rack: "r1",
			BroadcastAddress: address, BroadcastRPCAddress: address, Seeds: []string{"10.96.0.2"},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	join("5a3e9c1d-2b4f-4a6e-8c0d-1e2f3a4b5c6d", "10.96.0.2")
	join(replacedHostID, "10.96.0.1")
	if err := registry.SetState(replacedHostID, fakescylladb.StateRequest{Status: fakescylladb.StatusDown}); err != nil {
		t.Fatal(err)
	}

	n := startInProcessNodeIn(t, registry, fakescylladb.Knobs{BootstrapDelay: fakescylladb.Duration(time.Hour)}, func(s *fakescylladb.Settings) {
		s.Seeds = []string{"10.96.0.2"}
		s.ReplaceNodeFirstBoot = replacedHostID
	})
	if got := n.node.ReplaceHostID(); got != replacedHostID {
		t.Fatalf("the fake node replaces %q, want %q", got, replacedHostID)
	}
	joined := NewJoinedMarker(t.TempDir())
	p := NewProber(serviceLister(t), testNamespace, selfName, n.client, &atomic.Bool{}, NewRestart(), joined)
	want := fmt.Sprintf("node %s (10.96.0.1) is Up/Joining, not Up/Normal", n.node.HostID())
	if got := errorString(p.Readyz(ctx)); got != want {
		t.Errorf("Readyz() while bootstrapping = %q, want %q", got, want)
	}
	if got := joinedMarkerHostID(t, joined); got != "" {
		t.Errorf("a bootstrapping node is recorded as joined (%q)", got)
	}
	// The bootstrap ends.
	n.setKnobs(t, `{"bootstrapDelay": "0s"}`)
	deadline := time.Now().Add(10 * time.Second)
	for err := p.Readyz(ctx); err != nil; err = p.Readyz(ctx) {
		if time.Now().After(deadline) {
			t.Fatalf("the replacing node isn't ready after its bootstrap: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := joinedMarkerHostID(t, joined); got != n.node.HostID() {
		t.Errorf("the joined marker holds %q, want the replacing node's host ID %q", got, n.node.HostID())
	}
}

// TestProberRetriesTheJoinedMarkerWithoutFailingReadiness runs a Normal node whose data directory can't take the
// marker at first: readiness passes regardless, and the next check writes the marker once it can.
func TestProberRetriesTheJoinedMarkerWithoutFailingReadiness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	n := startInProcessNode(t, fakescylladb.Knobs{})
	dataDir := filepath.Join(t.TempDir(), "data")
	// A file where the directory should be: writing the marker fails with "not a directory".
	if err := os.WriteFile(dataDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	joined := NewJoinedMarker(dataDir)
	p := NewProber(serviceLister(t), testNamespace, selfName, n.client, &atomic.Bool{}, NewRestart(), joined)
	if err := p.Readyz(ctx); err != nil {
		t.Fatalf("readiness fails because the marker can't be written: %v", err)
	}
	if err := os.Remove(dataDir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := joinedMarkerHostID(t, joined); got != "" {
		t.Fatalf("unexpected marker %q before the retry", got)
	}
	if err := p.Readyz(ctx); err != nil {
		t.Fatal(err)
	}
	if got := joinedMarkerHostID(t, joined); got != n.node.HostID() {
		t.Errorf("after the retry the joined marker holds %q, want %q", got, n.node.HostID())
	}
}

// TestProberRecordsTheJoinedMarkerOnlyOnceTheNodeIsNormal serves what ScyllaDB answers while a new node waits for
// ring information: it lists itself Up and Normal under its host ID (it seeds its host ID map with itself before
// gossip starts, and has no bootstrap tokens yet) while its operation mode is JOINING. Such a node hasn't joined the
// ring, and a marker written then would let it seed from itself after a failed bootstrap.
func TestProberRecordsTheJoinedMarkerOnlyOnceTheNodeIsNormal(t *testing.T) {
	t.Parallel()
	const hostID = "2c9f6f8e-1d3b-4c5a-9e7f-0a1b2c3d4e5f"
	for _, tc := range []struct {
		mode       scyllaclient.OperationMode
		wantJoined string
	}{
		{mode: scyllaclient.OperationModeJoining},
		{mode: scyllaclient.OperationModeNormal, wantJoined: hostID},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			t.Parallel()
			answers := map[string]any{
				scyllaclient.PathLocalHostID:     hostID,
				scyllaclient.PathHostIDs:         []map[string]string{{"key": "10.96.0.1", "value": hostID}},
				scyllaclient.PathLiveEndpoints:   []string{"10.96.0.1"},
				scyllaclient.PathJoiningNodes:    []string{},
				scyllaclient.PathLeavingNodes:    []string{},
				scyllaclient.PathMovingNodes:     []string{},
				scyllaclient.PathNativeTransport: false,
				scyllaclient.PathOperationMode:   tc.mode,
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				answer, ok := answers[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				_ = json.NewEncoder(w).Encode(answer)
			}))
			defer srv.Close()
			client, err := scyllaclient.NewClient(srv.Listener.Addr().String(), nil)
			if err != nil {
				t.Fatal(err)
			}
			joined := NewJoinedMarker(t.TempDir())
			p := NewProber(serviceLister(t), testNamespace, selfName, client, &atomic.Bool{}, NewRestart(), joined)
			if got, want := errorString(p.Readyz(context.Background())), "native transport (CQL) is off"; got != want {
				t.Errorf("Readyz() = %q, want %q", got, want)
			}
			if got := joinedMarkerHostID(t, joined); got != tc.wantJoined {
				t.Errorf("joined marker holds %q, want %q", got, tc.wantJoined)
			}
		})
	}
}
