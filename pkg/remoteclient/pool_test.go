package remoteclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// fakeClients is a NewClientsFunc that hands out fake clientsets holding the objects of the remote cluster of each
// server, and records the configurations it got.
type fakeClients struct {
	lock    sync.Mutex
	objects map[string][]runtime.Object
	configs []*rest.Config
	kube    []*kubefake.Clientset
	err     error
	// listGate, when set, holds every list of namespaces until it is closed.
	listGate chan struct{}
	// listErr, when it returns an error, fails every list of namespaces with it.
	listErr func() error
}

func (f *fakeClients) newClients(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
	f.lock.Lock()
	defer f.lock.Unlock()
	if f.err != nil {
		return nil, nil, f.err
	}
	f.configs = append(f.configs, rest.CopyConfig(config))
	var kubeObjects, scyllaObjects []runtime.Object
	for _, obj := range f.objects[config.Host] {
		if _, ok := obj.(*scyllav1alpha1.ScyllaDBDatacenter); ok {
			scyllaObjects = append(scyllaObjects, obj)
		} else {
			kubeObjects = append(kubeObjects, obj)
		}
	}
	kube := kubefake.NewClientset(kubeObjects...)
	if gate := f.listGate; gate != nil {
		kube.PrependReactor("list", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
			<-gate
			return false, nil, nil
		})
	}
	if listErr := f.listErr; listErr != nil {
		kube.PrependReactor("list", "namespaces", func(clienttesting.Action) (bool, runtime.Object, error) {
			if err := listErr(); err != nil {
				return true, nil, err
			}
			return false, nil, nil
		})
	}
	f.kube = append(f.kube, kube)
	return kube, scyllafake.NewClientset(scyllaObjects...), nil
}

func (f *fakeClients) builds() int {
	f.lock.Lock()
	defer f.lock.Unlock()
	return len(f.configs)
}

func newTestPool(t *testing.T, f *fakeClients) *Pool {
	t.Helper()
	p := NewPool(Options{QPS: 20, Burst: 30, UserAgent: "scylla-operator-operator/test", NewClients: f.newClients})
	t.Cleanup(p.Shutdown)
	return p
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// recorder collects "<cluster> <event> <name>" lines from remote informer handlers.
type recorder struct {
	lock   sync.Mutex
	events []string
}

func (r *recorder) handler(clusterName string) cache.ResourceEventHandler {
	record := func(event string, obj any) {
		accessor, err := metaName(obj)
		if err != nil {
			return
		}
		r.lock.Lock()
		defer r.lock.Unlock()
		r.events = append(r.events, fmt.Sprintf("%s %s %s", clusterName, event, accessor))
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { record("add", obj) },
		UpdateFunc: func(_, obj any) { record("update", obj) },
		DeleteFunc: func(obj any) { record("delete", obj) },
	}
}

// change records the name of a cluster a Pool's OnChange callback gets.
func (r *recorder) change(name string) {
	r.lock.Lock()
	defer r.lock.Unlock()
	r.events = append(r.events, name)
}

func metaName(obj any) (string, error) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	return key, err
}

func (r *recorder) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.lock.Lock()
		got := slices.Clone(r.events)
		r.lock.Unlock()
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("unexpected remote events (-want +got):\n%s", cmp.Diff(want, got))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func namespaceHandler(r *recorder) InformerHandler {
	return InformerHandler{
		Kind: "Namespace",
		Informer: func(c *Cluster) cache.SharedIndexInformer {
			return c.KubeInformers().Core().V1().Namespaces().Informer()
		},
		Handler: r.handler,
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func TestUpdateBuildsClientsWithThePoolsRateLimitsAndUserAgent(t *testing.T) {
	t.Parallel()
	f := &fakeClients{}
	p := newTestPool(t, f)

	built, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil))
	if err != nil || !built {
		t.Fatalf("want new clients, got built %v, error %v", built, err)
	}
	c, ok := p.Get("dc2")
	if !ok {
		t.Fatal("the pool has no cluster dc2")
	}
	if c.Name() != "dc2" || c.KubeClient() == nil || c.ScyllaClient() == nil {
		t.Errorf("incomplete cluster: name %q, kube client %v, scylla client %v", c.Name(), c.KubeClient(), c.ScyllaClient())
	}
	got := f.configs[0]
	if got.Host != "https://dc2.example.com" || got.QPS != 20 || got.Burst != 30 || got.UserAgent != "scylla-operator-operator/test" {
		t.Errorf("unexpected REST config: host %q, QPS %v, burst %d, user agent %q", got.Host, got.QPS, got.Burst, got.UserAgent)
	}
	if diff := cmp.Diff([]string{"dc2"}, p.Names()); diff != "" {
		t.Errorf("unexpected names (-want +got):\n%s", diff)
	}
}

func TestUpdateWithTheSameKubeconfigKeepsTheClients(t *testing.T) {
	t.Parallel()
	f := &fakeClients{}
	p := newTestPool(t, f)
	kubeconfig := newKubeconfig(t, "https://dc2.example.com", nil)
	if _, err := p.Update("dc2", kubeconfig); err != nil {
		t.Fatal(err)
	}
	first, _ := p.Get("dc2")

	built, err := p.Update("dc2", slices.Clone(kubeconfig))
	if err != nil || built {
		t.Fatalf("want nothing built, got built %v, error %v", built, err)
	}
	if c, _ := p.Get("dc2"); c != first || isClosed(first.Done()) || f.builds() != 1 {
		t.Errorf("the clients were replaced or stopped: same %v, stopped %v, builds %d", c == first, isClosed(first.Done()), f.builds())
	}
}

func TestUpdateWithAnotherKubeconfigRebuildsAndRestartsTheInformers(t *testing.T) {
	t.Parallel()
	f := &fakeClients{objects: map[string][]runtime.Object{
		"https://old.example.com": {namespace("old")},
		"https://new.example.com": {namespace("new")},
	}}
	p := newTestPool(t, f)
	r := &recorder{}
	if err := p.AddHandler(namespaceHandler(r)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update("dc2", newKubeconfig(t, "https://old.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	old, _ := p.Get("dc2")
	r.waitFor(t, "dc2 add old")

	built, err := p.Update("dc2", newKubeconfig(t, "https://new.example.com", nil))
	if err != nil || !built {
		t.Fatalf("want new clients, got built %v, error %v", built, err)
	}
	current, _ := p.Get("dc2")
	if current == old || current.KubeconfigHash() == old.KubeconfigHash() {
		t.Fatal("the cluster was not replaced")
	}
	if !isClosed(old.Done()) {
		t.Error("the replaced cluster's informers still run")
	}
	r.waitFor(t, "dc2 add new", "dc2 add old")
	if !current.HasSynced() {
		t.Error("the new cluster's informers did not sync")
	}
}

func TestHandlersReachEveryClusterWheneverTheyAreAdded(t *testing.T) {
	t.Parallel()
	f := &fakeClients{objects: map[string][]runtime.Object{
		"https://dc2.example.com": {namespace("a")},
		"https://dc3.example.com": {namespace("b")},
	}}
	p := newTestPool(t, f)
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	// Registered after dc2 was built, before dc3 is.
	if err := p.AddHandler(namespaceHandler(r)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update("dc3", newKubeconfig(t, "https://dc3.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	r.waitFor(t, "dc2 add a", "dc3 add b")
}

func TestAddHandlerNeedsAnInformerAndAHandler(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, &fakeClients{})
	if err := p.AddHandler(InformerHandler{Kind: "Namespace"}); err == nil {
		t.Error("want an error for a handler without an informer")
	}
}

func TestDeleteStopsTheCluster(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, &fakeClients{})
	changes := &recorder{}
	p.OnChange(changes.change)
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	// Without informers, its caches are synced at once: wait for that notification.
	changes.waitFor(t, "dc2", "dc2")

	if !p.Delete("dc2") {
		t.Error("Delete found no cluster")
	}
	if _, ok := p.Get("dc2"); ok || !isClosed(c.Done()) {
		t.Errorf("the cluster was not removed and stopped: still there %v, stopped %v", ok, isClosed(c.Done()))
	}
	if p.Delete("dc2") {
		t.Error("a second Delete found a cluster")
	}
	changes.waitFor(t, "dc2", "dc2", "dc2")
}

func TestAClusterIsKnownOnceBuiltOrFoundToHaveNoClients(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, &fakeClients{})
	changes := &recorder{}
	p.OnChange(changes.change)
	if p.Known("dc2") || p.Known("dc3") {
		t.Fatal("a new pool knows clusters it was told nothing about")
	}
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	if !p.Known("dc2") {
		t.Error("a cluster whose clients were built is not known")
	}
	changes.waitFor(t, "dc2", "dc2")

	// dc3's kubeconfig is not usable: its controller deletes what the pool may have of it.
	if p.Delete("dc3") {
		t.Error("Delete found a cluster that was never built")
	}
	if !p.Known("dc3") {
		t.Error("a cluster found to have no clients is not known")
	}
	changes.waitFor(t, "dc2", "dc2", "dc3")
	// Told again, it is no change.
	p.Delete("dc3")
	changes.waitFor(t, "dc2", "dc2", "dc3")
}

func TestOnChangeTellsWhenTheCachesOfNewClientsSynced(t *testing.T) {
	t.Parallel()
	// The remote cluster holds no object the informers select: no event of theirs tells that they listed.
	f := &fakeClients{listGate: make(chan struct{})}
	p := newTestPool(t, f)
	if err := p.AddHandler(namespaceHandler(&recorder{})); err != nil {
		t.Fatal(err)
	}
	changes := &recorder{}
	p.OnChange(changes.change)
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	changes.waitFor(t, "dc2")
	if c.HasSynced() {
		t.Fatal("the caches synced before their list was let through")
	}

	close(f.listGate)
	changes.waitFor(t, "dc2", "dc2")
	if !c.HasSynced() {
		t.Error("the notification came before the caches synced")
	}
}

func TestUpdateWithAnUnusableKubeconfigChangesNothing(t *testing.T) {
	t.Parallel()
	f := &fakeClients{}
	p := newTestPool(t, f)
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")

	if _, err := p.Update("dc2", []byte("{")); err == nil {
		t.Error("want an error for an invalid kubeconfig")
	}
	f.err = errors.New("boom")
	if _, err := p.Update("dc2", newKubeconfig(t, "https://other.example.com", nil)); err == nil {
		t.Error("want the client constructor's error")
	}
	if got, _ := p.Get("dc2"); got != c || isClosed(c.Done()) {
		t.Error("a failed Update replaced or stopped the cluster")
	}
}

func TestShutdownStopsEveryClusterAndBuildsNoMore(t *testing.T) {
	t.Parallel()
	p := NewPool(Options{NewClients: (&fakeClients{}).newClients})
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	p.Shutdown()
	if !isClosed(c.Done()) || len(p.Names()) != 0 {
		t.Error("Shutdown left a cluster running")
	}
	if _, err := p.Update("dc3", newKubeconfig(t, "https://dc3.example.com", nil)); err == nil {
		t.Error("a shut down pool built clients")
	}
}

func TestProbeRecordsTheOutcome(t *testing.T) {
	t.Parallel()
	f := &fakeClients{}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := NewPool(Options{NewClients: f.newClients, Clock: func() time.Time { now = now.Add(time.Second); return now }})
	t.Cleanup(p.Shutdown)
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	if _, ok := c.LastProbe(); ok {
		t.Error("a new cluster has a probe result")
	}

	if result := c.Probe(t.Context()); result.Err != nil || result.Duration != time.Second {
		t.Errorf("want a good probe of 1s, got %+v", result)
	}
	f.kube[0].PrependReactor("get", "version", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection refused")
	})
	result := c.Probe(t.Context())
	if result.Err == nil || result.Err.Error() != "can't get the version of the API server: connection refused" {
		t.Errorf("unexpected failed probe: %+v", result)
	}
	if last, ok := c.LastProbe(); !ok || last.Err == nil || !last.Time.Equal(result.Time) {
		t.Errorf("LastProbe does not return the last probe: %+v", last)
	}
}

func TestPoolIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	p := newTestPool(t, &fakeClients{})
	r := &recorder{}
	kubeconfigs := [][]byte{
		newKubeconfig(t, "https://a.example.com", nil),
		newKubeconfig(t, "https://b.example.com", nil),
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("dc%d", i%3)
			for j := range 20 {
				if _, err := p.Update(name, kubeconfigs[j%2]); err != nil {
					t.Error(err)
					return
				}
				if c, ok := p.Get(name); ok {
					_ = c.HasSynced()
				}
				if j%7 == 0 {
					p.Delete(name)
				}
			}
		})
	}
	wg.Go(func() {
		if err := p.AddHandler(namespaceHandler(r)); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
}

func TestSyncErrorTellsWhyTheCachesDoNotSyncUntilTheyDo(t *testing.T) {
	t.Parallel()
	var lock sync.Mutex
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New(`User "x" cannot list resource "namespaces" in API group "" at the cluster scope`))
	listErr := error(forbidden)
	f := &fakeClients{listErr: func() error {
		lock.Lock()
		defer lock.Unlock()
		return listErr
	}}
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	p := NewPool(Options{NewClients: f.newClients, Clock: func() time.Time { return now }})
	t.Cleanup(p.Shutdown)
	r := &recorder{}
	if err := p.AddHandler(namespaceHandler(r)); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	if !c.Built().Equal(now) {
		t.Errorf("want the clients built at %v, got %v", now, c.Built())
	}

	err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.SyncError() != nil, nil
	})
	if err != nil {
		t.Fatal("the list error of the namespaces informer was not reported")
	}
	if err := c.SyncError(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "x" cannot list resource "namespaces"`) {
		t.Errorf("want the forbidden list error, got %v", err)
	}
	if c.HasSynced() {
		t.Error("the caches synced though no list succeeded")
	}

	t.Log("The RBAC is fixed: the informer's retry lists, and there is no error any more")
	lock.Lock()
	listErr = nil
	lock.Unlock()
	if !cache.WaitForCacheSync(t.Context().Done(), c.HasSynced) {
		t.Fatal("the caches did not sync")
	}
	if err := c.SyncError(); err != nil {
		t.Errorf("want no error once the caches synced, got %v", err)
	}
}

// TestSyncErrorForgetsAnErrorTheRetryDidNotRepeat: a list refused once and then slow (large caches, a busy API
// server) is not reported as refused once the refusal is older than a reflector's retries: the retry runs, without an
// error so far.
func TestSyncErrorForgetsAnErrorTheRetryDidNotRepeat(t *testing.T) {
	t.Parallel()
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "namespaces"}, "", errors.New(`User "x" cannot list resource "namespaces" in API group "" at the cluster scope`))
	slow := make(chan struct{})
	var lists atomic.Int32
	f := &fakeClients{listErr: func() error {
		if lists.Add(1) == 1 {
			return forbidden
		}
		<-slow
		return nil
	}}
	var lock sync.Mutex
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		lock.Lock()
		defer lock.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		lock.Lock()
		defer lock.Unlock()
		now = now.Add(d)
	}
	p := NewPool(Options{NewClients: f.newClients, Clock: clock})
	t.Cleanup(p.Shutdown)
	t.Cleanup(func() { close(slow) })
	if err := p.AddHandler(namespaceHandler(&recorder{})); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update("dc2", newKubeconfig(t, "https://dc2.example.com", nil)); err != nil {
		t.Fatal(err)
	}
	c, _ := p.Get("dc2")
	if err := wait.PollUntilContextTimeout(t.Context(), 10*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return c.SyncError() != nil && lists.Load() >= 2, nil
	}); err != nil {
		t.Fatal("the refused list and its retry did not happen")
	}
	advance(recentListErrorAge)
	if err := c.SyncError(); !apierrors.IsForbidden(err) {
		t.Errorf("want the refusal while it is recent, got %v", err)
	}
	advance(time.Second)
	if err := c.SyncError(); err != nil {
		t.Errorf("want no error once the refusal is older than the retries, got %v", err)
	}
}
