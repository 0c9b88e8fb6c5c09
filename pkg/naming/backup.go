package naming

import (
	"strings"
)

// Names of the shared backup storage (ScyllaDBBackupBucket and ScyllaDBBackupEntry, design/backup-storage.md).
const (
	// ScyllaDBBackupEntryFinalizer on a ScyllaDBBackupEntry keeps it, after its cluster is deleted, until the
	// cluster's directory in the bucket is purged or kept on purpose.
	ScyllaDBBackupEntryFinalizer = "scylla-operator.scylladb.com/scylladb-backup-entry"

	// ScyllaDBBackupRetentionAnnotation on a ScyllaDBBackupEntry overrides the bucket's deletion grace period for the
	// entry's directory: ScyllaDBBackupRetentionKeep or ScyllaDBBackupRetentionPurgeNow.
	ScyllaDBBackupRetentionAnnotation = "scylla-operator.scylladb.com/scylladb-backup-retention"
	// ScyllaDBBackupRetentionKeep keeps the directory forever: the finalizer is removed without deleting anything.
	ScyllaDBBackupRetentionKeep = "keep"
	// ScyllaDBBackupRetentionPurgeNow purges the directory of a deleted cluster without waiting for the rest of the
	// grace period.
	ScyllaDBBackupRetentionPurgeNow = "purge-now"

	// ScyllaDBBackupBucketAccessKeyIDKey is the key of the S3 access key ID in the Secret a ScyllaDBBackupBucket's
	// spec.credentialsSecretRef names.
	ScyllaDBBackupBucketAccessKeyIDKey = "access_key_id"
	// ScyllaDBBackupBucketSecretAccessKeyKey is the key of the S3 secret access key in the same Secret.
	ScyllaDBBackupBucketSecretAccessKeyKey = "secret_access_key"
)

// ScyllaDBBackupEntryName returns the name of the ScyllaDBBackupEntry of the cluster object of clusterKind
// (ScyllaDBDatacenter or ScyllaDBCluster) and clusterName in the ScyllaDBBackupBucket named bucketName (its object
// name, which is unique, unlike spec.bucketName): "<cluster>-<bucket>-<hash5(kind, cluster, bucket)>", dots turned into dashes and the front
// truncated so that the whole is a DNS label (usable as a label value). The hash covers the kind and the exact
// names, so that a ScyllaDBCluster and a ScyllaDBDatacenter of the same name, names that differ only in their
// dots, and splits of the same text into cluster and bucket get distinct entries.
func ScyllaDBBackupEntryName(clusterKind, clusterName, bucketName string) string {
	base := strings.ReplaceAll(strings.ToLower(clusterName+"-"+bucketName), ".", "-")
	return hashedName(trimNameEnd(base), dns1123LabelMaxLength, clusterKind, clusterName, bucketName)
}

// ScyllaDBBackupEntryNameOfIncarnation returns the name of the ScyllaDBBackupEntry of the cluster object of
// clusterKind and clusterName in the ScyllaDBBackupBucket named bucketName when ScyllaDBBackupEntryName is held by the
// entry of an earlier object of the same name (deleted and created again, so another ScyllaDB Manager cluster ID and
// another directory), whose directory waits out its grace period: "<cluster>-<bucket>-<hash5(kind, cluster, bucket,
// managerClusterID)>", bounded as ScyllaDBBackupEntryName is. It hashes managerClusterID too, so that it is the same
// on every retry of one incarnation and differs between incarnations.
func ScyllaDBBackupEntryNameOfIncarnation(clusterKind, clusterName, bucketName, managerClusterID string) string {
	base := strings.ReplaceAll(strings.ToLower(clusterName+"-"+bucketName), ".", "-")
	return hashedName(trimNameEnd(base), dns1123LabelMaxLength, clusterKind, clusterName, bucketName, managerClusterID)
}

// ScyllaDBBackupPurgeCursorAnnotation on a ScyllaDBBackupEntry holds the last key a purge of its directory went past,
// so that a purge interrupted by a failure or a restart resumes there instead of listing the directory from the start.
const ScyllaDBBackupPurgeCursorAnnotation = "internal.scylla-operator.scylladb.com/scylladb-backup-purge-cursor"

// ScyllaDBBackupInventoryCursorAnnotation on a ScyllaDBBackupEntry holds the last key an inventory of its directory
// counted with the counts up to it (JSON), so that an inventory spread over several syncs, or interrupted by a
// restart, resumes there. It is removed when the inventory ends.
const ScyllaDBBackupInventoryCursorAnnotation = "internal.scylla-operator.scylladb.com/scylladb-backup-inventory-cursor"
