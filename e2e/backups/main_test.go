//go:build e2e

// Package backups runs the shared backup storage of design/backup-storage.md end to end on one local control plane:
// the operator, the node simulator (e2e/nodesim), the fake ScyllaDB Manager (e2e/cmd/fake-scylladb-manager) and
// `scylla-operator manager-controller`, all built from the working tree, with versitygw as a real S3 server. Several
// ScyllaClusters back up into one declared ScyllaDBBackupBucket, each into its own directory; deleting one keeps its
// directory for the bucket's deletionGracePeriod and then removes exactly its keys, while the others' keys stay.
package backups

import (
	"os"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
)

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "backups", InstallCRDs: true}))
}
