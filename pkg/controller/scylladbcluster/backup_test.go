package scylladbcluster

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

const (
	testCredentialsNamespace = "backup-credentials"
	testCredentialsSecret    = "shared-credentials"
	testBucketName           = "shared-backups"
)

// newBackupFixture is newFixture with the controller watching backup tasks and buckets through informers of the
// meta scylla clientset, and the objects of the meta cluster created.
func newBackupFixture(t *testing.T, sc *scyllav1alpha1.ScyllaDBCluster, objects []runtime.Object, remoteNames ...string) *fixture {
	t.Helper()
	f := newFixture(t, sc, remoteNames...)
	informers := scyllainformers.NewSharedInformerFactory(f.scyllaClient, 0)
	tasks, buckets := informers.Scylla().V1alpha1().ScyllaDBManagerTasks(), informers.Scylla().V1alpha1().ScyllaDBBackupBuckets()
	if err := f.controller.WatchBackups(tasks, buckets); err != nil {
		t.Fatal(err)
	}
	if err := f.controller.WatchBackups(tasks, buckets); err == nil {
		t.Error("expected a second WatchBackups to be refused")
	}
	informers.Start(f.ctx.Done())
	t.Cleanup(informers.Shutdown)
	f.synced = append(f.synced,
		syncedCache{"meta ScyllaDBManagerTasks", tasks.Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks("").List(ctx, metav1.ListOptions{})
		}},
		syncedCache{"meta ScyllaDBBackupBuckets", buckets.Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().List(ctx, metav1.ListOptions{})
		}},
	)
	for _, obj := range objects {
		var err error
		switch o := obj.(type) {
		case *scyllav1alpha1.ScyllaDBManagerTask:
			_, err = f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(o.Namespace).Create(f.ctx, o, metav1.CreateOptions{})
		case *scyllav1alpha1.ScyllaDBBackupBucket:
			_, err = f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().Create(f.ctx, o, metav1.CreateOptions{})
		case *corev1.Secret:
			_, err = f.kubeClient.CoreV1().Secrets(o.Namespace).Create(f.ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("can't create %T", obj)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !cache.WaitForCacheSync(f.ctx.Done(), tasks.Informer().HasSynced, buckets.Informer().HasSynced) {
		t.Fatal("the backup caches did not sync")
	}
	f.settle()
	return f
}

func newClusterBackupTask(name string, locations ...string) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterTaskKind, Name: testName},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
			Backup:             &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{Location: locations},
		},
	}
}

func newDeclaredBucket(name, bucketName, endpoint string) *scyllav1alpha1.ScyllaDBBackupBucket {
	return &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:             scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName:           bucketName,
			Region:               "us-east-1",
			Endpoint:             endpoint,
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: testCredentialsNamespace, Name: testCredentialsSecret},
		},
	}
}

func newBucketCredentials(accessKeyID, secretAccessKey string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testCredentialsNamespace, Name: testCredentialsSecret},
		Data: map[string][]byte{
			naming.ScyllaDBBackupBucketAccessKeyIDKey:     []byte(accessKeyID),
			naming.ScyllaDBBackupBucketSecretAccessKeyKey: []byte(secretAccessKey),
		},
	}
}

// remoteAgentConfig returns the token and the s3 section of the agent configuration in the remote copy of the token
// Secret of datacenter dc in rkc.
func remoteAgentConfig(t *testing.T, f *fixture, rkc, dc string) (string, *scyllaagent.S3Config) {
	t.Helper()
	secret := remoteObject[*corev1.Secret](f, rkc, secretsResource, naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, dc), tokenSecret)
	if secret == nil {
		t.Fatalf("%s: no remote token Secret", rkc)
	}
	var config struct {
		AuthToken string                `yaml:"auth_token"`
		S3        *scyllaagent.S3Config `yaml:"s3"`
	}
	if err := yaml.Unmarshal(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey], &config); err != nil {
		t.Fatal(err)
	}
	return config.AuthToken, config.S3
}

func TestEveryDatacenterOfAClusterBackingUpToADeclaredBucketGetsItsCredentials(t *testing.T) {
	t.Parallel()

	minio := &scyllaagent.S3Config{AccessKeyID: "AKID", SecretAccessKey: "s3cr3t", Provider: scyllaagent.S3ProviderMinio, Region: "us-east-1", Endpoint: "http://minio:9000"}
	tt := []struct {
		name    string
		objects []runtime.Object
		want    map[string]*scyllaagent.S3Config
		wantErr string
	}{
		{
			name: "a location without a datacenter: every datacenter",
			objects: []runtime.Object{newClusterBackupTask("daily", "s3:"+testBucketName), newDeclaredBucket("shared", testBucketName, "http://minio:9000"),
				newBucketCredentials("AKID", "s3cr3t")},
			want: map[string]*scyllaagent.S3Config{"dc1": minio, "dc2": minio},
		},
		{
			name: "a location of one datacenter: that one only",
			objects: []runtime.Object{newClusterBackupTask("daily", "dc2:s3:"+testBucketName, "dc1:s3:undeclared"), newDeclaredBucket("shared", testBucketName, "http://minio:9000"),
				newBucketCredentials("AKID", "s3cr3t")},
			want: map[string]*scyllaagent.S3Config{"dc2": minio},
		},
		{
			name: "tasks of other clusters, other kinds and other types give nothing",
			objects: func() []runtime.Object {
				other := newClusterBackupTask("theirs", "s3:"+testBucketName)
				other.Spec.ScyllaDBClusterRef.Name = "other"
				sdcTask := newClusterBackupTask("sdc", "s3:"+testBucketName)
				sdcTask.Spec.ScyllaDBClusterRef.Kind = "ScyllaDBDatacenter"
				repair := newClusterBackupTask("repair", "s3:"+testBucketName)
				repair.Spec.Type, repair.Spec.Backup = scyllav1alpha1.ScyllaDBManagerTaskTypeRepair, nil
				return []runtime.Object{other, sdcTask, repair, newDeclaredBucket("shared", testBucketName, "http://minio:9000"), newBucketCredentials("AKID", "s3cr3t")}
			}(),
			want: map[string]*scyllaagent.S3Config{},
		},
		{
			name: "a datacenter also backing up to a bucket without credentials gets none, and it is reported",
			objects: []runtime.Object{newClusterBackupTask("daily", "s3:"+testBucketName, "dc2:s3:by-role"), newDeclaredBucket("shared", testBucketName, "http://minio:9000"),
				func() runtime.Object {
					b := newDeclaredBucket("by-role", "by-role", "")
					b.Spec.CredentialsSecretRef = nil
					return b
				}(),
				newBucketCredentials("AKID", "s3cr3t")},
			want: map[string]*scyllaagent.S3Config{"dc1": minio},
			wantErr: `datacenter "dc2": ScyllaDBBackupBuckets "by-role" and "shared", both used by this datacenter's backup tasks, have different credentials: ` +
				`"shared" has a credentialsSecretRef and "by-role" has none`,
		},
		{
			name: "datacenters backing up to buckets without credentials only get nothing",
			objects: []runtime.Object{newClusterBackupTask("daily", "s3:by-role", "dc2:s3:other-role"),
				func() runtime.Object {
					b := newDeclaredBucket("by-role", "by-role", "")
					b.Spec.CredentialsSecretRef = nil
					return b
				}(),
				func() runtime.Object {
					b := newDeclaredBucket("other-role", "other-role", "https://s3.example.com")
					b.Spec.CredentialsSecretRef, b.Spec.Region = nil, "eu-west-1"
					return b
				}()},
			want: map[string]*scyllaagent.S3Config{},
		},
		{
			name:    "a missing credentials Secret is reported, and no datacenter gets credentials",
			objects: []runtime.Object{newClusterBackupTask("daily", "s3:"+testBucketName), newDeclaredBucket("shared", testBucketName, "")},
			want:    map[string]*scyllaagent.S3Config{},
			wantErr: `datacenter "dc1": can't use the credentials of ScyllaDBBackupBucket "shared": Secret "backup-credentials/shared-credentials" does not exist`,
		},
		{
			name: "a Secret without a key is reported without its values",
			objects: []runtime.Object{newClusterBackupTask("daily", "s3:"+testBucketName), newDeclaredBucket("shared", testBucketName, ""),
				newBucketCredentials("", "s3cr3t")},
			want:    map[string]*scyllaagent.S3Config{},
			wantErr: `has no key "access_key_id"`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newBackupFixture(t, newTwoDatacenterCluster(), tc.objects, "w1", "w2")
			err := f.sync()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			case err != nil && strings.Contains(err.Error(), "s3cr3t"):
				t.Fatalf("the error leaks the secret: %v", err)
			}
			got := map[string]*scyllaagent.S3Config{}
			for rkc, dc := range map[string]string{"w1": "dc1", "w2": "dc2"} {
				token, s3 := remoteAgentConfig(t, f, rkc, dc)
				if token != testToken {
					t.Errorf("%s: the remote configuration has token %q, want the cluster's", rkc, token)
				}
				if s3 != nil {
					got[dc] = s3
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("s3 sections by datacenter (-want +got):\n%s", diff)
			}
			// The meta token Secret, which the manager-controller reads, holds the token only.
			meta, err := f.kubeClient.CoreV1().Secrets(testNamespace).Get(f.ctx, tokenSecret, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s := string(meta.Data[naming.ScyllaDBManagerAgentAuthTokenKey]); strings.Contains(s, "s3") {
				t.Errorf("the meta token Secret holds more than the token: %q", s)
			}
		})
	}
}

func TestBucketCredentialsFollowChangesAndConvergeWithoutWrites(t *testing.T) {
	t.Parallel()

	f := newBackupFixture(t, newTwoDatacenterCluster(), []runtime.Object{
		newClusterBackupTask("daily", "s3:"+testBucketName), newDeclaredBucket("shared", testBucketName, ""), newBucketCredentials("AKID", "s3cr3t"),
	}, "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.rollOut("w1", "dc1", "10.0.1.1")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.rollOut("w2", "dc2", "10.0.2.1")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}

	t.Log("At rest: no writes anywhere, and the cluster is looked at again for its credentials")
	f.clearActions()
	queue := &delayRecordingQueue{TypedRateLimitingInterface: f.controller.queue, after: map[string]time.Duration{}}
	f.controller.queue = queue
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("want no writes at rest, got %v", w)
	}
	if got := queue.delay(testKey); got != referencedObjectsPeriod {
		t.Errorf("want the cluster synced again after %v to follow its credentials Secret, got %v", referencedObjectsPeriod, got)
	}
	gets := 0
	for _, a := range f.kubeClient.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "secrets" && a.GetNamespace() == testCredentialsNamespace {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the credentials Secret both datacenters use was read %d times in one sync, want once", gets)
	}

	t.Log("Rotated credentials reach every datacenter")
	if _, err := f.kubeClient.CoreV1().Secrets(testCredentialsNamespace).Update(f.ctx, newBucketCredentials("AKID2", "n3w"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for rkc, dc := range map[string]string{"w1": "dc1", "w2": "dc2"} {
		if _, s3 := remoteAgentConfig(t, f, rkc, dc); s3 == nil || s3.AccessKeyID != "AKID2" || s3.SecretAccessKey != "n3w" {
			t.Errorf("%s: want the rotated credentials, got %+v", rkc, s3)
		}
	}

	t.Log("An API server that can't be read leaves the remote configurations as they are")
	f.kubeClient.PrependReactor("get", "secrets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetNamespace() != testCredentialsNamespace {
			return false, nil, nil
		}
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})
	f.clearActions()
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), "etcd is down") {
		t.Errorf("want the read error, got %v", err)
	}
	if w := f.writes(); len(w["w1"]) != 0 || len(w["w2"]) != 0 {
		t.Errorf("want no remote writes while the credentials are unknown, got %v", w)
	}

	t.Log("The task goes: the s3 section goes")
	if err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBManagerTasks(testNamespace).Delete(f.ctx, "daily", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for rkc, dc := range map[string]string{"w1": "dc1", "w2": "dc2"} {
		if _, s3 := remoteAgentConfig(t, f, rkc, dc); s3 != nil {
			t.Errorf("%s: want no s3 section without backups, got %+v", rkc, s3)
		}
	}
}

// delayRecordingQueue is the controller's queue with its delayed additions recorded.
type delayRecordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	after map[string]time.Duration
}

func (q *delayRecordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	q.after[key] = d
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

func (q *delayRecordingQueue) delay(key string) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.after[key]
}

func TestBackupEventsEnqueueTheClustersThatUseTheBucket(t *testing.T) {
	t.Parallel()

	f := newBackupFixture(t, newTwoDatacenterCluster(), []runtime.Object{
		newClusterBackupTask("daily", "dc1:s3:"+testBucketName),
	}, "w1", "w2")
	c := f.controller
	drain := func() []string {
		var keys []string
		deadline := time.Now().Add(100 * time.Millisecond)
		for c.queue.Len() > 0 || time.Now().Before(deadline) {
			if c.queue.Len() == 0 {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			key, _ := c.queue.Get()
			keys = append(keys, key)
			c.queue.Done(key)
			c.queue.Forget(key)
		}
		slices.Sort(keys)
		return slices.Compact(keys)
	}
	drain()

	other := newClusterBackupTask("weekly", "s3:elsewhere")
	other.Spec.ScyllaDBClusterRef.Name = "other"
	tt := []struct {
		name string
		fire func()
		want []string
	}{
		{"a task of the cluster", func() { c.backupTaskHandlerFuncs().OnAdd(newClusterBackupTask("x", "s3:b"), false) }, []string{testKey}},
		{"a task moved from one cluster to another", func() { c.backupTaskHandlerFuncs().OnUpdate(newClusterBackupTask("x", "s3:b"), other) }, []string{testKey, testNamespace + "/other"}},
		{"a deleted task's tombstone", func() {
			c.backupTaskHandlerFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "x", Obj: newClusterBackupTask("x", "s3:b")})
		}, []string{testKey}},
		{"a bucket a task names, for another datacenter too", func() {
			c.backupBucketHandlerFuncs().OnAdd(newDeclaredBucket("shared", testBucketName, ""), false)
		}, []string{testKey}},
		{"a bucket no task names", func() { c.backupBucketHandlerFuncs().OnAdd(newDeclaredBucket("other", "unused", ""), false) }, nil},
		{"a bucket renamed to what a task names", func() {
			c.backupBucketHandlerFuncs().OnUpdate(newDeclaredBucket("b", "unused", ""), newDeclaredBucket("b", testBucketName, ""))
		}, []string{testKey}},
	}
	for _, tc := range tt {
		tc.fire()
		if diff := cmp.Diff(tc.want, drain()); diff != "" {
			t.Errorf("%s: enqueued keys (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestWithAgentS3KeepsTheToken(t *testing.T) {
	t.Parallel()
	secret, err := makeRemoteAuthTokenSecret(newTwoDatacenterCluster(), &newTwoDatacenterCluster().Spec.Datacenters[0], testToken)
	if err != nil {
		t.Fatal(err)
	}
	s3 := &scyllaagent.S3Config{AccessKeyID: "a", SecretAccessKey: "b"}
	got, err := withAgentS3(secret, testToken, s3)
	if err != nil {
		t.Fatal(err)
	}
	token, err := scyllaagent.AuthTokenFromConfig(got.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil || token != testToken {
		t.Errorf("want the token kept, got %q (%v)", token, err)
	}
}
