package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ScyllaDBBackupEntryClusterReference points at the ScyllaDB cluster object, in the entry's namespace, whose backups
// a ScyllaDBBackupEntry holds. The UID pins one incarnation of the object: a new object with the same name is another
// cluster with another directory.
type ScyllaDBBackupEntryClusterReference struct {
	// kind is the kind of the cluster object: ScyllaDBDatacenter or ScyllaDBCluster.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Enum=ScyllaDBDatacenter;ScyllaDBCluster
	Kind string `json:"kind"`

	// name is the name of the cluster object.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="name must be a lowercase RFC 1123 subdomain"
	Name string `json:"name"`

	// uid is the UID of the cluster object.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	UID types.UID `json:"uid"`
}

// ScyllaDBBackupEntrySpec is the desired state of a ScyllaDBBackupEntry.
type ScyllaDBBackupEntrySpec struct {
	// bucketRef is the name of the ScyllaDBBackupBucket the directory is in.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="bucketRef must be a lowercase RFC 1123 subdomain"
	BucketRef string `json:"bucketRef"`

	// clusterRef points at the ScyllaDB cluster object whose backups the directory holds.
	// +kubebuilder:validation:Required
	ClusterRef ScyllaDBBackupEntryClusterReference `json:"clusterRef"`

	// managerClusterID is the ID the cluster is registered under in ScyllaDB Manager, a UUID in lowercase canonical
	// form. It names the directory: the keys under `backup/meta/cluster/<id>/`, `backup/sst/cluster/<id>/` and
	// `backup/schema/cluster/<id>/` of the bucket.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MaxLength=36
	// +kubebuilder:validation:XValidation:rule="self.matches('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')",message="managerClusterID must be a UUID in lowercase canonical form, for example 0f8b7c5e-3c1a-5d2e-9f4b-6a7c8d9e0f1a"
	ManagerClusterID string `json:"managerClusterID"`
}

// ScyllaDBBackupEntryOperationType is the kind of work the manager-controller did on an entry's directory.
// +kubebuilder:validation:Enum=Purge;Inventory
type ScyllaDBBackupEntryOperationType string

const (
	// ScyllaDBBackupEntryOperationTypePurge deletes the directory's objects.
	ScyllaDBBackupEntryOperationTypePurge ScyllaDBBackupEntryOperationType = "Purge"
	// ScyllaDBBackupEntryOperationTypeInventory counts the directory's objects and bytes.
	ScyllaDBBackupEntryOperationTypeInventory ScyllaDBBackupEntryOperationType = "Inventory"
)

// ScyllaDBBackupEntryOperationState is how far an operation on an entry's directory got.
// +kubebuilder:validation:Enum=Running;Succeeded;Failed
type ScyllaDBBackupEntryOperationState string

const (
	// ScyllaDBBackupEntryOperationStateRunning means the operation started and has not finished.
	ScyllaDBBackupEntryOperationStateRunning ScyllaDBBackupEntryOperationState = "Running"
	// ScyllaDBBackupEntryOperationStateSucceeded means the operation finished.
	ScyllaDBBackupEntryOperationStateSucceeded ScyllaDBBackupEntryOperationState = "Succeeded"
	// ScyllaDBBackupEntryOperationStateFailed means the last attempt failed; it is retried.
	ScyllaDBBackupEntryOperationStateFailed ScyllaDBBackupEntryOperationState = "Failed"
)

// ScyllaDBBackupEntryOperation reports the last operation on an entry's directory.
type ScyllaDBBackupEntryOperation struct {
	// type is the kind of operation.
	// +kubebuilder:validation:Required
	Type ScyllaDBBackupEntryOperationType `json:"type"`

	// state is how far the operation got.
	// +kubebuilder:validation:Required
	State ScyllaDBBackupEntryOperationState `json:"state"`

	// time is when the operation last changed state or made progress.
	// +kubebuilder:validation:Required
	Time metav1.Time `json:"time"`

	// message says what happened, for example the store's error of a failed attempt.
	// +kubebuilder:validation:MaxLength=32768
	// +optional
	Message string `json:"message,omitempty"`

	// objectsDeleted is how many objects a purge deleted so far.
	// +kubebuilder:validation:Minimum=0
	// +optional
	ObjectsDeleted *int64 `json:"objectsDeleted,omitempty"`
}

// ScyllaDBBackupEntryStatus is the observed state of a ScyllaDBBackupEntry.
type ScyllaDBBackupEntryStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the entry.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// clusterDeletedAt is when the cluster object was deleted, taken from the entry's deletion timestamp.
	// +optional
	ClusterDeletedAt *metav1.Time `json:"clusterDeletedAt,omitempty"`

	// purgeAfter is when the directory is purged: clusterDeletedAt plus the bucket's deletionGracePeriod.
	// +optional
	PurgeAfter *metav1.Time `json:"purgeAfter,omitempty"`

	// lastOperation reports the last purge or inventory of the directory.
	// +optional
	LastOperation *ScyllaDBBackupEntryOperation `json:"lastOperation,omitempty"`

	// objects is how many objects the directory held when it was last inventoried.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Objects *int64 `json:"objects,omitempty"`

	// bytes is how many bytes the directory held when it was last inventoried.
	// +kubebuilder:validation:Minimum=0
	// +optional
	Bytes *int64 `json:"bytes,omitempty"`
}

// ScyllaDBBackupEntry is the directory of one ScyllaDB cluster's backups in one ScyllaDBBackupBucket. It lives in
// the cluster's namespace and outlives the cluster by the bucket's deletionGracePeriod, after which the directory is
// purged. Its spec is immutable.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="BUCKET",type=string,JSONPath=".spec.bucketRef"
// +kubebuilder:printcolumn:name="CLUSTER",type=string,JSONPath=".spec.clusterRef.name"
// +kubebuilder:printcolumn:name="KIND",type=string,JSONPath=".spec.clusterRef.kind",priority=1
// +kubebuilder:printcolumn:name="MANAGER CLUSTER ID",type=string,JSONPath=".spec.managerClusterID",priority=1
// +kubebuilder:printcolumn:name="PURGE AFTER",type=string,JSONPath=".status.purgeAfter"
// +kubebuilder:printcolumn:name="STATE",type=string,JSONPath=".status.lastOperation.state"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ScyllaDBBackupEntry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the entry. It cannot be changed after creation.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable: an entry's spec can't change; create a new ScyllaDBBackupEntry instead"
	Spec ScyllaDBBackupEntrySpec `json:"spec"`

	// status is the observed state of the entry.
	// +optional
	Status ScyllaDBBackupEntryStatus `json:"status,omitempty"`
}

// ScyllaDBBackupEntryList is a list of ScyllaDBBackupEntries.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ScyllaDBBackupEntryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaDBBackupEntries.
	Items []ScyllaDBBackupEntry `json:"items"`
}
