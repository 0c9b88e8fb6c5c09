//go:build e2e

// Package managercontroller runs `scylla-operator manager-controller`, built from the working tree, beside the real
// operator and the node simulator (e2e/nodesim: real sidecars, fake ScyllaDB) on local control planes, against the
// fake ScyllaDB Manager (e2e/cmd/fake-scylladb-manager), and checks what issue 9 asks of it end to end: a
// ScyllaCluster's backups and repairs become exactly one ScyllaDB Manager cluster with exactly those tasks, edits and
// removals change only what they touch, deletion leaves nothing behind in ScyllaDB Manager or on a finalizer; a
// labelled ScyllaDBDatacenter registers once and deregisters when unlabelled; failures of ScyllaDB Manager show as
// conditions and heal without duplicates; SIGKILLs at the worst moments duplicate nothing; a task deleted in
// ScyllaDB Manager by hand comes back on the next resync; and nothing is written, to ScyllaDB Manager or to the API,
// once everything converged.
//
// The manager-controller watches every namespace and has no flag to limit that, and a fake ScyllaDB Manager's knobs
// and a killed manager-controller affect every object it handles. So the suite runs two control planes: on the
// first, one manager-controller and one fake serve the scenarios that only need them working, in parallel, each in
// its own namespace (TestSharedManagerController); on the second, the scenarios that break ScyllaDB Manager or kill
// the manager-controller run one after the other, each with a fresh manager-controller and fake
// (TestManagerControllerDisruptions). Both tests run at the same time.
package managercontroller

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

const (
	// parallel is how many tests run at once unless -test.parallel says otherwise: they mostly wait for
	// controllers, resync periods and the node simulator.
	parallel = 8

	// sharedPlane and disruptionPlane index the suite's control planes.
	sharedPlane     = 0
	disruptionPlane = 1
	controlPlanes   = 2
)

func TestMain(m *testing.M) {
	flag.Parse()
	if err := framework.SetDefaultParallel(parallel); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		os.Exit(1)
	}
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "managercontroller", ControlPlanes: controlPlanes, InstallCRDs: true}))
}
