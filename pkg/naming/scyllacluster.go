package naming

// Names and values used when a ScyllaCluster (scylla.scylladb.com/v1) is translated into a ScyllaDBDatacenter and
// ScyllaDBManagerTasks (scylla.scylladb.com/v1alpha1).

const (
	// RegisterWithScyllaDBManagerLabelValue is the value of RegisterWithScyllaDBManagerLabel on every
	// ScyllaDBDatacenter translated from a ScyllaCluster: every ScyllaCluster stays registered with ScyllaDB Manager.
	RegisterWithScyllaDBManagerLabelValue = "true"

	// DisableGlobalScyllaDBManagerIntegrationAnnotation, set to "true" on a ScyllaCluster, keeps its
	// ScyllaDBDatacenter out of ScyllaDB Manager: the datacenter is not labelled RegisterWithScyllaDBManagerLabel (as
	// the established operator's ScyllaCluster API opts out of its global ScyllaDB Manager). "false", or no
	// annotation, registers it; other values are refused.
	DisableGlobalScyllaDBManagerIntegrationAnnotation = "scylla-operator.scylladb.com/disable-global-scylladb-manager-integration"

	// InternalAnnotationTrue and InternalAnnotationFalse are the values of the boolean internal annotations
	// (HostNetworkingAnnotation, AlternatorInsecureEnableHTTPAnnotation,
	// AlternatorInsecureDisableAuthorizationAnnotation).
	InternalAnnotationTrue  = "true"
	InternalAnnotationFalse = "false"

	// ScyllaDBManagerTaskTypeBackup and ScyllaDBManagerTaskTypeRepair are the task types ScyllaDBManagerTaskName
	// is called with for a ScyllaCluster's spec.backups and spec.repairs.
	ScyllaDBManagerTaskTypeBackup = "Backup"
	ScyllaDBManagerTaskTypeRepair = "Repair"
)

// ScyllaDBDatacenterNameForScyllaCluster returns the name of the ScyllaDBDatacenter a ScyllaCluster is translated
// into: the ScyllaCluster's own name, so that every object derived from the datacenter keeps the names users of the
// ScyllaCluster API know (StatefulSets "<cluster>-<dc>-<rack>", the "<cluster>-client" Service, and so on).
func ScyllaDBDatacenterNameForScyllaCluster(scyllaClusterName string) string {
	return scyllaClusterName
}
