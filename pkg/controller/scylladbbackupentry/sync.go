package scylladbbackupentry

import (
	"context"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// condition is the reason and message of a condition that is not in its good state.
type condition struct {
	reason  string
	message string
}

// outcome is what a sync found out and did, from which the status is computed.
type outcome struct {
	// unavailable, when set, makes Available False.
	unavailable *condition
	// waiting are the reasons of Progressing True.
	waiting []condition
	// failures are the reasons of Degraded True.
	failures []condition

	clusterDeletedAt *metav1.Time
	purgeAfter       *metav1.Time
	// lastOperation, when set, replaces the entry's lastOperation; its time is set by calculateStatus.
	lastOperation *scyllav1alpha1.ScyllaDBBackupEntryOperation
	// inventory, when set, replaces the entry's objects and bytes.
	inventory *inventoryCounts

	// released reports that the finalizer was removed: the entry is about to go and its status is not written.
	released     bool
	requeueAfter time.Duration
	requeueNow   bool
}

func (o *outcome) fail(reason, format string, args ...any) {
	o.failures = append(o.failures, condition{reason: reason, message: fmt.Sprintf(format, args...)})
}

func (o *outcome) wait(reason, format string, args ...any) {
	o.waiting = append(o.waiting, condition{reason: reason, message: fmt.Sprintf(format, args...)})
}

// sync adds the finalizer to the ScyllaDBBackupEntry named by key, reports whether it can be used, and, once it is
// being deleted, holds it for the grace period and purges or keeps its directory.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	entry, err := c.entries.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaDBBackupEntry is gone", "scyllaDBBackupEntry", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", key, err)
	}

	if !controllerhelpers.HasFinalizer(entry, naming.ScyllaDBBackupEntryFinalizer) {
		if entry.DeletionTimestamp != nil {
			// Deleted before the finalizer went on: no cluster was recorded as using the directory through it.
			return nil
		}
		// The finalizer goes on first, so that the entry can't go away without the controller deciding about its
		// directory. The patch brings the object back through the informer for the next step.
		if _, _, err := controllerhelpers.AddFinalizer(ctx, c.entryPatcher(namespace), entry, naming.ScyllaDBBackupEntryFinalizer); err != nil {
			return fmt.Errorf("can't add finalizer to ScyllaDBBackupEntry %q: %w", key, err)
		}
		return nil
	}

	o, syncErr := c.syncEntry(ctx, entry)
	if o.released {
		return syncErr
	}

	errs := []error{syncErr}
	// A purge may have written the entry already; compare with what it wrote.
	if latest, err := c.entries.Get(namespace, name); err == nil {
		entry = latest
	}
	if err := c.writeStatus(ctx, entry, o); err != nil {
		errs = append(errs, err)
	}

	switch {
	case o.requeueNow:
		c.queue.Add(key)
	case o.requeueAfter > 0:
		c.queue.AddAfter(key, o.requeueAfter)
	}
	return utilerrors.NewAggregate(errs)
}

// syncEntry decides about entry, which has the finalizer.
func (c *Controller) syncEntry(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry) (*outcome, error) {
	o := &outcome{}

	bucket, err := c.bucketLister.Get(entry.Spec.BucketRef)
	switch {
	case apierrors.IsNotFound(err):
		bucket = nil
	case err != nil:
		return o, fmt.Errorf("can't get ScyllaDBBackupBucket %q: %w", entry.Spec.BucketRef, err)
	}

	others, err := c.otherEntriesOfDirectory(entry)
	if err != nil {
		return o, err
	}
	var duplicateOf *scyllav1alpha1.ScyllaDBBackupEntry
	if first := firstEntry(append(others, entry)); first != entry {
		duplicateOf = first
	}

	switch {
	case duplicateOf != nil:
		message := fmt.Sprintf("the directory of ScyllaDB Manager cluster %q in ScyllaDBBackupBucket %q is recorded by the earlier %s; this entry is refused and its directory is never purged through it",
			entry.Spec.ManagerClusterID, entry.Spec.BucketRef, entryRef(duplicateOf))
		o.unavailable = &condition{reason: duplicateEntryReason, message: message}
		o.fail(duplicateEntryReason, "%s", message)
	case bucket == nil:
		message := fmt.Sprintf("ScyllaDBBackupBucket %q does not exist", entry.Spec.BucketRef)
		o.unavailable = &condition{reason: bucketMissingReason, message: message}
		o.wait(bucketMissingReason, "waiting for %s", message)
	case entry.DeletionTimestamp == nil && bucket.Spec.MaxClusters != nil:
		earlier, err := c.countEntriesCreatedBefore(entry)
		if err != nil {
			return o, err
		}
		if maxClusters := *bucket.Spec.MaxClusters; earlier >= int(maxClusters) {
			message := fmt.Sprintf("ScyllaDBBackupBucket %q allows %d ScyllaDBBackupEntries (spec.maxClusters) and %d were created before this one: this entry is over the quota and refused; back up into another bucket or raise the quota (a directory it records is still kept and purged as any other)",
				bucket.Name, maxClusters, earlier)
			o.unavailable = &condition{reason: bucketQuotaExceededReason, message: message}
			o.fail(bucketQuotaExceededReason, "%s", message)
		}
	}

	prefixes, prefixesErr := objectstore.ClusterPrefixes(entry.Spec.ManagerClusterID)
	if prefixesErr != nil {
		message := fmt.Sprintf("spec.managerClusterID names no directory: %v; the entry can't be used, and nothing is ever purged through it: annotate it %q to let it go",
			prefixesErr, naming.ScyllaDBBackupRetentionAnnotation+"="+naming.ScyllaDBBackupRetentionKeep)
		if o.unavailable == nil {
			o.unavailable = &condition{reason: invalidManagerClusterIDReason, message: message}
		}
		o.fail(invalidManagerClusterIDReason, "%s", message)
	}

	retention, retentionErr := parseRetention(entry)
	if retentionErr != nil {
		o.fail(invalidRetentionReason, "%v", retentionErr)
	}

	cluster, clusterErr := c.getCluster(entry)
	if clusterErr != nil {
		o.fail(invalidClusterRefReason, "%v", clusterErr)
	}

	if entry.DeletionTimestamp == nil {
		// In use, or its cluster is gone without the entry being deleted: either way nothing is deleted, and the
		// object store is not called.
		return o, nil
	}

	state := stateOf(cluster, entry.Spec.ClusterRef.UID)
	o.clusterDeletedAt = clusterDeletedAt(entry, cluster, state, c.now())
	if bucket != nil && o.clusterDeletedAt != nil {
		o.purgeAfter = new(purgeAfter(*o.clusterDeletedAt, deletionGracePeriod(bucket)))
	}

	if duplicateOf != nil {
		// The directory is the earlier entry's to keep or purge.
		c.eventRecorder.Eventf(entry, corev1.EventTypeNormal, duplicateReleasedReason,
			"Released without purging: the directory is recorded by the earlier %s", entryRef(duplicateOf))
		return c.release(ctx, entry, o)
	}
	ref := entry.Spec.ClusterRef
	if state == clusterInUse {
		// Recorded whatever else is wrong with the entry: clusterDeletedAt reads it back to start the grace period
		// when the cluster goes, not at the entry's own, earlier, deletion.
		o.fail(clusterInUseReason, "%s %q with UID %q still exists and is not being deleted: its directory is never purged and the entry keeps its finalizer until the cluster is deleted",
			ref.Kind, entry.Namespace+"/"+ref.Name, ref.UID)
		return o, nil
	}
	for _, other := range others {
		if other.DeletionTimestamp != nil {
			continue
		}
		otherCluster, err := c.getCluster(other)
		if err == nil && stateOf(otherCluster, other.Spec.ClusterRef.UID) == clusterInUse {
			// Recorded whatever else is wrong with the entry, as for ClusterInUse: the grace period starts over when
			// the hold ends.
			o.fail(directoryInUseReason, "%s records the same directory for %s %q, which still exists: the directory is not purged while it is in use",
				entryRef(other), other.Spec.ClusterRef.Kind, other.Namespace+"/"+other.Spec.ClusterRef.Name)
			return o, nil
		}
	}
	if wasHeld(entry, directoryInUseReason) {
		// The directory was used by another cluster (one recreated from a manifest that kept this one's ScyllaDB
		// Manager cluster ID) until now, and holds its backups too: they get their grace period from now, as the
		// directory of a cluster deleted now. Written to the status, it is read back from there afterwards.
		o.clusterDeletedAt = new(c.now())
		if bucket != nil {
			o.purgeAfter = new(purgeAfter(*o.clusterDeletedAt, deletionGracePeriod(bucket)))
		}
	}
	if clusterErr != nil || retentionErr != nil {
		return o, nil
	}

	if retention == retentionKeep {
		bucketName := entry.Spec.BucketRef
		if bucket != nil {
			bucketName = bucket.Spec.BucketName
		}
		// Keeping touches nothing: it lets go even an entry whose ID names no directory.
		directory := fmt.Sprintf("the directory of ScyllaDB Manager cluster %q in bucket %q", entry.Spec.ManagerClusterID, bucketName)
		if prefixesErr == nil {
			directory = describeDirectory(prefixes, bucketName)
		}
		c.eventRecorder.Eventf(entry, corev1.EventTypeNormal, directoryKeptReason,
			"Kept as annotated %q: %s of ScyllaDBBackupBucket %q, not purged",
			naming.ScyllaDBBackupRetentionAnnotation+"="+naming.ScyllaDBBackupRetentionKeep, directory, entry.Spec.BucketRef)
		return c.release(ctx, entry, o)
	}
	if prefixesErr != nil {
		// Recorded above: nothing may be purged through this entry.
		return o, nil
	}

	if bucket == nil {
		o.fail(bucketMissingReason, "can't purge the directory: ScyllaDBBackupBucket %q does not exist; the entry keeps its finalizer until it does, or until it is annotated %q",
			entry.Spec.BucketRef, naming.ScyllaDBBackupRetentionAnnotation+"="+naming.ScyllaDBBackupRetentionKeep)
		return o, nil
	}

	now := c.clock()
	if retention != retentionPurgeNow && now.Before(o.purgeAfter.Time) {
		o.wait(gracePeriodReason, "the cluster was deleted at %s; its directory is purged after %s (deletionGracePeriod %s of ScyllaDBBackupBucket %q), unless the entry is annotated %q",
			o.clusterDeletedAt.UTC().Format(time.RFC3339), o.purgeAfter.UTC().Format(time.RFC3339), deletionGracePeriod(bucket), bucket.Name,
			naming.ScyllaDBBackupRetentionAnnotation+"="+naming.ScyllaDBBackupRetentionKeep)
		o.requeueAfter = o.purgeAfter.Sub(now)
		if needsInventory(entry) {
			return c.inventory(ctx, entry, bucket, prefixes, o)
		}
		return o, nil
	}

	return c.purge(ctx, entry, bucket, prefixes, o)
}

// release removes the finalizer of entry, leaving its directory to whatever the caller decided.
func (c *Controller) release(ctx context.Context, entry *scyllav1alpha1.ScyllaDBBackupEntry, o *outcome) (*outcome, error) {
	if _, _, err := controllerhelpers.RemoveFinalizer(ctx, c.entryPatcher(entry.Namespace), entry, naming.ScyllaDBBackupEntryFinalizer); err != nil {
		return o, fmt.Errorf("can't remove finalizer of ScyllaDBBackupEntry %q: %w", klog.KObj(entry), err)
	}
	o.released = true
	return o, nil
}

// otherEntriesOfDirectory returns the entries, in any namespace, that record the same directory as entry.
func (c *Controller) otherEntriesOfDirectory(entry *scyllav1alpha1.ScyllaDBBackupEntry) ([]*scyllav1alpha1.ScyllaDBBackupEntry, error) {
	objs, err := c.entryIndexer.ByIndex(backupstorage.EntryDirectoryIndex, backupstorage.EntryDirectoryKey(entry.Spec.BucketRef, entry.Spec.ManagerClusterID))
	if err != nil {
		return nil, fmt.Errorf("can't look up the entries of the directory of ScyllaDBBackupEntry %q: %w", klog.KObj(entry), err)
	}
	var others []*scyllav1alpha1.ScyllaDBBackupEntry
	for _, obj := range objs {
		other, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
		if !ok || (other.Namespace == entry.Namespace && other.Name == entry.Name) {
			continue
		}
		others = append(others, other)
	}
	return others, nil
}

// countEntriesCreatedBefore returns how many other entries of entry's bucket, being deleted or not, were created
// before it (earlierEntry): the entries within a bucket's spec.maxClusters are the earliest ones.
func (c *Controller) countEntriesCreatedBefore(entry *scyllav1alpha1.ScyllaDBBackupEntry) (int, error) {
	objs, err := c.entryIndexer.ByIndex(backupstorage.EntryBucketRefIndex, entry.Spec.BucketRef)
	if err != nil {
		return 0, fmt.Errorf("can't look up the entries of ScyllaDBBackupBucket %q: %w", entry.Spec.BucketRef, err)
	}
	earlier := 0
	for _, obj := range objs {
		other, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
		if ok && !(other.Namespace == entry.Namespace && other.Name == entry.Name) && earlierEntry(other, entry) {
			earlier++
		}
	}
	return earlier, nil
}

// getCluster returns the object entry's clusterRef names by kind and name, whatever its UID, or nil when there is
// none. An unknown kind is an error.
func (c *Controller) getCluster(entry *scyllav1alpha1.ScyllaDBBackupEntry) (metav1.Object, error) {
	ref := entry.Spec.ClusterRef
	var obj metav1.Object
	var err error
	switch ref.Kind {
	case scyllaDBDatacenterKind:
		var sdc *scyllav1alpha1.ScyllaDBDatacenter
		sdc, err = c.scyllaDBDatacenterLister.ScyllaDBDatacenters(entry.Namespace).Get(ref.Name)
		if err == nil {
			obj = sdc
		}
	case scyllaDBClusterKind:
		var sc *scyllav1alpha1.ScyllaDBCluster
		sc, err = c.scyllaDBClusterLister.ScyllaDBClusters(entry.Namespace).Get(ref.Name)
		if err == nil {
			obj = sc
		}
	default:
		return nil, fmt.Errorf("spec.clusterRef.kind %q is neither %s nor %s: the directory is neither purged nor released", ref.Kind, scyllaDBDatacenterKind, scyllaDBClusterKind)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("can't get %s %q: %w", ref.Kind, entry.Namespace+"/"+ref.Name, err)
	}
	return obj, nil
}

// entryPatcher returns the client that patches ScyllaDBBackupEntries in namespace; what each patch returns is what
// the next sync reads until the informer catches up.
func (c *Controller) entryPatcher(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBBackupEntry] {
	return c.entries.Patcher(c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(namespace))
}
