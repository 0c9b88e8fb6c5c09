package scylladbmanagertask

import (
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// locationBuckets returns the distinct names of the S3 buckets the backup locations of task name, sorted; nil for a
// task that is not a backup. A location reads "[<dc>:]<provider>:<bucket>", as ScyllaDB Manager parses it; locations
// of other providers, and malformed ones, which ScyllaDB Manager rejects, name no bucket.
func locationBuckets(task *scyllav1alpha1.ScyllaDBManagerTask) []string {
	if task.Spec.Type != scyllav1alpha1.ScyllaDBManagerTaskTypeBackup || task.Spec.Backup == nil {
		return nil
	}
	var buckets []string
	for _, location := range task.Spec.Backup.Location {
		bucket, ok := s3LocationBucket(location)
		if ok && !slices.Contains(buckets, bucket) {
			buckets = append(buckets, bucket)
		}
	}
	slices.Sort(buckets)
	return buckets
}

// s3LocationBucket returns the bucket of an S3 backup location "[<dc>:]s3:<bucket>".
func s3LocationBucket(location string) (string, bool) {
	parts := strings.Split(location, ":")
	switch {
	case len(parts) == 2 && parts[0] == string(scyllav1alpha1.ScyllaDBBackupProviderS3) && len(parts[1]) != 0:
		return parts[1], true
	case len(parts) == 3 && len(parts[0]) != 0 && parts[1] == string(scyllav1alpha1.ScyllaDBBackupProviderS3) && len(parts[2]) != 0:
		return parts[2], true
	}
	return "", false
}

// backupEntryCluster is the ScyllaDB cluster object whose directory a ScyllaDBBackupEntry records.
type backupEntryCluster struct {
	kind      string
	name      string
	uid       types.UID
	clusterID string
}

// makeBackupEntry returns the ScyllaDBBackupEntry named name, in namespace, of cluster in bucket. Its owner reference
// lets garbage collection delete it with the cluster object, without blocking the cluster's deletion and without making
// the cluster its controller: the entry outlives the task, and its own finalizer keeps it for the grace period. The
// entry is created with that finalizer: backups go to the directory as soon as the entry exists, and an entry
// deleted with its cluster before the entry controller got to adding it would go with nothing recorded, its
// directory left behind in the bucket.
func makeBackupEntry(namespace, name string, cluster backupEntryCluster, bucket *scyllav1alpha1.ScyllaDBBackupBucket) *scyllav1alpha1.ScyllaDBBackupEntry {
	return &scyllav1alpha1.ScyllaDBBackupEntry{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:  namespace,
			Name:       name,
			Labels:     map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
			Finalizers: []string{naming.ScyllaDBBackupEntryFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         scyllav1alpha1.SchemeGroupVersion.String(),
				Kind:               cluster.kind,
				Name:               cluster.name,
				UID:                cluster.uid,
				Controller:         new(false),
				BlockOwnerDeletion: new(false),
			}},
		},
		Spec: scyllav1alpha1.ScyllaDBBackupEntrySpec{
			BucketRef: bucket.Name,
			ClusterRef: scyllav1alpha1.ScyllaDBBackupEntryClusterReference{
				Kind: cluster.kind,
				Name: cluster.name,
				UID:  cluster.uid,
			},
			ManagerClusterID: cluster.clusterID,
		},
	}
}

// backupEntryRecords tells whether entry records cluster's directory in the bucket named bucketRef.
func backupEntryRecords(entry *scyllav1alpha1.ScyllaDBBackupEntry, cluster backupEntryCluster, bucketRef string) bool {
	return entry.Spec.BucketRef == bucketRef &&
		entry.Spec.ClusterRef.Kind == cluster.kind &&
		entry.Spec.ClusterRef.Name == cluster.name &&
		entry.Spec.ClusterRef.UID == cluster.uid &&
		entry.Spec.ManagerClusterID == cluster.clusterID
}
