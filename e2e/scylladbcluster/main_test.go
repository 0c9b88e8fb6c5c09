//go:build e2e

// Package scylladbcluster checks multi-datacenter ScyllaDB across Kubernetes clusters end to end (issue 11, "Must
// show"), on three local control planes: plane 0 is the "meta" cluster, planes 1 and 2 are workers, each running
// its datacenter's nodes (the real operator and sidecars, e2e/nodesim with the fake ScyllaDB). Every worker's node
// simulator joins ONE ring registry, so nodes of both workers can form one ring, as two datacenters of one ScyllaDB
// cluster do.
//
//   - TestScyllaDBClusterAcrossTwoWorkers: a two-datacenter ScyllaDBCluster in the meta cluster converges, the first
//     datacenter bootstrapping alone and the second seeding from it, all nodes in one ring sharing one agent token;
//     it is registered once with the fake ScyllaDB Manager and a backup task referencing it is scheduled once; once
//     converged it costs no write over a resync period; a worker the meta cluster can't reach (its
//     RemoteKubernetesCluster's kubeconfig points at a TCP proxy the test cuts, as if that control plane stopped)
//     degrades only its datacenter while the other keeps being reconciled, and recovers; deletion leaves no
//     namespace in any worker and nothing in ScyllaDB Manager, and the backup ScyllaDBManagerTask outlives it.
//   - TestHostNetworkScyllaClustersJoinedByExternalSeeds: without a ScyllaDBCluster, two host-networking
//     ScyllaClusters, one per worker, the second seeding from the first's node IP, form one ring with the distinct
//     addresses of their nodes.
//
// The tests run one after the other: each starts an operator per plane, which watch every namespace.
package scylladbcluster

import (
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

const (
	// metaPlane holds the ScyllaDBClusters, RemoteKubernetesClusters, the fake ScyllaDB Manager and the
	// manager-controller; workerPlanes run the datacenters.
	metaPlane     = 0
	controlPlanes = 3
)

// workerPlanes index the control planes that run datacenters, in datacenter order.
var workerPlanes = []int{1, 2}

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "scylladbcluster", ControlPlanes: controlPlanes, InstallCRDs: true}))
}
