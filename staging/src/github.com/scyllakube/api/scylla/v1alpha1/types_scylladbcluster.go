package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScyllaDBClusterExposeOptions says how the nodes of a ScyllaDBCluster are reachable.
// Omitting nodeService means type Headless; omitting broadcastOptions, or nodes or clients inside it, means PodIP.
// +kubebuilder:validation:XValidation:rule="self.?broadcastOptions.?nodes.?type.orValue('PodIP') != 'ServiceClusterIP' || self.?nodeService.?type.orValue('Headless') in ['ClusterIP', 'LoadBalancer']",message="broadcast type ServiceClusterIP requires nodeService.type ClusterIP or LoadBalancer",fieldPath=".broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="!(self.?broadcastOptions.?nodes.?type.orValue('PodIP') in ['ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress']) || self.?nodeService.?type.orValue('Headless') == 'LoadBalancer'",message="broadcast type ServiceLoadBalancerIngressIP requires nodeService.type LoadBalancer",fieldPath=".broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="self.?broadcastOptions.?clients.?type.orValue('PodIP') != 'ServiceClusterIP' || self.?nodeService.?type.orValue('Headless') in ['ClusterIP', 'LoadBalancer']",message="broadcast type ServiceClusterIP requires nodeService.type ClusterIP or LoadBalancer",fieldPath=".broadcastOptions.clients.type"
// +kubebuilder:validation:XValidation:rule="!(self.?broadcastOptions.?clients.?type.orValue('PodIP') in ['ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress']) || self.?nodeService.?type.orValue('Headless') == 'LoadBalancer'",message="broadcast type ServiceLoadBalancerIngressIP requires nodeService.type LoadBalancer",fieldPath=".broadcastOptions.clients.type"
type ScyllaDBClusterExposeOptions struct {
	// nodeService shapes the Service created for every node. Its type cannot be changed after creation.
	// +kubebuilder:default:={type:"Headless"}
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

// ScyllaDBClusterDatacenterTemplate holds settings for a datacenter of a ScyllaDBCluster. When the same setting is
// given at several levels, maps are merged with the most specific level winning, lists are appended and single
// values are replaced by the most specific one.
type ScyllaDBClusterDatacenterTemplate struct {
	// metadata holds labels and annotations put on the objects created for the datacenter.
	// +optional
	Metadata *ObjectTemplateMetadata `json:"metadata,omitempty"`

	// placement constrains which Kubernetes nodes the datacenter's pods may run on.
	// +optional
	Placement *Placement `json:"placement,omitempty"`

	// topologyLabelSelector selects the Kubernetes nodes of the datacenter by their labels.
	// +optional
	TopologyLabelSelector map[string]string `json:"topologyLabelSelector,omitempty"`

	// scyllaDB holds ScyllaDB container settings for the datacenter's racks.
	// +optional
	ScyllaDB *ScyllaDBTemplate `json:"scyllaDB,omitempty"`

	// scyllaDBManagerAgent holds agent container settings for the datacenter's racks, for example object storage
	// credentials for backups in volumes and volumeMounts.
	// +optional
	ScyllaDBManagerAgent *ScyllaDBManagerAgentTemplate `json:"scyllaDBManagerAgent,omitempty"`

	// rackTemplate holds settings every rack of the datacenter inherits.
	// +optional
	RackTemplate *RackTemplate `json:"rackTemplate,omitempty"`

	// racks are racks every datacenter using this template gets, identified by name.
	// +kubebuilder:validation:MaxItems=32
	// +listType=map
	// +listMapKey=name
	// +optional
	Racks []RackSpec `json:"racks,omitempty"`
}

// ScyllaDBClusterDatacenter is one datacenter of a ScyllaDBCluster, placed in a remote Kubernetes cluster.
// +kubebuilder:validation:XValidation:rule="(has(self.scyllaDB) && has(self.scyllaDB.storage)) == (has(oldSelf.scyllaDB) && has(oldSelf.scyllaDB.storage)) && (!(has(self.scyllaDB) && has(self.scyllaDB.storage)) || self.scyllaDB.storage == oldSelf.scyllaDB.storage)",message="storage of an existing datacenter is immutable",fieldPath=".scyllaDB.storage"
// +kubebuilder:validation:XValidation:rule="(has(self.rackTemplate) && has(self.rackTemplate.scyllaDB) && has(self.rackTemplate.scyllaDB.storage)) == (has(oldSelf.rackTemplate) && has(oldSelf.rackTemplate.scyllaDB) && has(oldSelf.rackTemplate.scyllaDB.storage)) && (!(has(self.rackTemplate) && has(self.rackTemplate.scyllaDB) && has(self.rackTemplate.scyllaDB.storage)) || self.rackTemplate.scyllaDB.storage == oldSelf.rackTemplate.scyllaDB.storage)",message="rackTemplate storage of an existing datacenter is immutable",fieldPath=".rackTemplate.scyllaDB.storage"
type ScyllaDBClusterDatacenter struct {
	ScyllaDBClusterDatacenterTemplate `json:",inline"`

	// name is the datacenter name ScyllaDB sees. It identifies the datacenter: changing it means removing the
	// datacenter and adding a new one.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="datacenter name must be a lowercase RFC 1123 label (letters a-z, digits and '-', starting and ending with a letter or digit)"
	Name string `json:"name"`

	// remoteKubernetesClusterName is the name of the RemoteKubernetesCluster the datacenter runs in.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="remoteKubernetesClusterName must be a RemoteKubernetesCluster name (a lowercase RFC 1123 subdomain)"
	RemoteKubernetesClusterName string `json:"remoteKubernetesClusterName"`

	// forceRedeploymentReason restarts every node of this datacenter, one at a time, whenever its value changes.
	// +optional
	ForceRedeploymentReason *string `json:"forceRedeploymentReason,omitempty"`
}

// ScyllaDBClusterSpec is the desired state of a ScyllaDB cluster spread over several Kubernetes clusters.
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.nodeService) && has(self.exposeOptions.nodeService.type) ? self.exposeOptions.nodeService.type : 'Headless') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.nodeService) && has(oldSelf.exposeOptions.nodeService.type) ? oldSelf.exposeOptions.nodeService.type : 'Headless')",message="exposeOptions.nodeService.type is immutable",fieldPath=".exposeOptions.nodeService.type"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) ? (has(self.exposeOptions.broadcastOptions.nodes) ? self.exposeOptions.broadcastOptions.nodes.type : 'PodIP') : 'PodIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) ? (has(oldSelf.exposeOptions.broadcastOptions.nodes) ? oldSelf.exposeOptions.broadcastOptions.nodes.type : 'PodIP') : 'PodIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",message="exposeOptions.broadcastOptions.nodes.type is immutable",fieldPath=".exposeOptions.broadcastOptions.nodes.type"
// +kubebuilder:validation:XValidation:rule="(has(self.exposeOptions) && has(self.exposeOptions.broadcastOptions) ? (has(self.exposeOptions.broadcastOptions.clients) ? self.exposeOptions.broadcastOptions.clients.type : 'PodIP') : 'PodIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress') == (has(oldSelf.exposeOptions) && has(oldSelf.exposeOptions.broadcastOptions) ? (has(oldSelf.exposeOptions.broadcastOptions.clients) ? oldSelf.exposeOptions.broadcastOptions.clients.type : 'PodIP') : 'PodIP').replace('ServiceLoadBalancerIngressIP', 'ServiceLoadBalancerIngress')",message="exposeOptions.broadcastOptions.clients.type is immutable",fieldPath=".exposeOptions.broadcastOptions.clients.type"
// +kubebuilder:validation:XValidation:rule="(has(self.datacenterTemplate) && has(self.datacenterTemplate.scyllaDB) && has(self.datacenterTemplate.scyllaDB.storage)) == (has(oldSelf.datacenterTemplate) && has(oldSelf.datacenterTemplate.scyllaDB) && has(oldSelf.datacenterTemplate.scyllaDB.storage)) && (!(has(self.datacenterTemplate) && has(self.datacenterTemplate.scyllaDB) && has(self.datacenterTemplate.scyllaDB.storage)) || self.datacenterTemplate.scyllaDB.storage == oldSelf.datacenterTemplate.scyllaDB.storage)",message="datacenterTemplate.scyllaDB.storage is immutable",fieldPath=".datacenterTemplate.scyllaDB.storage"
// +kubebuilder:validation:XValidation:rule="(has(self.datacenterTemplate) && has(self.datacenterTemplate.rackTemplate) && has(self.datacenterTemplate.rackTemplate.scyllaDB) && has(self.datacenterTemplate.rackTemplate.scyllaDB.storage)) == (has(oldSelf.datacenterTemplate) && has(oldSelf.datacenterTemplate.rackTemplate) && has(oldSelf.datacenterTemplate.rackTemplate.scyllaDB) && has(oldSelf.datacenterTemplate.rackTemplate.scyllaDB.storage)) && (!(has(self.datacenterTemplate) && has(self.datacenterTemplate.rackTemplate) && has(self.datacenterTemplate.rackTemplate.scyllaDB) && has(self.datacenterTemplate.rackTemplate.scyllaDB.storage)) || self.datacenterTemplate.rackTemplate.scyllaDB.storage == oldSelf.datacenterTemplate.rackTemplate.scyllaDB.storage)",message="datacenterTemplate.rackTemplate.scyllaDB.storage is immutable",fieldPath=".datacenterTemplate.rackTemplate.scyllaDB.storage"
type ScyllaDBClusterSpec struct {
	// metadata holds labels and annotations put on every object created for the cluster.
	// +optional
	Metadata *ObjectTemplateMetadata `json:"metadata,omitempty"`

	// clusterName is the ScyllaDB cluster name. When unset, the ScyllaDBCluster's name is used.
	// It cannot be changed after creation.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +optional
	ClusterName *string `json:"clusterName,omitempty"`

	// scyllaDB holds the ScyllaDB container settings shared by every node.
	// +kubebuilder:validation:Required
	ScyllaDB ScyllaDB `json:"scyllaDB"`

	// scyllaDBManagerAgent holds the ScyllaDB Manager agent container settings shared by every node.
	// +kubebuilder:validation:Required
	ScyllaDBManagerAgent *ScyllaDBManagerAgent `json:"scyllaDBManagerAgent,omitempty"`

	// forceRedeploymentReason restarts every node of every datacenter, one at a time, whenever its value changes.
	// +optional
	ForceRedeploymentReason *string `json:"forceRedeploymentReason,omitempty"`

	// exposeOptions say how nodes are reachable. The node Service type and the broadcast types cannot be changed
	// after creation.
	// +optional
	ExposeOptions *ScyllaDBClusterExposeOptions `json:"exposeOptions,omitempty"`

	// datacenterTemplate holds settings every datacenter inherits; a datacenter's own values win.
	// +optional
	DatacenterTemplate *ScyllaDBClusterDatacenterTemplate `json:"datacenterTemplate,omitempty"`

	// datacenters are the datacenters of the cluster, identified by name.
	// +kubebuilder:validation:MaxItems=16
	// +listType=map
	// +listMapKey=name
	// +optional
	Datacenters []ScyllaDBClusterDatacenter `json:"datacenters"`

	// disableAutomaticOrphanedNodeReplacement stops the operator from replacing nodes whose Kubernetes node is gone.
	// +optional
	DisableAutomaticOrphanedNodeReplacement bool `json:"disableAutomaticOrphanedNodeReplacement,omitempty"`

	// minTerminationGracePeriodSeconds is the shortest time a node gets to shut down cleanly before it is killed.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinTerminationGracePeriodSeconds *int32 `json:"minTerminationGracePeriodSeconds,omitempty"`

	// minReadySeconds is how long a node must stay ready before it counts as available.
	// +kubebuilder:validation:Minimum=0
	// +optional
	MinReadySeconds *int32 `json:"minReadySeconds,omitempty"`

	// readinessGates are added to every ScyllaDB pod.
	// +optional
	ReadinessGates []corev1.PodReadinessGate `json:"readinessGates,omitempty"`
}

// ScyllaDBClusterRackStatus is the observed state of one rack of a ScyllaDBCluster datacenter.
type ScyllaDBClusterRackStatus struct {
	// name is the rack name.
	Name string `json:"name"`

	// currentVersion is the ScyllaDB version of the rack's current revision.
	// +optional
	CurrentVersion *string `json:"currentVersion,omitempty"`

	// updatedVersion is the ScyllaDB version of the rack's updated revision.
	// +optional
	UpdatedVersion *string `json:"updatedVersion,omitempty"`

	NodeCounts `json:",inline"`

	// stale is true when this entry was computed from an older generation of the spec.
	// +optional
	Stale *bool `json:"stale,omitempty"`
}

// ScyllaDBClusterDatacenterStatus is the observed state of one datacenter of a ScyllaDBCluster.
type ScyllaDBClusterDatacenterStatus struct {
	// name is the datacenter name.
	Name string `json:"name"`

	// remoteNamespaceName is the namespace in the remote Kubernetes cluster that holds the datacenter's objects.
	// +optional
	RemoteNamespaceName *string `json:"remoteNamespaceName,omitempty"`

	// currentVersion is the ScyllaDB version of the datacenter's current revision.
	// +optional
	CurrentVersion *string `json:"currentVersion,omitempty"`

	// updatedVersion is the ScyllaDB version of the datacenter's updated revision.
	// +optional
	UpdatedVersion *string `json:"updatedVersion,omitempty"`

	NodeCounts `json:",inline"`

	// stale is true when this entry was computed from an older generation of the spec.
	// +optional
	Stale *bool `json:"stale,omitempty"`

	// racks holds the state of every rack of the datacenter.
	// +optional
	Racks []ScyllaDBClusterRackStatus `json:"racks,omitempty"`
}

// ScyllaDBClusterStatus is the observed state of a ScyllaDBCluster.
type ScyllaDBClusterStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the cluster. A rollout is complete when Available is True and Progressing and Degraded
	// are False.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// currentVersion is the ScyllaDB version of the current revision.
	// +optional
	CurrentVersion *string `json:"currentVersion,omitempty"`

	// updatedVersion is the ScyllaDB version of the updated revision.
	// +optional
	UpdatedVersion *string `json:"updatedVersion,omitempty"`

	NodeCounts `json:",inline"`

	// datacenters holds the state of every datacenter.
	// +optional
	Datacenters []ScyllaDBClusterDatacenterStatus `json:"datacenters,omitempty"`
}

// ScyllaDBCluster is a ScyllaDB cluster whose datacenters run in RemoteKubernetesClusters.
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
// +kubebuilder:validation:XValidation:rule="(has(self.spec) && has(self.spec.clusterName) ? self.spec.clusterName : self.metadata.name) == (has(oldSelf.spec) && has(oldSelf.spec.clusterName) ? oldSelf.spec.clusterName : oldSelf.metadata.name)",message="clusterName is immutable",fieldPath=".spec.clusterName"
type ScyllaDBCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the cluster.
	// +kubebuilder:validation:Required
	Spec ScyllaDBClusterSpec `json:"spec"`

	// status is the observed state of the cluster.
	// +optional
	Status ScyllaDBClusterStatus `json:"status,omitempty"`
}

// ScyllaDBClusterList is a list of ScyllaDBClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ScyllaDBClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaDBClusters.
	Items []ScyllaDBCluster `json:"items"`
}
