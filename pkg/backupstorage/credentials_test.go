package backupstorage

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

func TestStoreConfig(t *testing.T) {
	t.Parallel()
	withRef := &scyllav1alpha1.ScyllaDBBackupBucket{Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
		Endpoint: "http://127.0.0.1:7070", Region: "us-east-1",
		CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: "creds", Name: "s3"},
	}}
	for _, tc := range []struct {
		name        string
		bucket      *scyllav1alpha1.ScyllaDBBackupBucket
		data        map[string][]byte
		want        objectstore.Config
		wantMissing []string
	}{
		{
			name:   "no credentials Secret: the caller's own role",
			bucket: &scyllav1alpha1.ScyllaDBBackupBucket{Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{Region: "eu-west-1"}},
			data:   map[string][]byte{"access_key_id": []byte("ignored")},
			want:   objectstore.Config{Region: "eu-west-1"},
		},
		{
			name:   "both keys, white space trimmed",
			bucket: withRef,
			data:   map[string][]byte{"access_key_id": []byte("AKID\n"), "secret_access_key": []byte(" s3cr3t ")},
			want:   objectstore.Config{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1", AccessKeyID: "AKID", SecretAccessKey: "s3cr3t"},
		},
		{
			name:        "an empty and a missing key",
			bucket:      withRef,
			data:        map[string][]byte{"access_key_id": []byte("  ")},
			want:        objectstore.Config{Endpoint: "http://127.0.0.1:7070", Region: "us-east-1"},
			wantMissing: []string{"access_key_id", "secret_access_key"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, missing := StoreConfig(tc.bucket, tc.data)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("missing keys (-want +got):\n%s", diff)
			}
		})
	}
}
