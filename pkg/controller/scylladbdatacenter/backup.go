package scylladbdatacenter

import (
	"context"
	"errors"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/backupstorage"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
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
// datacenter gets none of them and its Degraded condition names two of them. A bucket without credentials differs
// from every bucket with credentials, whose keys would replace the agents' own role for it. A custom agent config
// (customConfigSecretRef) that sets any s3 setting wins: the operator adds none, as it would override the user's
// section key by key, and reports no problem of the buckets, whose settings are then not used.

// datacenterTaskKind is the kind a ScyllaDBManagerTask's spec.scyllaDBClusterRef names to target a datacenter.
const datacenterTaskKind = "ScyllaDBDatacenter"

// parseS3Location returns the datacenter prefix ("" for none) and the bucket of a backup location
// `[<dc>:]s3:<bucket>` (backupstorage.ParseS3Location).
func parseS3Location(location string) (dc, bucket string, ok bool) {
	return backupstorage.ParseS3Location(location)
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
	var locations []string
	for _, task := range tasks {
		if task.DeletionTimestamp != nil || !isBackupTaskOf(task, sdc.Namespace, sdc.Name) {
			continue
		}
		locations = append(locations, task.Spec.Backup.Location...)
	}
	return backupstorage.S3BucketsOfLocations(locations, datacenterName(sdc))
}

// makeS3Config returns the agent's s3 section for bucket with the credentials of its credentialsSecretRef, secret;
// a missing key is a spec error.
func makeS3Config(bucket *scyllav1alpha1.ScyllaDBBackupBucket, secretData map[string][]byte) (*scyllaagent.S3Config, error) {
	config, err := backupstorage.AgentS3Config(bucket, secretData)
	if err != nil {
		return nil, newSpecError("%w", err)
	}
	return config, nil
}

// chooseS3Config returns the s3 section all of configs agree on, or nil with a spec error naming two buckets that
// disagree.
func chooseS3Config(configs []backupstorage.BucketS3Config) (*scyllaagent.S3Config, error) {
	config, err := backupstorage.ChooseS3Config(configs)
	if err != nil {
		return nil, newSpecError("%w", err)
	}
	return config, nil
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
		return c.overrideS3Config(ctx, sdc)
	}
	allBuckets, err := c.bucketLister.List(labels.Everything())
	if err != nil {
		return backupS3Config{}, fmt.Errorf("can't list ScyllaDBBackupBuckets: %w", err)
	}
	// Buckets without credentials count too: static keys of another bucket would replace the agents' own role for
	// them (backupstorage.ChooseS3Config).
	buckets := backupstorage.DeclaredS3Buckets(allBuckets, names)
	if !backupstorage.AnyHasCredentials(buckets) {
		return c.overrideS3ConfigBeside(ctx, sdc, buckets)
	}

	s3, errs, err := backupstorage.ResolveAgentS3Config(ctx, buckets, c.getSecret)
	if err != nil {
		return backupS3Config{}, err
	}
	specErrs := make([]error, 0, len(errs))
	for _, e := range errs {
		specErrs = append(specErrs, newSpecError("%w", e))
	}
	return backupS3Config{s3: s3, readsCredentials: true}, utilerrors.NewAggregate(specErrs)
}

// overrideS3ConfigBeside returns overrideS3Config's s3 section for a datacenter whose own backup tasks use buckets,
// declared without credentials. Its own buckets come first, as buckets with credentials do: the cluster's section
// would give its static keys to them too (backupstorage.ChooseS3Config), so none is added, and that is a spec error
// naming the first of them.
func (c *Controller) overrideS3ConfigBeside(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, buckets []*scyllav1alpha1.ScyllaDBBackupBucket) (backupS3Config, error) {
	override, err := c.overrideS3Config(ctx, sdc)
	if err != nil || override.s3 == nil || len(buckets) == 0 {
		return override, err
	}
	return backupS3Config{readsCredentials: true}, newSpecError("ScyllaDBBackupBucket %q, used by this datacenter's backup tasks, has no credentialsSecretRef "+
		"(it uses the agents' own role), and the s3 settings of the ScyllaDBCluster's backup buckets, in the agent auth-token Secret %q named by "+
		"annotation %q, have credentials; the ScyllaDB Manager agent has one s3 configuration, whose keys would apply to both: no s3 settings are "+
		"added; use buckets that all have credentials, the same, or all have none, or set s3 in a custom agent config",
		buckets[0].Name, sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot], naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot)
}

// overrideS3Config returns the s3 section of the agent configuration in the Secret that
// naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot names, for a datacenter whose own backup tasks use no
// declared bucket: a datacenter of a ScyllaDBCluster, whose tasks, buckets and credentials live in the meta cluster,
// gets them there from the ScyllaDBCluster controller beside the cluster's token. A missing Secret is left to the
// token's reading to report.
func (c *Controller) overrideS3Config(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter) (backupS3Config, error) {
	ref, ok := sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot]
	if !ok {
		return backupS3Config{}, nil
	}
	secret, err := c.getSecret(ctx, sdc.Namespace, ref)
	switch {
	case apierrors.IsNotFound(err):
		return backupS3Config{}, nil
	case err != nil:
		return backupS3Config{}, fmt.Errorf("can't get the agent auth-token Secret %q named by annotation %q: %w", ref, naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, err)
	}
	s3, err := agentS3FromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil {
		return backupS3Config{}, newSpecError("can't read key %q of the agent auth-token Secret %q named by annotation %q: %w",
			naming.ScyllaDBManagerAgentAuthTokenKey, ref, naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot, err)
	}
	return backupS3Config{s3: s3, readsCredentials: s3 != nil}, nil
}

// agentS3FromConfig returns the s3 section of an agent configuration file, nil when it has none or an empty one. The
// error never quotes the file: it may hold credentials.
func agentS3FromConfig(data []byte) (*scyllaagent.S3Config, error) {
	var config struct {
		S3 *scyllaagent.S3Config `yaml:"s3"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return nil, errors.New("it is not a valid YAML agent configuration")
	}
	if config.S3 == nil || *config.S3 == (scyllaagent.S3Config{}) {
		return nil, nil
	}
	return config.S3, nil
}

// getSecret reads a Secret from the API server: users' Secrets, in any namespace, are outside the informer caches.
func (c *Controller) getSecret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	return c.kubeClient.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
}
