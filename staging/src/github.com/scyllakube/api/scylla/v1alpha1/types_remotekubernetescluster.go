package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClientHealthcheckProbes configures the periodic health check of the client for a remote Kubernetes cluster.
type ClientHealthcheckProbes struct {
	// periodSeconds is how often, in seconds, the remote cluster is probed.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default:=60
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty"`
}

// RemoteKubernetesClusterSpec is the desired state of a RemoteKubernetesCluster.
type RemoteKubernetesClusterSpec struct {
	// kubeconfigSecretRef points at a Secret whose `kubeconfig` key holds credentials for the remote cluster.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XValidation:rule="has(self.name) && size(self.name) > 0",message="name of the kubeconfig Secret is required",fieldPath=".name",reason="FieldValueRequired"
	// +kubebuilder:validation:XValidation:rule="has(self.namespace) && size(self.namespace) > 0",message="namespace of the kubeconfig Secret is required",fieldPath=".namespace",reason="FieldValueRequired"
	// +structType=atomic
	KubeconfigSecretRef corev1.SecretReference `json:"kubeconfigSecretRef"`

	// clientHealthcheckProbes configures how often the remote cluster is probed.
	// +kubebuilder:default:={periodSeconds:60}
	// +optional
	ClientHealthcheckProbes *ClientHealthcheckProbes `json:"clientHealthcheckProbes,omitempty"`
}

// RemoteKubernetesClusterStatus is the observed state of a RemoteKubernetesCluster.
type RemoteKubernetesClusterStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the connection to the remote cluster.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// RemoteKubernetesCluster gives the operator access to another Kubernetes cluster in which ScyllaDBCluster
// datacenters run.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=".status.conditions[?(@.type=='Available')].status"
// +kubebuilder:printcolumn:name="PROGRESSING",type=string,JSONPath=".status.conditions[?(@.type=='Progressing')].status"
// +kubebuilder:printcolumn:name="DEGRADED",type=string,JSONPath=".status.conditions[?(@.type=='Degraded')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type RemoteKubernetesCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the RemoteKubernetesCluster.
	// +kubebuilder:validation:Required
	Spec RemoteKubernetesClusterSpec `json:"spec"`

	// status is the observed state of the RemoteKubernetesCluster.
	// +optional
	Status RemoteKubernetesClusterStatus `json:"status,omitempty"`
}

// RemoteKubernetesClusterList is a list of RemoteKubernetesClusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type RemoteKubernetesClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the RemoteKubernetesClusters.
	Items []RemoteKubernetesCluster `json:"items"`
}
