package sidecar

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

// Probe paths.
const (
	HealthzPath = "/healthz"
	ReadyzPath  = "/readyz"
)

// Prober answers the kubelet's probes for the node.
type Prober struct {
	lister    corev1listers.ServiceLister
	namespace string
	name      string
	scylla    *scyllaclient.Client
	// decommissioned is set when ScyllaDB isn't running because the node was decommissioned.
	decommissioned *atomic.Bool
	// restart fails readiness once requested.
	restart *Restart
	// joined is recorded once the ring reports the node Up and Normal.
	joined *JoinedMarker
}

// NewProber returns a Prober reading the member Service from lister and the node from scylla, recording in joined
// that the node joined the ring.
func NewProber(lister corev1listers.ServiceLister, namespace, name string, scylla *scyllaclient.Client, decommissioned *atomic.Bool, restart *Restart, joined *JoinedMarker) *Prober {
	return &Prober{lister: lister, namespace: namespace, name: name, scylla: scylla, decommissioned: decommissioned, restart: restart, joined: joined}
}

// inMaintenance reports whether the member Service carries the node-maintenance label, which makes every probe pass
// so that an operator can stop ScyllaDB by hand without the Pod being restarted.
func (p *Prober) inMaintenance() bool {
	svc, err := p.lister.Services(p.namespace).Get(p.name)
	if err != nil {
		return false
	}
	_, ok := svc.Labels[naming.NodeMaintenanceLabel]
	return ok
}

// Healthz succeeds when ScyllaDB's REST API answers.
func (p *Prober) Healthz(ctx context.Context) error {
	if p.inMaintenance() || p.decommissioned.Load() {
		return nil
	}
	if _, err := p.scylla.OperationMode(ctx); err != nil {
		return fmt.Errorf("ScyllaDB's API doesn't answer: %w", err)
	}
	return nil
}

// Readyz succeeds when ScyllaDB reports the node with this node's host ID as Up and Normal and its CQL server is on.
// The host ID, unlike the IP, stays the same for the node's whole life. It fails once the node is to restart.
// The first time the ring reports the node Up and Normal and its operation mode is NORMAL, the node has joined the
// ring, and the joined marker is recorded (recordJoined); in maintenance nothing is asked, so nothing is recorded.
func (p *Prober) Readyz(ctx context.Context) error {
	// The node is about to stop, whatever the maintenance label says.
	if reason := p.restart.Reason(); reason != nil {
		return restartError(reason)
	}
	if p.inMaintenance() {
		return nil
	}
	if p.decommissioned.Load() {
		return fmt.Errorf("the node was decommissioned; ScyllaDB is not running")
	}
	hostID, err := p.scylla.LocalHostID(ctx)
	if err != nil {
		return fmt.Errorf("can't get the host ID: %w", err)
	}
	nodes, err := p.scylla.Status(ctx)
	if err != nil {
		return fmt.Errorf("can't get the node status: %w", err)
	}
	found := false
	for _, n := range nodes {
		if n.HostID != hostID {
			continue
		}
		found = true
		if !n.IsUN() {
			return fmt.Errorf("node %s (%s) is %s/%s, not Up/Normal", hostID, n.Addr, n.Status, n.State)
		}
	}
	if !found {
		return fmt.Errorf("node %s is not in the ring", hostID)
	}
	p.recordJoined(ctx, hostID)
	nativeTransport, err := p.scylla.IsNativeTransportEnabled(ctx)
	if err != nil {
		return fmt.Errorf("can't get the native transport state: %w", err)
	}
	if !nativeTransport {
		return fmt.Errorf("native transport (CQL) is off")
	}
	return nil
}

// recordJoined records the joined marker for a node the ring reports Up and Normal, once ScyllaDB's operation mode
// is NORMAL too. The ring alone isn't enough: a new node lists itself Up and Normal under its host ID before it has
// joined (ScyllaDB seeds its host ID map with the node before gossip starts, and its bootstrap tokens come later),
// while its mode is JOINING; only the end of the join sets NORMAL. Trouble asking is left for the next check.
func (p *Prober) recordJoined(ctx context.Context, hostID string) {
	if p.joined.Recorded() {
		return
	}
	mode, err := p.scylla.OperationMode(ctx)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("Can't tell whether the node has joined the ring", "err", err)
		return
	}
	if mode != scyllaclient.OperationModeNormal {
		return
	}
	p.joined.Record(ctx, hostID)
}

// Handler serves HealthzPath and ReadyzPath: 200 "ok" or 503 with the reason.
func (p *Prober) Handler() http.Handler {
	mux := http.NewServeMux()
	serve := func(name string, check func(context.Context) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if err := check(r.Context()); err != nil {
				klog.FromContext(r.Context()).V(2).Info("Probe failed", "probe", name, "err", err)
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			_, _ = fmt.Fprintln(w, "ok")
		}
	}
	mux.Handle("GET "+HealthzPath, serve("healthz", p.Healthz))
	mux.Handle("GET "+ReadyzPath, serve("readyz", p.Readyz))
	return mux
}
