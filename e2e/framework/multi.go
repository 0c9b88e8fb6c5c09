package framework

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
)

// loadBalancerCIDRs are ranges nothing routes to: the three documentation ranges (RFC 5737), then the
// benchmarking range (RFC 2544), one /24 per control plane.
func loadBalancerCIDR(index int) string {
	documentation := []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"}
	if index < len(documentation) {
		return documentation[index]
	}
	return fmt.Sprintf("198.18.%d.0/24", index-len(documentation))
}

// region returns the region of the index-th control plane: those of the multi-datacenter examples in
// deploy/examples/, then made-up ones.
func region(index int) string {
	regions := []string{"us-east-1", "us-west-2", "eu-central-1"}
	if index < len(regions) {
		return regions[index]
	}
	return fmt.Sprintf("region-%d", index)
}

// ControlPlaneOptionsFor derives the options of the index-th of several control planes from base, so that they
// can run at once and stand for different datacenters: the name and directory get the index, and pod and Service
// ranges, node IPs, load balancer ranges and node regions differ. Fields already set in base other than Name and Dir
// are kept.
func ControlPlaneOptionsFor(base ControlPlaneOptions, index int) ControlPlaneOptions {
	o := base
	if base.Name == "" {
		base.Name = "kcp"
	}
	o.Name = fmt.Sprintf("%s-%d", base.Name, index)
	o.Dir = filepath.Join(base.Dir, o.Name)
	if o.PodCIDR == "" {
		o.PodCIDR = fmt.Sprintf("10.%d.0.0/16", 200+index)
	}
	if o.ServiceCIDR == "" {
		// Distinct too: simulated nodes of several control planes may share one ring registry, which tells nodes
		// apart by every address they are reachable at, their member Services' ClusterIPs among them.
		o.ServiceCIDR = fmt.Sprintf("10.%d.0.0/16", 96+index)
	}
	if o.NodeIP == "" {
		o.NodeIP = fmt.Sprintf("10.0.%d.1", index)
	}
	if o.LoadBalancerCIDR == "" {
		o.LoadBalancerCIDR = loadBalancerCIDR(index)
	}
	if o.Nodes == nil {
		o.Nodes = RegionNodes(region(index), 3)
	}
	return o
}

// StartControlPlanes starts several control planes at once (see ControlPlaneOptionsFor for options that let
// them coexist). If one fails, the others are stopped too.
func StartControlPlanes(ctx context.Context, opts []ControlPlaneOptions) ([]*ControlPlane, error) {
	if len(opts) == 0 {
		return nil, errors.New("need at least one control plane")
	}
	cps := make([]*ControlPlane, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i := range opts {
		wg.Go(func() {
			cps[i], errs[i] = StartControlPlane(ctx, opts[i])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = StopControlPlanes(cps)
		return nil, err
	}
	return cps, nil
}

// StopControlPlanes stops every non-nil control plane, concurrently.
func StopControlPlanes(cps []*ControlPlane) error {
	errs := make([]error, len(cps))
	var wg sync.WaitGroup
	for i, cp := range cps {
		if cp == nil {
			continue
		}
		wg.Go(func() { errs[i] = cp.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
