package scylladbmanagertask

// The controller writes the Available, Progressing and Degraded conditions (controllerhelpers) of a
// ScyllaDBManagerTask directly, without sub-sync conditions to aggregate: a task is one object in ScyllaDB Manager,
// and the ScyllaCluster translator copies the Degraded message into status.backups[].error and
// status.repairs[].error, where it must read as ScyllaDB Manager's message rather than a list of sub-syncs.
//
//   - Available is True while ScyllaDB Manager holds the task, False when it is known not to, and Unknown when
//     ScyllaDB Manager could not be read.
//   - Progressing is True while the task waits for something that happens without a change to it: the registration
//     of its cluster with ScyllaDB Manager, or a ScyllaDBBackupEntry it created reaching the cache.
//   - Degraded is True with ScyllaDB Manager's (or the controller's) error message when the task can't be synced.

// Condition and event reasons.
const (
	// taskScheduledReason: ScyllaDB Manager holds the task (Available True).
	taskScheduledReason = "TaskScheduled"
	// taskNotScheduledReason: ScyllaDB Manager does not hold the task (Available False).
	taskNotScheduledReason = "TaskNotScheduled"
	// managerStateUnknownReason: ScyllaDB Manager could not be read (Available Unknown).
	managerStateUnknownReason = "ScyllaDBManagerStateUnknown"

	// awaitingRegistrationReason: the referenced cluster object is not registered with ScyllaDB Manager yet.
	awaitingRegistrationReason = "AwaitingRegistration"
	// clusterNotInManagerReason: the referenced cluster object is registered, but ScyllaDB Manager does not know the
	// cluster ID (deleted in ScyllaDB Manager, or its database was lost); the registration controller registers it
	// again under the same ID.
	clusterNotInManagerReason = "ScyllaDBManagerClusterMissing"

	// awaitingBackupEntryReason: a backup location names a declared ScyllaDBBackupBucket and the cluster's
	// ScyllaDBBackupEntry in it was just created; the task is scheduled once the cache observes it (Progressing).
	awaitingBackupEntryReason = "AwaitingBackupEntry"
	// backupBucketQuotaFullReason: the cluster's ScyllaDBBackupEntry can't be created because as many entries as the
	// bucket's spec.maxClusters already use it (Degraded).
	backupBucketQuotaFullReason = "BackupBucketQuotaFull"
	// backupEntryConflictReason: the ScyllaDBBackupEntry named for the cluster and bucket records another directory
	// (another cluster object's UID or ScyllaDB Manager cluster ID) (Degraded).
	backupEntryConflictReason = "BackupEntryConflict"
	// backupBucketAmbiguousReason: several ScyllaDBBackupBuckets declare the bucket a location names (Degraded).
	backupBucketAmbiguousReason = "BackupBucketAmbiguous"
	// backupEntryErrorReason: creating the cluster's ScyllaDBBackupEntry failed; it is retried (Degraded).
	backupEntryErrorReason = "BackupEntryError"

	// managerErrorReason: a ScyllaDB Manager call failed in a way retrying may fix (5xx, connection errors).
	managerErrorReason = "ScyllaDBManagerError"
	// managerRejectedReason: ScyllaDB Manager answered 400 to the task; it is not sent again until it changes.
	managerRejectedReason = "ScyllaDBManagerRejected"
	// ownershipConflictReason: ScyllaDB Manager holds a task of the same type and name that another object owns.
	ownershipConflictReason = "OwnershipConflict"
	// invalidSpecReason: the object can't be turned into a ScyllaDB Manager task.
	invalidSpecReason = "InvalidSpec"

	// Event reasons of ScyllaDB Manager writes.
	taskCreatedReason = "ScyllaDBManagerTaskCreated"
	taskUpdatedReason = "ScyllaDBManagerTaskUpdated"
	taskDeletedReason = "ScyllaDBManagerTaskDeleted"
	taskDeleteFailed  = "ScyllaDBManagerTaskDeleteFailed"
	// taskNotOwnedReason: a deletion left a task it found in place, because it is not labelled with the object's UID.
	taskNotOwnedReason = "ScyllaDBManagerTaskNotOwned"
)
