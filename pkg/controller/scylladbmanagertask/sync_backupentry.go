package scylladbmanagertask

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Index names on the shared informers; the entries of a bucket and of a directory are found through
// backupstorage.EntryBucketRefIndex and backupstorage.EntryDirectoryIndex, which the manager-controller's controllers
// share.
const (
	// backupBucketNameIndex indexes ScyllaDBBackupBuckets by spec.bucketName.
	backupBucketNameIndex = "scylla-operator.scylladb.com/scylladb-backup-bucket-name"
	// taskLocationBucketIndex indexes ScyllaDBManagerTasks by the S3 buckets their backup locations name.
	taskLocationBucketIndex = "scylla-operator.scylladb.com/scylladb-manager-task-location-bucket"
)

func backupBucketNameIndexFunc(obj any) ([]string, error) {
	bucket, ok := obj.(*scyllav1alpha1.ScyllaDBBackupBucket)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBBackupBucket", obj)
	}
	return []string{bucket.Spec.BucketName}, nil
}

func taskLocationBucketIndexFunc(obj any) ([]string, error) {
	task, ok := obj.(*scyllav1alpha1.ScyllaDBManagerTask)
	if !ok {
		return nil, fmt.Errorf("can't index %T: expected a ScyllaDBManagerTask", obj)
	}
	return locationBuckets(task), nil
}

// createdBackupEntryTTL bounds how long a created entry the cache has not shown holds back choosing a name again: an
// entry deleted before the informer saw it is never observed.
const createdBackupEntryTTL = 5 * time.Minute

// createdBackupEntryKey is the key under which createdBackupEntries remembers the entry created in namespace for the
// directory managerClusterID in the ScyllaDBBackupBucket bucketRef.
func createdBackupEntryKey(namespace, bucketRef, managerClusterID string) string {
	return namespace + "/" + backupstorage.EntryDirectoryKey(bucketRef, managerClusterID)
}

// createdBackupEntries remembers the entries this process creates, from just before the create, by their namespace and
// the directory they record (createdBackupEntryKey), until the cache shows them or createdBackupEntryTTL passes. Until then the cache may show the entry that held the plain
// name gone without showing the entry created under the other name, and a sync choosing the name again would create
// a second entry for the directory. A restarted process needs no memory: its cache starts from one consistent list.
type createdBackupEntries struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]createdBackupEntry
}

type createdBackupEntry struct {
	name string
	at   time.Time
}

func newCreatedBackupEntries(now func() time.Time) *createdBackupEntries {
	return &createdBackupEntries{now: now, entries: map[string]createdBackupEntry{}}
}

// reserve remembers the entry named name as created for directory, before it is created, unless one is remembered
// already: two workers (the tasks of one cluster) that both found the directory without an entry would otherwise
// create one each, the second under the plain name that the cache shows freed while the first one's create is in
// flight. It returns the remembered name, which only a caller it equals may create, and how long until it is
// forgotten.
func (e *createdBackupEntries) reserve(directory, name string) (string, time.Duration) {
	record, left, _ := e.lookup(directory, name)
	return record, left
}

// lookup returns the entry remembered for directory and how long until it is forgotten, after forgetting the
// expired ones. With reserve set, a directory without an entry remembered gets one named reserve.
func (e *createdBackupEntries) lookup(directory, reserve string) (string, time.Duration, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	e.pruneLocked(now)
	record, ok := e.entries[directory]
	if !ok {
		if reserve == "" {
			return "", 0, false
		}
		record = createdBackupEntry{name: reserve, at: now}
		e.entries[directory] = record
	}
	return record.name, record.at.Add(createdBackupEntryTTL).Sub(now), true
}

// release forgets the reservation of name for directory, whose create failed, so that the next sync chooses again.
func (e *createdBackupEntries) release(directory, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if record, ok := e.entries[directory]; ok && record.name == name {
		delete(e.entries, directory)
	}
}

// pending returns the name of the entry created for directory that may not be in the cache yet, and how long until
// it is forgotten: a task waiting on it is synced again then, when no event of the entry came.
func (e *createdBackupEntries) pending(directory string) (string, time.Duration, bool) {
	return e.lookup(directory, "")
}

// pruneLocked forgets every expired record, not only the directory read: the entry of a task deleted, or moved to
// another bucket, before the cache showed it is never synced again.
func (e *createdBackupEntries) pruneLocked(now time.Time) {
	for directory, record := range e.entries {
		if now.Sub(record.at) >= createdBackupEntryTTL {
			delete(e.entries, directory)
		}
	}
}

func (e *createdBackupEntries) forget(directory string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.entries, directory)
}

// backupEntryHold is why a backup to one declared bucket can't be scheduled yet.
type backupEntryHold struct {
	reason, message string
	// requeueAfter, when positive, is when the task is to be synced again though no event comes: an entry it awaits
	// may have been deleted before the cache saw it.
	requeueAfter time.Duration
}

// syncBackupEntries makes sure that, for every ScyllaDBBackupBucket task's backup locations name, the entry of
// cluster in that bucket exists before the task is scheduled, creating the missing ones. It returns false, with the
// reason recorded in o, while the task must be held back: an entry was just created and the cache has not seen it, an
// entry of the same name records another directory, or the bucket's quota is full. Locations that name no declared
// bucket do not hold the task. The error is one retrying may fix.
func (c *Controller) syncBackupEntries(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, cluster backupEntryCluster, o *outcome) (bool, error) {
	var failures, waits []backupEntryHold
	var errs []error
	for _, bucketName := range locationBuckets(task) {
		objs, err := c.scyllaDBBackupBucketIndexer.ByIndex(backupBucketNameIndex, bucketName)
		if err != nil {
			return false, fmt.Errorf("can't look up the ScyllaDBBackupBuckets of bucket %q: %w", bucketName, err)
		}
		var buckets []*scyllav1alpha1.ScyllaDBBackupBucket
		for _, obj := range objs {
			if b, ok := obj.(*scyllav1alpha1.ScyllaDBBackupBucket); ok && b.Spec.Provider == scyllav1alpha1.ScyllaDBBackupProviderS3 {
				buckets = append(buckets, b)
			}
		}
		switch len(buckets) {
		case 0:
			continue
		case 1:
		default:
			names := make([]string, 0, len(buckets))
			for _, b := range buckets {
				names = append(names, fmt.Sprintf("%q", b.Name))
			}
			slices.Sort(names)
			failures = append(failures, backupEntryHold{reason: backupBucketAmbiguousReason, message: fmt.Sprintf(
				"ScyllaDBBackupBuckets %s all declare bucket %q; the location can't tell which one backups go to", strings.Join(names, ", "), bucketName)})
			continue
		}

		hold, err := c.syncBackupEntry(ctx, task, cluster, buckets[0])
		if err != nil {
			errs = append(errs, err)
		}
		if hold == nil {
			continue
		}
		if hold.requeueAfter > 0 && (o.requeueAfter <= 0 || hold.requeueAfter < o.requeueAfter) {
			o.requeueAfter = hold.requeueAfter
		}
		if hold.reason == awaitingBackupEntryReason {
			waits = append(waits, *hold)
		} else {
			failures = append(failures, *hold)
		}
	}

	switch {
	case len(failures) != 0:
		o.failure = joinHolds(failures)
	case len(waits) != 0:
		o.waiting = joinHolds(waits)
	}
	if len(errs) != 0 {
		return false, errs[0]
	}
	return len(failures) == 0 && len(waits) == 0, nil
}

// syncBackupEntry makes sure the entry of cluster in bucket exists and records cluster's directory. It returns why the
// task is held back, or nil when the entry is there; the error is one retrying may fix.
func (c *Controller) syncBackupEntry(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, cluster backupEntryCluster, bucket *scyllav1alpha1.ScyllaDBBackupBucket) (*backupEntryHold, error) {
	// The entry is found by the directory it records, not by name: the entry of a cluster created again under the name
	// of a deleted one bears another name (backupEntryName), and an entry the user made may bear any. The index spans
	// every namespace; only an entry in the task's namespace serves it.
	objs, err := c.scyllaDBBackupEntryIndexer.ByIndex(backupstorage.EntryDirectoryIndex, backupstorage.EntryDirectoryKey(bucket.Name, cluster.clusterID))
	if err != nil {
		return nil, fmt.Errorf("can't look up the ScyllaDBBackupEntries of ScyllaDB Manager cluster %q in ScyllaDBBackupBucket %q: %w", cluster.clusterID, bucket.Name, err)
	}
	directory := createdBackupEntryKey(task.Namespace, bucket.Name, cluster.clusterID)
	for _, obj := range objs {
		// An entry being deleted while its cluster exists still records the directory: the entry controller purges
		// nothing whose cluster exists.
		if entry, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry); ok && entry.Namespace == task.Namespace && backupEntryRecords(entry, cluster, bucket.Name) {
			c.createdBackupEntries.forget(directory)
			return nil, nil
		}
	}

	entries := c.scyllaDBBackupEntryLister.ScyllaDBBackupEntries(task.Namespace)
	if name, remaining, ok := c.createdBackupEntries.pending(directory); ok {
		switch _, err := entries.Get(name); {
		case apierrors.IsNotFound(err):
			// Created by an earlier sync and not in the cache yet, which may already show the entry that held the plain
			// name gone: choosing a name again would make a second entry for the directory.
			return awaitBackupEntry(ctx, task, bucket, task.Namespace, name, remaining), nil
		case err != nil:
			return nil, fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", klog.KRef(task.Namespace, name), err)
		}
		// Observed, yet it does not record the directory: another actor took the name first; choose again.
		c.createdBackupEntries.forget(directory)
	}

	name, hold, err := backupEntryName(entries, cluster, bucket)
	if err != nil || hold != nil {
		return hold, err
	}
	required := makeBackupEntry(task.Namespace, name, cluster, bucket)

	if max := bucket.Spec.MaxClusters; max != nil {
		// Entries of deleted clusters count until their directories are purged: they still use the bucket, the entry
		// of an earlier cluster object of the same name too.
		using, err := c.scyllaDBBackupEntryIndexer.ByIndex(backupstorage.EntryBucketRefIndex, bucket.Name)
		if err != nil {
			return nil, fmt.Errorf("can't count the ScyllaDBBackupEntries of ScyllaDBBackupBucket %q: %w", bucket.Name, err)
		}
		if int64(len(using)) >= int64(*max) {
			return &backupEntryHold{reason: backupBucketQuotaFullReason, message: fmt.Sprintf(
				"ScyllaDBBackupBucket %q is full: %d ScyllaDBBackupEntries use it and spec.maxClusters is %d, so ScyllaDBBackupEntry %q can't be created; backups to bucket %q wait until an entry is gone or the quota is raised",
				bucket.Name, len(using), *max, klog.KObj(required), bucket.Spec.BucketName)}, nil
		}
	}

	// Reserved before the create: another worker that finds the directory without an entry meanwhile waits for this
	// one instead of choosing a name of its own.
	reserved, remaining := c.createdBackupEntries.reserve(directory, required.Name)
	if reserved != required.Name {
		return awaitBackupEntry(ctx, task, bucket, task.Namespace, reserved, remaining), nil
	}
	_, _, err = resourceapply.Apply(ctx, c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(task.Namespace), entries, c.eventRecorder, required, resourceapply.ApplyOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		c.createdBackupEntries.release(directory, required.Name)
		return &backupEntryHold{reason: backupEntryErrorReason, message: fmt.Sprintf("can't create ScyllaDBBackupEntry %q: %v", klog.KObj(required), err)}, err
	}
	// Created now, or by the previous sync before the cache saw it: its add event brings the task back.
	return awaitBackupEntry(ctx, task, bucket, required.Namespace, required.Name, remaining), nil
}

// awaitBackupEntry returns the hold of a task waiting for the entry named name to reach the cache; it is synced again
// after requeueAfter, when the entry is forgotten, should the entry be deleted before the cache saw it.
func awaitBackupEntry(ctx context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, bucket *scyllav1alpha1.ScyllaDBBackupBucket, namespace, name string, requeueAfter time.Duration) *backupEntryHold {
	klog.FromContext(ctx).V(2).Info("Waiting for the ScyllaDBBackupEntry to reach the cache", "scyllaDBManagerTask", klog.KObj(task), "scyllaDBBackupEntry", klog.KRef(namespace, name), "requeueAfter", requeueAfter)
	return &backupEntryHold{
		reason:       awaitingBackupEntryReason,
		message:      fmt.Sprintf("waiting for ScyllaDBBackupEntry %q of bucket %q to be observed", klog.KRef(namespace, name), bucket.Spec.BucketName),
		requeueAfter: requeueAfter,
	}
}

// backupEntryName returns the name of the entry to create for cluster, which no entry records yet, in bucket: the
// plain one (naming.ScyllaDBBackupEntryName), which every cluster object that is the first of its name gets and which
// existing entries bear, or, when the entry of an earlier cluster object of the same name holds it
// (earlierIncarnationEntry), the one that hashes the cluster's ScyllaDB Manager cluster ID too
// (naming.ScyllaDBBackupEntryNameOfIncarnation). It returns a hold when the name is held by an entry that records
// another directory and is not such an earlier entry: a real conflict, which the user resolves.
func backupEntryName(entries scyllav1alpha1listers.ScyllaDBBackupEntryNamespaceLister, cluster backupEntryCluster, bucket *scyllav1alpha1.ScyllaDBBackupBucket) (string, *backupEntryHold, error) {
	name := naming.ScyllaDBBackupEntryName(cluster.kind, cluster.name, bucket.Name)
	held, err := entries.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return name, nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", name, err)
	case earlierIncarnationEntry(held, cluster):
	default:
		return "", backupEntryConflict(held, cluster, bucket), nil
	}

	name = naming.ScyllaDBBackupEntryNameOfIncarnation(cluster.kind, cluster.name, bucket.Name, cluster.clusterID)
	held, err = entries.Get(name)
	switch {
	case apierrors.IsNotFound(err):
		return name, nil, nil
	case err != nil:
		return "", nil, fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", name, err)
	}
	// The directory index found no entry recording the directory, so this one records another.
	return "", backupEntryConflict(held, cluster, bucket), nil
}

// earlierIncarnationEntry tells whether entry, which bears the plain name of cluster's entry, records the directory of
// an earlier cluster object, so that cluster's entry takes the other name: it records another ScyllaDB Manager cluster
// (never two entries for one directory), and it is being deleted (its directory waits out the grace period) or it
// references an object of cluster's kind and name with another UID, which is gone since cluster now bears the name
// (the garbage collector deletes its entry soon). An entry that records another directory and references another
// live object, or cluster itself, is a conflict.
func earlierIncarnationEntry(entry *scyllav1alpha1.ScyllaDBBackupEntry, cluster backupEntryCluster) bool {
	if entry.Spec.ManagerClusterID == cluster.clusterID {
		return false
	}
	if entry.DeletionTimestamp != nil {
		return true
	}
	ref := entry.Spec.ClusterRef
	return ref.Kind == cluster.kind && ref.Name == cluster.name && ref.UID != cluster.uid
}

func backupEntryConflict(existing *scyllav1alpha1.ScyllaDBBackupEntry, cluster backupEntryCluster, bucket *scyllav1alpha1.ScyllaDBBackupBucket) *backupEntryHold {
	return &backupEntryHold{reason: backupEntryConflictReason, message: fmt.Sprintf(
		"ScyllaDBBackupEntry %q records the directory of %s %q (UID %q, ScyllaDB Manager cluster %q) in ScyllaDBBackupBucket %q, not of this %s (UID %q, ScyllaDB Manager cluster %q) in %q; backups to bucket %q wait until it is gone (annotate it %s or %s to release it before its grace period ends)",
		klog.KObj(existing), existing.Spec.ClusterRef.Kind, existing.Spec.ClusterRef.Name, existing.Spec.ClusterRef.UID, existing.Spec.ManagerClusterID, existing.Spec.BucketRef,
		cluster.kind, cluster.uid, cluster.clusterID, bucket.Name, bucket.Spec.BucketName,
		retentionAnnotation(naming.ScyllaDBBackupRetentionKeep), retentionAnnotation(naming.ScyllaDBBackupRetentionPurgeNow))}
}

func retentionAnnotation(value string) string {
	return fmt.Sprintf("%s=%s", naming.ScyllaDBBackupRetentionAnnotation, value)
}

// joinHolds merges holds into one condition: their distinct reasons joined by commas, their messages by "; ".
func joinHolds(holds []backupEntryHold) *metav1.Condition {
	var reasons, messages []string
	for _, h := range holds {
		if !slices.Contains(reasons, h.reason) {
			reasons = append(reasons, h.reason)
		}
		messages = append(messages, h.message)
	}
	return &metav1.Condition{Reason: strings.Join(reasons, ","), Message: strings.Join(messages, "; ")}
}

// backupBucketsHandlerFuncs enqueue the ScyllaDBManagerTasks whose locations name the bucket of a
// ScyllaDBBackupBucket when it is declared, changes its spec or goes away. Status updates and resyncs enqueue
// nothing: the tasks' own resync covers them.
func (c *Controller) backupBucketsHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueue := func(obj any) {
		bucket, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupBucket](obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.enqueueTasksOfBucket(bucket.Spec.BucketName)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: enqueue,
		UpdateFunc: func(oldObj, newObj any) {
			oldBucket, oldOK := oldObj.(*scyllav1alpha1.ScyllaDBBackupBucket)
			newBucket, newOK := newObj.(*scyllav1alpha1.ScyllaDBBackupBucket)
			if oldOK && newOK && (oldBucket.ResourceVersion == newBucket.ResourceVersion || oldBucket.Generation == newBucket.Generation) {
				return
			}
			enqueue(newObj)
		},
		DeleteFunc: enqueue,
	}
}

// backupEntriesHandlerFuncs enqueue the ScyllaDBManagerTasks of the cluster of a ScyllaDBBackupEntry when it appears,
// goes away or starts being deleted, and, when it goes away, every task backing up to its bucket, whose quota it
// freed. Status updates and resyncs enqueue nothing.
func (c *Controller) backupEntriesHandlerFuncs() cache.ResourceEventHandlerFuncs {
	enqueueCluster := func(entry *scyllav1alpha1.ScyllaDBBackupEntry) {
		ref := entry.Spec.ClusterRef
		c.enqueueTasksOfCluster(entry.Namespace, ref.Kind, ref.Name)
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			entry, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupEntry](obj)
			if err != nil {
				utilruntime.HandleError(err)
				return
			}
			enqueueCluster(entry)
		},
		UpdateFunc: func(oldObj, newObj any) {
			oldEntry, oldOK := oldObj.(*scyllav1alpha1.ScyllaDBBackupEntry)
			newEntry, newOK := newObj.(*scyllav1alpha1.ScyllaDBBackupEntry)
			if !oldOK || !newOK || oldEntry.ResourceVersion == newEntry.ResourceVersion ||
				(oldEntry.DeletionTimestamp == nil) == (newEntry.DeletionTimestamp == nil) {
				return
			}
			enqueueCluster(newEntry)
		},
		DeleteFunc: func(obj any) {
			entry, err := controllerhelpers.ObjectFromDeleteEvent[*scyllav1alpha1.ScyllaDBBackupEntry](obj)
			if err != nil {
				utilruntime.HandleError(err)
				return
			}
			enqueueCluster(entry)
			if bucket, err := c.scyllaDBBackupBucketLister.Get(entry.Spec.BucketRef); err == nil {
				c.enqueueTasksOfBucket(bucket.Spec.BucketName)
			}
		},
	}
}

func (c *Controller) enqueueTasksOfBucket(bucketName string) {
	tasks, err := c.scyllaDBManagerTaskIndexer.ByIndex(taskLocationBucketIndex, bucketName)
	if err != nil {
		klog.Background().Error(err, "Can't look up the ScyllaDBManagerTasks of a bucket", "bucket", bucketName)
		return
	}
	for _, task := range tasks {
		c.handlers.Enqueue(task)
	}
}
