package scylladbbackupentry

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/objectstore"
	objectstorefake "github.com/scyllakube/scylla-operator/pkg/objectstore/fake"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

const (
	testNamespace  = "scylla"
	testEntryName  = "basic-shared"
	testBucketRef  = "shared"
	testBucketName = "shared-backups"
	testDCName     = "basic"
	testDCUID      = types.UID("sdc-uid")
	// testClusterID names the test cluster's directory.
	testClusterID = "6f1d3f4e-2b1a-4c7d-9e8f-0a1b2c3d4e5f"
	// neighbourClusterID is another UUID sharing all but the last character of testClusterID.
	neighbourClusterID = "6f1d3f4e-2b1a-4c7d-9e8f-0a1b2c3d4e50"

	testEndpoint    = "http://127.0.0.1:7070"
	testRegion      = "eu-west-1"
	testAccessKeyID = "AKIATESTKEY"
	testSecretKey   = "test-secret-do-not-leak"

	mergePatch       = "patch scylladbbackupentries"
	statusApply      = "apply scylladbbackupentries/status"
	testGracePeriod  = 48 * time.Hour
	testCredsSecret  = "bucket-credentials"
	testCredsSecretN = "scylla-operator"
)

// testCreated is when the test objects were created; testDeleted is when the test cluster (and so its entry) was
// deleted.
var (
	testCreated = time.Date(2026, time.March, 1, 8, 0, 0, 0, time.UTC)
	testDeleted = time.Date(2026, time.March, 10, 12, 0, 0, 0, time.UTC)
)

// testClock is a settable clock.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// recordingQueue is the controller's queue with the delayed additions recorded.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	mu    sync.Mutex
	added []string
	after map[string]time.Duration
}

func (q *recordingQueue) Add(key string) {
	q.mu.Lock()
	q.added = append(q.added, key)
	q.mu.Unlock()
	q.TypedRateLimitingInterface.Add(key)
}

func (q *recordingQueue) AddAfter(key string, d time.Duration) {
	q.mu.Lock()
	q.after[key] = d
	q.mu.Unlock()
	q.TypedRateLimitingInterface.AddAfter(key, d)
}

// fixture runs the controller's sync against fake clientsets whose informer caches are filled by hand, and an
// in-memory object store.
type fixture struct {
	clock        *testClock
	kubeClient   *kubefake.Clientset
	scyllaClient *scyllafake.Clientset
	tracker      clienttesting.ObjectTracker
	store        *objectstorefake.Store

	// storeErr, when set, is what newStore answers.
	storeErr     error
	storeConfigs []objectstore.Config

	factory    scyllainformers.SharedInformerFactory
	controller *Controller
	queue      *recordingQueue
	recorder   *record.FakeRecorder

	batchSize int
}

// newFixture returns a fixture whose API server holds objects and secrets, whose clock reads now, and whose store
// holds the bucket testBucketName with keys.
func newFixture(t *testing.T, now time.Time, objects []runtime.Object, keys []string, secrets ...*corev1.Secret) *fixture {
	t.Helper()

	kubeObjects := make([]runtime.Object, 0, len(secrets))
	for _, s := range secrets {
		kubeObjects = append(kubeObjects, s)
	}
	// Server-side apply with the CRDs' list types: conditions merge by type, as they do in the API server.
	scyllaClient, tracker, err := apiserverfields.NewScyllaClientset(objects...)
	if err != nil {
		t.Fatal(err)
	}
	store := objectstorefake.New(testBucketName)
	for _, k := range keys {
		if err := store.PutObject(t.Context(), testBucketName, k, []byte("data of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	store.ResetCalls()

	f := &fixture{
		clock:        &testClock{now: now},
		kubeClient:   kubefake.NewClientset(kubeObjects...),
		scyllaClient: scyllaClient,
		tracker:      tracker,
		store:        store,
		batchSize:    defaultPurgeBatchSize,
	}
	f.restart(t)
	return f
}

// restart replaces the controller with a new one, with new informers that know only what the API server holds, as
// a restarted manager-controller would.
func (f *fixture) restart(t *testing.T) {
	t.Helper()
	f.factory = scyllainformers.NewSharedInformerFactory(f.scyllaClient, 0)
	controller, err := NewController(
		f.kubeClient,
		f.scyllaClient,
		f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries(),
		f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		f.factory.Scylla().V1alpha1().ScyllaDBDatacenters(),
		f.factory.Scylla().V1alpha1().ScyllaDBClusters(),
		func(cfg objectstore.Config) (objectstore.Interface, error) {
			f.storeConfigs = append(f.storeConfigs, cfg)
			if f.storeErr != nil {
				return nil, f.storeErr
			}
			return f.store, nil
		},
	)
	if err != nil {
		t.Fatalf("can't create controller: %v", err)
	}
	t.Cleanup(controller.eventBroadcaster.Shutdown)
	t.Cleanup(controller.queue.ShutDown)
	f.recorder = record.NewFakeRecorder(1000)
	controller.eventRecorder = f.recorder
	controller.clock = f.clock.Now
	controller.purgeBatchSize = f.batchSize
	f.queue = &recordingQueue{TypedRateLimitingInterface: controller.queue, after: map[string]time.Duration{}}
	controller.queue = f.queue
	f.controller = controller
	f.catchUp(t)
	f.scyllaClient.ClearActions()
}

// catchUp makes the informer caches hold exactly what the fake API server holds.
func (f *fixture) catchUp(t *testing.T) {
	t.Helper()
	stores := []struct {
		resource string
		kind     string
		indexer  cache.Indexer
	}{
		{"scylladbbackupentries", "ScyllaDBBackupEntry", f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries().Informer().GetIndexer()},
		{"scylladbbackupbuckets", "ScyllaDBBackupBucket", f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets().Informer().GetIndexer()},
		{"scylladbdatacenters", "ScyllaDBDatacenter", f.factory.Scylla().V1alpha1().ScyllaDBDatacenters().Informer().GetIndexer()},
		{"scylladbclusters", "ScyllaDBCluster", f.factory.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetIndexer()},
	}
	for _, s := range stores {
		list, err := f.tracker.List(scyllav1alpha1.SchemeGroupVersion.WithResource(s.resource), scyllav1alpha1.SchemeGroupVersion.WithKind(s.kind), "")
		if err != nil {
			t.Fatalf("can't list %s: %v", s.resource, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatalf("can't extract %s: %v", s.resource, err)
		}
		objects := make([]any, 0, len(items))
		for _, item := range items {
			objects = append(objects, item)
		}
		if err := s.indexer.Replace(objects, ""); err != nil {
			t.Fatalf("can't fill the %s cache: %v", s.resource, err)
		}
	}
}

// sync runs one sync of the entry namespace/name, with the caches caught up afterwards.
func (f *fixture) sync(t *testing.T, namespace, name string) error {
	t.Helper()
	err := f.controller.sync(t.Context(), namespace+"/"+name)
	f.catchUp(t)
	return err
}

// mustSync runs one sync of the test entry and fails the test on error.
func (f *fixture) mustSync(t *testing.T) {
	t.Helper()
	if err := f.sync(t, testNamespace, testEntryName); err != nil {
		t.Fatalf("unexpected sync error: %v", err)
	}
}

// entry returns the entry namespace/name from the fake API server.
func (f *fixture) entry(t *testing.T, namespace, name string) *scyllav1alpha1.ScyllaDBBackupEntry {
	t.Helper()
	entry, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupEntries(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return entry
}

// testEntry returns the test entry from the fake API server.
func (f *fixture) testEntry(t *testing.T) *scyllav1alpha1.ScyllaDBBackupEntry {
	t.Helper()
	return f.entry(t, testNamespace, testEntryName)
}

// put stores obj in the fake API server, as another actor would, and catches the caches up.
func (f *fixture) put(t *testing.T, obj runtime.Object, resource string) {
	t.Helper()
	accessor, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	gvr := scyllav1alpha1.SchemeGroupVersion.WithResource(resource)
	if err := f.tracker.Update(gvr, obj, accessor.GetNamespace()); err != nil {
		t.Fatalf("can't update %s %q: %v", resource, accessor.GetName(), err)
	}
	f.catchUp(t)
}

// writes returns and forgets the writes the controller made through the scylla clientset.
func (f *fixture) writes() []string {
	w := fakeclient.Writes(f.scyllaClient.Actions())
	f.scyllaClient.ClearActions()
	return w
}

// events returns and forgets the recorded events.
func (f *fixture) events() []string {
	return fakeclient.Events(f.recorder)
}

// storeCalls returns and forgets the object store calls.
func (f *fixture) storeCalls() []objectstorefake.Call {
	calls := f.store.Calls()
	f.store.ResetCalls()
	return calls
}

func newBucket() *scyllav1alpha1.ScyllaDBBackupBucket {
	return &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{
			Name:              testBucketRef,
			UID:               "bucket-uid",
			ResourceVersion:   "1",
			Generation:        1,
			CreationTimestamp: metav1.NewTime(testCreated),
		},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:             scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName:           testBucketName,
			Region:               testRegion,
			Endpoint:             testEndpoint,
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: testCredsSecretN, Name: testCredsSecret},
			DeletionGracePeriod:  &metav1.Duration{Duration: testGracePeriod},
		},
	}
}

func newCredentialsSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testCredsSecretN, Name: testCredsSecret},
		Data: map[string][]byte{
			naming.ScyllaDBBackupBucketAccessKeyIDKey:     []byte(testAccessKeyID),
			naming.ScyllaDBBackupBucketSecretAccessKeyKey: []byte(testSecretKey),
		},
	}
}

func newDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            testDCName,
			UID:             testDCUID,
			ResourceVersion: "1",
		},
	}
}

// newEntry returns the test entry, with the finalizer on, of the test datacenter in the test bucket.
func newEntry() *scyllav1alpha1.ScyllaDBBackupEntry {
	return &scyllav1alpha1.ScyllaDBBackupEntry{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         testNamespace,
			Name:              testEntryName,
			UID:               "entry-uid",
			ResourceVersion:   "1",
			Generation:        1,
			CreationTimestamp: metav1.NewTime(testCreated),
			Finalizers:        []string{naming.ScyllaDBBackupEntryFinalizer},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "scylla.scylladb.com/v1alpha1", Kind: "ScyllaDBDatacenter", Name: testDCName, UID: testDCUID,
				BlockOwnerDeletion: new(false),
			}},
		},
		Spec: scyllav1alpha1.ScyllaDBBackupEntrySpec{
			BucketRef:        testBucketRef,
			ClusterRef:       scyllav1alpha1.ScyllaDBBackupEntryClusterReference{Kind: scyllaDBDatacenterKind, Name: testDCName, UID: testDCUID},
			ManagerClusterID: testClusterID,
		},
	}
}

// deleted returns entry as garbage collection leaves it once its cluster is deleted: with a deletion timestamp.
func deleted(entry *scyllav1alpha1.ScyllaDBBackupEntry) *scyllav1alpha1.ScyllaDBBackupEntry {
	entry.DeletionTimestamp = new(metav1.NewTime(testDeleted))
	return entry
}

// annotated returns entry with the retention annotation set to value.
func annotated(entry *scyllav1alpha1.ScyllaDBBackupEntry, value string) *scyllav1alpha1.ScyllaDBBackupEntry {
	entry.Annotations = map[string]string{naming.ScyllaDBBackupRetentionAnnotation: value}
	return entry
}

// clusterKeys are keys of the test cluster's directory, one of each kind and a few more.
func clusterKeys(id string) []string {
	return []string{
		"backup/meta/cluster/" + id + "/dc/dc1/node/n1/manifest.json.gz",
		"backup/meta/cluster/" + id + "/dc/dc1/node/n2/manifest.json.gz",
		"backup/schema/cluster/" + id + "/task_1_tag_sm_20260301.cql.tar.gz",
		"backup/sst/cluster/" + id + "/dc/dc1/node/n1/keyspace/ks/table/t1/me-1-big-Data.db",
		"backup/sst/cluster/" + id + "/dc/dc1/node/n1/keyspace/ks/table/t1/me-1-big-Index.db",
		"backup/sst/cluster/" + id + "/dc/dc1/node/n2/keyspace/ks/table/t1/me-2-big-Data.db",
	}
}

// foreignKeys are keys the purge of testClusterID must never delete: another cluster's whose ID shares all but one
// character, and keys just outside the directory's prefixes.
func foreignKeys() []string {
	return append(clusterKeys(neighbourClusterID),
		"backup/meta/cluster/"+testClusterID,
		"backup/sst/cluster/"+testClusterID+"x/dc/dc1/node/n1/me-1-big-Data.db",
		"backup/sst/cluster/"+testClusterID+"-old/me-1-big-Data.db",
		"backup/task/cluster/"+testClusterID+"/task.json",
		"other/backup/sst/cluster/"+testClusterID+"/me-1-big-Data.db",
		"backup/sst/cluster/"+testClusterID[:35]+"/me-1-big-Data.db",
	)
}

// allKeys are clusterKeys of testClusterID and foreignKeys, sorted.
func allKeys() []string {
	keys := append(clusterKeys(testClusterID), foreignKeys()...)
	slices.Sort(keys)
	return keys
}

// conditionStatuses returns "<type>=<status>/<reason>" of the entry's conditions, sorted.
func conditionStatuses(entry *scyllav1alpha1.ScyllaDBBackupEntry) []string {
	var out []string
	for _, c := range entry.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	slices.Sort(out)
	return out
}

// conditionMessage returns the message of the entry's condition condType.
func conditionMessage(entry *scyllav1alpha1.ScyllaDBBackupEntry, condType string) string {
	if c := meta.FindStatusCondition(entry.Status.Conditions, condType); c != nil {
		return c.Message
	}
	return ""
}

// errStoreDown is what an unreachable store answers.
var errStoreDown = errors.New("dial tcp 127.0.0.1:7070: connect: connection refused")
