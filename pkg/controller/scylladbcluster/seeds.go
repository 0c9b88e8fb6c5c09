package scylladbcluster

import (
	"fmt"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// How datacenters seed each other.
//
// ScyllaDB forms one cluster out of several datacenters only when a joining datacenter's first node is given, as its
// only seeds, nodes of the datacenters already in the cluster (external-seeds.md); a datacenter that starts without
// them bootstraps a cluster of its own. So the first datacenter, in spec order, bootstraps with no external seeds,
// each later one joins through the datacenters before it, and datacenters come up one at a time.
//
// Seeds are DNS names, not addresses. For every earlier datacenter E with nodes, a later datacenter X gets, in its own
// remote namespace, a selector-less seed Service naming.ScyllaDBClusterSeedServiceName(cluster, E) whose endpoints
// are E's broadcast addresses; X's externalSeeds are those Services' names (naming.ScyllaDBClusterSeedServiceHost).
// The names resolve inside X's Kubernetes cluster, and they stay the same when E's nodes move, so that new addresses
// only update endpoints and never roll X's nodes.

// dcState is what the controller observed of one datacenter of a ScyllaDBCluster.
type dcState struct {
	// name is the datacenter's name (spec.datacenters[].name).
	name string
	// rolledOut is true when the datacenter's ScyllaDBDatacenter exists, is as required, and its status at its
	// current generation says the rollout is complete (Available True, Progressing False, Degraded False).
	rolledOut bool
	// seedAddresses are the addresses other datacenters reach the datacenter's nodes at: the broadcast addresses
	// (exposeOptions.broadcastOptions.nodes) of its nodes, as its member Services or pods report them.
	seedAddresses []string
	// bootstrapped is true when the datacenter's ScyllaDBDatacenter exists and its nodes are past joining the
	// cluster: it is rolled out, or it was not created to join through the datacenters after it. Such a datacenter
	// is never given the seeds of the datacenters after it: a datacenter that is merely not rolled out at the moment
	// (a node restarting, a change rolling) would otherwise get them, be changed, roll, lose them once rolled out,
	// roll again, and so on.
	bootstrapped bool
	// unknown is true when the datacenter's remote cluster can't be read (it has no client, or its caches have not
	// synced): nothing is known of its nodes now, so the seed Services the others have of it are left as they are.
	unknown bool
}

// seedService is a seed Service to keep in a datacenter's remote namespace.
type seedService struct {
	// datacenterName is the datacenter whose nodes the Service reaches.
	datacenterName string
	// name is the Service's name.
	name string
	// addresses are the endpoints of the Service, sorted and without duplicates.
	addresses []string
}

// datacenterSeeds is what seedsFor decided for one datacenter.
type datacenterSeeds struct {
	// name is the datacenter's name.
	name string
	// mayProgress is true when the datacenter's ScyllaDBDatacenter may be created or updated now. When false the
	// controller leaves it as it is (or does not create it yet), and externalSeeds is nil.
	mayProgress bool
	// externalSeeds go into the datacenter's ScyllaDBDatacenter (datacenterInputs.externalSeeds): one seed Service
	// host per earlier datacenter that is rolled out and has addresses, in spec order.
	externalSeeds []string
	// seedServices are the seed Services to keep in the datacenter's remote namespace, one per earlier datacenter
	// that has addresses, rolled out or not, so that the endpoints follow the nodes, even while the datacenter
	// waits. The controller removes the others, but for keptSeedServices.
	seedServices []seedService
	// keptSeedServices are the names of the seed Services of the datacenters seedServices would name but whose state
	// is unknown (dcState.unknown): those that exist are left as they are, with the last known addresses, so that the
	// names in external seeds keep resolving while a remote cluster can't be read.
	keptSeedServices []string
}

// seedPlan is what seedsFor decided for a ScyllaDBCluster.
type seedPlan struct {
	// datacenters has one entry per datacenter given to seedsFor, in the same order.
	datacenters []datacenterSeeds
	// next is the datacenter that is being brought up: the first, in spec order, that is not rolled out. The ones
	// after it wait. It is "" when every datacenter is rolled out, or when next can't progress (blocked).
	next string
	// blocked, when not empty, says why the first datacenter that is not rolled out can't be brought up.
	blocked string
}

// seedsFor decides, for the datacenters of the ScyllaDBCluster namespace/clusterName in spec order, which of them may
// be created or updated now and the seeds each gets (see the comment at the top of this file):
//   - The first datacenter gets no external seeds.
//   - A later datacenter gets the seed Services of the datacenters before it that are rolled out and have addresses.
//   - Every datacenter up to and including the first that is not rolled out may progress; the ones after it wait,
//     so that datacenters come up, and roll, one at a time. The controller must also stop, in a sync, after the
//     first ScyllaDBDatacenter it changed: several rolled-out datacenters may progress, but only one may roll.
//   - A datacenter that is not rolled out, has not bootstrapped and gets no seeds from the datacenters before it
//     (the first one, put in front of datacenters that already run) joins through the rolled-out datacenters after
//     it instead; one other than the first that still gets no external seeds is blocked: it would bootstrap a
//     cluster of its own. A datacenter that has bootstrapped needs no external seeds to go on: its nodes are in the
//     cluster.
//
// A removed datacenter is simply absent from dcs: it drops out of the later datacenters' seeds. dcs must have
// distinct names (validateScyllaDBCluster).
func seedsFor(namespace, clusterName string, dcs []dcState) seedPlan {
	plan := seedPlan{datacenters: make([]datacenterSeeds, 0, len(dcs))}
	waiting := false
	for i, dc := range dcs {
		remoteNamespace := naming.ScyllaDBClusterRemoteNamespaceName(namespace, dc.name)
		seeds := datacenterSeeds{name: dc.name}
		addSeeds := func(from []dcState) {
			for _, other := range from {
				if other.unknown {
					seeds.keptSeedServices = append(seeds.keptSeedServices, naming.ScyllaDBClusterSeedServiceName(clusterName, other.name))
					continue
				}
				addresses := slices.Compact(slices.Sorted(slices.Values(other.seedAddresses)))
				if len(addresses) == 0 {
					continue
				}
				seeds.seedServices = append(seeds.seedServices, seedService{
					datacenterName: other.name,
					name:           naming.ScyllaDBClusterSeedServiceName(clusterName, other.name),
					addresses:      addresses,
				})
				if other.rolledOut {
					seeds.externalSeeds = append(seeds.externalSeeds, naming.ScyllaDBClusterSeedServiceHost(clusterName, other.name, remoteNamespace))
				}
			}
		}
		addSeeds(dcs[:i])
		if !dc.rolledOut && !dc.bootstrapped && len(seeds.externalSeeds) == 0 {
			// A datacenter put before datacenters that already run joins them, never bootstraps a cluster of its own.
			addSeeds(dcs[i+1:])
		}

		switch {
		case waiting:
			seeds.externalSeeds = nil
		case !dc.rolledOut && !dc.bootstrapped && i > 0 && len(seeds.externalSeeds) == 0:
			plan.blocked = fmt.Sprintf("datacenter %q waits for another datacenter to have running nodes to join through", dc.name)
			waiting = true
		default:
			seeds.mayProgress = true
			if !dc.rolledOut {
				plan.next = dc.name
				waiting = true
			}
		}
		plan.datacenters = append(plan.datacenters, seeds)
	}
	return plan
}
