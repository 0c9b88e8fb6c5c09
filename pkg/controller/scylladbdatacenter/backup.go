package scylladbdatacenter

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// Bucket credentials in the agent configuration (backup-storage.md, "Credentials"): a datacenter whose backup tasks
// store into a declared ScyllaDBBackupBucket with spec.credentialsSecretRef gets the bucket's s3 settings in the agent
// configuration file the operator generates, the one in its agent auth-token Secret. That file is the last the agent
// reads and pods carry its HMAC (authTokenHMAC), so the copy lives in a Secret the datacenter owns, in its namespace,
// and a change of the credentials, the bucket or the tasks rolls the agents exactly as a new token does, with no new
// volume, Secret or annotation; without a bucket the file is what it always was.
//
// The agent has one s3 section for every S3 location it writes to. Buckets whose settings differ can't share it: the
// datacenter gets none of them and its Degraded condition names two of them. A custom agent config
// (customConfigSecretRef) that sets any s3 setting wins: the operator adds none, as it would override the user's
// section key by key.

// datacenterTaskKind is the kind a ScyllaDBManagerTask's spec.scyllaDBClusterRef names to target a datacenter.
const datacenterTaskKind = "ScyllaDBDatacenter"

// parseS3Location returns the datacenter prefix ("" for none) and the bucket of a backup location
// `[<dc>:]s3:<bucket>`; locations of other providers give false.
func parseS3Location(location string) (dc, bucket string, ok bool) {
	parts := strings.Split(location, ":")
	if len(parts) == 3 {
		dc, parts = parts[0], parts[1:]
	}
	if len(parts) != 2 || parts[0] != string(scyllav1alpha1.ScyllaDBBackupProviderS3) || len(parts[1]) == 0 {
		return "", "", false
	}
	return dc, parts[1], true
}

// s3BucketOfLocation returns the bucket of a backup location `[<dc>:]s3:<bucket>` that applies to the datacenter dc:
// without a <dc> prefix, or with dc's. Locations of other providers or datacenters give false.
func s3BucketOfLocation(location, dc string) (string, bool) {
	prefix, bucket, ok := parseS3Location(location)
	if !ok || (len(prefix) != 0 && prefix != dc) {
		return "", false
	}
	return bucket, true
}

// isBackupTaskOf tells whether task is a backup task of the datacenter named name in its namespace.
func isBackupTaskOf(task *scyllav1alpha1.ScyllaDBManagerTask, namespace, name string) bool {
	return task.Namespace == namespace &&
		task.Spec.ScyllaDBClusterRef.Kind == datacenterTaskKind &&
		task.Spec.ScyllaDBClusterRef.Name == name &&
		task.Spec.Type == scyllav1alpha1.ScyllaDBManagerTaskTypeBackup &&
		task.Spec.Backup != nil
}

// backupBucketNames returns, sorted and once each, the S3 buckets the backup tasks of sdc among tasks store into. A
// task being deleted no longer backs up.
func backupBucketNames(sdc *scyllav1alpha1.ScyllaDBDatacenter, tasks []*scyllav1alpha1.ScyllaDBManagerTask) []string {
	dc := datacenterName(sdc)
	var names []string
	for _, task := range tasks {
		if task.DeletionTimestamp != nil || !isBackupTaskOf(task, sdc.Namespace, sdc.Name) {
			continue
		}
		for _, location := range task.Spec.Backup.Location {
			if bucket, ok := s3BucketOfLocation(location, dc); ok {
				names = append(names, bucket)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// bucketsWithCredentials returns the ScyllaDBBackupBuckets among buckets that declare one of bucketNames as an S3
// bucket with credentials, by object name.
func bucketsWithCredentials(buckets []*scyllav1alpha1.ScyllaDBBackupBucket, bucketNames []string) []*scyllav1alpha1.ScyllaDBBackupBucket {
	var out []*scyllav1alpha1.ScyllaDBBackupBucket
	for _, b := range buckets {
		if b.Spec.Provider == scyllav1alpha1.ScyllaDBBackupProviderS3 && b.Spec.CredentialsSecretRef != nil && slices.Contains(bucketNames, b.Spec.BucketName) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *scyllav1alpha1.ScyllaDBBackupBucket) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// makeS3Config returns the agent's s3 section for bucket with the credentials of its credentialsSecretRef, secret.
// A store with an endpoint is an S3-compatible one, which the agent reaches as its Minio provider (path-style requests
// to the endpoint); AWS otherwise. Errors name the Secret and key, never their values.
func makeS3Config(bucket *scyllav1alpha1.ScyllaDBBackupBucket, secretData map[string][]byte) (*scyllaagent.S3Config, error) {
	ref := bucket.Spec.CredentialsSecretRef
	config := &scyllaagent.S3Config{
		Provider: scyllaagent.S3ProviderAWS,
		Region:   bucket.Spec.Region,
		Endpoint: bucket.Spec.Endpoint,
	}
	if len(bucket.Spec.Endpoint) != 0 {
		config.Provider = scyllaagent.S3ProviderMinio
	}
	var missing []string
	config.AccessKeyID, config.SecretAccessKey, missing = backupstorage.Credentials(secretData)
	if len(missing) != 0 {
		return nil, newSpecError("can't use the credentials of ScyllaDBBackupBucket %q: Secret %q has no key %q", bucket.Name, ref.Namespace+"/"+ref.Name, missing[0])
	}
	return config, nil
}

// bucketS3Config is the s3 section one ScyllaDBBackupBucket asks for.
type bucketS3Config struct {
	bucket string
	config *scyllaagent.S3Config
}

// chooseS3Config returns the s3 section all of configs agree on, or nil with a spec error naming two buckets that
// disagree: one agent configuration holds one s3 section, and using either would point the other's backups at the
// wrong credentials.
func chooseS3Config(configs []bucketS3Config) (*scyllaagent.S3Config, error) {
	if len(configs) == 0 {
		return nil, nil
	}
	first := configs[0]
	for _, other := range configs[1:] {
		if *other.config != *first.config {
			return nil, newSpecError("ScyllaDBBackupBuckets %q and %q, both used by this datacenter's backup tasks, have different credentials or "+
				"S3 settings, and the ScyllaDB Manager agent has one s3 configuration: neither is used; use buckets with the same credentials, "+
				"region and endpoint, or set s3 in a custom agent config", first.bucket, other.bucket)
		}
	}
	return first.config, nil
}

// backupS3Config is what the datacenter's backups ask of its agent configuration.
type backupS3Config struct {
	// s3 is the s3 section to add, nil for none.
	s3 *scyllaagent.S3Config
	// readsCredentials tells whether the datacenter uses a bucket whose credentials Secret is read from the API
	// server: the user's Secrets are not watched, so the datacenter is synced again after a while.
	readsCredentials bool
}

// makeBackupS3Config returns the s3 section the datacenter's backup tasks need (see the top of this file). Spec errors
// (a missing credentials Secret or key, buckets that disagree) leave out the buckets concerned and are reported; any
// other error means the section is unknown, and the agent configuration must not change.
func (c *Controller) makeBackupS3Config(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter) (backupS3Config, error) {
	tasks, err := c.taskLister.ScyllaDBManagerTasks(sdc.Namespace).List(labels.Everything())
	if err != nil {
		return backupS3Config{}, fmt.Errorf("can't list ScyllaDBManagerTasks: %w", err)
	}
	names := backupBucketNames(sdc, tasks)
	if len(names) == 0 {
		return backupS3Config{}, nil
	}
	allBuckets, err := c.bucketLister.List(labels.Everything())
	if err != nil {
		return backupS3Config{}, fmt.Errorf("can't list ScyllaDBBackupBuckets: %w", err)
	}
	buckets := bucketsWithCredentials(allBuckets, names)
	if len(buckets) == 0 {
		return backupS3Config{}, nil
	}

	var configs []bucketS3Config
	var specErrs []error
	for _, b := range buckets {
		ref := b.Spec.CredentialsSecretRef
		// The user's Secret, in any namespace, is outside the informer caches.
		secret, err := c.kubeClient.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			specErrs = append(specErrs, newSpecError("can't use the credentials of ScyllaDBBackupBucket %q: Secret %q does not exist", b.Name, ref.Namespace+"/"+ref.Name))
			continue
		}
		if err != nil {
			return backupS3Config{}, fmt.Errorf("can't get the credentials Secret %q of ScyllaDBBackupBucket %q: %w", ref.Namespace+"/"+ref.Name, b.Name, err)
		}
		config, err := makeS3Config(b, secret.Data)
		if err != nil {
			specErrs = append(specErrs, err)
			continue
		}
		configs = append(configs, bucketS3Config{bucket: b.Name, config: config})
	}
	s3, err := chooseS3Config(configs)
	if err != nil {
		specErrs = append(specErrs, err)
	}
	return backupS3Config{s3: s3, readsCredentials: true}, utilerrors.NewAggregate(specErrs)
}
