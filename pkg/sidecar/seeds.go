package sidecar

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// SeedsInput is what the seed choice depends on.
type SeedsInput struct {
	// MemberServiceName is this node's member Service; it must be among Services.
	MemberServiceName string
	// Services are the member Services of this node's datacenter, in any order.
	Services []*corev1.Service
	// Pods are the datacenter's Pods, in any order; a member Service's Pod has the Service's name.
	Pods []*corev1.Pod
	// ExternalSeeds are --external-seeds, in the user's order.
	ExternalSeeds []string
	// BroadcastAddress is this node's broadcast_address.
	BroadcastAddress string
	IPFamily         IPFamily
	// Joined is true when the node has joined the ring before (JoinedMarker) and doesn't replace another node.
	Joined bool
}

// Seeds is the outcome of the seed choice.
type Seeds struct {
	// Seeds go to ScyllaDB's seed provider, in this order.
	Seeds []string
	// First is true when this node is the first of its datacenter.
	First bool
	// LocalSeed is the member Service whose node serves as the local seed; empty for the first node, the node's own
	// when it seeds from itself after joining (SkippedWait).
	LocalSeed string
	// SkippedWait is set when the node seeds from its own broadcast address because it joined the ring before and
	// the usual choice would wait; it says what for.
	SkippedWait string
}

// readyToSeed reports whether the node of svc counts as Ready for the seed choice: its Pod is Ready and it is not in
// maintenance. A node in maintenance (naming.NodeMaintenanceLabel) reports ready whatever ScyllaDB's state, and its
// ScyllaDB may well be stopped; the operator may add a node meanwhile.
func readyToSeed(svc *corev1.Service, pod *corev1.Pod) bool {
	if _, maintenance := svc.Labels[naming.NodeMaintenanceLabel]; maintenance {
		return false
	}
	return controllerhelpers.IsPodReady(pod)
}

// OrderMembers returns the datacenter's member Services in the order every node computes alike: nodes that are
// Ready (readyToSeed) first, then by the Service's creation time, then by name. Other nodes' Services that carry the
// decommissioned label are left out: they are leaving or have left the ring. The node's own Service always stays.
func OrderMembers(self string, services []*corev1.Service, pods []*corev1.Pod) []*corev1.Service {
	podsByName := make(map[string]*corev1.Pod, len(pods))
	for _, p := range pods {
		podsByName[p.Name] = p
	}
	var members []*corev1.Service
	for _, s := range services {
		if _, leaving := s.Labels[naming.DecommissionedLabel]; leaving && s.Name != self {
			continue
		}
		members = append(members, s)
	}
	slices.SortStableFunc(members, func(a, b *corev1.Service) int {
		ra, rb := readyToSeed(a, podsByName[a.Name]), readyToSeed(b, podsByName[b.Name])
		switch {
		case ra && !rb:
			return -1
		case !ra && rb:
			return 1
		}
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return members
}

// recordedBroadcastAddress returns the broadcast address that the node's sidecar recorded on its Service, if the
// node's current Pod recorded it. A record from an earlier Pod of the node is ignored: the new Pod may have a new
// address. A record that is not an IP of the family wraps ErrNotYetAvailable: its sidecar rewrites it.
func recordedBroadcastAddress(svc *corev1.Service, pod *corev1.Pod, family IPFamily) (string, bool, error) {
	recorded, ok := svc.Annotations[naming.BroadcastAddressAnnotation]
	if !ok || pod == nil || pod.UID == "" || svc.Annotations[naming.BroadcastAddressPodUIDAnnotation] != string(pod.UID) {
		return "", false, nil
	}
	ip, ok := parseFamily(recorded, family)
	if !ok {
		return "", false, fmt.Errorf("Service %q records broadcast address %q in annotation %q, which is not an %s address; its node's sidecar corrects it: %w",
			serviceName(svc), recorded, naming.BroadcastAddressAnnotation, family, ErrNotYetAvailable)
	}
	return ip, true, nil
}

// seedAddress is the address under which another node of the datacenter is contacted: the broadcast address its
// sidecar recorded on its Service, which is right whatever the exposeOptions; for a node that hasn't recorded one
// (its sidecar hasn't started yet, or predates the record), its Service's ClusterIP when the Service has one,
// otherwise its Pod's IP (expose-options.md).
func seedAddress(svc *corev1.Service, pod *corev1.Pod, family IPFamily) (string, error) {
	if addr, ok, err := recordedBroadcastAddress(svc, pod, family); ok || err != nil {
		return addr, err
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone && (svc.Spec.ClusterIP != "" || len(svc.Spec.ClusterIPs) > 0) {
		return serviceClusterIP(svc, family)
	}
	if pod == nil {
		return "", fmt.Errorf("Pod %q doesn't exist: %w", svc.Namespace+"/"+svc.Name, ErrNotYetAvailable)
	}
	return podStatusIP(pod, family)
}

// ChooseSeeds picks ScyllaDB's seeds as external-seeds.md says. The first node of the order (OrderMembers) seeds from
// the external seeds when there are any, otherwise from its own broadcast address, and so founds the datacenter,
// or the cluster. Every other node seeds from the external seeds plus one local seed, which must already be in the
// ring or be about to found it: the earliest Ready node that has an address, or, while no node is Ready, the first
// node; a node in maintenance is not Ready here (readyToSeed). A later node never seeds from another unready node:
// if that node seeded from itself too, or from this one, the two would form a ring apart from the first node's. When
// the node to seed from has no address yet, the error wraps ErrNotYetAvailable and the caller waits. Every node computes the same order, so one node at most seeds from
// itself while bootstrapping.
//
// A node that joined the ring before (in.Joined) doesn't wait: where the usual choice would, it seeds from the
// external seeds plus its own broadcast address, as a node seeding from its own datacenter does. It needs no seed to
// rejoin its ring, and must not wait for a node that may never get an address, as after a full outage. When the
// usual choice succeeds, it is kept.
func ChooseSeeds(in SeedsInput) (Seeds, error) {
	seeds, err := chooseSeeds(in)
	if err == nil || !in.Joined || !errors.Is(err, ErrNotYetAvailable) {
		return seeds, err
	}
	if in.BroadcastAddress == "" {
		return Seeds{}, fmt.Errorf("the node joined the ring before, but needs its broadcast address to seed from instead of waiting: %w", err)
	}
	return Seeds{
		Seeds:       append(slices.Clone(in.ExternalSeeds), in.BroadcastAddress),
		LocalSeed:   in.MemberServiceName,
		SkippedWait: err.Error(),
	}, nil
}

func chooseSeeds(in SeedsInput) (Seeds, error) {
	members := OrderMembers(in.MemberServiceName, in.Services, in.Pods)
	if !slices.ContainsFunc(members, func(s *corev1.Service) bool { return s.Name == in.MemberServiceName }) {
		return Seeds{}, fmt.Errorf("member Service %q is not among the datacenter's member Services", in.MemberServiceName)
	}
	if members[0].Name == in.MemberServiceName {
		seeds := slices.Clone(in.ExternalSeeds)
		if len(seeds) == 0 {
			if in.BroadcastAddress == "" {
				return Seeds{}, fmt.Errorf("the first node needs its broadcast address to seed from")
			}
			seeds = []string{in.BroadcastAddress}
		}
		return Seeds{Seeds: seeds, First: true}, nil
	}

	podsByName := make(map[string]*corev1.Pod, len(in.Pods))
	for _, p := range in.Pods {
		podsByName[p.Name] = p
	}
	localSeed := func(m *corev1.Service, addr string) Seeds {
		return Seeds{Seeds: append(slices.Clone(in.ExternalSeeds), addr), LocalSeed: m.Name}
	}
	// Ready nodes come first in the order; this node isn't first, so if any node is Ready, members[0] is.
	if !readyToSeed(members[0], podsByName[members[0].Name]) {
		founder := members[0]
		addr, err := seedAddress(founder, podsByName[founder.Name], in.IPFamily)
		if err != nil {
			return Seeds{}, fmt.Errorf("no node of the datacenter is Ready, so the only safe local seed is its first node %q: %w", founder.Name, err)
		}
		return localSeed(founder, addr), nil
	}
	var errs []string
	for _, m := range members {
		if m.Name == in.MemberServiceName || !readyToSeed(m, podsByName[m.Name]) {
			continue
		}
		addr, err := seedAddress(m, podsByName[m.Name], in.IPFamily)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		return localSeed(m, addr), nil
	}
	return Seeds{}, fmt.Errorf("no Ready node of the datacenter has an address to seed from (%s): %w", strings.Join(errs, "; "), ErrNotYetAvailable)
}
