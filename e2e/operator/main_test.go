//go:build e2e

// Package operator runs the `scylla-operator operator` program, built from the working tree, against a real control
// plane with simulated nodes and pods (kwok), and checks what it does to ScyllaClusters end to end: the objects it
// creates, scaling with decommission, rack removal, rolling version changes, garbage collection, node replacement (on
// request, of nodes whose Kubernetes node is gone, and across a SIGKILL), restarts after SIGKILL, leader election, and
// that it stops writing once everything converged.
//
// The operator watches every namespace and has no flag to limit that. So the tests that run their own replicas
// (kill, leader election) run one at a time, and the tests that only need a working operator share one replica and
// run in parallel, each in its own namespace (TestOperatorScenarios).
package operator

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

// defaultParallel is how many scenarios run at once unless -test.parallel says otherwise. The default, GOMAXPROCS,
// would be 2 on CI machines, while the scenarios mostly wait on the operator and on Kubernetes controllers.
const defaultParallel = "8"

func TestMain(m *testing.M) {
	flag.Parse()
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		if err := flag.Set("test.parallel", defaultParallel); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: can't set -test.parallel: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "operator", InstallCRDs: true}))
}
