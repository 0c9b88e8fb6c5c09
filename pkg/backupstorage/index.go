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
