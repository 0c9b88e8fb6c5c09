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
