package scylladbbackupentry

// The controller writes the Available, Progressing and Degraded conditions (controllerhelpers) of a
// ScyllaDBBackupEntry directly: an entry is one directory in one bucket, with no sub-syncs to aggregate.
//
//   - Available is True while the entry can be used for backups: its ScyllaDBBackupBucket exists, no earlier
//     entry records the same directory, and fewer than the bucket's spec.maxClusters entries were created before it.
//   - Progressing is True while something happens without a change to the entry: the bucket is awaited, the grace
//     period of a deleted cluster runs, or an inventory or a purge is under way.
//   - Degraded is True with the reason when the entry can't be used or its directory can't be inventoried or purged.

// Condition and event reasons.
const (
	// entryUsableReason: the bucket exists and the entry is the only one of its directory (Available True).
	entryUsableReason = "EntryUsable"
	// bucketMissingReason: the ScyllaDBBackupBucket the entry references does not exist.
	bucketMissingReason = "BucketMissing"
	// duplicateEntryReason: another, earlier ScyllaDBBackupEntry records the same directory of the same bucket.
	duplicateEntryReason = "DuplicateEntry"
	// bucketQuotaExceededReason: the bucket's spec.maxClusters entries were created before this one.
	bucketQuotaExceededReason = "BucketQuotaExceeded"
	// invalidRetentionReason: the retention annotation has a value other than keep or purge-now.
	invalidRetentionReason = "InvalidRetention"
	// invalidClusterRefReason: spec.clusterRef names a kind the controller does not know.
	invalidClusterRefReason = "InvalidClusterRef"
	// invalidManagerClusterIDReason: spec.managerClusterID passes the API's pattern but names no directory a purge
	// may touch (the nil UUID).
	invalidManagerClusterIDReason = "InvalidManagerClusterID"
	// clusterInUseReason: the entry is being deleted while its cluster object still exists and is not being deleted.
	clusterInUseReason = "ClusterInUse"
	// directoryInUseReason: the entry is being deleted while another entry of the same directory is used by a
	// cluster that exists.
	directoryInUseReason = "DirectoryInUse"
	// gracePeriodReason: the cluster is deleted and its directory waits for the end of the grace period.
	gracePeriodReason = "WaitingForGracePeriod"
	// purgingReason: the directory is being purged.
	purgingReason = "Purging"
	// credentialsErrorReason: the credentials Secret of the bucket can't be read or is incomplete.
	credentialsErrorReason = "CredentialsError"
	// storeAuthErrorReason: the object store refused the credentials.
	storeAuthErrorReason = "ObjectStoreAccessDenied"
	// purgeFailedReason: the object store could not be reached or failed during the purge.
	purgeFailedReason = "PurgeFailed"
	// inventoryingReason: the directory of a deleted cluster is being counted.
	inventoryingReason = "Inventorying"
	// inventoryFailedReason: the object store could not be reached or failed while the directory was counted.
	inventoryFailedReason = "InventoryFailed"

	// Event reasons.
	directoryKeptReason     = "DirectoryKept"
	directoryPurgedReason   = "DirectoryPurged"
	duplicateReleasedReason = "DuplicateEntryReleased"
	purgeStartedReason      = "PurgeStarted"
	directoryCountedReason  = "DirectoryInventoried"
	// bucketVersioningUnknownReason: the credentials may not read the bucket's versioning; only current keys are
	// walked.
	bucketVersioningUnknownReason = "BucketVersioningUnknown"
)
