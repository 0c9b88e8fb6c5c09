package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IngressOptions configures the Ingresses created for CQL traffic.
type IngressOptions struct {
	ObjectTemplateMetadata `json:",inline"`

	// ingressClassName is the IngressClass of the created Ingresses.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="ingressClassName must be a lowercase RFC 1123 subdomain"
	// +optional
	IngressClassName string `json:"ingressClassName,omitempty"`
}

// CQLExposeOptions configures how CQL traffic is exposed through an SNI proxy.
type CQLExposeOptions struct {
	// ingress turns on Ingresses for CQL traffic. It requires spec.dnsDomains.
	// +optional
	Ingress *IngressOptions `json:"ingress,omitempty"`
}

// ExposeOptions says how the nodes of a ScyllaDBDatacenter are reachable: which Service each node gets, which
// addresses it advertises and which it listens on.
// Omitting nodeService means type ClusterIP; omitting broadcastOptions means both nodes and clients advertise
// ServiceClusterIP; inside broadcastOptions an omitted nodes or clients entry means PodIP.
// +kubebuilder:validation:XValidation:rule="has(self.broadcastOptions) || self.?nodeService.?type.orValue('ClusterIP') != 'Headless'",message="nodeService.type Headless requires broadcastOptions: without them nodes and clients advertise ServiceClusterIP, which a headless Service does not have",fieldPath=".broadcastOptions",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="self.?broadcastOptions.?nodes.?type.orValue('PodIP') != 'ServiceClusterIP' || self.?nodeService.?type.orValue('ClusterIP') in ['ClusterIP', 'LoadBalancer']",message="broadcast type ServiceClusterIP requires nodeService.type ClusterIP or LoadBalancer",fieldPath=".broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="!(self.?broadcastOptions.?nodes.?type.orValue('PodIP') in ['ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress']) || self.?nodeService.?type.orValue('ClusterIP') == 'LoadBalancer'",message="broadcast type ServiceLoadBalancerIngressIP requires nodeService.type LoadBalancer",fieldPath=".broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="self.?broadcastOptions.?clients.?type.orValue('PodIP') != 'ServiceClusterIP' || self.?nodeService.?type.orValue('ClusterIP') in ['ClusterIP', 'LoadBalancer']",message="broadcast type ServiceClusterIP requires nodeService.type ClusterIP or LoadBalancer",fieldPath=".broadcastOptions.clients.type"
// +kubebuilder:validation:XValidation:rule="!(self.?broadcastOptions.?clients.?type.orValue('PodIP') in ['ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress']) || self.?nodeService.?type.orValue('ClusterIP') == 'LoadBalancer'",message="broadcast type ServiceLoadBalancerIngressIP requires nodeService.type LoadBalancer",fieldPath=".broadcastOptions.clients.type"
type ExposeOptions struct {
	// cql exposes CQL through Ingresses and an SNI proxy.
	// Deprecated: kept so existing manifests keep working; prefer nodeService and broadcastOptions.
	// +optional
	CQL *CQLExposeOptions `json:"cql,omitempty"`

	// nodeService shapes the Service created for every node. Its type cannot be changed after creation.
	// +kubebuilder:default:={type:"ClusterIP"}
	// +optional
	NodeService *NodeServiceTemplate `json:"nodeService,omitempty"`

	// broadcastOptions say which addresses nodes advertise to other nodes and to clients.
	// The types cannot be changed after creation.
	// +optional
	BroadcastOptions *NodeBroadcastOptions `json:"broadcastOptions,omitempty"`

	// listenOptions say which addresses nodes bind their sockets to.
	// +optional
	ListenOptions *NodeListenOptions `json:"listenOptions,omitempty"`
}

// ScyllaDBDatacenterSpec is the desired state of a ScyllaDB datacenter.
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.nodeService) && has(self.exposeOptions.nodeService.type) ? self.exposeOptions.nodeService.type : 'ClusterIP') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.nodeService) && has(oldSelf.exposeOptions.nodeService.type) ? oldSelf.exposeOptions.nodeService.type : 'ClusterIP')",message="exposeOptions.nodeService.type is immutable",fieldPath=".exposeOptions.nodeService.type"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) ? (has(self.exposeOptions.broadcastOptions.nodes) ? self.exposeOptions.broadcastOptions.nodes.type : 'PodIP') : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) ? (has(oldSelf.exposeOptions.broadcastOptions.nodes) ? oldSelf.exposeOptions.broadcastOptions.nodes.type : 'PodIP') : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",message="exposeOptions.broadcastOptions.nodes.type is immutable",fieldPath=".exposeOptions.broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) ? (has(self.exposeOptions.broadcastOptions.clients) ? self.exposeOptions.broadcastOptions.clients.type : 'PodIP') : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) ? (has(oldSelf.exposeOptions.broadcastOptions.clients) ? oldSelf.exposeOptions.broadcastOptions.clients.type : 'PodIP') : 'ServiceClusterIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",message="exposeOptions.broadcastOptions.clients.type is immutable",fieldPath=".exposeOptions.broadcastOptions.clients.type"
// +kubebuilder:validation:XValidation:rule="(has(self.rackTemplate) && has(self.rackTemplate.scyllaDB) && has(self.rackTemplate.scyllaDB.storage)) == (has(oldSelf.rackTemplate) && has(oldSelf.rackTemplate.scyllaDB) && has(oldSelf.rackTemplate.scyllaDB.storage)) && (!(has(self.rackTemplate) && has(self.rackTemplate.scyllaDB) && has(self.rackTemplate.scyllaDB.storage)) || self.rackTemplate.scyllaDB.storage == oldSelf.rackTemplate.scyllaDB.storage)",message="rackTemplate.scyllaDB.storage is immutable",fieldPath=".rackTemplate.scyllaDB.storage"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.racks) || oldSelf.racks.all(o, (has(self.racks) && self.racks.exists(r, r.name == o.name)) || (has(o.nodes) ? o.nodes : (has(oldSelf.rackTemplate) && has(oldSelf.rackTemplate.nodes) ? oldSelf.rackTemplate.nodes : 0)) == 0)",message="a rack can only be removed after it has been scaled to 0 nodes",fieldPath=".racks"
// +kubebuilder:validation:XValidation:rule="!(has(self.exposeOptions) && has(self.exposeOptions.cql) && has(self.exposeOptions.cql.ingress)) || (has(self.dnsDomains) && size(self.dnsDomains) > 0)",message="dnsDomains are required when exposeOptions.cql.ingress is set",fieldPath=".dnsDomains",reason="FieldValueRequired"
// +kubebuilder:validation:XValidation:rule="(has(self.ipFamilyPolicy) && self.ipFamilyPolicy != 'SingleStack') || !has(self.ipFamilies) || size(self.ipFamilies) <= 1",message="ipFamilyPolicy SingleStack allows only one IP family",fieldPath=".ipFamilies"
type ScyllaDBDatacenterSpec struct {
	// metadata holds labels and annotations put on every object created for this datacenter.
	// +optional
	Metadata *ObjectTemplateMetadata `json:"metadata,omitempty"`

	// clusterName is the ScyllaDB cluster name. Datacenters joined into one cluster must use the same value.
	// When empty, the ScyllaDBDatacenter's name is used. It cannot be changed after creation.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterName string `json:"clusterName"`

	// datacenterName is the datacenter name ScyllaDB sees. When unset, the ScyllaDBDatacenter's name is used.
	// It cannot be changed after creation.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="datacenter name must be a lowercase RFC 1123 label (letters a-z, digits and '-', starting and ending with a letter or digit)"
	// +optional
	DatacenterName *string `json:"datacenterName,omitempty"`

	// scyllaDB holds the ScyllaDB container settings shared by every node.
	// +kubebuilder:validation:Required
	ScyllaDB ScyllaDB `json:"scyllaDB"`

	// scyllaDBManagerAgent holds the ScyllaDB Manager agent container settings shared by every node.
	// +kubebuilder:validation:Required
	ScyllaDBManagerAgent *ScyllaDBManagerAgent `json:"scyllaDBManagerAgent,omitempty"`

	// imagePullSecrets are used to pull the ScyllaDB and agent images.
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// dnsPolicy is the DNS policy of the ScyllaDB pods.
	// +kubebuilder:validation:Enum=ClusterFirstWithHostNet;ClusterFirst;Default;None
	// +optional
	DNSPolicy *corev1.DNSPolicy `json:"dnsPolicy,omitempty"`

	// dnsDomains are fully qualified domain names under which the nodes are reachable. They go into serving
	// certificates and Ingress hosts.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue() && self.contains('.')",message="each DNS domain must be a lowercase fully qualified domain name such as scylla.example.com"
	// +optional
	DNSDomains []string `json:"dnsDomains,omitempty"`

	// forceRedeploymentReason restarts every node, one at a time, whenever its value changes.
	// +optional
	ForceRedeploymentReason *string `json:"forceRedeploymentReason,omitempty"`

	// ipFamilyPolicy is the IP family policy of the Services created for the datacenter.
	// +kubebuilder:validation:Enum=SingleStack;PreferDualStack;RequireDualStack
	// +kubebuilder:default:="SingleStack"
	// +optional
	IPFamilyPolicy *corev1.IPFamilyPolicy `json:"ipFamilyPolicy,omitempty"`

	// ipFamilies are the IP families of the Services created for the datacenter; the first one is the primary
	// family ScyllaDB uses.
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=IPv4;IPv6
	// +kubebuilder:default:={"IPv4"}
	// +listType=set
	// +optional
	IPFamilies []corev1.IPFamily `json:"ipFamilies,omitempty"`

	// exposeOptions say how nodes are reachable. The node Service type and the broadcast types cannot be changed
	// after creation.
	// +optional
	ExposeOptions *ExposeOptions `json:"exposeOptions,omitempty"`

	// rackTemplate holds settings every rack inherits; a rack's own values win.
	// +optional
	RackTemplate *RackTemplate `json:"rackTemplate,omitempty"`

	// racks are the racks of the datacenter, identified by name. A rack can only be removed after it has been
	// scaled to 0 nodes.
	// +kubebuilder:validation:MaxItems=64
	// +listType=map
	// +listMapKey=name
	// +optional
	Racks []RackSpec `json:"racks"`

	// disableAutomaticOrphanedNodeReplacement stops the operator from replacing nodes whose Kubernetes node is gone.
	// +optional
	DisableAutomaticOrphanedNodeReplacement *bool `json:"disableAutomaticOrphanedNodeReplacement,omitempty"`

	// minTerminationGracePeriodSeconds is the shortest time a node gets to shut down cleanly before it is killed.
	// When unset, the operator picks a value.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinTerminationGracePeriodSeconds *int32 `json:"minTerminationGracePeriodSeconds,omitempty"`

	// minReadySeconds is how long a node must stay ready before it counts as available.
	// When unset, the operator picks a value.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates are added to every ScyllaDB pod.
	// +optional
	ReadinessGates []corev1.PodReadinessGate `json:"readinessGates,omitempty"`

	// enableParallelNodeOperations lets ScyllaDB run node operations such as bootstrap concurrently.
	// ScyllaDB versions older than 2026.2 do not support it.
	// +optional
	EnableParallelNodeOperations *bool `json:"enableParallelNodeOperations,omitempty"`
}

// RackStatus is the observed state of one rack.
type RackStatus struct {
	// name is the rack name.
	Name string `json:"name"`

	// currentVersion is the ScyllaDB version the rack's current revision runs.
	// +optional
	CurrentVersion string `json:"currentVersion"`

	// updatedVersion is the ScyllaDB version the rack's updated revision runs.
	// +optional
	UpdatedVersion string `json:"updatedVersion"`

	NodeCounts `json:",inline"`

	// stale is true when this entry was computed from an older generation of the spec.
	// +optional
	Stale *bool `json:"stale,omitempty"`
}

// ScyllaDBDatacenterStatus is the observed state of a ScyllaDB datacenter.
type ScyllaDBDatacenterStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the datacenter. A rollout is complete when Available is True and Progressing and
	// Degraded are False.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// currentVersion is the ScyllaDB version of the current revision.
	// +optional
	CurrentVersion string `json:"currentVersion,omitempty"`

	// updatedVersion is the ScyllaDB version of the updated revision.
	// +optional
	UpdatedVersion string `json:"updatedVersion,omitempty"`

	NodeCounts `json:",inline"`

	// racks holds the state of every rack.
	// +optional
	Racks []RackStatus `json:"racks"`
}

// ScyllaDBDatacenter is one ScyllaDB datacenter running in this Kubernetes cluster.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=".status.conditions[?(@.type=='Available')].status"
// +kubebuilder:printcolumn:name="PROGRESSING",type=string,JSONPath=".status.conditions[?(@.type=='Progressing')].status"
// +kubebuilder:printcolumn:name="DEGRADED",type=string,JSONPath=".status.conditions[?(@.type=='Degraded')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
// +kubebuilder:validation:XValidation:rule="(has(self.spec.clusterName) && size(self.spec.clusterName) > 0 ? self.spec.clusterName : self.metadata.name) == (has(oldSelf.spec.clusterName) && size(oldSelf.spec.clusterName) > 0 ? oldSelf.spec.clusterName : oldSelf.metadata.name)",message="clusterName is immutable",fieldPath=".spec.clusterName"
// +kubebuilder:validation:XValidation:rule="(has(self.spec) && has(self.spec.datacenterName) ? self.spec.datacenterName : self.metadata.name) == (has(oldSelf.spec) && has(oldSelf.spec.datacenterName) ? oldSelf.spec.datacenterName : oldSelf.metadata.name)",message="datacenterName is immutable",fieldPath=".spec.datacenterName"
type ScyllaDBDatacenter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the datacenter.
	// +kubebuilder:validation:Required
	Spec ScyllaDBDatacenterSpec `json:"spec"`

	// status is the observed state of the datacenter.
	// +optional
	Status ScyllaDBDatacenterStatus `json:"status,omitempty"`
}

// ScyllaDBDatacenterList is a list of ScyllaDBDatacenters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ScyllaDBDatacenterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaDBDatacenters.
	Items []ScyllaDBDatacenter `json:"items"`
}
