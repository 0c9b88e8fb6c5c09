package scylladbbackupbucket

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// observation is what a sync learnt about a bucket's store, for calculateStatus.
type observation struct {
	// exists tells that the bucket exists and is reachable.
	exists bool
	// unknown tells that the store could not be asked, so whether the bucket exists is unknown.
	unknown bool
	// failure, when set, is what went wrong (Degraded).
	failure *metav1.Condition
	// retrying tells that the sync returns an error so that the queue retries with back-off.
	retrying bool
	// recheckCredentials tells that the credentials Secret is missing or incomplete, or that the store refused its
	// credentials: a change to it, which is not watched, fixes that, so the Secret is read again after
	// credentialsRecheckInterval, and the store asked again only if its credentials changed.
	recheckCredentials bool
	// credentials is the digest of the static credentials the check used, which a refusal records.
	credentials [sha256.Size]byte
}

// refusal is a check of a bucket whose credentials, from its credentials Secret, the store refused.
type refusal struct {
	uid         types.UID
	generation  int64
	credentials [sha256.Size]byte
	// due is when the recheck that may answer with the refusal again is queued for: other syncs (a change, a resync)
	// ask the store.
	due         time.Time
	observation observation
}

func (o *observation) fail(reason, message string) {
	o.failure = &metav1.Condition{Reason: reason, Message: message}
}

// sync checks, once, that the ScyllaDBBackupBucket named key exists in its store, creates it when it is missing and
// spec.provision is on, and writes what it found and the entries using it to the bucket's status.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	_, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}
	bucket, err := c.buckets.Get("", name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaDBBackupBucket is gone", "scyllaDBBackupBucket", name)
		c.refusalsLock.Lock()
		delete(c.refusals, name)
		c.refusalsLock.Unlock()
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBBackupBucket %q: %w", name, err)
	}

	var errs []error
	o, err := c.checkStore(ctx, bucket)
	if err != nil {
		errs = append(errs, err)
	}
	c.trackRefusal(bucket, o)
	clusters, pendingPurge, err := c.countEntries(bucket.Name)
	if err != nil {
		errs = append(errs, err)
	} else {
		status := calculateStatus(bucket, o, clusters, pendingPurge, c.now())
		c.recordDegradedTransition(bucket, status)
		if err := c.updateStatus(ctx, bucket, status); err != nil {
			errs = append(errs, err)
		}
	}
	if o.recheckCredentials && !o.retrying {
		c.queue.AddAfter(key, c.credentialsRecheckInterval)
	}
	return utilerrors.NewAggregate(errs)
}

// checkStore makes at most one existence check of bucket (and one creation, when it is missing and spec.provision is
// on). The error asks for a retry with back-off; failures retrying can't fix are only recorded in the observation,
// and looked at again on the next change or resync, or, for a missing or incomplete credentials Secret or credentials
// the store refused, after credentialsRecheckInterval (then the store is asked again only if the credentials changed).
func (c *Controller) checkStore(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket) (*observation, error) {
	o := &observation{}
	if bucket.Spec.Provider != scyllav1alpha1.ScyllaDBBackupProviderS3 {
		o.fail(invalidStoreConfigReason, fmt.Sprintf("provider %q is not supported yet: only %s is", bucket.Spec.Provider, scyllav1alpha1.ScyllaDBBackupProviderS3))
		return o, nil
	}

	cfg, err := c.storeConfig(ctx, bucket, o)
	if o.failure != nil {
		return o, err
	}
	o.credentials = sha256.Sum256([]byte(cfg.AccessKeyID + "\x00" + cfg.SecretAccessKey))
	if refused, ok := c.refusedBefore(bucket, o.credentials); ok {
		return refused, nil
	}
	store, err := c.newStore(cfg)
	if err != nil {
		o.fail(invalidStoreConfigReason, err.Error())
		return o, nil
	}

	bucketName := bucket.Spec.BucketName
	callCtx, cancel := context.WithTimeout(ctx, c.storeTimeout)
	defer cancel()
	exists, err := store.BucketExists(callCtx, bucketName)
	if err != nil {
		return o, c.storeFailure(o, bucket, cfg, err)
	}
	if exists {
		o.exists = true
		return o, nil
	}
	if !bucket.Spec.Provision {
		o.fail(bucketMissingReason, fmt.Sprintf("bucket %q does not exist in %s: create it, or set spec.provision to let the manager-controller create it", bucketName, cfg))
		return o, nil
	}

	err = store.MakeBucket(callCtx, bucketName, bucket.Spec.Region)
	switch {
	case objectstore.ErrorCode(err) == objectstore.ErrorCodeBucketAlreadyOwned:
		// Created since the check, by us or another actor.
	case err != nil:
		if !objectstore.IsAuthError(err) {
			o.fail(provisioningFailedReason, fmt.Sprintf("can't create bucket %q in %s: %v", bucketName, cfg, err))
			o.retrying = true
			return o, fmt.Errorf("can't provision ScyllaDBBackupBucket %q: %w", bucket.Name, err)
		}
		return o, c.storeFailure(o, bucket, cfg, err)
	default:
		klog.FromContext(ctx).V(2).Info("Created bucket", "scyllaDBBackupBucket", klog.KObj(bucket), "bucket", bucketName)
		c.eventRecorder.Eventf(bucket, corev1.EventTypeNormal, bucketProvisionedReason, "Created bucket %q in %s", bucketName, cfg)
	}
	o.exists = true
	return o, nil
}

// storeFailure records err, a store call's, in o and returns the error to retry with: nil when the store refused the
// credentials, which only a change to them fixes.
func (c *Controller) storeFailure(o *observation, bucket *scyllav1alpha1.ScyllaDBBackupBucket, cfg objectstore.Config, err error) error {
	message := fmt.Sprintf("can't reach bucket %q in %s: %v", bucket.Spec.BucketName, cfg, err)
	code := objectstore.ErrorCode(err)
	switch {
	case objectstore.IsAuthError(err):
		o.fail(accessDeniedReason, message)
		return nil
	case len(code) == 0:
		o.fail(storeUnreachableReason, message)
	default:
		o.fail(storeErrorReason, message)
	}
	o.unknown, o.retrying = true, true
	return fmt.Errorf("can't check ScyllaDBBackupBucket %q: %w", bucket.Name, err)
}

// trackRefusal records o, the observation of a check of bucket, when the store refused the credentials of bucket's
// credentials Secret, and asks for the Secret to be read again; any other outcome forgets an earlier refusal.
func (c *Controller) trackRefusal(bucket *scyllav1alpha1.ScyllaDBBackupBucket, o *observation) {
	c.refusalsLock.Lock()
	defer c.refusalsLock.Unlock()
	if bucket.Spec.CredentialsSecretRef == nil || o.failure == nil || o.failure.Reason != accessDeniedReason {
		delete(c.refusals, bucket.Name)
		return
	}
	o.recheckCredentials = true
	now := c.clock()
	r := refusal{
		uid:         bucket.UID,
		generation:  bucket.Generation,
		credentials: o.credentials,
		due:         now.Add(c.credentialsRecheckInterval),
		observation: *o,
	}
	r.observation.failure = o.failure.DeepCopy()
	if earlier, ok := c.refusals[bucket.Name]; ok && earlier.uid == r.uid && earlier.generation == r.generation && earlier.credentials == r.credentials && earlier.due.After(now) {
		// A resync or another event came before the recheck: the recheck already queued, which the queue keeps as
		// the earlier one, stays the one that may answer without the store.
		r.due = earlier.due
	}
	c.refusals[bucket.Name] = r
}

// refusedBefore returns the refusal recorded for bucket, when this sync is its recheck (it is due) and neither the
// bucket's spec nor the credentials, whose digest is credentials, changed since: asking the store again would only
// be refused again.
func (c *Controller) refusedBefore(bucket *scyllav1alpha1.ScyllaDBBackupBucket, credentials [sha256.Size]byte) (*observation, bool) {
	c.refusalsLock.Lock()
	defer c.refusalsLock.Unlock()
	r, ok := c.refusals[bucket.Name]
	if !ok || r.uid != bucket.UID || r.generation != bucket.Generation || r.credentials != credentials || c.clock().Before(r.due) {
		return nil, false
	}
	o := r.observation
	o.failure = r.observation.failure.DeepCopy()
	return &o, true
}

// storeConfig returns how to reach bucket's store, with the credentials of the Secret spec.credentialsSecretRef
// names, read through the API (the controller caches no Secrets of users). Without a reference the keys are empty:
// the manager-controller's own role is used. A failure is recorded in o; the error asks for a retry.
func (c *Controller) storeConfig(ctx context.Context, bucket *scyllav1alpha1.ScyllaDBBackupBucket, o *observation) (objectstore.Config, error) {
	var secretData map[string][]byte
	if ref := bucket.Spec.CredentialsSecretRef; ref != nil {
		what := fmt.Sprintf("Secret %q named by spec.credentialsSecretRef", klog.KRef(ref.Namespace, ref.Name))
		secret, err := c.kubeClient.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			// Retrying with back-off does not create it: it is looked for again after a fixed interval.
			o.fail(credentialsSecretMissingReason, fmt.Sprintf("%s does not exist", what))
			o.recheckCredentials = true
			err = nil
		case err != nil:
			o.fail(invalidCredentialsSecretReason, fmt.Sprintf("can't get %s: %v", what, err))
			o.retrying = true
			err = fmt.Errorf("can't get the credentials of ScyllaDBBackupBucket %q: %w", bucket.Name, err)
		default:
			secretData = secret.Data
		}
		if o.failure != nil {
			return objectstore.Config{}, err
		}
	}
	cfg, missing := backupstorage.StoreConfig(bucket, secretData)
	if len(missing) != 0 {
		ref := bucket.Spec.CredentialsSecretRef
		quoted := make([]string, 0, len(missing))
		for _, k := range missing {
			quoted = append(quoted, fmt.Sprintf("%q", k))
		}
		o.fail(invalidCredentialsSecretReason, fmt.Sprintf("Secret %q named by spec.credentialsSecretRef has no key %s", klog.KRef(ref.Namespace, ref.Name), joinOr(quoted)))
		o.recheckCredentials = true
	}
	return cfg, nil
}

func joinOr(items []string) string {
	if len(items) == 2 {
		return items[0] + " nor " + items[1]
	}
	return items[0]
}

// countEntries returns how many ScyllaDBBackupEntries use the bucket named bucketRef, and how many of those are being
// deleted, waiting for their directories to be purged.
func (c *Controller) countEntries(bucketRef string) (int32, int32, error) {
	objs, err := c.entryIndexer.ByIndex(backupstorage.EntryBucketRefIndex, bucketRef)
	if err != nil {
		return 0, 0, fmt.Errorf("can't look up the ScyllaDBBackupEntries of ScyllaDBBackupBucket %q: %w", bucketRef, err)
	}
	var clusters, pendingPurge int32
	for _, obj := range objs {
		entry, ok := obj.(*scyllav1alpha1.ScyllaDBBackupEntry)
		if !ok {
			return 0, 0, errors.New("the ScyllaDBBackupEntry cache holds another kind")
		}
		clusters++
		if entry.DeletionTimestamp != nil {
			pendingPurge++
		}
	}
	return clusters, pendingPurge, nil
}

// recordDegradedTransition records a Warning event when status, about to be written, turns the bucket Degraded or
// changes why it is.
func (c *Controller) recordDegradedTransition(bucket *scyllav1alpha1.ScyllaDBBackupBucket, status *scyllav1alpha1.ScyllaDBBackupBucketStatus) {
	current := meta.FindStatusCondition(status.Conditions, controllerhelpers.DegradedCondition)
	if current == nil || current.Status != metav1.ConditionTrue {
		return
	}
	previous := meta.FindStatusCondition(bucket.Status.Conditions, controllerhelpers.DegradedCondition)
	if previous != nil && previous.Status == current.Status && previous.Reason == current.Reason && previous.Message == current.Message {
		return
	}
	c.eventRecorder.Event(bucket, corev1.EventTypeWarning, current.Reason, current.Message)
}
