//go:build e2e

package scylladbcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
)

// credentialsTimeout bounds a wait for bucket credentials to reach the agents: a changed credentials Secret, which
// no operator watches, is read again by the meta operator within a minute, and its remote copy by the worker's
// operator within another.
const credentialsTimeout = 3 * time.Minute

// TestBackupBucketCredentialsReachEveryDatacenter: a two-datacenter ScyllaDBCluster whose backup ScyllaDBManagerTask
// stores into a declared ScyllaDBBackupBucket with a credentials Secret, all three in the meta cluster. A location for
// dc2 only gives dc2's agents the bucket's s3 section, in the agent configuration the worker's operator generates,
// and dc1's none; a location for every datacenter gives it to both; rotated credentials reach both. The agents keep
// the cluster's one token throughout, and the meta cluster's token Secret, which the manager-controller reads, holds
// only the token.
func TestBackupBucketCredentialsReachEveryDatacenter(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	e.startOperator(e.meta)
	e.startWorkers()
	var remotes []*remote
	for i, w := range e.workers {
		remotes = append(remotes, e.createRemoteKubernetesCluster(fmt.Sprintf("%s-w%d", e.meta.c.Namespace, i+1), w))
	}
	sc := newScyllaDBCluster(e.meta.c.Namespace, "backed-up", remotes)
	m := &multiDC{e: e, name: sc.Name, remotes: remotes}
	for _, dc := range sc.Spec.Datacenters {
		m.dcs = append(m.dcs, dc.Name)
		m.remoteNamespaces = append(m.remoteNamespaces, naming.ScyllaDBClusterRemoteNamespaceName(sc.Namespace, dc.Name))
	}
	if _, err := e.meta.scylla.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace).Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("can't create ScyllaDBCluster %s/%s: %v", sc.Namespace, sc.Name, err)
	}
	t.Cleanup(m.cleanUp)
	m.waitForConvergence("the ScyllaDBCluster to converge in both datacenters")
	token := e.clusterAuthToken(m)

	t.Log("A declared bucket with credentials, and a backup task storing into it from dc2 only")
	ns := sc.Namespace
	// Buckets are cluster-scoped, and bucket names short: one pair for the test, in its own control plane.
	bucketObject, bucketName := "datacenter-credentials", "e2e-datacenter-credentials"
	credentials := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bucket-credentials"},
		Data: map[string][]byte{
			naming.ScyllaDBBackupBucketAccessKeyIDKey:     []byte("AKIDFIRST"),
			naming.ScyllaDBBackupBucketSecretAccessKeyKey: []byte("first-secret"),
		},
	}
	if _, err := e.meta.c.Clients.Kube.CoreV1().Secrets(ns).Create(ctx, credentials, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	buckets := e.meta.scylla.ScyllaV1alpha1().ScyllaDBBackupBuckets()
	_, err := buckets.Create(ctx, &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: bucketObject},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:             scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName:           bucketName,
			Region:               "us-east-1",
			Endpoint:             "http://minio.example:9000",
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: ns, Name: credentials.Name},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("can't create ScyllaDBBackupBucket %q: %v", bucketObject, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := buckets.Delete(ctx, bucketObject, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("can't delete ScyllaDBBackupBucket %q: %v", bucketObject, err)
		}
	})
	tasks := e.meta.scylla.ScyllaV1alpha1().ScyllaDBManagerTasks(ns)
	task, err := tasks.Create(ctx, &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "backup"},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterKind, Name: sc.Name},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{Cron: ptr.To(backupCron)},
				Location:                    []string{m.dcs[1] + ":s3:" + bucketName},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	s3 := func(key, secret string) *scyllaagent.S3Config {
		return &scyllaagent.S3Config{AccessKeyID: key, SecretAccessKey: secret, Provider: scyllaagent.S3ProviderMinio, Region: "us-east-1", Endpoint: "http://minio.example:9000"}
	}
	e.waitForAgentS3(m, token, "dc2's agents to get the bucket's credentials, and dc1's none", []*scyllaagent.S3Config{nil, s3("AKIDFIRST", "first-secret")})

	t.Log("The task stores into the bucket from every datacenter")
	task.Spec.Backup.Location = []string{"s3:" + bucketName}
	if _, err := tasks.Update(ctx, task, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForAgentS3(m, token, "both datacenters' agents to get the bucket's credentials", []*scyllaagent.S3Config{s3("AKIDFIRST", "first-secret"), s3("AKIDFIRST", "first-secret")})

	t.Log("Rotated credentials reach both datacenters")
	credentials.Data[naming.ScyllaDBBackupBucketAccessKeyIDKey] = []byte("AKIDSECOND")
	credentials.Data[naming.ScyllaDBBackupBucketSecretAccessKeyKey] = []byte("second-secret")
	if _, err := e.meta.c.Clients.Kube.CoreV1().Secrets(ns).Update(ctx, credentials, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.waitForAgentS3(m, token, "both datacenters' agents to get the rotated credentials", []*scyllaagent.S3Config{s3("AKIDSECOND", "second-secret"), s3("AKIDSECOND", "second-secret")})

	meta, err := e.meta.c.Clients.Kube.CoreV1().Secrets(ns).Get(ctx, naming.ScyllaDBClusterAuthTokenSecretName(sc.Name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, got := parseAgentConfig(meta.Data[naming.ScyllaDBManagerAgentAuthTokenKey]); got != nil {
		t.Errorf("the meta cluster's token Secret holds an s3 section: the manager-controller's copy must hold the token only")
	}
}

// waitForAgentS3 waits until the agent configuration the worker's operator generates for datacenter i holds the
// cluster's token and the s3 section want[i] (none for nil).
func (e *env) waitForAgentS3(m *multiDC, token, what string, want []*scyllaagent.S3Config) {
	e.t.Helper()
	e.waitFor(credentialsTimeout, what, func(ctx context.Context) (bool, error) {
		for i, w := range e.workers {
			name := naming.AgentAuthTokenSecretName(m.datacenterName(i))
			secret, err := w.c.Clients.Kube.CoreV1().Secrets(m.remoteNamespaces[i]).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, fmt.Errorf("the agent auth-token Secret of %s: %w", m.dcs[i], err)
			}
			gotToken, got := parseAgentConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
			if gotToken != token {
				return false, fmt.Errorf("the agents of %s use another token than the cluster's", m.dcs[i])
			}
			if diff := cmp.Diff(want[i], got); diff != "" {
				// The diff shows the test's own made-up credentials only.
				return false, fmt.Errorf("the agent configuration of %s (Secret %s/%s of %s) has another s3 section (-want +got):\n%s", m.dcs[i], secret.Namespace, secret.Name, w.name(), diff)
			}
		}
		return true, nil
	})
}

// parseAgentConfig returns the token and s3 section of an agent configuration file.
func parseAgentConfig(data []byte) (string, *scyllaagent.S3Config) {
	var config struct {
		AuthToken string                `yaml:"auth_token"`
		S3        *scyllaagent.S3Config `yaml:"s3"`
	}
	if err := yaml.Unmarshal(data, &config); err != nil {
		return "", nil
	}
	return config.AuthToken, config.S3
}
