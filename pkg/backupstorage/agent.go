package backupstorage

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// What the ScyllaDB Manager agents of a datacenter need to reach the declared buckets its backups go to
// (backup-storage.md, "Credentials"): the s3 section of their configuration. The ScyllaDBDatacenter controller builds
// it for its own datacenter's tasks, the ScyllaDBCluster controller for each datacenter of a ScyllaDBCluster's tasks;
// both read locations, buckets and credentials Secrets the same way, here.

// ParseS3Location returns the datacenter prefix ("" for none) and the bucket of a backup location
// `[<dc>:]s3:<bucket>`; locations of other providers give false.
func ParseS3Location(location string) (dc, bucket string, ok bool) {
	parts := strings.Split(location, ":")
	if len(parts) == 3 {
		dc, parts = parts[0], parts[1:]
	}
	if len(parts) != 2 || parts[0] != string(scyllav1alpha1.ScyllaDBBackupProviderS3) || len(parts[1]) == 0 {
		return "", "", false
	}
	return dc, parts[1], true
}

// S3BucketsOfLocations returns, sorted and once each, the S3 buckets of locations that apply to the datacenter dc:
// those without a <dc> prefix, and those with dc's.
func S3BucketsOfLocations(locations []string, dc string) []string {
	var names []string
	for _, location := range locations {
		prefix, bucket, ok := ParseS3Location(location)
		if ok && (len(prefix) == 0 || prefix == dc) {
			names = append(names, bucket)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// DeclaredS3Buckets returns the ScyllaDBBackupBuckets among buckets that declare one of bucketNames as an S3 bucket,
// with credentials or without (the agents' own role), by object name. Both kinds matter to the agents: the one s3
// section their configuration holds applies to every bucket they write to (ResolveAgentS3Config).
func DeclaredS3Buckets(buckets []*scyllav1alpha1.ScyllaDBBackupBucket, bucketNames []string) []*scyllav1alpha1.ScyllaDBBackupBucket {
	var out []*scyllav1alpha1.ScyllaDBBackupBucket
	for _, b := range buckets {
		if b.Spec.Provider == scyllav1alpha1.ScyllaDBBackupProviderS3 && slices.Contains(bucketNames, b.Spec.BucketName) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b *scyllav1alpha1.ScyllaDBBackupBucket) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// AnyHasCredentials tells whether one of buckets has a credentialsSecretRef: only then has the agent configuration
// anything to get from them, and a Secret to read.
func AnyHasCredentials(buckets []*scyllav1alpha1.ScyllaDBBackupBucket) bool {
	return slices.ContainsFunc(buckets, func(b *scyllav1alpha1.ScyllaDBBackupBucket) bool { return b.Spec.CredentialsSecretRef != nil })
}

// AgentS3Config returns the agent's s3 section for bucket with the credentials of secretData, the data of its
// credentialsSecretRef. A store with an endpoint is an S3-compatible one, which the agent reaches as its Minio
// provider (path-style requests to the endpoint); AWS otherwise. The error names the Secret and the key, never
// their values.
func AgentS3Config(bucket *scyllav1alpha1.ScyllaDBBackupBucket, secretData map[string][]byte) (*scyllaagent.S3Config, error) {
	config := &scyllaagent.S3Config{
		Provider: scyllaagent.S3ProviderAWS,
		Region:   bucket.Spec.Region,
		Endpoint: bucket.Spec.Endpoint,
	}
	if len(bucket.Spec.Endpoint) != 0 {
		config.Provider = scyllaagent.S3ProviderMinio
	}
	var missing []string
	config.AccessKeyID, config.SecretAccessKey, missing = Credentials(secretData)
	if len(missing) != 0 {
		ref := bucket.Spec.CredentialsSecretRef
		return nil, fmt.Errorf("can't use the credentials of ScyllaDBBackupBucket %q: Secret %q has no key %q", bucket.Name, ref.Namespace+"/"+ref.Name, missing[0])
	}
	return config, nil
}

// BucketS3Config is the s3 section one ScyllaDBBackupBucket asks for; Config is nil for a bucket without
// credentials, which asks for no s3 section: the agents reach it with their own role (their default credential chain).
type BucketS3Config struct {
	Bucket string
	Config *scyllaagent.S3Config
}

// ChooseS3Config returns the s3 section all of configs agree on (nil when none asks for one), or an error naming two
// buckets that disagree: one agent configuration holds one s3 section, and using either would point the other's
// backups at the wrong credentials. A bucket without credentials disagrees with every bucket with credentials: the
// static keys of the section would replace the agents' own role for it too.
func ChooseS3Config(configs []BucketS3Config) (*scyllaagent.S3Config, error) {
	if len(configs) == 0 {
		return nil, nil
	}
	first := configs[0]
	for _, other := range configs[1:] {
		switch {
		case first.Config == nil && other.Config == nil:
			continue
		case first.Config == nil || other.Config == nil:
			withKeys, without := first.Bucket, other.Bucket
			if first.Config == nil {
				withKeys, without = without, withKeys
			}
			return nil, fmt.Errorf("ScyllaDBBackupBuckets %q and %q, both used by this datacenter's backup tasks, have different credentials: %q has "+
				"a credentialsSecretRef and %q has none (it uses the agents' own role), and the ScyllaDB Manager agent has one s3 configuration, "+
				"whose keys would apply to both: no s3 settings are added; use buckets that all have credentials, the same, or all have none, "+
				"or set s3 in a custom agent config",
				first.Bucket, other.Bucket, withKeys, without)
		case *other.Config != *first.Config:
			return nil, fmt.Errorf("ScyllaDBBackupBuckets %q and %q, both used by this datacenter's backup tasks, have different credentials or "+
				"S3 settings, and the ScyllaDB Manager agent has one s3 configuration: neither is used; use buckets with the same credentials, "+
				"region and endpoint, or set s3 in a custom agent config", first.Bucket, other.Bucket)
		}
	}
	return first.Config, nil
}

// SecretGetter reads a Secret from the API server.
type SecretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// ResolveAgentS3Config returns the s3 section the agents need for buckets (DeclaredS3Buckets), reading the Secrets of
// those with a credentialsSecretRef through getSecret; those without one ask for no section (ChooseS3Config). Problems
// only a change of the objects fixes (a missing Secret or key, buckets that disagree) leave the buckets concerned out
// and come back in specErrs; err is any other failure to read, which means the section is unknown and what the
// agents have must not change.
func ResolveAgentS3Config(ctx context.Context, buckets []*scyllav1alpha1.ScyllaDBBackupBucket, getSecret SecretGetter) (s3 *scyllaagent.S3Config, specErrs []error, err error) {
	var configs []BucketS3Config
	for _, b := range buckets {
		ref := b.Spec.CredentialsSecretRef
		if ref == nil {
			configs = append(configs, BucketS3Config{Bucket: b.Name})
			continue
		}
		secret, err := getSecret(ctx, ref.Namespace, ref.Name)
		if apierrors.IsNotFound(err) {
			specErrs = append(specErrs, fmt.Errorf("can't use the credentials of ScyllaDBBackupBucket %q: Secret %q does not exist", b.Name, ref.Namespace+"/"+ref.Name))
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("can't get the credentials Secret %q of ScyllaDBBackupBucket %q: %w", ref.Namespace+"/"+ref.Name, b.Name, err)
		}
		config, err := AgentS3Config(b, secret.Data)
		if err != nil {
			specErrs = append(specErrs, err)
			continue
		}
		configs = append(configs, BucketS3Config{Bucket: b.Name, Config: config})
	}
	s3, err = ChooseS3Config(configs)
	if err != nil {
		specErrs = append(specErrs, err)
	}
	return s3, specErrs, nil
}
