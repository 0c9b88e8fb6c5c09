package naming

import (
	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/types"
)

// Field managers: each program that writes the status of an object other programs write too applies only the
// fields it owns, under its own field manager, so that neither undoes nor conflicts with the other.
const (
	// OperatorFieldManager owns what the operator writes (ScyllaDBDatacenter status counts and its conditions).
	OperatorFieldManager = "scylla-operator"
	// ManagerControllerFieldManager owns what the manager-controller writes (its conditions, task statuses).
	ManagerControllerFieldManager = "scylla-manager-controller"
)

// Labels the manager-controller keeps on the clusters and tasks it creates in ScyllaDB Manager.
const (
	// ScyllaDBManagerOwnerUIDLabel holds the UID of the Kubernetes object a ScyllaDB Manager cluster or task belongs
	// to.
	ScyllaDBManagerOwnerUIDLabel = "scylla-operator.scylladb.com/owner-uid"
	// ScyllaDBManagerManagedHashLabel holds a hash of what was last sent to ScyllaDB Manager for a cluster or task,
	// so that nothing is sent again while it holds.
	ScyllaDBManagerManagedHashLabel = ManagedHashAnnotation
)

// scyllaDBManagerClusterIDNamespace is the name space of the version 5 UUIDs ScyllaDBManagerClusterID derives.
var scyllaDBManagerClusterIDNamespace = uuid.MustParse("6c0f3a52-8c0e-4d7b-9a55-3f2f7a1d9e41")

// ScyllaDBManagerClusterID returns the ID a Kubernetes object of kind (e.g. "ScyllaDBDatacenter") with uid is
// registered under in ScyllaDB Manager: a version 5 UUID of both, so that registering again (after a lost annotation,
// a restart, or a restored ScyllaDB Manager database) reuses the same cluster and the same backup directory.
func ScyllaDBManagerClusterID(kind string, uid types.UID) string {
	return uuid.NewSHA1(scyllaDBManagerClusterIDNamespace, []byte(kind+"/"+string(uid))).String()
}

// ScyllaDBManagerClusterNameForObject returns the name a ScyllaDBDatacenter or ScyllaDBCluster that no ScyllaCluster
// translates is registered under in ScyllaDB Manager: "<namespace>/<kind>/<name>", which no ScyllaCluster's
// "<namespace>/<name>" (ScyllaDBManagerClusterName) can equal.
func ScyllaDBManagerClusterNameForObject(namespace, kind, name string) string {
	return namespace + "/" + kind + "/" + name
}
