// Package v1 holds the v1 types of the scylla.scylladb.com API group.
//
// +k8s:deepcopy-gen=package
// +kubebuilder:object:generate=true
// +groupName=scylla.scylladb.com
package v1
