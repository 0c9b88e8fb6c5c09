package sidecar

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// inProcessNode is a fake ScyllaDB node served from the test process.
type inProcessNode struct {
	node     *fakescylladb.Node
	client   *scyllaclient.Client
	address  string
	workdir  string
	registry *fakescylladb.Registry
}

// startInProcessNode starts a fake node that founds its own ring and, unless knobs delay it, waits until it is NORMAL.
func startInProcessNode(t *testing.T, knobs fakescylladb.Knobs) *inProcessNode {
	t.Helper()
	return startInProcessNodeIn(t, fakescylladb.NewRegistry(0), knobs, func(*fakescylladb.Settings) {})
}

// startInProcessNodeIn starts a fake node with the registry as its view of the ring, with the settings of a node
// that founds its own ring changed by change. Unless knobs delay its start, it waits until the node is in a ring
// and, unless knobs delay its bootstrap, NORMAL.
func startInProcessNodeIn(t *testing.T, registry *fakescylladb.Registry, knobs fakescylladb.Knobs, change func(*fakescylladb.Settings)) *inProcessNode {
	t.Helper()
	srv := httptest.NewServer(registry.Handler())
	t.Cleanup(srv.Close)
	rc, err := fakescylladb.NewRegistryClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	workdir := t.TempDir()
	inv := &fakescylladb.Invocation{Settings: fakescylladb.Settings{
		ClusterName: "prod", Datacenter: "dc1", Rack: "r1", BroadcastAddress: "10.96.0.1", BroadcastRPCAddress: "10.96.0.1",
		ListenAddress: "0.0.0.0", RPCAddress: "0.0.0.0", Seeds: []string{"10.96.0.1"}, Workdir: workdir,
	}}
	change(&inv.Settings)
	node, err := fakescylladb.NewNode(fakescylladb.NodeOptions{
		Invocation: inv, Registry: rc, Knobs: knobs, HeartbeatInterval: time.Hour, Logger: log.New(io.Discard, "", 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = node.Run(ctx, l)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	client, err := scyllaclient.NewClient(l.Addr().String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := &inProcessNode{node: node, client: client, address: l.Addr().String(), workdir: workdir, registry: registry}
	if knobs.StartupDelay == 0 {
		for {
			_, inRing := registry.RingOf(node.HostID())
			mode, err := client.OperationMode(context.Background())
			if inRing == nil && err == nil && (mode == scyllaclient.OperationModeNormal || knobs.BootstrapDelay > 0) {
				break
			}
			select {
			case <-done:
				t.Fatalf("fake node %s stopped before joining a ring", node.HostID())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	return n
}

func (n *inProcessNode) setKnobs(t *testing.T, body string) {
	t.Helper()
	resp, err := http.Post("http://"+n.address+fakescylladb.PathKnobs, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("setting knobs answered %d", resp.StatusCode)
	}
}

func serviceLister(t *testing.T, services ...*corev1.Service) corev1listers.ServiceLister {
	t.Helper()
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, s := range services {
		if err := indexer.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return corev1listers.NewServiceLister(indexer)
}

func errorString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
