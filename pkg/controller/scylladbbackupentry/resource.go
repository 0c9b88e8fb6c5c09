package scylladbbackupentry

import (
	"fmt"
	"slices"
	"strings"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// defaultDeletionGracePeriod is the grace period of a bucket that does not set spec.deletionGracePeriod, the API's
// default.
const defaultDeletionGracePeriod = 720 * time.Hour

// Names of the entry informer's indexes; entries are found by bucket through backupstorage.EntryBucketRefIndex and by
// the directory they record through backupstorage.EntryDirectoryIndex, which the task controller shares.
const (
	// clusterIndex indexes entries by the cluster object they reference: namespace, kind and name.
	clusterIndex = "scylladbbackupentry-cluster"
)

// clusterKey is the key under which clusterIndex holds the entries that reference the cluster object of kind and
// name in namespace.
func clusterKey(namespace, kind, name string) string {
	return namespace + "/" + kind + "/" + name
}

func clusterIndexFunc(obj any) ([]string, error) {
	entry, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBBackupEntry", obj)
	}
	ref := entry.Spec.ClusterRef
	return []string{clusterKey(entry.Namespace, ref.Kind, ref.Name)}, nil
}

// retention is what the retention annotation of an entry asks for.
type retention int

const (
	// retentionGracePeriod: no annotation, the bucket's grace period applies.
	retentionGracePeriod retention = iota
	retentionKeep
	retentionPurgeNow
)

// parseRetention reads the retention annotation of entry. An unknown value is an error naming the annotation and
// the values it may take; the entry's directory is then neither purged nor let go.
func parseRetention(entry *scyllav1alpha1.ScyllaDBBackupEntry) (retention, error) {
	value, ok := entry.Annotations[naming.ScyllaDBBackupRetentionAnnotation]
	switch {
	case !ok || len(value) == 0:
		return retentionGracePeriod, nil
	case value == naming.ScyllaDBBackupRetentionKeep:
		return retentionKeep, nil
	case value == naming.ScyllaDBBackupRetentionPurgeNow:
		return retentionPurgeNow, nil
	}
	return retentionGracePeriod, fmt.Errorf("annotation %q has value %q; allowed values are %q, %q, or empty for the bucket's deletion grace period; the directory is neither purged nor released until it is fixed",
		naming.ScyllaDBBackupRetentionAnnotation, value, naming.ScyllaDBBackupRetentionKeep, naming.ScyllaDBBackupRetentionPurgeNow)
}

// deletionGracePeriod returns how long bucket keeps the directory of a deleted cluster.
func deletionGracePeriod(bucket *scyllav1alpha1.ScyllaDBBackupBucket) time.Duration {
	if bucket.Spec.DeletionGracePeriod == nil || bucket.Spec.DeletionGracePeriod.Duration < 0 {
		return defaultDeletionGracePeriod
	}
	return bucket.Spec.DeletionGracePeriod.Duration
}

// purgeAfter returns when the directory of a cluster deleted at deletedAt may be purged: deletedAt plus the grace
// period, rounded up to the second the API keeps, so that the time read back from the status is never earlier and a
// restart computes the same.
func purgeAfter(deletedAt metav1.Time, gracePeriod time.Duration) metav1.Time {
	t := deletedAt.Add(gracePeriod)
	if truncated := t.Truncate(time.Second); !truncated.Equal(t) {
		t = truncated.Add(time.Second)
	}
	return metav1.NewTime(t.UTC())
}

// earlierEntry reports whether a was created before b: by creationTimestamp, then by namespace and name, so that
// every controller instance and every sync picks the same one among entries of the same directory.
func earlierEntry(a, b *scyllav1alpha1.ScyllaDBBackupEntry) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return a.CreationTimestamp.Before(&b.CreationTimestamp)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// firstEntry returns the entry among entries that owns their directory: the earliest created (earlierEntry).
func firstEntry(entries []*scyllav1alpha1.ScyllaDBBackupEntry) *scyllav1alpha1.ScyllaDBBackupEntry {
	if len(entries) == 0 {
		return nil
	}
	sorted := slices.Clone(entries)
	slices.SortFunc(sorted, func(a, b *scyllav1alpha1.ScyllaDBBackupEntry) int {
		switch {
		case earlierEntry(a, b):
			return -1
		case earlierEntry(b, a):
			return 1
		}
		return 0
	})
	return sorted[0]
}

// clusterState is what the controller knows of the cluster object an entry references.
type clusterState int

const (
	// clusterGone: no object of the kind and name with the referenced UID exists.
	clusterGone clusterState = iota
	// clusterInUse: the object exists with the referenced UID and is not being deleted.
	clusterInUse
	// clusterDeleting: the object exists with the referenced UID and is being deleted.
	clusterDeleting
)

// stateOf returns the state of the referenced cluster given the object found under its name (nil when none).
func stateOf(obj metav1.Object, uid types.UID) clusterState {
	switch {
	case obj == nil || obj.GetUID() != uid:
		return clusterGone
	case obj.GetDeletionTimestamp() != nil:
		return clusterDeleting
	}
	return clusterInUse
}

// clusterDeletedAt returns when the grace period of the directory of entry, which is being deleted, starts: nil while
// its cluster (cluster, in state) is in use, and otherwise the entry's deletion timestamp, which garbage collection
// sets when the cluster goes. An entry deleted while its cluster was still in use (by hand, by mistake) is held until
// the cluster goes, and its grace period starts then, not at the entry's old deletion timestamp: the time is taken
// from the cluster's deletion timestamp, or now when the cluster is already gone, and is kept in the status, so that
// later syncs and restarts read it back rather than compute it again.
func clusterDeletedAt(entry *scyllav1alpha1.ScyllaDBBackupEntry, cluster metav1.Object, state clusterState, now metav1.Time) *metav1.Time {
	if state == clusterInUse {
		return nil
	}
	deletedAt := entry.DeletionTimestamp.DeepCopy()
	recorded := entry.Status.ClusterDeletedAt
	switch {
	case recorded != nil:
		if recorded.After(deletedAt.Time) {
			deletedAt = recorded.DeepCopy()
		}
	case wasHeld(entry, clusterInUseReason):
		deletedAt = now.DeepCopy()
		if state == clusterDeleting {
			if t := cluster.GetDeletionTimestamp(); t != nil && t.Before(&now) && t.After(entry.DeletionTimestamp.Time) {
				deletedAt = t.DeepCopy()
			}
		}
	}
	return deletedAt
}

// wasHeld reports whether the status the controller last wrote says that entry was held for reason: because its
// cluster (clusterInUseReason), or another entry's cluster of the same directory (directoryInUseReason), was in use.
func wasHeld(entry *scyllav1alpha1.ScyllaDBBackupEntry, reason string) bool {
	for _, c := range entry.Status.Conditions {
		if c.Type == controllerhelpers.DegradedCondition && c.Status == metav1.ConditionTrue && slices.Contains(strings.Split(c.Reason, ","), reason) {
			return true
		}
	}
	return false
}

// entryRef names an entry in messages.
func entryRef(entry *scyllav1alpha1.ScyllaDBBackupEntry) string {
	return fmt.Sprintf("ScyllaDBBackupEntry %q", entry.Namespace+"/"+entry.Name)
}

// describeDirectory names the prefixes of the directory in messages and events.
func describeDirectory(prefixes []string, bucket string) string {
	quoted := make([]string, 0, len(prefixes))
	for _, p := range prefixes {
		quoted = append(quoted, fmt.Sprintf("%q", p))
	}
	return fmt.Sprintf("%s in bucket %q", strings.Join(quoted, ", "), bucket)
}
