package validation

import (
	"strings"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newBucket(t testing.TB) *scyllav1alpha1.ScyllaDBBackupBucket {
	return exampleOf[*scyllav1alpha1.ScyllaDBBackupBucket](t, "scylladbbackupbucket.yaml")
}

func TestValidateScyllaDBBackupBucketRefuses(t *testing.T) {
	t.Parallel()
	name := field.NewPath("spec", "bucketName")
	endpoint := field.NewPath("spec", "endpoint")
	runValidationCases(t, newBucket, ValidateScyllaDBBackupBucket, []validationCase[*scyllav1alpha1.ScyllaDBBackupBucket]{
		{
			name:   "a bucket name formatted as an IP address",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.BucketName = "192.168.1.1" },
			want:   field.ErrorList{field.Invalid(name, "192.168.1.1", "must not be formatted as an IP address")},
		},
		{
			name:   "a short bucket name with a period next to a hyphen",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.BucketName = "a.-" },
			want: field.ErrorList{
				field.Invalid(name, "a.-", "must not have two adjacent periods or a period next to a hyphen"),
			},
		},
		{
			name:   "a two-character bucket name",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.BucketName = "ab" },
			want:   field.ErrorList{field.Invalid(name, "ab", "must be 3 to 63 characters long")},
		},
		{
			name:   "reserved prefix and suffix",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.BucketName = "xn--backups-s3alias" },
			want: field.ErrorList{
				field.Invalid(name, "xn--backups-s3alias", `must not start with the reserved prefix "xn--"`),
				field.Invalid(name, "xn--backups-s3alias", `must not end with the reserved suffix "-s3alias"`),
			},
		},
		{
			name:   "an endpoint with a path",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.Endpoint = "https://minio.example.com/backups" },
			want: field.ErrorList{field.Invalid(endpoint, "https://minio.example.com/backups",
				"must not have a path, query or fragment: must be an http or https URL of a host and an optional port, e.g. https://minio.example.com:9000")},
		},
		{
			name:   "an endpoint with credentials",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.Endpoint = "https://key:secret@minio.example.com" },
			want:   field.ErrorList{field.Invalid(endpoint, "https://key:secret@minio.example.com", "must not hold credentials: put them in the Secret spec.credentialsSecretRef names")},
		},
		{
			name:   "an endpoint with a port out of range",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.Endpoint = "http://minio:99999" },
			want:   field.ErrorList{field.Invalid(endpoint, "http://minio:99999", "has a port out of the range 1-65535")},
		},
		{
			name:   "an endpoint of another scheme",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.Endpoint = "s3://minio" },
			want:   field.ErrorList{field.Invalid(endpoint, "s3://minio", "must be an http or https URL of a host and an optional port, e.g. https://minio.example.com:9000")},
		},
		{
			name:   "a region with a slash",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) { b.Spec.Region = "us/east" },
			want:   field.ErrorList{field.Invalid(field.NewPath("spec", "region"), "us/east", "must be a region name such as us-east-1")},
		},
		{
			name: "a negative grace period",
			modify: func(b *scyllav1alpha1.ScyllaDBBackupBucket) {
				b.Spec.DeletionGracePeriod = &metav1.Duration{Duration: -time.Hour}
			},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "deletionGracePeriod"), "-1h0m0s", "must not be negative")},
		},
	})
	long := newBucket(t)
	long.Spec.BucketName = strings.Repeat("a", 64)
	if errs := ValidateScyllaDBBackupBucket(long); len(errs) != 1 {
		t.Errorf("a 64-character bucket name: want one error, got %v", errs)
	}
}

func TestValidateScyllaDBBackupEntryRetentionAnnotation(t *testing.T) {
	t.Parallel()
	runValidationCases(t, func(t testing.TB) *scyllav1alpha1.ScyllaDBBackupEntry {
		return exampleOf[*scyllav1alpha1.ScyllaDBBackupEntry](t, "scylladbbackupentry.yaml")
	}, ValidateScyllaDBBackupEntry, []validationCase[*scyllav1alpha1.ScyllaDBBackupEntry]{
		{
			name: "keep",
			modify: func(e *scyllav1alpha1.ScyllaDBBackupEntry) {
				e.Annotations = map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "keep"}
			},
		},
		{
			name: "purge-now",
			modify: func(e *scyllav1alpha1.ScyllaDBBackupEntry) {
				e.Annotations = map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "purge-now"}
			},
		},
		{
			name: "something else",
			modify: func(e *scyllav1alpha1.ScyllaDBBackupEntry) {
				e.Annotations = map[string]string{naming.ScyllaDBBackupRetentionAnnotation: "forever"}
			},
			want: field.ErrorList{field.NotSupported(field.NewPath("metadata", "annotations").Key(naming.ScyllaDBBackupRetentionAnnotation), "forever",
				[]string{"keep", "purge-now"})},
		},
	})
}

func TestValidateRemoteKubernetesClusterRefuses(t *testing.T) {
	t.Parallel()
	ref := field.NewPath("spec", "kubeconfigSecretRef")
	runValidationCases(t, func(t testing.TB) *scyllav1alpha1.RemoteKubernetesCluster {
		return exampleOf[*scyllav1alpha1.RemoteKubernetesCluster](t, "remotekubernetescluster-multi-dc.yaml")
	}, ValidateRemoteKubernetesCluster, []validationCase[*scyllav1alpha1.RemoteKubernetesCluster]{
		{
			name: "a Secret name and namespace that can't exist",
			modify: func(rkc *scyllav1alpha1.RemoteKubernetesCluster) {
				rkc.Spec.KubeconfigSecretRef.Name = "Kubeconfig"
				rkc.Spec.KubeconfigSecretRef.Namespace = "a.b"
			},
			want: field.ErrorList{
				field.Invalid(ref.Child("name"), "Kubeconfig", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
				field.Invalid(ref.Child("namespace"), "a.b", "must not contain dots"),
			},
		},
	})
}
