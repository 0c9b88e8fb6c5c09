// Package naming is the single place where the operator formats object names, label and annotation keys,
// and finalizers. Every other package reads them from here.
package naming

// Well-known label keys and values put on objects the operator manages.
const (
	AppLabel            = "app"
	AppLabelValue       = "scylla"
	AppNameLabel        = "app.kubernetes.io/name"
	AppNameLabelValue   = "scylla"
	ManagedByLabel      = "app.kubernetes.io/managed-by"
	ManagedByLabelValue = "scylla-operator"

	ClusterNameLabel    = "scylla/cluster"
	DatacenterNameLabel = "scylla/datacenter"
	RackNameLabel       = "scylla/rack"
	RackOrdinalLabel    = "scylla/rack-ordinal"
	ScyllaVersionLabel  = "scylla/scylla-version"

	PodTypeLabel            = "scylla-operator.scylladb.com/pod-type"
	PodTypeScyllaDBNode     = "scylladb-node"
	ScyllaServiceTypeLabel  = "scylla-operator.scylladb.com/scylla-service-type"
	ScyllaServiceTypeMember = "member"
	ScyllaServiceTypeClient = "identity"

	// DecommissionedLabel on a member Service asks the sidecar to decommission its node ("false") and records that
	// it finished ("true").
	DecommissionedLabel      = "scylla/decommissioned"
	DecommissionedLabelFalse = "false"
	DecommissionedLabelTrue  = "true"
	// ReplaceLabel on a member Service (any value, usually "") asks for the replacement of its node: the user sets
	// it, or the operator for a node whose Kubernetes node is gone with its data.
	ReplaceLabel = "scylla/replace"
	// ReplacingNodeHostIDLabel on a member Service holds the host ID of the node being replaced; the operator sets
	// it when a replacement starts and removes it, with ReplaceLabel, when the new node runs. The sidecar starts
	// ScyllaDB with replace_node_first_boot set to it.
	ReplacingNodeHostIDLabel = "internal.scylla-operator.scylladb.com/replacing-node-hostid"
	NodeMaintenanceLabel     = "scylla/node-maintenance"

	// RegisterWithScyllaDBManagerLabel marks ScyllaDBDatacenters and ScyllaDBClusters for registration with
	// ScyllaDB Manager (manager-integration.md).
	RegisterWithScyllaDBManagerLabel = "scylla-operator.scylladb.com/register-with-scylladb-manager"

	// StatefulSetPodNameLabel is set on every pod by the StatefulSet controller.
	StatefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name"
)

// Annotation keys.
const (
	ManagedHashAnnotation             = "scylla-operator.scylladb.com/managed-hash"
	ForceRedeploymentReasonAnnotation = "scylla-operator.scylladb.com/force-redeployment-reason"

	HostIDAnnotation = "internal.scylla-operator.scylladb.com/host-id"
	// ReplacingNodeObjectsAnnotation on a member Service records, while its node is replaced, the UIDs of the data
	// PersistentVolumeClaim and pod the replacement deletes, so that an operator restarted midway deletes each of
	// them once: neither skipping one nor deleting their successors.
	ReplacingNodeObjectsAnnotation = "internal.scylla-operator.scylladb.com/replacing-node-objects"

	ScyllaDBManagerClusterIDAnnotation                  = "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid"
	ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot = "internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref"
	ScyllaDBManagerClusterNameOverrideAnnotation        = "internal.scylla-operator.scylladb.com/scylladb-manager-cluster-name-override"

	ScyllaDBManagerTaskStatusAnnotation               = "internal.scylla-operator.scylladb.com/scylladb-manager-task-status"
	ScyllaDBManagerTaskNameOverrideAnnotation         = "internal.scylla-operator.scylladb.com/scylladb-manager-task-name-override"
	ScyllaDBManagerTaskScheduleIntervalOverrideAnnot  = "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-interval-override"
	ScyllaDBManagerTaskScheduleStartDateOverrideAnnot = "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-start-date-override"
	ScyllaDBManagerTaskScheduleTimezoneOverrideAnnot  = "internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-timezone-override"
	ScyllaDBManagerTaskRepairIntensityOverrideAnnot   = "internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-intensity-override"
	ScyllaDBManagerTaskRepairSmallTableThresholdAnnot = "internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override"

	// Fields of ScyllaCluster without a v1alpha1 home travel to the ScyllaDBDatacenter as these annotations.
	HostNetworkingAnnotation                         = "internal.scylla-operator.scylladb.com/host-networking"
	AlternatorPortAnnotation                         = "internal.scylla-operator.scylladb.com/alternator-port"
	AlternatorInsecureEnableHTTPAnnotation           = "internal.scylla-operator.scylladb.com/alternator-insecure-enable-http"
	AlternatorInsecureDisableAuthorizationAnnotation = "internal.scylla-operator.scylladb.com/alternator-insecure-disable-authorization"
	SysctlsAnnotation                                = "internal.scylla-operator.scylladb.com/sysctls"
)

// Finalizers.
const (
	ScyllaDBManagerClusterFinalizer  = "scylla-operator.scylladb.com/scylladb-manager-cluster"
	ScyllaDBManagerTaskFinalizer     = "scylla-operator.scylladb.com/scylladb-manager-task"
	RemoteKubernetesClusterFinalizer = "scylla-operator.scylladb.com/remotekubernetescluster-protection"

	// LegacyScyllaDBManagerTaskFinalizer is the established operator's finalizer for what
	// ScyllaDBManagerTaskFinalizer does; ScyllaDBManagerTasks it created still carry it after an upgrade, and the
	// manager-controller removes it with its own.
	LegacyScyllaDBManagerTaskFinalizer = "scylla-operator.scylladb.com/scylladbmanagertask-deletion"
)
