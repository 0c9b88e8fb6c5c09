package sidecar

import (
	corev1 "k8s.io/api/core/v1"
)

// NodeConfigInput is everything the node's addresses, seeds and replaced node depend on.
type NodeConfigInput struct {
	Options       AddressOptions
	ExternalSeeds []string
	// Pod and Service are this node's Pod and member Service.
	Pod     *corev1.Pod
	Service *corev1.Service
	// Services and Pods are the datacenter's member Services and Pods, this node's included, in any order.
	Services   []*corev1.Service
	Pods       []*corev1.Pod
	Interfaces InterfaceAddressLister
	// Joined is true when the node's volume records that it joined the ring (JoinedMarker).
	Joined bool
}

// NodeConfig is how the node joins the cluster.
type NodeConfig struct {
	Addresses
	Seeds
	// ReplaceNodeHostID is the host ID of the node this one replaces (ReplaceNodeHostID); empty when it replaces none.
	ReplaceNodeHostID string
}

// ComputeNodeConfig derives the node's addresses and seeds and the node it replaces. It is a pure function of its
// input.
func ComputeNodeConfig(in NodeConfigInput) (NodeConfig, error) {
	// A bad label is final, so it is reported before anything that is waited for.
	replaceNodeHostID, err := ReplaceNodeHostID(in.Service)
	if err != nil {
		return NodeConfig{}, err
	}
	addrs, err := ComputeAddresses(in.Options, in.Pod, in.Service, in.Interfaces)
	if err != nil {
		return NodeConfig{}, err
	}
	seeds, err := ChooseSeeds(SeedsInput{
		MemberServiceName: in.Service.Name,
		Services:          in.Services,
		Pods:              in.Pods,
		ExternalSeeds:     in.ExternalSeeds,
		BroadcastAddress:  addrs.BroadcastAddress,
		IPFamily:          in.Options.IPFamily,
		// A node replacing another joins the ring anew, through a live node; what its volume says is stale.
		Joined: in.Joined && replaceNodeHostID == "",
	})
	if err != nil {
		return NodeConfig{}, err
	}
	return NodeConfig{Addresses: addrs, Seeds: seeds, ReplaceNodeHostID: replaceNodeHostID}, nil
}
