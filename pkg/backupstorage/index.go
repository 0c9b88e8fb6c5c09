package backupstorage

import (
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"k8s.io/client-go/tools/cache"
)

// EntryBucketRefIndex indexes ScyllaDBBackupEntries by spec.bucketRef: the entries of a bucket, which the bucket,
// entry and task controllers of the manager-controller count and look up on one shared informer.
const EntryBucketRefIndex = "scylla-operator.scylladb.com/scylladb-backup-entry-bucket-ref"

// EntryBucketRefIndexFunc is the index function of EntryBucketRefIndex.
func EntryBucketRefIndexFunc(obj any) ([]string, error) {
	entry, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBBackupEntry", obj)
	}
	return []string{entry.Spec.BucketRef}, nil
}

// AddEntryBucketRefIndex adds EntryBucketRefIndex to informer, a ScyllaDBBackupEntry informer, unless another
// controller sharing it did.
func AddEntryBucketRefIndex(informer cache.SharedIndexInformer) error {
	return controllerhelpers.AddIndexerIfAbsent(informer, EntryBucketRefIndex, EntryBucketRefIndexFunc)
}

// EntryDirectoryIndex indexes ScyllaDBBackupEntries by the directory they record (EntryDirectoryKey), in every
// namespace: the entry controller refuses a second entry of a directory and the task controller finds a cluster's
// entry by its directory, whatever its name, on one shared informer, so that both agree on which entries record it.
// A caller that wants one namespace's entries filters the result.
const EntryDirectoryIndex = "scylla-operator.scylladb.com/scylladb-backup-entry-directory"

// EntryDirectoryKey is the key under which EntryDirectoryIndex holds the entries of the directory managerClusterID
// in the ScyllaDBBackupBucket bucketRef. Neither part can contain a "/" (a DNS subdomain and a UUID).
func EntryDirectoryKey(bucketRef, managerClusterID string) string {
	return bucketRef + "/" + managerClusterID
}

// EntryDirectoryIndexFunc is the index function of EntryDirectoryIndex.
func EntryDirectoryIndexFunc(obj any) ([]string, error) {
	entry, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBBackupEntry", obj)
	}
	return []string{EntryDirectoryKey(entry.Spec.BucketRef, entry.Spec.ManagerClusterID)}, nil
}

// AddEntryDirectoryIndex adds EntryDirectoryIndex to informer, a ScyllaDBBackupEntry informer, unless another
// controller sharing it did.
func AddEntryDirectoryIndex(informer cache.SharedIndexInformer) error {
	return controllerhelpers.AddIndexerIfAbsent(informer, EntryDirectoryIndex, EntryDirectoryIndexFunc)
}
