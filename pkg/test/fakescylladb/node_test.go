package fakescylladb

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
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
