package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ScyllaDBBackupProvider names the kind of object storage a ScyllaDBBackupBucket is in, as ScyllaDB Manager names
// it in backup locations.
// +kubebuilder:validation:Enum=s3;gcs;azure
type ScyllaDBBackupProvider string

const (
	// ScyllaDBBackupProviderS3 is AWS S3 or an S3-compatible store.
	ScyllaDBBackupProviderS3 ScyllaDBBackupProvider = "s3"
	// ScyllaDBBackupProviderGCS is Google Cloud Storage. It is not supported yet.
	ScyllaDBBackupProviderGCS ScyllaDBBackupProvider = "gcs"
	// ScyllaDBBackupProviderAzure is Azure Blob Storage. It is not supported yet.
	ScyllaDBBackupProviderAzure ScyllaDBBackupProvider = "azure"
)

// ScyllaDBBackupBucketSecretReference points at a Secret in a given namespace.
type ScyllaDBBackupBucketSecretReference struct {
	// namespace is the namespace of the Secret.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Label().validate(self).hasValue()",message="namespace must be a lowercase RFC 1123 label"
	Namespace string `json:"namespace"`

	// name is the name of the Secret.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="!format.dns1123Subdomain().validate(self).hasValue()",message="name must be a lowercase RFC 1123 subdomain"
	Name string `json:"name"`
}

// ScyllaDBBackupBucketSpec is the desired state of a ScyllaDBBackupBucket.
type ScyllaDBBackupBucketSpec struct {
	// provider is the kind of object storage the bucket is in: s3 (AWS S3 and S3-compatible stores). gcs and azure
	// are ScyllaDB Manager providers that are not supported yet.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:XValidation:rule="self == 's3'",messageExpression=`'provider "' + self + '" is not supported yet: only s3 is'`
	Provider ScyllaDBBackupProvider `json:"provider"`

	// bucketName is the name of the bucket in the store, as backup task locations name it (`s3:<bucketName>`):
	// 3 to 63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit, with no two
	// adjacent periods. It cannot be changed: the entries of the bucket record directories in it.
	// +kubebuilder:validation:Required
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9][a-z0-9.-]*[a-z0-9]$') && !self.contains('..')",message="bucketName must be an S3 bucket name: lowercase letters, digits, '.' and '-', starting and ending with a letter or digit, with no two adjacent periods"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="bucketName is immutable: create a new ScyllaDBBackupBucket for another bucket"
	BucketName string `json:"bucketName"`

	// region is the region of the bucket, for example `us-east-1`. When unset, the store's default region is used.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Region string `json:"region,omitempty"`

	// endpoint is the http or https URL of an S3-compatible store, for example `https://minio.example.com:9000`.
	// When unset, the provider's own endpoint is used.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHostname() != ''",message="endpoint must be an http or https URL, for example https://minio.example.com:9000"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// credentialsSecretRef points at a Secret holding the store's credentials under the keys `access_key_id` and
	// `secret_access_key`. When unset, the ScyllaDB Manager agents use their own role, and the bucket is only
	// checked, inventoried and purged if the manager-controller's own role can reach it.
	// +optional
	CredentialsSecretRef *ScyllaDBBackupBucketSecretReference `json:"credentialsSecretRef,omitempty"`

	// provision makes the manager-controller create the bucket when it is missing. The operator never deletes a
	// bucket.
	// +optional
	Provision bool `json:"provision,omitempty"`

	// deletionGracePeriod is how long the backups of a deleted cluster are kept in the bucket before they are
	// purged, as a duration such as `720h` (30 days).
	// +kubebuilder:default:="720h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule=`self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')`,message="deletionGracePeriod must be a duration such as 720h or 36h30m"
	// +kubebuilder:validation:XValidation:rule=`!self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self) >= duration('0s')`,message="deletionGracePeriod must not be negative"
	// +optional
	DeletionGracePeriod *metav1.Duration `json:"deletionGracePeriod,omitempty"`

	// maxClusters caps how many ScyllaDBBackupEntries may use the bucket; entries over the cap are refused with a
	// condition. When unset, there is no cap.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MaxClusters *int32 `json:"maxClusters,omitempty"`
}

// ScyllaDBBackupBucketStatus is the observed state of a ScyllaDBBackupBucket.
type ScyllaDBBackupBucketStatus struct {
	// observedGeneration is the generation of the spec this status was computed from.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// conditions describe the bucket: Available when it exists and is reachable with the given credentials,
	// Progressing, and Degraded with the store's error.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// clusters is how many ScyllaDBBackupEntries use the bucket.
	// +optional
	Clusters *int32 `json:"clusters,omitempty"`

	// entriesPendingPurge is how many ScyllaDBBackupEntries of deleted clusters wait for their directory to be
	// purged.
	// +optional
	EntriesPendingPurge *int32 `json:"entriesPendingPurge,omitempty"`
}

// ScyllaDBBackupBucket is one object storage bucket that the backups of many ScyllaDB clusters share, each cluster
// in its own directory (a ScyllaDBBackupEntry).
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Cluster
// +kubebuilder:printcolumn:name="BUCKET",type=string,JSONPath=".spec.bucketName"
// +kubebuilder:printcolumn:name="PROVIDER",type=string,JSONPath=".spec.provider"
// +kubebuilder:printcolumn:name="CLUSTERS",type=integer,JSONPath=".status.clusters"
// +kubebuilder:printcolumn:name="AVAILABLE",type=string,JSONPath=".status.conditions[?(@.type=='Available')].status"
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=".metadata.creationTimestamp"
type ScyllaDBBackupBucket struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the bucket.
	// +kubebuilder:validation:Required
	Spec ScyllaDBBackupBucketSpec `json:"spec"`

	// status is the observed state of the bucket.
	// +optional
	Status ScyllaDBBackupBucketStatus `json:"status,omitempty"`
}

// ScyllaDBBackupBucketList is a list of ScyllaDBBackupBuckets.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ScyllaDBBackupBucketList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the ScyllaDBBackupBuckets.
	Items []ScyllaDBBackupBucket `json:"items"`
}
