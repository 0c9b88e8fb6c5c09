package v1

import (
	corev1 "k8s.io/api/core/v1"
)

// NodeServiceType is the kind of Service the operator creates for every ScyllaDB node.
// +enum
type NodeServiceType string

const (
	// HeadlessServiceType makes every node Service headless (no cluster IP).
	HeadlessServiceType NodeServiceType = "Headless"

	// ClusterIPServiceType makes every node Service a ClusterIP Service.
	ClusterIPServiceType NodeServiceType = "ClusterIP"

	// LoadBalancerServiceType makes every node Service a LoadBalancer Service.
	LoadBalancerServiceType NodeServiceType = "LoadBalancer"
)

// BroadcastAddressType says which address a ScyllaDB node advertises.
// +enum
type BroadcastAddressType string

const (
	// PodIPBroadcastAddressType advertises the Pod's IP address (see PodIPAddressOptions for where it is read).
	PodIPBroadcastAddressType BroadcastAddressType = "PodIP"

	// ServiceClusterIPBroadcastAddressType advertises the cluster IP of the node's Service.
	ServiceClusterIPBroadcastAddressType BroadcastAddressType = "ServiceClusterIP"

	// ServiceLoadBalancerIngressIPBroadcastAddressType advertises the IP of the first load balancer ingress of the
	// node's Service (status.loadBalancer.ingress[0].ip).
	ServiceLoadBalancerIngressIPBroadcastAddressType BroadcastAddressType = "ServiceLoadBalancerIngressIP"

	// ServiceLoadBalancerIngressBroadcastAddressType is the spelling the established operator uses for
	// ServiceLoadBalancerIngressIPBroadcastAddressType. It is accepted so that existing manifests keep working and
	// means the same.
	//
	// Deprecated: use ServiceLoadBalancerIngressIPBroadcastAddressType.
	ServiceLoadBalancerIngressBroadcastAddressType BroadcastAddressType = "ServiceLoadBalancerIngress"
)

// PodIPSourceType says where the Pod IP address is read from.
// +enum
type PodIPSourceType string

const (
	// StatusPodIPSource reads the Pod IP from the Pod's status.podIP.
	StatusPodIPSource PodIPSourceType = "Status"

	// InterfacePodIPSource reads the Pod IP from a network interface inside the Pod.
	InterfacePodIPSource PodIPSourceType = "Interface"
)

// ListenAddressType says which local address a ScyllaDB socket is bound to.
// +enum
type ListenAddressType string

const (
	// AnyListenAddressType binds the socket to every local address.
	AnyListenAddressType ListenAddressType = "Any"

	// PodIPListenAddressType binds the socket to the Pod IP only.
	PodIPListenAddressType ListenAddressType = "PodIP"
)

// PodIPInterfaceOptions selects the network interface a Pod IP is read from.
type PodIPInterfaceOptions struct {
	// interfaceName is the name of a network interface inside the Pod, e.g. eth1. Interfaces with more than one
	// address are not supported.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=15
	// +kubebuilder:validation:Pattern=`^[^/\s:]+$`
	InterfaceName string `json:"interfaceName,omitempty"`
}

// PodIPAddressOptions says how the Pod IP address is found.
// +kubebuilder:validation:XValidation:rule="!has(self.source) || self.source != 'Interface' || has(self.interfaceOptions)",fieldPath=".interfaceOptions",reason="FieldValueRequired",message="interfaceOptions is required when source is Interface"
// +kubebuilder:validation:XValidation:rule="(has(self.source) && self.source == 'Interface') || !has(self.interfaceOptions)",fieldPath=".interfaceOptions",reason="FieldValueForbidden",message="interfaceOptions may be set only when source is Interface"
type PodIPAddressOptions struct {
	// source says where the Pod IP is read from: Status (the Pod's status.podIP) or Interface (an interface inside
	// the Pod, named in interfaceOptions).
	// +optional
	// +kubebuilder:default:="Status"
	// +kubebuilder:validation:Enum=Status;Interface
	Source PodIPSourceType `json:"source,omitempty"`

	// interfaceOptions names the interface when source is Interface; it must be absent otherwise.
	// +optional
	InterfaceOptions *PodIPInterfaceOptions `json:"interfaceOptions,omitempty"`
}

// BroadcastOptions says which address a node advertises for one kind of traffic.
type BroadcastOptions struct {
	// type of the advertised address: PodIP, ServiceClusterIP or ServiceLoadBalancerIngressIP
	// (ServiceLoadBalancerIngress is accepted as an older spelling of ServiceLoadBalancerIngressIP).
	// ServiceClusterIP needs nodeService.type ClusterIP or LoadBalancer; ServiceLoadBalancerIngressIP needs
	// nodeService.type LoadBalancer. The type cannot change after the ScyllaCluster is created.
	// +required
	// +kubebuilder:validation:Enum=PodIP;ServiceClusterIP;ServiceLoadBalancerIngressIP;ServiceLoadBalancerIngress
	Type BroadcastAddressType `json:"type"`

	// podIP says how the Pod IP is found when type is PodIP.
	// +optional
	PodIP *PodIPAddressOptions `json:"podIP,omitempty"`
}

// NodeBroadcastOptions says which addresses a ScyllaDB node advertises to other nodes and to clients.
type NodeBroadcastOptions struct {
	// nodes is the address advertised to other ScyllaDB nodes; it becomes broadcast_address in scylla.yaml.
	// +optional
	// +kubebuilder:default:={type:"ServiceClusterIP"}
	Nodes *BroadcastOptions `json:"nodes"`

	// clients is the address advertised to clients; it becomes broadcast_rpc_address in scylla.yaml.
	// +optional
	// +kubebuilder:default:={type:"ServiceClusterIP"}
	Clients *BroadcastOptions `json:"clients"`
}

// ListenOptions says which local address one kind of ScyllaDB socket is bound to.
type ListenOptions struct {
	// type of the bound address: Any (every local address) or PodIP (only the Pod IP).
	// +optional
	// +kubebuilder:default:="Any"
	// +kubebuilder:validation:Enum=Any;PodIP
	Type ListenAddressType `json:"type,omitempty"`

	// podIP says how the Pod IP is found when type is PodIP; with several interfaces in the Pod it picks the
	// interface to listen on.
	// +optional
	PodIP *PodIPAddressOptions `json:"podIP,omitempty"`
}

// NodeListenOptions says which local addresses ScyllaDB listens on.
type NodeListenOptions struct {
	// nodes is the address the node-to-node socket is bound to; it becomes listen_address in scylla.yaml.
	// +optional
	// +kubebuilder:default:={type:"Any"}
	Nodes ListenOptions `json:"nodes"`

	// clients is the address the client (CQL) socket is bound to; it becomes rpc_address in scylla.yaml.
	// +optional
	// +kubebuilder:default:={type:"Any"}
	Clients ListenOptions `json:"clients"`
}

// NodeServiceTemplate shapes the Service the operator creates for every ScyllaDB node.
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.externalTrafficPolicy)",fieldPath=".externalTrafficPolicy",reason="FieldValueForbidden",message="externalTrafficPolicy may be set only when type is LoadBalancer"
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.allocateLoadBalancerNodePorts)",fieldPath=".allocateLoadBalancerNodePorts",reason="FieldValueForbidden",message="allocateLoadBalancerNodePorts may be set only when type is LoadBalancer"
// +kubebuilder:validation:XValidation:rule="self.type == 'LoadBalancer' || !has(self.loadBalancerClass)",fieldPath=".loadBalancerClass",reason="FieldValueForbidden",message="loadBalancerClass may be set only when type is LoadBalancer"
type NodeServiceTemplate struct {
	ObjectTemplateMetadata `json:",inline"`

	// type of every node Service: Headless, ClusterIP or LoadBalancer. It cannot change after the ScyllaCluster
	// is created.
	// +required
	// +kubebuilder:validation:Enum=Headless;ClusterIP;LoadBalancer
	Type NodeServiceType `json:"type"`

	// externalTrafficPolicy is copied into spec.externalTrafficPolicy of every node Service (LoadBalancer only).
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	ExternalTrafficPolicy *corev1.ServiceExternalTrafficPolicy `json:"externalTrafficPolicy,omitempty"`

	// internalTrafficPolicy is copied into spec.internalTrafficPolicy of every node Service.
	// +optional
	// +kubebuilder:validation:Enum=Cluster;Local
	InternalTrafficPolicy *corev1.ServiceInternalTrafficPolicy `json:"internalTrafficPolicy,omitempty"`

	// allocateLoadBalancerNodePorts is copied into spec.allocateLoadBalancerNodePorts of every node Service
	// (LoadBalancer only).
	// +optional
	AllocateLoadBalancerNodePorts *bool `json:"allocateLoadBalancerNodePorts,omitempty"`

	// loadBalancerClass is copied into spec.loadBalancerClass of every node Service (LoadBalancer only); it must be
	// a qualified name such as example.com/internal-lb.
	// +optional
	// +kubebuilder:validation:MaxLength=316
	// +kubebuilder:validation:XValidation:rule="!format.qualifiedName().validate(self).hasValue()",message="loadBalancerClass must be a qualified name, e.g. example.com/internal-lb"
	LoadBalancerClass *string `json:"loadBalancerClass,omitempty"`
}

// CQLExposeIngressOptions configures an Ingress in front of the CQL port.
type CQLExposeIngressOptions struct {
	ObjectTemplateMetadata `json:",inline"`

	// disabled turns the Ingress off while keeping its settings.
	// +optional
	Disabled *bool `json:"disabled,omitempty"`

	// ingressClassName is the IngressClass of the created Ingresses.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="ingressClassName must be a lowercase RFC 1123 subdomain"
	IngressClassName string `json:"ingressClassName,omitempty"`
}

// CQLExposeOptions exposes CQL through an SNI proxy.
//
// Deprecated: use nodeService and broadcastOptions.
type CQLExposeOptions struct {
	// ingress configures the Ingresses that route CQL traffic; it needs spec.dnsDomains.
	// +optional
	Ingress *CQLExposeIngressOptions `json:"ingress,omitempty"`
}

// ExposeOptions controls how ScyllaDB nodes are exposed: the node Services, the advertised addresses and the
// local listen addresses.
// +kubebuilder:validation:XValidation:rule="!((has(self.broadcastOptions) && has(self.broadcastOptions.nodes) ? self.broadcastOptions.nodes.type : 'ServiceClusterIP') == 'ServiceClusterIP' && has(self.nodeService) && self.nodeService.type == 'Headless')",fieldPath=".broadcastOptions.nodes.type",message="broadcastOptions.nodes.type ServiceClusterIP (the default) needs nodeService.type ClusterIP or LoadBalancer: a Headless Service has no cluster IP; use PodIP with a Headless Service"
// +kubebuilder:validation:XValidation:rule="!((has(self.broadcastOptions) && has(self.broadcastOptions.clients) ? self.broadcastOptions.clients.type : 'ServiceClusterIP') == 'ServiceClusterIP' && has(self.nodeService) && self.nodeService.type == 'Headless')",fieldPath=".broadcastOptions.clients.type",message="broadcastOptions.clients.type ServiceClusterIP (the default) needs nodeService.type ClusterIP or LoadBalancer: a Headless Service has no cluster IP; use PodIP with a Headless Service"
// +kubebuilder:validation:XValidation:rule="!(has(self.broadcastOptions) && has(self.broadcastOptions.nodes) && self.broadcastOptions.nodes.type.startsWith('ServiceLoadBalancerIngress')) || (has(self.nodeService) && self.nodeService.type == 'LoadBalancer')",fieldPath=".broadcastOptions.nodes.type",message="broadcastOptions.nodes.type ServiceLoadBalancerIngressIP needs nodeService.type LoadBalancer (an absent nodeService means ClusterIP): only a LoadBalancer Service has an ingress IP"
// +kubebuilder:validation:XValidation:rule="!(has(self.broadcastOptions) && has(self.broadcastOptions.clients) && self.broadcastOptions.clients.type.startsWith('ServiceLoadBalancerIngress')) || (has(self.nodeService) && self.nodeService.type == 'LoadBalancer')",fieldPath=".broadcastOptions.clients.type",message="broadcastOptions.clients.type ServiceLoadBalancerIngressIP needs nodeService.type LoadBalancer (an absent nodeService means ClusterIP): only a LoadBalancer Service has an ingress IP"
type ExposeOptions struct {
	// cql exposes CQL through Ingresses and an SNI proxy.
	//
	// Deprecated: use nodeService and broadcastOptions.
	// +optional
	CQL *CQLExposeOptions `json:"cql,omitempty"`

	// nodeService shapes the Service created for every ScyllaDB node. When exposeOptions is set without it, it
	// defaults to type ClusterIP; an absent exposeOptions also means ClusterIP.
	// +optional
	// +kubebuilder:default:={type:"ClusterIP"}
	NodeService *NodeServiceTemplate `json:"nodeService,omitempty"`

	// broadcastOptions says which addresses nodes advertise to other nodes and to clients. When absent, both
	// are ServiceClusterIP.
	// +optional
	BroadcastOptions *NodeBroadcastOptions `json:"broadcastOptions,omitempty"`

	// listenOptions says which local addresses ScyllaDB binds its node-to-node and client sockets to. When
	// absent, both listen on every local address.
	// +optional
	ListenOptions *NodeListenOptions `json:"listenOptions,omitempty"`
}

// RackNodeServiceTemplate holds per-rack metadata for the node Services of one rack.
type RackNodeServiceTemplate struct {
	ObjectTemplateMetadata `json:",inline"`
}

// RackExposeOptions holds per-rack overrides of the expose options.
type RackExposeOptions struct {
	// nodeService holds labels and annotations merged onto the node Services of this rack.
	// +optional
	NodeService *RackNodeServiceTemplate `json:"nodeService,omitempty"`
}
