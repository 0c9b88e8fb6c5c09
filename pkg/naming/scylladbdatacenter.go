package naming

import (
	"fmt"

	"k8s.io/apimachinery/pkg/labels"
)

// Names the ScyllaDBDatacenter controller gives to what it puts into ScyllaDB pods and to the objects beside them.
// The sidecar receives the paths below through its flags, so changing one here changes both ends.

// MemberClusterRoleName is the ClusterRole, shipped with the operator's deploy manifests, that every datacenter's
// member RoleBinding grants to the ServiceAccount its ScyllaDB pods run as.
const MemberClusterRoleName = "scylla-operator-member"

// Pod template annotations whose change rolls the pods of a datacenter.
const (
	// ManagedConfigHashAnnotation holds a hash of the managed scylla.yaml ConfigMap's data.
	ManagedConfigHashAnnotation = "scylla-operator.scylladb.com/managed-config-hash"
	// ScyllaDBManagerAgentAuthTokenHashAnnotation holds an HMAC of the agent auth token, keyed with the random key
	// the auth-token Secret keeps (ScyllaDBManagerAgentAuthTokenHMACKeyKey), so that agents restart with a new token.
	// Neither the token nor a plain hash of it, which could be brute-forced, ever appears.
	ScyllaDBManagerAgentAuthTokenHashAnnotation = "scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-hash"

	// PodTemplateHashAnnotation on a rack's StatefulSet holds a hash of the pod template the operator last applied,
	// so that it can tell which racks a spec change will roll before it writes them.
	PodTemplateHashAnnotation = "scylla-operator.scylladb.com/pod-template-hash"

	// KubectlRestartedAtAnnotation is the pod template annotation `kubectl rollout restart` sets; the operator keeps
	// it, so that its next update of a StatefulSet does not restart the pods a second time.
	KubectlRestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

	// PrometheusScrapeAnnotation and PrometheusPortAnnotation advertise a pod's metrics endpoint.
	PrometheusScrapeAnnotation = "prometheus.io/scrape"
	PrometheusPortAnnotation   = "prometheus.io/port"
)

// Containers of a ScyllaDB pod.
const (
	SidecarInjectionContainerName = "sidecar-injection"
	// SysctlContainerName is the privileged init container that sets a ScyllaCluster's spec.sysctls
	// (SysctlsAnnotation) before ScyllaDB starts.
	SysctlContainerName               = "sysctl"
	ScyllaDBContainerName             = "scylla"
	ScyllaDBManagerAgentContainerName = "scylla-manager-agent"
)

// Volumes of a ScyllaDB pod and where they are mounted. User volumes and mounts must not reuse them.
const (
	// SharedBinaryVolumeName is the emptyDir the init container copies the operator binary into.
	SharedBinaryVolumeName = "shared"
	SharedBinaryDir        = "/mnt/shared"
	// OperatorBinaryPathInImage is where the operator image keeps the scylla-operator binary.
	OperatorBinaryPathInImage = "/usr/bin/scylla-operator"

	// DataDir is where the data volume (DataVolumeName) is mounted in the ScyllaDB and agent containers.
	DataDir = "/var/lib/scylla"

	// ScyllaDBManagedConfigVolumeName is the rack's key of the managed ConfigMap (ManagedConfigName), mounted as
	// ScyllaDBManagedConfigFileName in ScyllaDBManagedConfigDir: the sidecar's custom scylla.yaml.
	ScyllaDBManagedConfigVolumeName = "scylladb-managed-config"
	ScyllaDBManagedConfigDir        = "/var/run/configmaps/scylla-operator.scylladb.com/scylladb/managed-config"
	ScyllaDBManagedConfigFileName   = "scylla.yaml"

	ScyllaDBManagerAgentAuthTokenVolumeName    = "scylladb-manager-agent-auth-token"
	ScyllaDBManagerAgentAuthTokenDir           = "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token"
	ScyllaDBManagerAgentCustomConfigVolumeName = "scylladb-manager-agent-custom-config"
	ScyllaDBManagerAgentCustomConfigDir        = "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/config"
	// ScyllaDBManagerAgentDefaultConfigPath is the configuration file the agent image ships.
	ScyllaDBManagerAgentDefaultConfigPath = "/etc/scylla-manager-agent/scylla-manager-agent.yaml"
)

// Keys of the ConfigMaps and Secrets ScyllaDB pods read.
const (
	// ScyllaDBCustomConfigKey is the key of a user's custom config ConfigMap (customConfigMapRef).
	ScyllaDBCustomConfigKey = "scylla.yaml"
	// ScyllaDBManagerAgentAuthTokenKey is the key of the auth-token Secret (AgentAuthTokenSecretName) and of the
	// Secret named by ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot.
	ScyllaDBManagerAgentAuthTokenKey = "auth-token.yaml"
	// ScyllaDBManagerAgentAuthTokenHMACKeyKey is the key of the auth-token Secret (AgentAuthTokenSecretName) holding
	// the random per-datacenter key of ScyllaDBManagerAgentAuthTokenHashAnnotation's HMAC.
	ScyllaDBManagerAgentAuthTokenHMACKeyKey = "auth-token-hmac-key"
	// ScyllaDBManagerAgentConfigKey is the key of a user's custom agent config Secret (customConfigSecretRef).
	ScyllaDBManagerAgentConfigKey = "scylla-manager-agent.yaml"
)

// MemberRoleBindingName returns the name of the RoleBinding that grants MemberClusterRoleName to a datacenter's
// member ServiceAccount; it is named like the ServiceAccount.
func MemberRoleBindingName(sdcName string) string {
	return MemberServiceAccountName(sdcName)
}

// ScyllaDBManagedConfigKey returns the key of the managed ConfigMap (ManagedConfigName) holding a rack's scylla.yaml:
// the rack's custom config with the settings the operator manages on top.
func ScyllaDBManagedConfigKey(rackName string) string {
	return fmt.Sprintf("scylla-%s.yaml", rackName)
}

// ManagedObjectsSelector selects every object the operator creates or manages for a datacenter (ClusterLabels carry
// ManagedByLabel; a StatefulSet's claims get it from its selector): the operator's informers watch only these.
func ManagedObjectsSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set{ManagedByLabel: ManagedByLabelValue})
}
