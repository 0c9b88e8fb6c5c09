// Package backupstorage holds what the controllers of shared backup storage (ScyllaDBBackupBucket,
// ScyllaDBBackupEntry) and the operator, which hands a bucket's credentials to the ScyllaDB Manager agents, read the
// same way: how a declared bucket is reached.
package backupstorage

import (
	"bytes"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
)

// CredentialKeys are the keys of a bucket's credentials Secret (spec.credentialsSecretRef), in the order they are
// reported missing.
var CredentialKeys = []string{naming.ScyllaDBBackupBucketAccessKeyIDKey, naming.ScyllaDBBackupBucketSecretAccessKeyKey}

// Credentials returns the access key ID and secret access key of the data of a bucket's credentials Secret, without
// surrounding white space, and the keys of CredentialKeys that are missing or empty.
func Credentials(data map[string][]byte) (accessKeyID, secretAccessKey string, missing []string) {
	values := make([]string, len(CredentialKeys))
	for i, key := range CredentialKeys {
		values[i] = string(bytes.TrimSpace(data[key]))
		if len(values[i]) == 0 {
			missing = append(missing, key)
		}
	}
	return values[0], values[1], missing
}

// StoreConfig returns how to reach bucket's store: its endpoint and region, and the credentials of secretData, the
// data of its credentials Secret (nil when it has none: the caller's own role is used), with the keys that are
// missing from it.
func StoreConfig(bucket *scyllav1alpha1.ScyllaDBBackupBucket, secretData map[string][]byte) (objectstore.Config, []string) {
	cfg := objectstore.Config{Endpoint: bucket.Spec.Endpoint, Region: bucket.Spec.Region}
	if bucket.Spec.CredentialsSecretRef == nil {
		return cfg, nil
	}
	var missing []string
	cfg.AccessKeyID, cfg.SecretAccessKey, missing = Credentials(secretData)
	return cfg, missing
}
