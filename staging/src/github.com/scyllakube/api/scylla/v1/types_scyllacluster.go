package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GenericUpgradeFailureStrategy says what happens when a step of an upgrade fails.
// +enum
type GenericUpgradeFailureStrategy string

const (
	// GenericUpgradeFailureStrategyRetry retries the failed step until it succeeds.
	GenericUpgradeFailureStrategyRetry GenericUpgradeFailureStrategy = "Retry"
)

// GenericUpgradeSpec tunes ScyllaDB version upgrades.
type GenericUpgradeSpec struct {
	// failureStrategy says what happens when an upgrade step fails; Retry is the only strategy.
	// +optional
	// +kubebuilder:default:="Retry"
	// +kubebuilder:validation:Enum=Retry
	FailureStrategy GenericUpgradeFailureStrategy `json:"failureStrategy,omitempty"`

	// pollInterval is how often the state of an upgrade step is checked.
	//
	// Deprecated: the operator reacts to events and ignores it.
	// +optional
	// +kubebuilder:default:="1s"
	PollInterval metav1.Duration `json:"pollInterval,omitempty"`
}

// AlternatorWriteIsolation is the Alternator write isolation policy.
// +enum
type AlternatorWriteIsolation string

const (
	// AlternatorWriteIsolationAlways makes every write a lightweight transaction.
	AlternatorWriteIsolationAlways AlternatorWriteIsolation = "always"

	// AlternatorWriteIsolationForbidRMW rejects read-modify-write requests.
	AlternatorWriteIsolationForbidRMW AlternatorWriteIsolation = "forbid_rmw"

	// AlternatorWriteIsolationOnlyRMWUsesLWT uses lightweight transactions only for read-modify-write requests.
	AlternatorWriteIsolationOnlyRMWUsesLWT AlternatorWriteIsolation = "only_rmw_uses_lwt"
)

// AlternatorSpec turns on Alternator, ScyllaDB's DynamoDB-compatible API.
// +kubebuilder:validation:XValidation:rule="!has(self.insecureEnableHTTP) || !self.insecureEnableHTTP || !has(self.port) || self.port == 0",fieldPath=".port",reason="FieldValueForbidden",message="port may not be set together with insecureEnableHTTP; the HTTP port is fixed"
type AlternatorSpec struct {
	// port is the port Alternator serves plain HTTP on.
	//
	// Deprecated: Alternator is served over HTTPS on its standard port; use insecureEnableHTTP for plain HTTP.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port,omitempty"`

	// writeIsolation is the default write isolation policy: always, forbid_rmw or only_rmw_uses_lwt.
	// +optional
	// +kubebuilder:validation:Enum=always;forbid_rmw;only_rmw_uses_lwt
	WriteIsolation AlternatorWriteIsolation `json:"writeIsolation,omitempty"`

	// insecureEnableHTTP serves Alternator over plain HTTP in addition to HTTPS.
	// +optional
	InsecureEnableHTTP *bool `json:"insecureEnableHTTP,omitempty"`

	// insecureDisableAuthorization turns off Alternator's authorization checks.
	// +optional
	InsecureDisableAuthorization *bool `json:"insecureDisableAuthorization,omitempty"`

	// servingCertificate is the certificate Alternator serves HTTPS with.
	// +optional
	// +kubebuilder:default:={type:"OperatorManaged"}
	ServingCertificate *TLSCertificate `json:"servingCertificate,omitempty"`
}

// PlacementSpec says where the Pods of a rack may be scheduled.
type PlacementSpec struct {
	// nodeAffinity is copied into the affinity of the rack's Pods.
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`

	// podAffinity is copied into the affinity of the rack's Pods.
	// +optional
	PodAffinity *corev1.PodAffinity `json:"podAffinity,omitempty"`

	// podAntiAffinity is copied into the affinity of the rack's Pods.
	// +optional
	PodAntiAffinity *corev1.PodAntiAffinity `json:"podAntiAffinity,omitempty"`

	// tolerations are copied into the rack's Pods.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Storage describes the persistent volume of every node in a rack.
type Storage struct {
	// metadata holds labels and annotations applied to the PersistentVolumeClaims when they are created.
	// +optional
	Metadata *ObjectTemplateMetadata `json:"metadata,omitempty"`

	// capacity is the size of each node's volume, a quantity such as 500Gi.
	// +required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",message="capacity must be a positive quantity such as 500Gi"
	Capacity string `json:"capacity"`

	// storageClassName is the StorageClass of the volumes; when unset, the cluster's default StorageClass is used.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// RackSpec describes one rack of the datacenter.
type RackSpec struct {
	// name of the rack, written to cassandra-rackdc.properties. It must be a lowercase RFC 1123 label because it
	// is part of the names of the rack's StatefulSet, Pods and Services.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="rack name must be a lowercase RFC 1123 label (letters a-z, digits and '-', starting and ending with a letter or digit)"
	Name string `json:"name"`

	// members is the number of ScyllaDB nodes in the rack.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Members int32 `json:"members"`

	// storage describes the volume of every node. It cannot change after the rack is created.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="storage is immutable: a rack's storage cannot change after the rack is created"
	Storage Storage `json:"storage"`

	// placement says where the rack's Pods may be scheduled.
	// +optional
	Placement *PlacementSpec `json:"placement,omitempty"`

	// resources of the ScyllaDB container. limits.cpu and limits.memory are required: ScyllaDB sizes its shards
	// and memory from them.
	// +required
	// +kubebuilder:validation:XValidation:rule="has(self.limits) && 'cpu' in self.limits && self.limits.cpu != 0 && self.limits.cpu != '0'",fieldPath=".limits.cpu",reason="FieldValueRequired",message="resources.limits.cpu is required and must be greater than 0: ScyllaDB sizes its shards from it"
	// +kubebuilder:validation:XValidation:rule="has(self.limits) && 'memory' in self.limits && self.limits.memory != 0 && self.limits.memory != '0'",fieldPath=".limits.memory",reason="FieldValueRequired",message="resources.limits.memory is required and must be greater than 0: ScyllaDB sizes its memory from it"
	Resources corev1.ResourceRequirements `json:"resources"`

	// agentResources of the ScyllaDB Manager agent container.
	// +optional
	// +kubebuilder:default:={requests:{cpu:"50m",memory:"10M"}}
	AgentResources corev1.ResourceRequirements `json:"agentResources,omitempty"`

	// volumes are added to the rack's Pods.
	// +optional
	// +listType=atomic
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// volumeMounts are added to the ScyllaDB container.
	// +optional
	// +listType=atomic
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// agentVolumeMounts are added to the ScyllaDB Manager agent container.
	// +optional
	// +listType=atomic
	AgentVolumeMounts []corev1.VolumeMount `json:"agentVolumeMounts,omitempty"`

	// scyllaConfig is the name of a ConfigMap whose scylla.yaml key is merged into ScyllaDB's configuration.
	// +optional
	ScyllaConfig string `json:"scyllaConfig"`

	// scyllaAgentConfig is the name of a Secret whose scylla-manager-agent.yaml key is merged into the agent's
	// configuration.
	// +optional
	ScyllaAgentConfig string `json:"scyllaAgentConfig"`

	// exposeOptions holds per-rack expose settings.
	// +optional
	ExposeOptions *RackExposeOptions `json:"exposeOptions,omitempty"`
}

// DatacenterSpec describes the ScyllaDB datacenter the ScyllaCluster runs.
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.racks) || oldSelf.racks.all(o, !has(o.members) || o.members == 0 || (has(self.racks) && self.racks.exists(r, r.name == o.name)))",fieldPath=".racks",message="a rack can be removed only after its members were set to 0 in an earlier update and its nodes were decommissioned"
type DatacenterSpec struct {
	// name of the datacenter as ScyllaDB sees it (the gossip datacenter name). It cannot change after creation.
	// It must be a lowercase RFC 1123 label because it is part of the names of the StatefulSets, Pods and
	// Services; datacenters joined into one cluster need distinct names.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="datacenter name must be a lowercase RFC 1123 label (letters a-z, digits and '-', starting and ending with a letter or digit)"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="datacenter name is immutable"
	Name string `json:"name"`

	// racks of the datacenter; rack names are unique. A rack can be removed only after it has been scaled to 0
	// members.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Racks []RackSpec `json:"racks"`
}

// Network holds the networking settings of the ScyllaDB Pods.
// +kubebuilder:validation:XValidation:rule="!has(self.ipFamilies) || size(self.ipFamilies) < 2 || (has(self.ipFamilyPolicy) && self.ipFamilyPolicy != 'SingleStack')",fieldPath=".ipFamilies",message="ipFamilyPolicy SingleStack (the default) allows one IP family; set ipFamilyPolicy to PreferDualStack or RequireDualStack to use two"
type Network struct {
	// hostNetworking runs the ScyllaDB Pods in the host's network namespace.
	//
	// Deprecated: expose nodes with exposeOptions instead.
	// +optional
	HostNetworking bool `json:"hostNetworking,omitempty"`

	// dnsPolicy of the ScyllaDB Pods: ClusterFirstWithHostNet, ClusterFirst or Default. When unset, the operator
	// uses ClusterFirstWithHostNet.
	// +optional
	// +kubebuilder:validation:Enum=ClusterFirstWithHostNet;ClusterFirst;Default
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// ipFamilyPolicy of the Services the operator creates: SingleStack, PreferDualStack or RequireDualStack.
	// +optional
	// +kubebuilder:default:="SingleStack"
	// +kubebuilder:validation:Enum=SingleStack;PreferDualStack;RequireDualStack
	IPFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`

	// ipFamilies are the IP families of the Services and of ScyllaDB's addresses; the first is the primary
	// family. When unset, IPv4 is used.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=IPv4;IPv6
	// +kubebuilder:validation:XValidation:rule="size(self) < 2 || self[0] != self[1]",message="ipFamilies must not list the same family twice"
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`
}

// ScyllaClusterSpec is the desired state of a ScyllaCluster.
// +kubebuilder:validation:XValidation:rule="!has(self.exposeOptions) || !has(self.exposeOptions.cql) || !has(self.exposeOptions.cql.ingress) || (has(self.exposeOptions.cql.ingress.disabled) && self.exposeOptions.cql.ingress.disabled) || (has(self.dnsDomains) && size(self.dnsDomains) > 0)",fieldPath=".dnsDomains",reason="FieldValueRequired",message="dnsDomains is required when exposeOptions.cql.ingress is enabled: the Ingress hosts are built from them"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.nodeService) ? self.exposeOptions.nodeService.type : 'ClusterIP') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.nodeService) ? oldSelf.exposeOptions.nodeService.type : 'ClusterIP')",fieldPath=".exposeOptions.nodeService.type",message="nodeService.type is immutable: the node Service type cannot change after the ScyllaCluster is created (an absent nodeService means ClusterIP)"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) && has(self.exposeOptions.broadcastOptions.nodes) ? self.exposeOptions.broadcastOptions.nodes.type : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) && has(oldSelf.exposeOptions.broadcastOptions.nodes) ? oldSelf.exposeOptions.broadcastOptions.nodes.type : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",fieldPath=".exposeOptions.broadcastOptions.nodes.type",message="broadcastOptions.nodes.type is immutable: the address advertised to other nodes cannot change after the ScyllaCluster is created (an absent broadcastOptions means ServiceClusterIP)"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) && has(self.exposeOptions.broadcastOptions.clients) ? self.exposeOptions.broadcastOptions.clients.type : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) && has(oldSelf.exposeOptions.broadcastOptions.clients) ? oldSelf.exposeOptions.broadcastOptions.clients.type : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",fieldPath=".exposeOptions.broadcastOptions.clients.type",message="broadcastOptions.clients.type is immutable: the address advertised to clients cannot change after the ScyllaCluster is created (an absent broadcastOptions means ServiceClusterIP)"
type ScyllaClusterSpec struct {
	// podMetadata holds labels and annotations merged onto the ScyllaDB Pods.
	// +optional
	PodMetadata *ObjectTemplateMetadata `json:"podMetadata,omitempty"`

	// version is the ScyllaDB image tag, e.g. 2025.1.2; the image is repository:version.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@[A-Za-z0-9]+([+._-][A-Za-z0-9]+)*:[A-Fa-f0-9]{32,})?$')`,message="version must be a container image tag such as 2025.1.2 (letters, digits, '_', '.' and '-', at most 128 characters), optionally followed by @<digest>"
	Version string `json:"version"`

	// repository is the ScyllaDB image repository.
	// +optional
	// +kubebuilder:default:="docker.io/scylladb/scylla"
	Repository string `json:"repository,omitempty"`

	// alternator turns on Alternator, the DynamoDB-compatible API.
	// +optional
	Alternator *AlternatorSpec `json:"alternator,omitempty"`

	// agentVersion is the ScyllaDB Manager agent image tag.
	// +optional
	// +kubebuilder:default:="latest"
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:XValidation:rule=`self == '' || self.matches('^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@[A-Za-z0-9]+([+._-][A-Za-z0-9]+)*:[A-Fa-f0-9]{32,})?$')`,message="agentVersion must be a container image tag such as 3.5.0 (letters, digits, '_', '.' and '-', at most 128 characters), optionally followed by @<digest>"
	AgentVersion string `json:"agentVersion"`

	// agentRepository is the ScyllaDB Manager agent image repository.
	// +optional
	// +kubebuilder:default:="docker.io/scylladb/scylla-manager-agent"
	AgentRepository string `json:"agentRepository,omitempty"`

	// developerMode runs ScyllaDB in developer mode, which skips the production checks of the host.
	// +optional
	// +kubebuilder:default:=false
	DeveloperMode bool `json:"developerMode,omitempty"`

	// cpuset pins ScyllaDB to dedicated CPUs.
	//
	// Deprecated: the operator always behaves as if it were true.
	// +optional
	CpuSet bool `json:"cpuset,omitempty"`

	// automaticOrphanedNodeCleanup removes nodes whose Kubernetes node is gone, so that they are replaced.
	// +optional
	// +kubebuilder:default:=false
	AutomaticOrphanedNodeCleanup bool `json:"automaticOrphanedNodeCleanup,omitempty"`

	// genericUpgrade tunes ScyllaDB version upgrades.
	// +optional
	GenericUpgrade *GenericUpgradeSpec `json:"genericUpgrade,omitempty"`

	// datacenter is the ScyllaDB datacenter this ScyllaCluster runs.
	// +required
	Datacenter DatacenterSpec `json:"datacenter"`

	// sysctls are kernel parameters, each key=value, set on the nodes that run ScyllaDB.
	//
	// Deprecated: use a NodeConfig.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:XValidation:rule=`self.matches('^[^=\\s]+=')`,message="each sysctl must be written as key=value, e.g. fs.aio-max-nr=30000000"
	Sysctls []string `json:"sysctls,omitempty"`

	// scyllaArgs are extra command-line arguments for ScyllaDB. Address arguments must match the IP family.
	// +optional
	ScyllaArgs string `json:"scyllaArgs,omitempty"`

	// network holds the networking settings of the ScyllaDB Pods.
	// +optional
	Network Network `json:"network,omitempty"`

	// repairs are repair tasks scheduled in ScyllaDB Manager; their names are unique. At most 64 are allowed.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Repairs []RepairTaskSpec `json:"repairs,omitempty"`

	// backups are backup tasks scheduled in ScyllaDB Manager; their names are unique. At most 64 are allowed.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	Backups []BackupTaskSpec `json:"backups,omitempty"`

	// forceRedeploymentReason restarts all nodes, one at a time, whenever its value changes.
	// +optional
	ForceRedeploymentReason string `json:"forceRedeploymentReason,omitempty"`

	// imagePullSecrets are used to pull the ScyllaDB and agent images.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// dnsDomains are domains under which the cluster is reachable; they are used in serving certificates and
	// Ingress hosts, and are required with exposeOptions.cql.ingress.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="each DNS domain must be a lowercase fully qualified domain name such as scylla.example.com"
	DNSDomains []string `json:"dnsDomains,omitempty"`

	// exposeOptions controls the node Services and the addresses ScyllaDB advertises and listens on.
	// nodeService.type, broadcastOptions.nodes.type and broadcastOptions.clients.type cannot change after
	// creation.
	// +optional
	ExposeOptions *ExposeOptions `json:"exposeOptions,omitempty"`

	// externalSeeds are addresses (IPs or DNS names) of nodes in other datacenters of the same ScyllaDB
	// cluster. When set, the first node of this datacenter joins through them instead of starting a new
	// cluster, and the other nodes use them next to a seed from their own datacenter.
	// +optional
	// +listType=atomic
	ExternalSeeds []string `json:"externalSeeds,omitempty"`

	// minTerminationGracePeriodSeconds is the least time a node is given to drain before it is killed. When
	// unset, the operator picks a value.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinTerminationGracePeriodSeconds *int32 `json:"minTerminationGracePeriodSeconds,omitempty"`

	// minReadySeconds is how long a node must stay ready before it counts as available. When unset, the operator
	// picks a value.
	// +optional
	// +kubebuilder:validation:Minimum=0
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates are added to every ScyllaDB Pod.
	// +optional
	// +listType=atomic
	ReadinessGates []corev1.PodReadinessGate `json:"readinessGates,omitempty"`

	// enableParallelNodeOperations lets ScyllaDB run node operations such as bootstrap concurrently. It needs
	// ScyllaDB 2026.2 or newer; when unset on creation, the operator turns it on for such versions.
	// +optional
	EnableParallelNodeOperations *bool `json:"enableParallelNodeOperations,omitempty"`
}

// ScyllaCluster is a ScyllaDB datacenter managed by the operator.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=scyllaclusters,singular=scyllacluster,scope=Namespaced
// +kubebuilder:printcolumn:name="READY",type=integer,JSONPath=`.status.readyMembers`
// +kubebuilder:printcolumn:name="MEMBERS",type=integer,JSONPath=`.status.members`
// +kubebuilder:printcolumn:name="RACKS",type=integer,JSONPath=`.status.rackCount`
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=`.status.conditions[?(@.type=="Available")].status`
// +kubebuilder:printcolumn:name="PROGRESSING",type=string,JSONPath=`.status.conditions[?(@.type=="Progressing")].status`
// +kubebuilder:printcolumn:name="DEGRADED",type=string,JSONPath=`.status.conditions[?(@.type=="Degraded")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ScyllaCluster struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the ScyllaDB datacenter.
	// +required
	Spec ScyllaClusterSpec `json:"spec,omitempty"`

	// status is the observed state of the ScyllaDB datacenter.
	// +optional
	Status ScyllaClusterStatus `json:"status,omitempty"`
}

// ScyllaClusterList is a list of ScyllaClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type ScyllaClusterList struct {
	metav1.TypeMeta `json:",inline"`

	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaClusters.
	Items []ScyllaCluster `json:"items"`
}
