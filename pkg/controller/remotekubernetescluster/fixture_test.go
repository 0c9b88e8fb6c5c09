package remotekubernetescluster

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
)

const (
	testName            = "dc2"
	testUID             = types.UID("5e0f7a3c-2b1d-4c6e-9f8a-7b6c5d4e3f2a")
	testSecretNamespace = "credentials"
	testSecretName      = "dc2-kubeconfig"
	testSecretRef       = testSecretNamespace + "/" + testSecretName
	testServer          = "https://dc2.example.com:6443"
	testOtherServer     = "https://dc2-new.example.com:6443"
	// testToken is the credential of the test kubeconfigs; no condition or event may quote it.
	testToken = "remote-token-do-not-leak"
)

// testNow is when the tests' syncs run, unless a test moves the clock.
var testNow = time.Date(2026, time.January, 2, 3, 4, 5, 0, time.UTC)

// newRKC returns a RemoteKubernetesCluster of generation 3 with the finalizer, referencing the test Secret.
func newRKC() *scyllav1alpha1.RemoteKubernetesCluster {
	return &scyllav1alpha1.RemoteKubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{
			Name:            testName,
			UID:             testUID,
			Generation:      3,
			ResourceVersion: "10",
			Finalizers:      []string{naming.RemoteKubernetesClusterFinalizer},
		},
		Spec: scyllav1alpha1.RemoteKubernetesClusterSpec{
			KubeconfigSecretRef: corev1.SecretReference{Namespace: testSecretNamespace, Name: testSecretName},
		},
	}
}

// kubeconfig returns a self-contained kubeconfig reaching server.
func kubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["remote"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	config.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: testToken}
	config.Contexts["remote"] = &clientcmdapi.Context{Cluster: "remote", AuthInfo: "operator"}
	config.CurrentContext = "remote"
	data, err := clientcmd.Write(*config)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newSecret returns the test kubeconfig Secret with data.
func newSecret(data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: testSecretNamespace, Name: testSecretName, ResourceVersion: "5"},
		Data:       data,
	}
}

// kubeconfigSecret returns the test Secret holding a kubeconfig reaching server.
func kubeconfigSecret(t *testing.T, server string) *corev1.Secret {
	t.Helper()
	return newSecret(map[string][]byte{naming.KubeconfigSecretKey: kubeconfig(t, server)})
}

// newScyllaDBCluster returns a ScyllaDBCluster with a datacenter in each of remoteClusters.
func newScyllaDBCluster(namespace, name string, remoteClusters ...string) *scyllav1alpha1.ScyllaDBCluster {
	sc := &scyllav1alpha1.ScyllaDBCluster{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, ResourceVersion: "1"}}
	for i, rc := range remoteClusters {
		sc.Spec.Datacenters = append(sc.Spec.Datacenters, scyllav1alpha1.ScyllaDBClusterDatacenter{
			Name:                        "dc" + string(rune('a'+i)),
			RemoteKubernetesClusterName: rc,
		})
	}
	return sc
}

// remotes hands out fake clientsets for the remote clusters, one set per client build, by server; a server marked
// unreachable fails every health check.
type remotes struct {
	lock        sync.Mutex
	unreachable map[string]bool
	// objects are what the remote Kubernetes API server of a server holds when a client is built.
	objects map[string][]runtime.Object
	kube    []*kubefake.Clientset
	builds  []string
}

func (r *remotes) newClients(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
	r.lock.Lock()
	defer r.lock.Unlock()
	host := config.Host
	kube := kubefake.NewClientset(r.objects[host]...)
	kube.PrependReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) {
		r.lock.Lock()
		defer r.lock.Unlock()
		if r.unreachable[host] {
			return true, nil, errors.New(`Get "` + host + `/version": dial tcp: connect: connection refused`)
		}
		return false, nil, nil
	})
	r.kube = append(r.kube, kube)
	r.builds = append(r.builds, host)
	return kube, scyllafake.NewClientset(), nil
}

func (r *remotes) setUnreachable(server string, unreachable bool) {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.unreachable[server] = unreachable
}

// probes counts the health checks of every remote client built so far.
func (r *remotes) probes() int {
	r.lock.Lock()
	defer r.lock.Unlock()
	n := 0
	for _, kube := range r.kube {
		for _, a := range kube.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "version" {
				n++
			}
		}
	}
	return n
}

// recordingQueue records the delays the controller asks for.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	lock   sync.Mutex
	after  map[string]time.Duration
	added  []string
	queued []string
}

func (q *recordingQueue) AddAfter(key string, d time.Duration) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.after[key] = d
}

func (q *recordingQueue) Add(key string) {
	q.lock.Lock()
	defer q.lock.Unlock()
	q.added = append(q.added, key)
}

// takeAdded returns the keys added since the last call.
func (q *recordingQueue) takeAdded() []string {
	q.lock.Lock()
	defer q.lock.Unlock()
	added := q.added
	q.added = nil
	return added
}

func (q *recordingQueue) requeueAfter(key string) (time.Duration, bool) {
	q.lock.Lock()
	defer q.lock.Unlock()
	d, ok := q.after[key]
	return d, ok
}

// fixture is a controller over fake clientsets whose informer caches hold the given objects, with a remote client
// pool over fake remote clientsets and a clock the test moves.
type fixture struct {
	t               *testing.T
	kubeClient      *kubefake.Clientset
	scyllaClient    *scyllafake.Clientset
	scyllaTracker   clienttesting.ObjectTracker
	scyllaInformers scyllainformers.SharedInformerFactory
	controller      *Controller
	pool            *remoteclient.Pool
	remotes         *remotes
	queue           *recordingQueue
	recorder        *record.FakeRecorder

	clockLock sync.Mutex
	now       time.Time
}

func newFixture(t *testing.T, rkc *scyllav1alpha1.RemoteKubernetesCluster, secret *corev1.Secret, scs ...*scyllav1alpha1.ScyllaDBCluster) *fixture {
	t.Helper()
	var kubeObjects []runtime.Object
	if secret != nil {
		kubeObjects = append(kubeObjects, secret)
	}
	kubeClient := kubefake.NewClientset(kubeObjects...)
	scyllaObjects := []runtime.Object{rkc}
	for _, sc := range scs {
		scyllaObjects = append(scyllaObjects, sc)
	}
	scyllaClient, scyllaTracker, err := apiserverfields.NewScyllaClientset(scyllaObjects...)
	if err != nil {
		t.Fatal(err)
	}
	scyllaInformers := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)

	f := &fixture{
		t:               t,
		kubeClient:      kubeClient,
		scyllaClient:    scyllaClient,
		scyllaTracker:   scyllaTracker,
		scyllaInformers: scyllaInformers,
		remotes:         &remotes{unreachable: map[string]bool{}},
		now:             testNow,
	}
	f.pool = remoteclient.NewPool(remoteclient.Options{NewClients: f.remotes.newClients, Clock: f.clock})
	t.Cleanup(f.pool.Shutdown)

	c, err := NewController(kubeClient, scyllaClient,
		scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		f.pool)
	if err != nil {
		t.Fatal(err)
	}
	f.queue = &recordingQueue{TypedRateLimitingInterface: c.queue, after: map[string]time.Duration{}}
	c.queue = f.queue
	f.recorder = record.NewFakeRecorder(100)
	c.eventRecorder = f.recorder
	c.now = f.clock
	f.controller = c

	f.cache(rkc)
	for _, sc := range scs {
		f.cache(sc)
	}
	return f
}

func (f *fixture) clock() time.Time {
	f.clockLock.Lock()
	defer f.clockLock.Unlock()
	return f.now
}

// advance moves the clock by d.
func (f *fixture) advance(d time.Duration) {
	f.clockLock.Lock()
	defer f.clockLock.Unlock()
	f.now = f.now.Add(d)
}

// cache puts objects into the informer caches, replacing those of the same name.
func (f *fixture) cache(objects ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objects {
		var err error
		switch obj.(type) {
		case *scyllav1alpha1.RemoteKubernetesCluster:
			err = f.scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters().Informer().GetIndexer().Update(obj)
		case *scyllav1alpha1.ScyllaDBCluster:
			err = f.scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetIndexer().Update(obj)
		default:
			f.t.Fatalf("the fixture can't cache a %T", obj)
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// uncache removes a ScyllaDBCluster from the informer cache, as its deletion would.
func (f *fixture) uncache(sc *scyllav1alpha1.ScyllaDBCluster) {
	f.t.Helper()
	if err := f.scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetIndexer().Delete(sc); err != nil {
		f.t.Fatal(err)
	}
}

// waitForRemoteCaches waits for the caches of the test RemoteKubernetesCluster's remote client to sync, as they have
// in a running operator.
func (f *fixture) waitForRemoteCaches() {
	f.t.Helper()
	rc, ok := f.pool.Get(testName)
	if !ok {
		f.t.Fatal("the RemoteKubernetesCluster has no remote client")
	}
	if !cache.WaitForCacheSync(f.t.Context().Done(), rc.HasSynced) {
		f.t.Fatal("the remote caches did not sync")
	}
}

// setSecret replaces the kubeconfig Secret in the API server.
func (f *fixture) setSecret(secret *corev1.Secret) {
	f.t.Helper()
	if err := f.kubeClient.Tracker().Update(corev1.SchemeGroupVersion.WithResource("secrets"), secret, secret.Namespace); err != nil {
		f.t.Fatal(err)
	}
}

// stored returns the RemoteKubernetesCluster as the API server holds it.
func (f *fixture) stored() *scyllav1alpha1.RemoteKubernetesCluster {
	f.t.Helper()
	obj, err := f.scyllaTracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("remotekubernetesclusters"), "", testName)
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*scyllav1alpha1.RemoteKubernetesCluster)
}

// recache puts the RemoteKubernetesCluster as the API server holds it into the cache, as its watch event would, and
// forgets the actions and events so far.
func (f *fixture) recache() {
	f.t.Helper()
	f.cache(f.stored())
	f.scyllaClient.ClearActions()
	f.kubeClient.ClearActions()
	f.events()
}

// sync runs one sync of the test RemoteKubernetesCluster.
func (f *fixture) sync() error {
	f.t.Helper()
	return f.controller.sync(f.t.Context(), testName)
}

// writes returns the write actions of the local clients as "<verb> <resource>[/<subresource>]", apply patches as
// "apply".
func (f *fixture) writes() []string {
	return fakeclient.Writes(append(f.kubeClient.Actions(), f.scyllaClient.Actions()...))
}

// events returns the events recorded since the last call.
func (f *fixture) events() []string {
	return fakeclient.Events(f.recorder)
}

// condition returns the stored condition condType, failing the test when there is none.
func (f *fixture) condition(condType string) metav1.Condition {
	f.t.Helper()
	c := meta.FindStatusCondition(f.stored().Status.Conditions, condType)
	if c == nil {
		f.t.Fatalf("the RemoteKubernetesCluster has no %s condition: %+v", condType, f.stored().Status.Conditions)
	}
	return *c
}

// summary returns "<status> <reason>" of every stored condition by type.
func (f *fixture) summary() map[string]string {
	out := map[string]string{}
	for _, c := range f.stored().Status.Conditions {
		out[c.Type] = string(c.Status) + " " + c.Reason
	}
	return out
}

// assertNoTokenLeak fails when a stored condition or an event carries the token.
func (f *fixture) assertNoTokenLeak(events []string) {
	f.t.Helper()
	for _, c := range f.stored().Status.Conditions {
		if strings.Contains(c.Message, testToken) {
			f.t.Errorf("condition %s quotes the token: %q", c.Type, c.Message)
		}
	}
	for _, e := range events {
		if strings.Contains(e, testToken) {
			f.t.Errorf("event quotes the token: %q", e)
		}
	}
}
