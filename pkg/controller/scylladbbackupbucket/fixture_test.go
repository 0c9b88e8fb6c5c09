package scylladbbackupbucket

import (
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
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
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

const (
	testBucket     = "shared-backups"
	testBucketName = "backups"
	testAccessKey  = "AKIDEXAMPLE"
	testSecretKey  = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

var testStart = time.Date(2025, time.January, 1, 12, 0, 0, 0, time.UTC)

// fixture runs the controller's sync against fake clientsets, informer caches filled by hand, and the in-memory
// object store.
type fixture struct {
	kubeClient   *kubefake.Clientset
	scyllaClient *scyllafake.Clientset
	factory      scyllainformers.SharedInformerFactory
	store        *objectstorefake.Store
	controller   *Controller
	recorder     *record.FakeRecorder

	mu      sync.Mutex
	configs []objectstore.Config
}

// newFixture returns a fixture whose API servers hold objects (Secrets go to the Kubernetes one) and whose store
// holds buckets.
func newFixture(t *testing.T, store *objectstorefake.Store, objects ...runtime.Object) *fixture {
	t.Helper()
	var kubeObjects, scyllaObjects []runtime.Object
	for _, obj := range objects {
		if _, ok := obj.(*corev1.Secret); ok {
			kubeObjects = append(kubeObjects, obj)
		} else {
			scyllaObjects = append(scyllaObjects, obj)
		}
	}
	f := &fixture{
		kubeClient:   kubefake.NewClientset(kubeObjects...),
		scyllaClient: scyllafake.NewSimpleClientset(scyllaObjects...),
		store:        store,
		recorder:     record.NewFakeRecorder(100),
	}
	apiserverfields.BumpResourceVersions(&f.scyllaClient.Fake, f.scyllaClient.Tracker())
	f.factory = scyllainformers.NewSharedInformerFactory(f.scyllaClient, 0)
	c, err := NewController(f.kubeClient, f.scyllaClient,
		f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(), f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries(),
		func(cfg objectstore.Config) (objectstore.Interface, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.configs = append(f.configs, cfg)
			return f.store, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.eventBroadcaster.Shutdown)
	t.Cleanup(c.queue.ShutDown)
	c.eventRecorder = f.recorder
	c.clock = func() time.Time { return testStart }
	f.controller = c
	f.catchUp(t)
	f.kubeClient.ClearActions()
	f.scyllaClient.ClearActions()
	return f
}

// catchUp makes the informer caches hold what the fake API server holds.
func (f *fixture) catchUp(t *testing.T) {
	t.Helper()
	for _, s := range []struct {
		resource, kind string
		indexer        cache.Indexer
	}{
		{"scylladbbackupbuckets", "ScyllaDBBackupBucket", f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets().Informer().GetIndexer()},
		{"scylladbbackupentries", "ScyllaDBBackupEntry", f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries().Informer().GetIndexer()},
	} {
		list, err := f.scyllaClient.Tracker().List(scyllav1alpha1.SchemeGroupVersion.WithResource(s.resource), scyllav1alpha1.SchemeGroupVersion.WithKind(s.kind), "")
		if err != nil {
			t.Fatal(err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			t.Fatal(err)
		}
		objects := make([]any, 0, len(items))
		for _, item := range items {
			objects = append(objects, item)
		}
		if err := s.indexer.Replace(objects, ""); err != nil {
			t.Fatal(err)
		}
	}
}

// sync runs one sync of the test bucket and catches the caches up.
func (f *fixture) sync(t *testing.T) error {
	t.Helper()
	err := f.controller.sync(t.Context(), testBucket)
	f.catchUp(t)
	return err
}

// writes returns and forgets the writes made through the clientsets, as "verb resource[/sub]".
func (f *fixture) writes() []string {
	var writes []string
	for _, a := range append(f.kubeClient.Actions(), f.scyllaClient.Actions()...) {
		switch a.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		w := a.GetVerb() + " " + a.GetResource().Resource
		if sub := a.GetSubresource(); len(sub) != 0 {
			w += "/" + sub
		}
		writes = append(writes, w)
	}
	f.kubeClient.ClearActions()
	f.scyllaClient.ClearActions()
	return writes
}

// storeCalls returns and forgets the store's calls, as "Op bucket".
func (f *fixture) storeCalls() []string {
	var calls []string
	for _, c := range f.store.Calls() {
		calls = append(calls, string(c.Op)+" "+c.Bucket)
	}
	f.store.ResetCalls()
	return calls
}

func (f *fixture) bucket(t *testing.T) *scyllav1alpha1.ScyllaDBBackupBucket {
	t.Helper()
	b, err := f.scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().Get(t.Context(), testBucket, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (f *fixture) events() []string {
	return fakeclient.Events(f.recorder)
}

func newBucket() *scyllav1alpha1.ScyllaDBBackupBucket {
	return &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: testBucket, UID: "bucket-uid", ResourceVersion: "1", Generation: 1},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:   scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName: testBucketName,
			Region:     "eu-west-1",
			Endpoint:   "http://127.0.0.1:7070",
		},
	}
}

func newCredentialsSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "backup-creds", Name: "s3"},
		Data: map[string][]byte{
			"access_key_id":     []byte(testAccessKey),
			"secret_access_key": []byte(testSecretKey),
		},
	}
}

func newEntry(namespace, name, bucketRef string, deleting bool) *scyllav1alpha1.ScyllaDBBackupEntry {
	e := &scyllav1alpha1.ScyllaDBBackupEntry{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID(name + "-uid"), ResourceVersion: "1"},
		Spec:       scyllav1alpha1.ScyllaDBBackupEntrySpec{BucketRef: bucketRef},
	}
	if deleting {
		e.DeletionTimestamp = new(metav1.NewTime(testStart))
		e.Finalizers = []string{"scylla-operator.scylladb.com/scylladb-backup-entry"}
	}
	return e
}

// conditionStatuses returns "<type>=<status>/<reason>" of the bucket's conditions in the order written.
func conditionStatuses(b *scyllav1alpha1.ScyllaDBBackupBucket) []string {
	var out []string
	for _, c := range b.Status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return out
}
