package scylladbmanagertask

import (
	"context"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
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

// Index names on the shared informers; the entries of a bucket are found through backupstorage.EntryBucketRefIndex,
// which the manager-controller's controllers share.
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

// backupEntryHold is why a backup to one declared bucket can't be scheduled yet.
type backupEntryHold struct {
	reason, message string
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
			failures = append(failures, backupEntryHold{backupBucketAmbiguousReason, fmt.Sprintf(
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
	required := makeBackupEntry(task.Namespace, cluster, bucket)
	entries := c.scyllaDBBackupEntryLister.ScyllaDBBackupEntries(task.Namespace)

	existing, err := entries.Get(required.Name)
	switch {
	case err == nil:
		if !backupEntryRecords(existing, cluster, bucket.Name) {
			return &backupEntryHold{backupEntryConflictReason, fmt.Sprintf(
				"ScyllaDBBackupEntry %q records the directory of %s %q (UID %q, ScyllaDB Manager cluster %q) in ScyllaDBBackupBucket %q, not of this %s (UID %q, ScyllaDB Manager cluster %q) in %q; backups to bucket %q wait until it is gone (annotate it %s or %s to release it before its grace period ends)",
				klog.KObj(existing), existing.Spec.ClusterRef.Kind, existing.Spec.ClusterRef.Name, existing.Spec.ClusterRef.UID, existing.Spec.ManagerClusterID, existing.Spec.BucketRef,
				cluster.kind, cluster.uid, cluster.clusterID, bucket.Name, bucket.Spec.BucketName,
				retentionAnnotation(naming.ScyllaDBBackupRetentionKeep), retentionAnnotation(naming.ScyllaDBBackupRetentionPurgeNow))}, nil
		}
		// An entry being deleted while its cluster exists still records the directory: the entry controller purges
		// nothing whose cluster exists.
		return nil, nil
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("can't get ScyllaDBBackupEntry %q: %w", klog.KObj(required), err)
	}

	if max := bucket.Spec.MaxClusters; max != nil {
		// Entries of deleted clusters count until their directories are purged: they still use the bucket.
		using, err := c.scyllaDBBackupEntryIndexer.ByIndex(backupstorage.EntryBucketRefIndex, bucket.Name)
		if err != nil {
			return nil, fmt.Errorf("can't count the ScyllaDBBackupEntries of ScyllaDBBackupBucket %q: %w", bucket.Name, err)
		}
		if int64(len(using)) >= int64(*max) {
			return &backupEntryHold{backupBucketQuotaFullReason, fmt.Sprintf(
				"ScyllaDBBackupBucket %q is full: %d ScyllaDBBackupEntries use it and spec.maxClusters is %d, so ScyllaDBBackupEntry %q can't be created; backups to bucket %q wait until an entry is gone or the quota is raised",
				bucket.Name, len(using), *max, klog.KObj(required), bucket.Spec.BucketName)}, nil
		}
	}

	_, _, err = resourceapply.Apply(ctx, c.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(task.Namespace), entries, c.eventRecorder, required, resourceapply.ApplyOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return &backupEntryHold{backupEntryErrorReason, fmt.Sprintf("can't create ScyllaDBBackupEntry %q: %v", klog.KObj(required), err)}, err
	}
	// Created now, or by the previous sync before the cache saw it: its add event brings the task back.
	klog.FromContext(ctx).V(2).Info("Waiting for the ScyllaDBBackupEntry to reach the cache", "scyllaDBManagerTask", klog.KObj(task), "scyllaDBBackupEntry", klog.KObj(required))
	return &backupEntryHold{awaitingBackupEntryReason, fmt.Sprintf("waiting for ScyllaDBBackupEntry %q of bucket %q to be observed", klog.KObj(required), bucket.Spec.BucketName)}, nil
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
