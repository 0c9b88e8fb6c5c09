package framework

import (
	"context"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// addNodesMu serializes AddNodes, so that tests adding nodes at the same time don't pick the same addresses.
var addNodesMu sync.Mutex

// AddNodes creates simulated nodes in cp besides the ones it started with, for a test that needs nodes of its own
// (to delete one, for example), and waits at most timeout until kwok reports them Ready. A node without an InternalIP
// gets the first address from cp's NodeIP on that no Node has.
func AddNodes(ctx context.Context, cp *ControlPlane, kube kubernetes.Interface, nodes []NodeSpec, timeout time.Duration) error {
	addNodesMu.Lock()
	defer addNodesMu.Unlock()
	existing, err := kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("can't list Nodes: %w", err)
	}
	taken := map[string]bool{}
	for i := range existing.Items {
		taken[existing.Items[i].Annotations[naming.KwokNodeInternalIPAnnotation]] = true
		for _, a := range existing.Items[i].Status.Addresses {
			taken[a.Address] = true
		}
	}
	for _, spec := range nodes {
		taken[spec.InternalIP] = true
	}
	next, err := netip.ParseAddr(cp.Options.NodeIP)
	if err != nil {
		return fmt.Errorf("can't parse node IP %q: %w", cp.Options.NodeIP, err)
	}
	specs := make([]NodeSpec, len(nodes))
	for i, spec := range nodes {
		if spec.InternalIP == "" {
			for ; next.IsValid() && taken[next.String()]; next = next.Next() {
			}
			if !next.IsValid() {
				return fmt.Errorf("no address left after %s for node %q", cp.Options.NodeIP, spec.Name)
			}
			spec.InternalIP = next.String()
			taken[spec.InternalIP] = true
		}
		specs[i] = spec
	}
	if err := createNodes(ctx, kube, cp.Options.NodeIP, specs); err != nil {
		return err
	}
	return WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		return nodesReady(ctx, kube, specs)
	})
}
