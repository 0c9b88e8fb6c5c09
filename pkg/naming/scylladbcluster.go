package naming

// Labels the ScyllaDBCluster controller puts on what it creates in the remote Kubernetes clusters
// (api-reference.md, "multi-DC").
const (
	// ParentScyllaDBClusterNameLabel, ParentScyllaDBClusterNamespaceLabel and
	// ParentScyllaDBClusterDatacenterNameLabel name the ScyllaDBCluster, its namespace in the meta cluster, and the
	// datacenter of it that an object in a remote cluster belongs to.
	ParentScyllaDBClusterNameLabel           = "scylla-operator.scylladb.com/parent-scylladbcluster-name"
	ParentScyllaDBClusterNamespaceLabel      = "scylla-operator.scylladb.com/parent-scylladbcluster-namespace"
	ParentScyllaDBClusterDatacenterNameLabel = "scylla-operator.scylladb.com/parent-scylladbcluster-datacenter-name"
)
