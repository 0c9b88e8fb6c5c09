package scylladbbackupbucket

// The controller writes the Available, Progressing and Degraded conditions (controllerhelpers) of a
// ScyllaDBBackupBucket directly: a bucket is one object in one store, checked once per sync.
//
//   - Available is True when the bucket exists and is reachable with its credentials, False when it is known not to
//     be (missing, credentials refused or unavailable), and Unknown when the store could not be asked.
//   - Progressing is True while the controller retries on its own after an error retrying may fix.
//   - Degraded is True with the store's (or the controller's) error; it never contains credentials.

// Condition and event reasons.
const (
	// bucketAvailableReason: the bucket exists and is reachable (Available True).
	bucketAvailableReason = "BucketAvailable"
	// bucketMissingReason: the bucket does not exist and spec.provision is off.
	bucketMissingReason = "BucketMissing"
	// accessDeniedReason: the store refused the credentials.
	accessDeniedReason = "AccessDenied"
	// storeUnreachableReason: the store did not answer (network error, timeout).
	storeUnreachableReason = "StoreUnreachable"
	// storeErrorReason: the store answered with another error.
	storeErrorReason = "StoreError"
	// provisioningFailedReason: creating the missing bucket failed.
	provisioningFailedReason = "ProvisioningFailed"
	// credentialsSecretMissingReason: the Secret spec.credentialsSecretRef names does not exist.
	credentialsSecretMissingReason = "CredentialsSecretMissing"
	// invalidCredentialsSecretReason: the Secret lacks a key, or can't be read.
	invalidCredentialsSecretReason = "InvalidCredentialsSecret"
	// invalidStoreConfigReason: the spec does not make an object store configuration (a bad endpoint).
	invalidStoreConfigReason = "InvalidStoreConfiguration"
	// retryingReason: the controller retries after an error retrying may fix (Progressing True).
	retryingReason = "Retrying"

	// bucketProvisionedReason is the event reason of a bucket the controller created.
	bucketProvisionedReason = "BucketProvisioned"
)
