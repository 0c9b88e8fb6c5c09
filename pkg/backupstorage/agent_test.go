package backupstorage

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestS3BucketsOfLocations(t *testing.T) {
	t.Parallel()
	locations := []string{"s3:all", "dc1:s3:dc1-only", "dc2:s3:dc2-only", "gcs:other", "dc1:gcs:x", "s3:", "a:b:s3:c", "s3:all", "dc1:s3:all"}
	for dc, want := range map[string][]string{"dc1": {"all", "dc1-only"}, "dc2": {"all", "dc2-only"}, "dc3": {"all"}} {
		if diff := cmp.Diff(want, S3BucketsOfLocations(locations, dc)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", dc, diff)
		}
	}
}

func TestDeclaredS3BucketsHaveCredentialsOrNot(t *testing.T) {
	t.Parallel()
	withCredentials := bucketWithSecret("with", "used", "one")
	withCredentials.Name = "with"
	without := withCredentials.DeepCopy()
	without.Name, without.Spec.CredentialsSecretRef = "without", nil
	unused := withCredentials.DeepCopy()
	unused.Name, unused.Spec.BucketName = "unused", "other"
	gcs := withCredentials.DeepCopy()
	gcs.Name, gcs.Spec.Provider = "gcs", "gcs"
	declared := DeclaredS3Buckets([]*scyllav1alpha1.ScyllaDBBackupBucket{without, unused, gcs, withCredentials}, []string{"used"})
	if diff := cmp.Diff([]*scyllav1alpha1.ScyllaDBBackupBucket{withCredentials, without}, declared); diff != "" {
		t.Errorf("declared buckets (-want +got):\n%s", diff)
	}
	if !AnyHasCredentials(declared) {
		t.Errorf("expected %v to have credentials", declared)
	}
	if AnyHasCredentials([]*scyllav1alpha1.ScyllaDBBackupBucket{without}) || AnyHasCredentials(nil) {
		t.Error("expected buckets without credentials to have none")
	}
}

func bucketWithSecret(name, bucketName, secret string) *scyllav1alpha1.ScyllaDBBackupBucket {
	return &scyllav1alpha1.ScyllaDBBackupBucket{
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider: scyllav1alpha1.ScyllaDBBackupProviderS3, BucketName: bucketName, Region: "us-east-1",
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "creds", Name: secret},
		},
	}
}

func TestResolveAgentS3Config(t *testing.T) {
	t.Parallel()
	a := bucketWithSecret("a", "bucket-a", "one")
	a.Name = "a"
	b := bucketWithSecret("b", "bucket-b", "two")
	b.Name = "b"
	secrets := map[string]map[string][]byte{
		"one": {"access_key_id": []byte("K1"), "secret_access_key": []byte("S1")},
		"two": {"access_key_id": []byte("K2"), "secret_access_key": []byte("S2")},
		"bad": {"secret_access_key": []byte("S3")},
	}
	get := func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
		if name == "down" {
			return nil, apierrors.NewServiceUnavailable("etcd is down")
		}
		data, ok := secrets[name]
		if !ok || namespace != "creds" {
			return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
		}
		return &corev1.Secret{Data: data}, nil
	}
	withSecret := func(bucket *scyllav1alpha1.ScyllaDBBackupBucket, secret string) *scyllav1alpha1.ScyllaDBBackupBucket {
		c := bucket.DeepCopy()
		c.Spec.CredentialsSecretRef.Name = secret
		return c
	}
	withoutCredentials := func(bucket *scyllav1alpha1.ScyllaDBBackupBucket, name string, modify func(*scyllav1alpha1.ScyllaDBBackupBucket)) *scyllav1alpha1.ScyllaDBBackupBucket {
		c := bucket.DeepCopy()
		c.Name, c.Spec.CredentialsSecretRef = name, nil
		if modify != nil {
			modify(c)
		}
		return c
	}
	ambient := withoutCredentials(b, "ambient", nil)
	k1 := &scyllaagent.S3Config{AccessKeyID: "K1", SecretAccessKey: "S1", Provider: "AWS", Region: "us-east-1"}
	for _, tc := range []struct {
		name     string
		buckets  []*scyllav1alpha1.ScyllaDBBackupBucket
		want     *scyllaagent.S3Config
		wantSpec []string
		wantErr  bool
	}{
		{name: "none"},
		{name: "one", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a}, want: k1},
		{name: "two with the same credentials", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, withSecret(b, "one")}, want: k1},
		{name: "two that disagree", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, b}, wantSpec: []string{`ScyllaDBBackupBuckets "a" and "b"`}},
		{name: "a missing Secret leaves its bucket out", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, withSecret(b, "gone")}, want: k1,
			wantSpec: []string{`Secret "creds/gone" does not exist`}},
		{name: "a missing key leaves its bucket out", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{withSecret(b, "bad"), a}, want: k1,
			wantSpec: []string{`Secret "creds/bad" has no key "access_key_id"`}},
		{name: "an unreadable Secret makes it unknown", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, withSecret(b, "down")}, wantErr: true},
		{name: "a bucket without credentials next to one with them", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, ambient},
			wantSpec: []string{`ScyllaDBBackupBuckets "a" and "ambient", both used by this datacenter's backup tasks, have different credentials: "a" has a credentialsSecretRef and "ambient" has none`}},
		{name: "a bucket without credentials first", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{ambient, a},
			wantSpec: []string{`ScyllaDBBackupBuckets "ambient" and "a", both used by this datacenter's backup tasks, have different credentials: "a" has a credentialsSecretRef and "ambient" has none`}},
		{name: "the same bucket declared with and without credentials", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, withoutCredentials(a, "a-again", nil)},
			wantSpec: []string{`ScyllaDBBackupBuckets "a" and "a-again"`}},
		{name: "a bucket without credentials in another region and at an endpoint", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, withoutCredentials(b, "elsewhere", func(c *scyllav1alpha1.ScyllaDBBackupBucket) {
			c.Spec.Region, c.Spec.Endpoint = "eu-west-1", "https://s3.example.com"
		})}, wantSpec: []string{`ScyllaDBBackupBuckets "a" and "elsewhere"`}},
		{name: "the same bucket declared twice with different credentials", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{a, func() *scyllav1alpha1.ScyllaDBBackupBucket {
			c := withSecret(a, "two")
			c.Name = "a-again"
			return c
		}()}, wantSpec: []string{`ScyllaDBBackupBuckets "a" and "a-again", both used by this datacenter's backup tasks, have different credentials or S3 settings`}},
		{name: "buckets without credentials in different regions ask for no section", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{ambient, withoutCredentials(b, "elsewhere", func(c *scyllav1alpha1.ScyllaDBBackupBucket) {
			c.Spec.Region, c.Spec.Endpoint = "eu-west-1", "https://s3.example.com"
		})}},
		{name: "a missing Secret next to a bucket without credentials leaves both without keys", buckets: []*scyllav1alpha1.ScyllaDBBackupBucket{withSecret(b, "gone"), ambient},
			wantSpec: []string{`Secret "creds/gone" does not exist`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, specErrs, err := ResolveAgentS3Config(t.Context(), tc.buckets, get)
			if (err != nil) != tc.wantErr {
				t.Fatalf("expected an error: %v, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("s3 (-want +got):\n%s", diff)
			}
			joined := errors.Join(specErrs...)
			if len(specErrs) != len(tc.wantSpec) {
				t.Fatalf("expected %d spec errors, got %v", len(tc.wantSpec), joined)
			}
			for _, want := range tc.wantSpec {
				if !strings.Contains(joined.Error(), want) {
					t.Errorf("expected a spec error containing %q, got %v", want, joined)
				}
			}
			if joined != nil && (strings.Contains(joined.Error(), "S1") || strings.Contains(joined.Error(), "S2")) {
				t.Errorf("a spec error quotes a secret: %v", joined)
			}
		})
	}
}
