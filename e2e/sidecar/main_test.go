//go:build e2e

// Package sidecar runs the real `scylla-operator sidecar` of every simulated ScyllaDB pod (e2e/nodesim) with the
// fake ScyllaDB, under the real operator, on the local control plane, and checks what issue 5 asks of it end to end:
// seeds across two datacenters joined with externalSeeds (external-seeds.md), the addresses of each expose
// combination (expose-options.md), decommission on scale-down, readiness that follows ScyllaDB's node state, the
// maintenance label, and node identity across Pod and container restarts.
//
// One operator and one node simulator (so one ring registry) serve every test; the tests run in parallel, each in
// its own namespaces with its own cluster names.
package sidecar

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

// parallel is how many tests run at once unless -test.parallel says otherwise: they mostly wait for Kubernetes
// controllers, the operator and the sidecars' polling.
const parallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	if err := framework.SetDefaultParallel(parallel); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "sidecar", InstallCRDs: true}))
}
