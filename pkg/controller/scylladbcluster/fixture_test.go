package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	"github.com/scyllakube/scylla-operator/pkg/test/apiserverfields"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/record"
)

const (
	testNamespace = "scylla"
	testName      = "basic"
	testKey       = testNamespace + "/" + testName
	testToken     = "cluster-token"
	testClusterID = "meta-cluster-uid"
)

// remoteCluster is a fake remote Kubernetes cluster: its clientsets, built once per test, and whether its API server
// answers health checks.
type remoteCluster struct {
	kube          *kubefake.Clientset
	scylla        *scyllafake.Clientset
	scyllaTracker clienttesting.ObjectTracker

	lock        sync.Mutex
	unreachable bool
}

// fixture runs the controller's syncs over fake meta and remote clusters with running informers: sync waits for every
// cache to hold what the fake API servers hold, as a controller's next sync would see it.
type fixture struct {
	t            *testing.T
	ctx          context.Context
	kubeClient   *kubefake.Clientset
	scyllaClient *scyllafake.Clientset
	scyllaStore  clienttesting.ObjectTracker
	pool         *remoteclient.Pool
	remotes      map[string]*remoteCluster
	controller   *Controller
	recorder     *record.FakeRecorder
	// synced are the caches and what they must hold to be caught up.
	synced []syncedCache
}

type syncedCache struct {
	name  string
	store func() cache.Store
	list  func(ctx context.Context) (runtime.Object, error)
}

func remoteHost(name string) string { return "https://" + name + ".example.com" }

func newFixture(t *testing.T, sc *scyllav1alpha1.ScyllaDBCluster, remoteNames ...string) *fixture {
	t.Helper()
	return newFixtureBuilding(t, sc, remoteNames, remoteNames)
}

// newFixtureBuilding is newFixture with the clients of only the remote clusters built in the pool, as right after
// the operator started, before the RemoteKubernetesCluster controller built the others'.
func newFixtureBuilding(t *testing.T, sc *scyllav1alpha1.ScyllaDBCluster, remoteNames, built []string) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)

	kubeClient := kubefake.NewClientset()
	apiserverfields.BumpResourceVersions(&kubeClient.Fake, kubeClient.Tracker())
	scyllaClient, scyllaStore, err := apiserverfields.NewScyllaClientset(sc)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, kubeClient: kubeClient, scyllaClient: scyllaClient, scyllaStore: scyllaStore, remotes: map[string]*remoteCluster{}}

	byHost := map[string]*remoteCluster{}
	for _, name := range remoteNames {
		r := &remoteCluster{kube: kubefake.NewClientset()}
		apiserverfields.BumpResourceVersions(&r.kube.Fake, r.kube.Tracker())
		if r.scylla, r.scyllaTracker, err = apiserverfields.NewScyllaClientset(); err != nil {
			t.Fatal(err)
		}
		r.kube.PrependReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) {
			r.lock.Lock()
			defer r.lock.Unlock()
			if r.unreachable {
				return true, nil, errors.New("dial tcp: connect: connection refused")
			}
			return false, nil, nil
		})
		f.remotes[name], byHost[remoteHost(name)] = r, r
	}
	f.pool = remoteclient.NewPool(remoteclient.Options{NewClients: func(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
		r, ok := byHost[config.Host]
		if !ok {
			return nil, nil, fmt.Errorf("no fake remote cluster at %s", config.Host)
		}
		return r.kube, r.scylla, nil
	}})
	t.Cleanup(f.pool.Shutdown)

	kubeInformers := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	scyllaInformers := scyllainformers.NewSharedInformerFactory(scyllaClient, 0)
	c, err := NewController(kubeClient, scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Discovery().V1().EndpointSlices(),
		f.pool, testClusterID)
	if err != nil {
		t.Fatal(err)
	}
	f.recorder = record.NewFakeRecorder(1000)
	c.eventRecorder = f.recorder
	c.generateAuthToken = func() (string, error) { return testToken, nil }
	c.statusBatcher = controllerhelpers.NewStatusBatcher(0)
	f.controller = c

	for _, name := range built {
		if _, err := f.pool.Update(name, kubeconfig(t, remoteHost(name))); err != nil {
			t.Fatal(err)
		}
	}
	kubeInformers.Start(ctx.Done())
	scyllaInformers.Start(ctx.Done())
	t.Cleanup(func() {
		cancel()
		kubeInformers.Shutdown()
		scyllaInformers.Shutdown()
	})

	f.synced = append(f.synced,
		syncedCache{"meta ScyllaDBClusters", scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters().Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return scyllaClient.ScyllaV1alpha1().ScyllaDBClusters("").List(ctx, metav1.ListOptions{})
		}},
		syncedCache{"meta Secrets", kubeInformers.Core().V1().Secrets().Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return kubeClient.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
		}},
		syncedCache{"meta Services", kubeInformers.Core().V1().Services().Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return kubeClient.CoreV1().Services("").List(ctx, metav1.ListOptions{})
		}},
		syncedCache{"meta EndpointSlices", kubeInformers.Discovery().V1().EndpointSlices().Informer().GetStore, func(ctx context.Context) (runtime.Object, error) {
			return kubeClient.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
		}},
	)
	for _, name := range built {
		f.synced = append(f.synced, f.remoteCaches(name)...)
		rc, _ := f.pool.Get(name)
		if !cache.WaitForCacheSync(ctx.Done(), rc.HasSynced) {
			t.Fatalf("the caches of remote cluster %q did not sync", name)
		}
	}
	f.settle()
	return f
}

// remoteCaches are the caches of the remote cluster name, read through the pool as the controller reads them.
func (f *fixture) remoteCaches(name string) []syncedCache {
	r := f.remotes[name]
	cluster := func() *remoteclient.Cluster {
		rc, ok := f.pool.Get(name)
		if !ok {
			f.t.Fatalf("no remote cluster %q in the pool", name)
		}
		return rc
	}
	kube := func(resource string, informer func(kubeinformers.SharedInformerFactory) cache.SharedIndexInformer, list func(context.Context) (runtime.Object, error)) syncedCache {
		return syncedCache{name + " " + resource, func() cache.Store { return informer(cluster().KubeInformers()).GetStore() }, list}
	}
	return []syncedCache{
		kube("namespaces", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Core().V1().Namespaces().Informer()
		},
			func(ctx context.Context) (runtime.Object, error) {
				return r.kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			}),
		kube("pods", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Core().V1().Pods().Informer()
		},
			func(ctx context.Context) (runtime.Object, error) {
				return r.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			}),
		kube("services", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Core().V1().Services().Informer()
		},
			func(ctx context.Context) (runtime.Object, error) {
				return r.kube.CoreV1().Services("").List(ctx, metav1.ListOptions{})
			}),
		kube("endpointslices", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Discovery().V1().EndpointSlices().Informer()
		}, func(ctx context.Context) (runtime.Object, error) {
			return r.kube.DiscoveryV1().EndpointSlices("").List(ctx, metav1.ListOptions{})
		}),
		kube("secrets", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Core().V1().Secrets().Informer()
		},
			func(ctx context.Context) (runtime.Object, error) {
				return r.kube.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			}),
		kube("configmaps", func(i kubeinformers.SharedInformerFactory) cache.SharedIndexInformer {
			return i.Core().V1().ConfigMaps().Informer()
		},
			func(ctx context.Context) (runtime.Object, error) {
				return r.kube.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			}),
		{name + " scylladbdatacenters", func() cache.Store {
			return cluster().ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Informer().GetStore()
		}, func(ctx context.Context) (runtime.Object, error) {
			return r.scylla.ScyllaV1alpha1().ScyllaDBDatacenters("").List(ctx, metav1.ListOptions{})
		}},
	}
}

// settle waits until every cache holds, by name and resourceVersion, what its fake API server holds.
func (f *fixture) settle() {
	f.t.Helper()
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, c := range f.synced {
			list, err := c.list(ctx)
			if err != nil {
				return false, err
			}
			items, err := meta.ExtractList(list)
			if err != nil {
				return false, err
			}
			want := map[string]string{}
			for _, item := range items {
				a, _ := meta.Accessor(item)
				want[a.GetNamespace()+"/"+a.GetName()] = a.GetResourceVersion()
			}
			got := map[string]string{}
			for _, item := range c.store().List() {
				a, _ := meta.Accessor(item)
				got[a.GetNamespace()+"/"+a.GetName()] = a.GetResourceVersion()
			}
			if fmt.Sprint(want) != fmt.Sprint(got) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		f.t.Fatalf("the caches did not catch up: %v", err)
	}
}

// sync runs one sync of the test ScyllaDBCluster, then lets the caches catch up.
func (f *fixture) sync() error {
	f.t.Helper()
	err := f.controller.sync(f.ctx, testKey)
	f.settle()
	return err
}

// clearActions forgets the requests of every fake clientset so far.
func (f *fixture) clearActions() {
	f.kubeClient.ClearActions()
	f.scyllaClient.ClearActions()
	for _, r := range f.remotes {
		r.kube.ClearActions()
		r.scylla.ClearActions()
	}
}

// writes returns the writes of every fake clientset since the last clearActions, by cluster ("meta" or the remote
// cluster's name).
func (f *fixture) writes() map[string][]string {
	out := map[string][]string{}
	add := func(name string, actions []clienttesting.Action) {
		if w := fakeclient.Writes(actions); len(w) != 0 {
			out[name] = append(out[name], w...)
		}
	}
	add("meta", f.kubeClient.Actions())
	add("meta", f.scyllaClient.Actions())
	for name, r := range f.remotes {
		add(name, r.kube.Actions())
		add(name, r.scylla.Actions())
	}
	return out
}

// setUnreachable makes the remote cluster name fail or pass its health checks, and runs one, as the
// RemoteKubernetesCluster controller does periodically.
func (f *fixture) setUnreachable(name string, unreachable bool) {
	f.t.Helper()
	r := f.remotes[name]
	r.lock.Lock()
	r.unreachable = unreachable
	r.lock.Unlock()
	rc, _ := f.pool.Get(name)
	rc.Probe(f.ctx)
}

// scyllaDBCluster returns the ScyllaDBCluster as the meta API server holds it.
func (f *fixture) scyllaDBCluster() *scyllav1alpha1.ScyllaDBCluster {
	f.t.Helper()
	obj, err := f.scyllaStore.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbclusters"), testNamespace, testName)
	if err != nil {
		f.t.Fatal(err)
	}
	return obj.(*scyllav1alpha1.ScyllaDBCluster)
}

// updateScyllaDBCluster stores sc in the meta API server, as a user's update would, bumping its generation.
func (f *fixture) updateScyllaDBCluster(mutate func(sc *scyllav1alpha1.ScyllaDBCluster)) {
	f.t.Helper()
	sc := f.scyllaDBCluster().DeepCopy()
	mutate(sc)
	sc.Generation++
	bumpResourceVersion(f.t, sc)
	if err := f.scyllaStore.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbclusters"), sc, sc.Namespace, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.settleAfterDirectWrite()
}

// bumpResourceVersion gives obj, about to be stored around the fake clientsets' reactors, the next
// resourceVersion, as the API server would.
func bumpResourceVersion(t *testing.T, obj metav1.Object) {
	t.Helper()
	rv, err := strconv.ParseInt(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("%s has resourceVersion %q: %v", obj.GetName(), obj.GetResourceVersion(), err)
	}
	obj.SetResourceVersion(strconv.FormatInt(rv+1, 10))
}

// settleAfterDirectWrite waits for a write made around the fake clientsets' reactors: the tracker does not bump
// resourceVersions, so the caches are compared after a short pause that lets the watch deliver it.
func (f *fixture) settleAfterDirectWrite() {
	time.Sleep(50 * time.Millisecond)
	f.settle()
}

// remoteDatacenter returns datacenter dcName's ScyllaDBDatacenter in the remote cluster rkcName, or nil.
func (f *fixture) remoteDatacenter(rkcName, dcName string) *scyllav1alpha1.ScyllaDBDatacenter {
	f.t.Helper()
	obj, err := f.remotes[rkcName].scyllaTracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"),
		naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, dcName), naming.ScyllaDBClusterDatacenterName(testName, dcName))
	if err != nil {
		return nil
	}
	return obj.(*scyllav1alpha1.ScyllaDBDatacenter)
}

// remoteObject returns the object of resource in the remote cluster rkcName, or nil.
func remoteObject[T runtime.Object](f *fixture, rkcName string, resource schema.GroupVersionResource, namespace, name string) T {
	var zero T
	obj, err := f.remotes[rkcName].kube.Tracker().Get(resource, namespace, name)
	if err != nil {
		return zero
	}
	return obj.(T)
}

var (
	namespacesResource     = corev1.SchemeGroupVersion.WithResource("namespaces")
	secretsResource        = corev1.SchemeGroupVersion.WithResource("secrets")
	servicesResource       = corev1.SchemeGroupVersion.WithResource("services")
	endpointSlicesResource = discoveryv1.SchemeGroupVersion.WithResource("endpointslices")
	configMapsResource     = corev1.SchemeGroupVersion.WithResource("configmaps")
)

// rollOut makes datacenter dcName's ScyllaDBDatacenter in rkcName rolled out at its generation with one Ready node
// pod at podIP, as the remote cluster's operator and kubelet would.
func (f *fixture) rollOut(rkcName, dcName, podIP string) {
	f.t.Helper()
	sdc := f.remoteDatacenter(rkcName, dcName)
	if sdc == nil {
		f.t.Fatalf("datacenter %q has no ScyllaDBDatacenter in %q", dcName, rkcName)
	}
	sdc = sdc.DeepCopy()
	if sdc.Generation == 0 {
		sdc.Generation = 1
	}
	bumpResourceVersion(f.t, sdc)
	sdc.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(sdc.Generation),
		CurrentVersion:     "2025.1.0",
		UpdatedVersion:     "2025.1.0",
		NodeCounts:         scyllav1alpha1.NodeCounts{Nodes: new(int32(1)), ReadyNodes: new(int32(1)), AvailableNodes: new(int32(1))},
	}
	for _, c := range []struct {
		condType string
		status   metav1.ConditionStatus
	}{{"Available", metav1.ConditionTrue}, {"Progressing", metav1.ConditionFalse}, {"Degraded", metav1.ConditionFalse}} {
		meta.SetStatusCondition(&sdc.Status.Conditions, metav1.Condition{Type: c.condType, Status: c.status, Reason: "AsExpected", ObservedGeneration: sdc.Generation})
	}
	r := f.remotes[rkcName]
	if err := r.scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), sdc, sdc.Namespace, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: sdc.Namespace, Name: sdc.Name + "-rack-0", Labels: naming.NodePodLabels(sdc.Name)},
		Status: corev1.PodStatus{
			PodIP:      podIP,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		},
	}
	_, err := r.kube.CoreV1().Pods(pod.Namespace).Create(f.ctx, pod, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = r.kube.CoreV1().Pods(pod.Namespace).Update(f.ctx, pod, metav1.UpdateOptions{})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	f.settleAfterDirectWrite()
}

// kubeconfig returns a kubeconfig reaching server.
func kubeconfig(t *testing.T, server string) []byte {
	t.Helper()
	config := clientcmdapi.NewConfig()
	config.Clusters["remote"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	config.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: "remote-token"}
	config.Contexts["remote"] = &clientcmdapi.Context{Cluster: "remote", AuthInfo: "operator"}
	config.CurrentContext = "remote"
	data, err := clientcmd.Write(*config)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// newTwoDatacenterCluster returns a ScyllaDBCluster of generation 1 with datacenter dc1 in remote cluster w1 and dc2
// in w2, one rack of one node each.
func newTwoDatacenterCluster() *scyllav1alpha1.ScyllaDBCluster {
	sc := &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: testName, UID: "sc-uid", Generation: 1, ResourceVersion: "1",
			Labels: map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"}},
		Spec: scyllav1alpha1.ScyllaDBClusterSpec{
			ScyllaDB:             scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:2025.1.0"},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: new("docker.io/scylladb/scylla-manager-agent:3.5.0")},
			DatacenterTemplate: &scyllav1alpha1.ScyllaDBClusterDatacenterTemplate{
				// Every rack needs storage (validation.ValidateScyllaDBCluster).
				Racks: []scyllav1alpha1.RackSpec{{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1)), ScyllaDB: withStorage()}}},
			},
			Datacenters: []scyllav1alpha1.ScyllaDBClusterDatacenter{
				{Name: "dc1", RemoteKubernetesClusterName: "w1"},
				{Name: "dc2", RemoteKubernetesClusterName: "w2"},
			},
		},
	}
	return sc
}
