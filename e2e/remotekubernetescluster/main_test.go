//go:build e2e

// Package remotekubernetescluster runs `scylla-operator operator`, built from the working tree, on the first of two
// local control planes and checks its RemoteKubernetesCluster controller end to end: a RemoteKubernetesCluster whose
// Secret holds the second control plane's kubeconfig becomes Available; one pointing at a closed port is reported
// unreachable, and recovers; a RemoteKubernetesCluster a ScyllaDBCluster uses survives its deletion until the
// ScyllaDBCluster goes; and a converged RemoteKubernetesCluster costs no write.
package remotekubernetescluster

import (
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

const (
	// metaPlane runs the operator and holds the RemoteKubernetesClusters; remotePlane is the cluster they reach.
	metaPlane     = 0
	remotePlane   = 1
	controlPlanes = 2
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "remotekubernetescluster", ControlPlanes: controlPlanes, InstallCRDs: true}))
}
