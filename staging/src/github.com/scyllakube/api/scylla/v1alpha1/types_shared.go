package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
)

// ObjectTemplateMetadata holds labels and annotations that the operator merges onto the objects it creates.
type ObjectTemplateMetadata struct {
	// labels are added to the labels of the created objects; the operator's own labels win on conflict.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// annotations are added to the annotations of the created objects; the operator's own annotations win on
	// conflict.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// ScyllaDB holds the settings of the ScyllaDB container that are shared by every node.
type ScyllaDB struct {
	// image is the ScyllaDB container image reference, for example `docker.io/scylladb/scylla:2025.1.2`.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule=`self.matches('^((?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:[.](?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')`,message="image must be a container image reference such as docker.io/scylladb/scylla:2025.1.2"
	Image string `json:"image"`

	// externalSeeds lists addresses (IPs or DNS names) of nodes outside this object that new nodes contact first
	// to join an existing cluster, for example the nodes of another datacenter.
	// They are added to the seeds the operator computes on its own.
	// +optional
	ExternalSeeds []string `json:"externalSeeds,omitempty"`

	// alternatorOptions turns on the DynamoDB-compatible Alternator API when set.
	// +optional
	AlternatorOptions *AlternatorOptions `json:"alternatorOptions,omitempty"`

	// additionalScyllaDBArguments are appended to the ScyllaDB command line.
	// This is an unsupported escape hatch: arguments that clash with what the operator configures may break the
	// cluster.
	// +optional
	AdditionalScyllaDBArguments []string `json:"additionalScyllaDBArguments,omitempty"`

	// enableDeveloperMode runs ScyllaDB in developer mode, which skips the production checks of the host.
	// Never use it for production data.
	// +optional
	EnableDeveloperMode *bool `json:"enableDeveloperMode,omitempty"`
}

// AlternatorWriteIsolation names how Alternator isolates writes.
// +kubebuilder:validation:Enum=always;forbid_rmw;only_rmw_uses_lwt
type AlternatorWriteIsolation string

const (
	// AlternatorWriteIsolationAlways uses lightweight transactions for every write.
	AlternatorWriteIsolationAlways AlternatorWriteIsolation = "always"
	// AlternatorWriteIsolationForbidRMW rejects read-modify-write requests.
	AlternatorWriteIsolationForbidRMW AlternatorWriteIsolation = "forbid_rmw"
	// AlternatorWriteIsolationOnlyRMWUsesLWT uses lightweight transactions only for read-modify-write requests.
	AlternatorWriteIsolationOnlyRMWUsesLWT AlternatorWriteIsolation = "only_rmw_uses_lwt"
)

// AlternatorOptions configures the Alternator API.
type AlternatorOptions struct {
	// writeIsolation chooses how writes are isolated. When empty, ScyllaDB's own default applies.
	// +optional
	WriteIsolation AlternatorWriteIsolation `json:"writeIsolation,omitempty"`

	// servingCertificate configures the TLS certificate Alternator serves.
	// +kubebuilder:default:={type:"OperatorManaged"}
	// +optional
	ServingCertificate *TLSCertificate `json:"servingCertificate,omitempty"`
}

// TLSCertificateType says who provides a TLS certificate.
// +kubebuilder:validation:Enum=OperatorManaged;UserManaged
type TLSCertificateType string

const (
	// TLSCertificateTypeOperatorManaged means the operator issues and rotates the certificate.
	TLSCertificateTypeOperatorManaged TLSCertificateType = "OperatorManaged"
	// TLSCertificateTypeUserManaged means the user provides the certificate in a Secret.
	TLSCertificateTypeUserManaged TLSCertificateType = "UserManaged"
)

// TLSCertificate describes where a serving certificate comes from.
// +kubebuilder:validation:XValidation:rule="self.type == 'UserManaged' || !has(self.userManagedOptions)",message="userManagedOptions may only be set when type is UserManaged",fieldPath=".userManagedOptions",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.type != 'UserManaged' || has(self.userManagedOptions)",message="userManagedOptions are required when type is UserManaged",fieldPath=".userManagedOptions",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.type == 'OperatorManaged' || !has(self.operatorManagedOptions)",message="operatorManagedOptions may only be set when type is OperatorManaged",fieldPath=".operatorManagedOptions",reason="FieldValueForbidden"
type TLSCertificate struct {
	// type says who provides the certificate.
	// +kubebuilder:validation:Required
	Type TLSCertificateType `json:"type"`

	// userManagedOptions points at the user's certificate. Required when type is UserManaged.
	// +optional
	UserManagedOptions *UserManagedTLSCertificateOptions `json:"userManagedOptions,omitempty"`

	// operatorManagedOptions adds subject alternative names to an operator-issued certificate.
	// +optional
	OperatorManagedOptions *OperatorManagedTLSCertificateOptions `json:"operatorManagedOptions,omitempty"`
}

// UserManagedTLSCertificateOptions points at a certificate provided by the user.
type UserManagedTLSCertificateOptions struct {
	// secretName is the name of a Secret of type kubernetes.io/tls in the same namespace.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="secretName must be a valid Secret name (a lowercase RFC 1123 subdomain)"
	SecretName string `json:"secretName"`
}

// OperatorManagedTLSCertificateOptions extends a certificate issued by the operator.
type OperatorManagedTLSCertificateOptions struct {
	// additionalDNSNames are extra DNS names put into the certificate.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="each additional DNS name must be a lowercase RFC 1123 subdomain, e.g. scylla.example.com"
	// +optional
	AdditionalDNSNames []string `json:"additionalDNSNames,omitempty"`

	// additionalIPAddresses are extra IP addresses put into the certificate.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=45
	// +kubebuilder:validation:items:XValidation:rule="isIP(self)",message="each additional IP address must be a valid IPv4 or IPv6 address"
	// +optional
	AdditionalIPAddresses []string `json:"additionalIPAddresses,omitempty"`
}

// ScyllaDBManagerAgent holds the settings of the ScyllaDB Manager agent container shared by every node.
type ScyllaDBManagerAgent struct {
	// image is the ScyllaDB Manager agent container image reference, for example
	// `docker.io/scylladb/scylla-manager-agent:3.5.0`.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule=`self.matches('^((?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:[.](?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,})?$')`,message="image must be a container image reference such as docker.io/scylladb/scylla-manager-agent:3.5.0"
	Image *string `json:"image,omitempty"`
}

// Placement constrains which Kubernetes nodes ScyllaDB pods may run on.
type Placement struct {
	// nodeAffinity is added to the pods' node affinity.
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`

	// podAffinity is added to the pods' pod affinity.
	// +optional
	PodAffinity *corev1.PodAffinity `json:"podAffinity,omitempty"`

	// podAntiAffinity is added to the pods' pod anti-affinity.
	// +optional
	PodAntiAffinity *corev1.PodAntiAffinity `json:"podAntiAffinity,omitempty"`

	// tolerations are added to the pods' tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// StorageOptions describes the persistent volume that holds a node's data.
type StorageOptions struct {
	// metadata is put on the PersistentVolumeClaim when it is first created; later changes are not applied.
	// +optional
	Metadata *ObjectTemplateMetadata `json:"metadata,omitempty"`

	// capacity is the requested size of the volume, as a positive quantity such as `100Gi`.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(self) && quantity(self).isGreaterThan(quantity('0'))",message="capacity must be a positive quantity, for example 10Gi"
	Capacity string `json:"capacity"`

	// storageClassName is the StorageClass of the volume. When empty, the cluster's default StorageClass is used.
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`
}

// ScyllaDBTemplate holds the per-rack settings of the ScyllaDB container.
type ScyllaDBTemplate struct {
	// resources are the compute resources of the ScyllaDB container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// storage describes the data volume of every node. It cannot be changed once set.
	// +optional
	Storage *StorageOptions `json:"storage,omitempty"`

	// customConfigMapRef names a ConfigMap in the same namespace holding a `scylla.yaml` that is merged into the
	// node configuration.
	// +optional
	CustomConfigMapRef *string `json:"customConfigMapRef,omitempty"`

	// volumes are extra volumes added to the pods.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// volumeMounts are extra mounts added to the ScyllaDB container.
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// ScyllaDBManagerAgentTemplate holds the per-rack settings of the ScyllaDB Manager agent container.
type ScyllaDBManagerAgentTemplate struct {
	// resources are the compute resources of the agent container.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// customConfigSecretRef names a Secret in the same namespace holding an agent configuration file that is merged
	// into the generated one. Object storage credentials for backups usually go here or into volumes.
	// +optional
	CustomConfigSecretRef *string `json:"customConfigSecretRef,omitempty"`

	// volumes are extra volumes added to the pods.
	// +optional
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// volumeMounts are extra mounts added to the agent container.
	// +optional
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

// RackExposeOptions holds per-rack overrides of how nodes are exposed.
type RackExposeOptions struct {
	// nodeService adds labels and annotations to the node Services of this rack.
	// +optional
	NodeService *RackNodeServiceTemplate `json:"nodeService,omitempty"`
}

// RackNodeServiceTemplate holds the metadata added to the node Services of a rack.
type RackNodeServiceTemplate struct {
	ObjectTemplateMetadata `json:",inline"`
}

// RackTemplate holds settings that racks share. Values set on a rack override the template's.
type RackTemplate struct {
	// nodes is the number of ScyllaDB nodes in the rack.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// placement constrains which Kubernetes nodes the rack's pods may run on.
	// +optional
	Placement *Placement `json:"placement,omitempty"`

	// topologyLabelSelector selects the Kubernetes nodes of the rack by their labels; it is merged with the
	// datacenter's selector and becomes a required node affinity.
	// +optional
	TopologyLabelSelector map[string]string `json:"topologyLabelSelector,omitempty"`

	// scyllaDB holds the ScyllaDB container settings of the rack.
	// +optional
	ScyllaDB *ScyllaDBTemplate `json:"scyllaDB,omitempty"`

	// scyllaDBManagerAgent holds the agent container settings of the rack.
	// +optional
	ScyllaDBManagerAgent *ScyllaDBManagerAgentTemplate `json:"scyllaDBManagerAgent,omitempty"`

	// exposeOptions holds per-rack overrides of how nodes are exposed.
	// +optional
	ExposeOptions *RackExposeOptions `json:"exposeOptions,omitempty"`
}

// RackSpec is a named rack. Its storage cannot change once the rack exists.
// +kubebuilder:validation:XValidation:rule="(has(self.scyllaDB) && has(self.scyllaDB.storage)) == (has(oldSelf.scyllaDB) && has(oldSelf.scyllaDB.storage)) && (!(has(self.scyllaDB) && has(self.scyllaDB.storage)) || self.scyllaDB.storage == oldSelf.scyllaDB.storage)",message="storage of an existing rack is immutable",fieldPath=".scyllaDB.storage"
type RackSpec struct {
	RackTemplate `json:",inline"`

	// name is the rack name ScyllaDB sees. It identifies the rack: changing it means removing the rack and adding
	// a new one.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="rack name must be a lowercase RFC 1123 label (letters a-z, digits and '-', starting and ending with a letter or digit)"
	Name string `json:"name"`
}

// NodeServiceType is the kind of Service created for every ScyllaDB node.
// +kubebuilder:validation:Enum=Headless;ClusterIP;LoadBalancer
// +kubebuilder:validation:MaxLength=16
type NodeServiceType string

const (
	// NodeServiceTypeHeadless exposes nodes through headless Services (no cluster IP).
	NodeServiceTypeHeadless NodeServiceType = "Headless"
	// NodeServiceTypeClusterIP exposes nodes through ClusterIP Services.
	NodeServiceTypeClusterIP NodeServiceType = "ClusterIP"
	// NodeServiceTypeLoadBalancer exposes nodes through LoadBalancer Services.
	NodeServiceTypeLoadBalancer NodeServiceType = "LoadBalancer"
)

// NodeServiceTemplate shapes the Service created for every ScyllaDB node.
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.loadBalancerClass)",message="loadBalancerClass may only be set when type is LoadBalancer",fieldPath=".loadBalancerClass",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.allocateLoadBalancerNodePorts)",message="allocateLoadBalancerNodePorts may only be set when type is LoadBalancer",fieldPath=".allocateLoadBalancerNodePorts",reason="FieldValueForbidden"
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.externalTrafficPolicy)",message="externalTrafficPolicy may only be set when type is LoadBalancer",fieldPath=".externalTrafficPolicy",reason="FieldValueForbidden"
type NodeServiceTemplate struct {
	ObjectTemplateMetadata `json:",inline"`

	// type is the kind of Service created for every node. It cannot be changed after creation.
	// +kubebuilder:validation:Required
	Type NodeServiceType `json:"type"`

	// externalTrafficPolicy is copied to spec.externalTrafficPolicy of every node Service.
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// allocateLoadBalancerNodePorts is copied to spec.allocateLoadBalancerNodePorts of every node Service.
	// +optional
	AllocateLoadBalancerNodePorts *bool `json:"allocateLoadBalancerNodePorts,omitempty"`

	// loadBalancerClass is copied to spec.loadBalancerClass of every node Service; it picks the load balancer
	// implementation.
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="loadBalancerClass must be a qualified name, e.g. example.com/internal-lb"
	// +optional
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`

	// internalTrafficPolicy is copied to spec.internalTrafficPolicy of every node Service.
	// +kubebuilder:validation:Enum=Cluster;Local
	// +optional
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`
}

// PodIPSourceType says where a Pod IP address is read from.
// +kubebuilder:validation:Enum=Status;Interface
// +kubebuilder:validation:MaxLength=16
type PodIPSourceType string

const (
	// PodIPSourceStatus reads the address from the Pod's status.
	PodIPSourceStatus PodIPSourceType = "Status"
	// PodIPSourceInterface reads the address from a network interface inside the Pod.
	PodIPSourceInterface PodIPSourceType = "Interface"
)

// PodIPInterfaceOptions picks the network interface a Pod IP is read from.
type PodIPInterfaceOptions struct {
	// interfaceName is the name of the network interface inside the Pod, for example `eth1`.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	InterfaceName string `json:"interfaceName"`
}

// PodIPAddressOptions says how a Pod IP address is found.
// +kubebuilder:validation:XValidation:rule="self.?source.orValue('Status') != 'Interface' || has(self.interfaceOptions)",message="interfaceOptions are required when source is Interface",fieldPath=".interfaceOptions",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.?source.orValue('Status') == 'Interface' || !has(self.interfaceOptions)",message="interfaceOptions may only be set when source is Interface",fieldPath=".interfaceOptions",reason="FieldValueForbidden"
type PodIPAddressOptions struct {
	// source says where the address is read from.
	// +kubebuilder:default:="Status"
	// +optional
	Source PodIPSourceType `json:"source,omitempty"`

	// interfaceOptions picks the interface when source is Interface.
	// +optional
	InterfaceOptions *PodIPInterfaceOptions `json:"interfaceOptions,omitempty"`
}

// BroadcastAddressType says which address a node advertises.
// +kubebuilder:validation:Enum=PodIP;ServiceClusterIP;ServiceLoadBalancerIngressIP;ServiceLoadBalancerIngress
// +kubebuilder:validation:MaxLength=32
type BroadcastAddressType string

const (
	// BroadcastAddressTypePodIP advertises the Pod IP.
	BroadcastAddressTypePodIP BroadcastAddressType = "PodIP"
	// BroadcastAddressTypeServiceClusterIP advertises the cluster IP of the node Service.
	BroadcastAddressTypeServiceClusterIP BroadcastAddressType = "ServiceClusterIP"
	// BroadcastAddressTypeServiceLoadBalancerIngressIP advertises the first load balancer ingress IP of the node
	// Service.
	BroadcastAddressTypeServiceLoadBalancerIngressIP BroadcastAddressType = "ServiceLoadBalancerIngressIP"
	// BroadcastAddressTypeServiceLoadBalancerIngress is an accepted alias of ServiceLoadBalancerIngressIP, kept so
	// manifests written for the established operator keep working.
	BroadcastAddressTypeServiceLoadBalancerIngress BroadcastAddressType = "ServiceLoadBalancerIngress"
)

// BroadcastOptions says which address a node advertises.
// +kubebuilder:validation:XValidation:rule="self.type == 'PodIP' || !has(self.podIP)",message="podIP may only be set when type is PodIP",fieldPath=".podIP",reason="FieldValueForbidden"
type BroadcastOptions struct {
	// type is the kind of address advertised. It cannot be changed after creation.
	// +kubebuilder:validation:Required
	Type BroadcastAddressType `json:"type"`

	// podIP says how the Pod IP is found when type is PodIP.
	// +optional
	PodIP *PodIPAddressOptions `json:"podIP,omitempty"`
}

// NodeBroadcastOptions says which addresses a node advertises to other nodes and to clients.
type NodeBroadcastOptions struct {
	// nodes is the address advertised to other ScyllaDB nodes (ScyllaDB's `broadcast_address`).
	// +kubebuilder:default:={type:"PodIP"}
	// +optional
	Nodes *BroadcastOptions `json:"nodes,omitempty"`

	// clients is the address advertised to drivers (ScyllaDB's `broadcast_rpc_address`).
	// +kubebuilder:default:={type:"PodIP"}
	// +optional
	Clients *BroadcastOptions `json:"clients,omitempty"`
}

// ListenAddressType says which address a node binds its sockets to.
// +kubebuilder:validation:Enum=Any;PodIP
// +kubebuilder:validation:MaxLength=16
type ListenAddressType string

const (
	// ListenAddressTypeAny binds to every local interface.
	ListenAddressTypeAny ListenAddressType = "Any"
	// ListenAddressTypePodIP binds to the Pod IP only.
	ListenAddressTypePodIP ListenAddressType = "PodIP"
)

// ListenOptions says which address a node binds a socket to.
// +kubebuilder:validation:XValidation:rule="self.?type.orValue('Any') == 'PodIP' || !has(self.podIP)",message="podIP may only be set when type is PodIP",fieldPath=".podIP",reason="FieldValueForbidden"
type ListenOptions struct {
	// type is the kind of address the socket binds to.
	// +kubebuilder:default:="Any"
	// +optional
	Type ListenAddressType `json:"type,omitempty"`

	// podIP says how the Pod IP is found when type is PodIP.
	// +optional
	PodIP *PodIPAddressOptions `json:"podIP,omitempty"`
}

// NodeListenOptions says which addresses a node binds its node-to-node and client sockets to.
type NodeListenOptions struct {
	// nodes is the address of the socket for other nodes (ScyllaDB's `listen_address`).
	// +kubebuilder:default:={type:"Any"}
	// +optional
	Nodes *ListenOptions `json:"nodes,omitempty"`

	// clients is the address of the socket for drivers (ScyllaDB's `rpc_address`).
	// +kubebuilder:default:={type:"Any"}
	// +optional
	Clients *ListenOptions `json:"clients,omitempty"`
}

// NodeCounts counts the ScyllaDB nodes of a datacenter, rack or cluster by state. Statuses embed it.
type NodeCounts struct {
	// nodes is the number of nodes.
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// currentNodes is the number of nodes at the current revision.
	// +optional
	CurrentNodes *int32 `json:"currentNodes,omitempty"`

	// updatedNodes is the number of nodes at the updated revision.
	// +optional
	UpdatedNodes *int32 `json:"updatedNodes,omitempty"`

	// readyNodes is the number of ready nodes.
	// +optional
	ReadyNodes *int32 `json:"readyNodes,omitempty"`

	// availableNodes is the number of nodes that have been ready for at least minReadySeconds.
	// +optional
	AvailableNodes *int32 `json:"availableNodes,omitempty"`
}
