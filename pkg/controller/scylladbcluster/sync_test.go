package scylladbcluster

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/test/fakeclient"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

var (
	dc1Namespace = naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc1")
	dc2Namespace = naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc2")
	tokenSecret  = naming.ScyllaDBClusterAuthTokenSecretName(testName)
)

// condition returns the condition condType of the stored ScyllaDBCluster, failing the test when it has none.
func (f *fixture) condition(condType string) metav1.Condition {
	f.t.Helper()
	c := meta.FindStatusCondition(f.scyllaDBCluster().Status.Conditions, condType)
	if c == nil {
		f.t.Fatalf("the ScyllaDBCluster has no %s condition: %+v", condType, f.scyllaDBCluster().Status.Conditions)
	}
	return *c
}

func tokenOf(t *testing.T, secret *corev1.Secret) string {
	t.Helper()
	if secret == nil {
		t.Fatal("no auth-token Secret")
	}
	token, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func TestTheFirstDatacenterBootstrapsAloneAndTheNextJoinsThroughItsSeedService(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newTwoDatacenterCluster(), "w1", "w2")

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	sc := f.scyllaDBCluster()
	if !slices.Contains(sc.Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Errorf("want finalizer %q, got %v", naming.ScyllaDBClusterProtectionFinalizer, sc.Finalizers)
	}
	for _, rkc := range []string{"w1", "w2"} {
		ns := naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, map[string]string{"w1": "dc1", "w2": "dc2"}[rkc])
		got := remoteObject[*corev1.Namespace](f, rkc, namespacesResource, "", ns)
		if got == nil {
			t.Fatalf("%s: no namespace %q", rkc, ns)
		}
		if got.Labels[naming.ManagedByClusterLabel] != testClusterID || got.Labels[naming.ManagedByLabel] != naming.RemoteManagedByLabelValue {
			t.Errorf("%s: namespace labels %v lack the meta cluster's identity or the remote managed-by value", rkc, got.Labels)
		}
		if token := tokenOf(t, remoteObject[*corev1.Secret](f, rkc, secretsResource, ns, tokenSecret)); token != testToken {
			t.Errorf("%s: the token copy holds %q, want the cluster's", rkc, token)
		}
	}
	metaSecret, err := f.kubeClient.CoreV1().Secrets(testNamespace).Get(f.ctx, tokenSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if token := tokenOf(t, metaSecret); token != testToken {
		t.Errorf("the meta token Secret holds %q", token)
	}

	dc1 := f.remoteDatacenter("w1", "dc1")
	if dc1 == nil {
		t.Fatal("the first datacenter has no ScyllaDBDatacenter")
	}
	if len(dc1.Spec.ScyllaDB.ExternalSeeds) != 0 {
		t.Errorf("the first datacenter bootstraps alone, got external seeds %v", dc1.Spec.ScyllaDB.ExternalSeeds)
	}
	if _, ok := dc1.Labels[naming.RegisterWithScyllaDBManagerLabel]; ok {
		t.Errorf("the registration label reached the datacenter: %v", dc1.Labels)
	}
	if f.remoteDatacenter("w2", "dc2") != nil {
		t.Error("the second datacenter was created before the first rolled out")
	}
	if c := f.condition("Progressing"); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `"dc2"`) {
		t.Errorf("want Progressing naming the waiting datacenter, got %+v", c)
	}
	if c := f.condition("Available"); c.Status != metav1.ConditionFalse {
		t.Errorf("want not Available, got %+v", c)
	}

	f.rollOut("w1", "dc1", "10.1.0.5")
	dc1 = f.remoteDatacenter("w1", "dc1")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	dc2 := f.remoteDatacenter("w2", "dc2")
	if dc2 == nil {
		t.Fatal("the second datacenter was not created once the first rolled out")
	}
	wantSeed := naming.ScyllaDBClusterSeedServiceHost(testName, "dc1", dc2Namespace)
	if diff := cmp.Diff([]string{wantSeed}, dc2.Spec.ScyllaDB.ExternalSeeds); diff != "" {
		t.Errorf("the second datacenter's external seeds (-want +got):\n%s", diff)
	}
	seedName := naming.ScyllaDBClusterSeedServiceName(testName, "dc1")
	svc := remoteObject[*corev1.Service](f, "w2", servicesResource, dc2Namespace, seedName)
	if svc == nil || svc.Spec.ClusterIP != corev1.ClusterIPNone || len(svc.Spec.Selector) != 0 {
		t.Fatalf("want a headless selector-less seed Service %q, got %+v", seedName, svc)
	}
	slice := remoteObject[*discoveryv1.EndpointSlice](f, "w2", endpointSlicesResource, dc2Namespace, seedName+"-ipv4")
	if slice == nil || len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "10.1.0.5" || slice.Labels[discoveryv1.LabelServiceName] != seedName {
		t.Fatalf("want the seed EndpointSlice to list the first datacenter's node, got %+v", slice)
	}
	if dc1After := f.remoteDatacenter("w1", "dc1"); dc1After.ResourceVersion != dc1.ResourceVersion {
		t.Error("the first datacenter's ScyllaDBDatacenter was written again")
	}
	if remoteObject[*corev1.Service](f, "w1", servicesResource, dc1Namespace, naming.ScyllaDBClusterSeedServiceName(testName, "dc2")) != nil {
		t.Error("the first datacenter got a seed Service of the second, which has no nodes")
	}

	f.rollOut("w2", "dc2", "10.2.0.7")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for condType, want := range map[string]metav1.ConditionStatus{"Available": metav1.ConditionTrue, "Progressing": metav1.ConditionFalse, "Degraded": metav1.ConditionFalse} {
		if c := f.condition(condType); c.Status != want || c.ObservedGeneration != 1 {
			t.Errorf("want %s %s at generation 1, got %+v", condType, want, c)
		}
	}
	status := f.scyllaDBCluster().Status
	if status.ReadyNodes == nil || *status.ReadyNodes != 2 || len(status.Datacenters) != 2 || *status.Datacenters[1].RemoteNamespaceName != dc2Namespace {
		t.Errorf("want 2 ready nodes over 2 datacenters, got %+v", status)
	}
	// The client Service in the meta cluster lists both datacenters' nodes.
	if diff := cmp.Diff([]string{"10.1.0.5", "10.2.0.7"}, f.clientAddresses()); diff != "" {
		t.Errorf("client EndpointSlice addresses (-want +got):\n%s", diff)
	}

	t.Log("Converged, a sync writes nothing")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("a converged ScyllaDBCluster cost writes: %v", writes)
	}
}

// newRolledOutFixture returns a fixture whose two-datacenter ScyllaDBCluster rolled out, each datacenter in turn.
func newRolledOutFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, newTwoDatacenterCluster(), "w1", "w2")
	for _, dc := range []struct{ rkc, name, ip string }{{"w1", "dc1", "10.1.0.5"}, {"w2", "dc2", "10.2.0.7"}} {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		f.rollOut(dc.rkc, dc.name, dc.ip)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestAChangeRollsOutOneDatacenterAtATime(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2025.1.1"
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.remoteDatacenter("w1", "dc1").Spec.ScyllaDB.Image; got != "docker.io/scylladb/scylla:2025.1.1" {
		t.Errorf("the first datacenter did not get the new image: %s", got)
	}
	if got := f.remoteDatacenter("w2", "dc2").Spec.ScyllaDB.Image; got != "docker.io/scylladb/scylla:2025.1.0" {
		t.Errorf("the second datacenter changed while the first rolls out: %s", got)
	}
	f.rollOut("w1", "dc1", "10.1.0.5")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.remoteDatacenter("w2", "dc2").Spec.ScyllaDB.Image; got != "docker.io/scylladb/scylla:2025.1.1" {
		t.Errorf("the second datacenter did not get the new image once the first rolled out: %s", got)
	}
}

func TestAnUnreachableRemoteClusterDegradesOnlyItsDatacenter(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	f.setUnreachable("w2", true)
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.Datacenters[0].ForceRedeploymentReason = new("first only")
	})
	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), `datacenter "dc2" (RemoteKubernetesCluster "w2")`) {
		t.Fatalf("want an error naming the datacenter and its RemoteKubernetesCluster, got %v", err)
	}
	if got := f.remoteDatacenter("w1", "dc1").Spec.ForceRedeploymentReason; got == nil || *got != "first only" {
		t.Errorf("the reachable datacenter was not reconciled: forceRedeploymentReason %v", got)
	}
	degraded := f.condition("Degraded")
	if degraded.Status != metav1.ConditionTrue || !strings.Contains(degraded.Message, `datacenter "dc2" (RemoteKubernetesCluster "w2")`) || strings.Contains(degraded.Message, `"dc1"`) {
		t.Errorf("want Degraded naming only dc2 and w2, got %+v", degraded)
	}
	status := f.scyllaDBCluster().Status
	if !*status.Datacenters[1].Stale || *status.Datacenters[0].Stale {
		t.Errorf("want only dc2 stale, got %+v", status.Datacenters)
	}

	f.setUnreachable("w2", false)
	f.rollOut("w1", "dc1", "10.1.0.5")
	if err := f.sync(); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Degraded False after recovery, got %+v", c)
	}
}

func TestReferencedConfigMapsAndSecretsAreCopiedAndPruned(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	sc.Spec.DatacenterTemplate.ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{
		CustomConfigMapRef: new("scylla-config"),
		Volumes: []corev1.Volume{{Name: "certs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "certs"}}}, {
			Name: "extra", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Optional: new(true)}},
		}},
	}
	f := newFixture(t, sc, "w1")
	if _, err := f.kubeClient.CoreV1().ConfigMaps(testNamespace).Create(f.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scylla-config"}, Data: map[string]string{"scylla.yaml": "a: 1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kubeClient.CoreV1().Secrets(testNamespace).Create(f.ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "certs"}, Data: map[string][]byte{"tls.crt": []byte("x")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	cm := remoteObject[*corev1.ConfigMap](f, "w1", configMapsResource, dc1Namespace, "scylla-config")
	if cm == nil || cm.Data["scylla.yaml"] != "a: 1" {
		t.Fatalf("want the ConfigMap copied, got %+v", cm)
	}
	if s := remoteObject[*corev1.Secret](f, "w1", secretsResource, dc1Namespace, "certs"); s == nil || string(s.Data["tls.crt"]) != "x" {
		t.Fatalf("want the Secret copied, got %+v", s)
	}

	t.Log("A changed original is copied again; an unreferenced copy goes")
	if _, err := f.kubeClient.CoreV1().ConfigMaps(testNamespace).Update(f.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scylla-config"}, Data: map[string]string{"scylla.yaml": "a: 2"}}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.DatacenterTemplate.ScyllaDB.Volumes = nil })
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if cm := remoteObject[*corev1.ConfigMap](f, "w1", configMapsResource, dc1Namespace, "scylla-config"); cm.Data["scylla.yaml"] != "a: 2" {
		t.Errorf("the copy did not follow the original: %v", cm.Data)
	}
	if s := remoteObject[*corev1.Secret](f, "w1", secretsResource, dc1Namespace, "certs"); s != nil {
		t.Errorf("the copy of an unreferenced Secret was kept")
	}
	if remoteObject[*corev1.Secret](f, "w1", secretsResource, dc1Namespace, tokenSecret) == nil {
		t.Errorf("the token copy was pruned")
	}

	t.Log("A missing required original is an error naming it")
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.DatacenterTemplate.ScyllaDB.CustomConfigMapRef = new("missing")
	})
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), `ConfigMap "missing"`) {
		t.Errorf("want an error naming the missing ConfigMap, got %v", err)
	}
}

func TestARemovedDatacenterIsDeletedOnlyOnceScaledToZero(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters = sc.Spec.Datacenters[:1] })
	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), `datacenter "dc2" was removed`) {
		t.Fatalf("want an error about removing a datacenter with nodes, got %v", err)
	}
	if ns := remoteObject[*corev1.Namespace](f, "w2", namespacesResource, "", dc2Namespace); ns == nil || ns.DeletionTimestamp != nil {
		t.Fatal("the namespace of a datacenter with nodes was deleted")
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionTrue {
		t.Errorf("want Degraded, got %+v", c)
	}

	t.Log("Scaled to zero, it goes")
	sdc := f.remoteDatacenter("w2", "dc2").DeepCopy()
	sdc.Spec.Racks[0].Nodes = new(int32(0))
	sdc.Status.Nodes = new(int32(0))
	bumpResourceVersion(t, sdc)
	if err := f.remotes["w2"].scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), sdc, sdc.Namespace, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settleAfterDirectWrite()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if ns := remoteObject[*corev1.Namespace](f, "w2", namespacesResource, "", dc2Namespace); ns != nil {
		t.Errorf("the namespace of a removed, empty datacenter is still there")
	}
}

func TestDeletionRemovesTheRemoteNamespacesThenTheFinalizer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newTwoDatacenterCluster(), "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer went before the namespaces' deletion was seen to finish")
	}
	// The namespaces' deletion events sync it again.
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for rkc, ns := range map[string]string{"w1": dc1Namespace, "w2": dc2Namespace} {
		if remoteObject[*corev1.Namespace](f, rkc, namespacesResource, "", ns) != nil {
			t.Errorf("%s: namespace %q was not deleted", rkc, ns)
		}
	}
	if slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer stayed once the namespaces were gone")
	}
}

func TestDeletionWaitsForAnUnreachableRemoteCluster(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newTwoDatacenterCluster(), "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.setUnreachable("w1", true)
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), `"w1" is unreachable`) {
		t.Errorf("want an error naming the unreachable cluster, got %v", err)
	}
	if !slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer went while a remote namespace may remain")
	}
}

func TestDeletionWaitsForTheCachesOfARemoteClusterOnlyARemovedDatacenterWasIn(t *testing.T) {
	t.Parallel()
	// dc2 was moved out of w2 (or removed) and its namespace there is not deleted yet; the spec names w1 only.
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	f := newFixture(t, sc, "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	left := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dc2Namespace, Labels: naming.ScyllaDBClusterRemoteLabels(testNamespace, testName, "dc2")}}
	left.Labels[naming.ManagedByClusterLabel] = testClusterID
	if _, err := f.remotes["w2"].kube.CoreV1().Namespaces().Create(f.ctx, left, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()

	t.Log("The operator restarts: w2's new client has not listed yet, while w1's has")
	r := f.remotes["w2"]
	var lock sync.Mutex
	refusing := true
	refuse := func(clienttesting.Action) (bool, runtime.Object, error) {
		lock.Lock()
		defer lock.Unlock()
		if refusing {
			return true, nil, errors.New("the server is currently unable to handle the request")
		}
		return false, nil, nil
	}
	r.kube.PrependReactor("list", "*", refuse)
	r.scylla.PrependReactor("list", "*", refuse)
	w2Caches := slices.DeleteFunc(slices.Clone(f.synced), func(c syncedCache) bool { return !strings.HasPrefix(c.name, "w2 ") })
	f.synced = slices.DeleteFunc(f.synced, func(c syncedCache) bool { return strings.HasPrefix(c.name, "w2 ") })
	if _, err := f.pool.Update("w2", append(kubeconfig(t, remoteHost("w2")), '\n')); err != nil {
		t.Fatal(err)
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	// The first deletes dc1's namespace in w1, the second sees it gone.
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if remoteObject[*corev1.Namespace](f, "w1", namespacesResource, "", dc1Namespace) != nil {
		t.Fatal("dc1's namespace was not deleted")
	}
	if !slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Fatal("the finalizer went before w2's caches could tell whether the ScyllaDBCluster has a namespace there")
	}

	t.Log("w2's caches sync: the namespace left there is deleted, then the finalizer goes")
	lock.Lock()
	refusing = false
	lock.Unlock()
	f.synced = append(f.synced, w2Caches...)
	f.settle()
	rc, _ := f.pool.Get("w2")
	if !cache.WaitForCacheSync(f.ctx.Done(), rc.HasSynced) {
		t.Fatal("w2's caches did not sync")
	}
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if remoteObject[*corev1.Namespace](f, "w2", namespacesResource, "", dc2Namespace) != nil {
		t.Error("the namespace left in w2 was not deleted")
	}
	if slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer stayed once the namespaces were gone")
	}
}

func TestDeletionRightAfterARestartWaitsForTheRemoteClustersThePoolWasNotToldAboutYet(t *testing.T) {
	t.Parallel()
	// dc2 was moved out of w2 (or removed) and its namespace there is not deleted yet; the spec names w1 only. The
	// operator has just started: the RemoteKubernetesCluster controller has built w1's client, not w2's yet.
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	f := newFixtureBuilding(t, sc, []string{"w1", "w2"}, []string{"w1"})
	for _, name := range []string{"w1", "w2"} {
		rkc := &scyllav1alpha1.RemoteKubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := f.scyllaClient.ScyllaV1alpha1().RemoteKubernetesClusters().Create(f.ctx, rkc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		rkcs, err := f.controller.remoteKubernetesClusterLister.List(labels.Everything())
		return len(rkcs) == 2, err
	})
	if err != nil {
		t.Fatalf("the RemoteKubernetesClusters did not reach the cache: %v", err)
	}
	left := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dc2Namespace, Labels: naming.ScyllaDBClusterRemoteLabels(testNamespace, testName, "dc2")}}
	left.Labels[naming.ManagedByClusterLabel] = testClusterID
	if err := f.remotes["w2"].kube.Tracker().Add(left); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	// The first deletes dc1's namespace in w1, the second sees it gone.
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Fatal("the finalizer went before the pool had w2's client, which could tell whether the ScyllaDBCluster has a namespace there")
	}

	t.Log("w2's client is built and its caches sync: the namespace left there is deleted, then the finalizer goes")
	if _, err := f.pool.Update("w2", kubeconfig(t, remoteHost("w2"))); err != nil {
		t.Fatal(err)
	}
	f.synced = append(f.synced, f.remoteCaches("w2")...)
	rc, _ := f.pool.Get("w2")
	if !cache.WaitForCacheSync(f.ctx.Done(), rc.HasSynced) {
		t.Fatal("w2's caches did not sync")
	}
	f.settle()
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if remoteObject[*corev1.Namespace](f, "w2", namespacesResource, "", dc2Namespace) != nil {
		t.Error("the namespace left in w2 was not deleted")
	}
	if slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer stayed once the namespaces were gone")
	}
}

func TestDeletionFailsWhileADatacenterIsInARemoteKubernetesClusterThatDoesNotExist(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters[1].RemoteKubernetesClusterName = "w9"
	f := newFixture(t, sc, "w1")
	if err := f.sync(); err == nil {
		t.Fatal("want an error for the datacenter in a RemoteKubernetesCluster that does not exist")
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	// The first deletes dc1's namespace in w1, the second sees it gone.
	var err error
	for range 2 {
		err = f.sync()
	}
	if err == nil || !strings.Contains(err.Error(), `RemoteKubernetesCluster "w9" has no client`) {
		t.Errorf("want an error naming the RemoteKubernetesCluster the deletion can't look into, retried and logged, got %v", err)
	}
	if !slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer went while w9 may hold a namespace of the ScyllaDBCluster")
	}
}

func TestDeletionDoesNotWaitForARemoteClusterWithoutClientsItNoLongerUses(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	f := newFixtureBuilding(t, sc, []string{"w1"}, []string{"w1"})
	rkc := &scyllav1alpha1.RemoteKubernetesCluster{ObjectMeta: metav1.ObjectMeta{Name: "w2"}}
	if _, err := f.scyllaClient.ScyllaV1alpha1().RemoteKubernetesClusters().Create(f.ctx, rkc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		rkcs, err := f.controller.remoteKubernetesClusterLister.List(labels.Everything())
		return len(rkcs) == 1, err
	})
	if err != nil {
		t.Fatalf("the RemoteKubernetesCluster did not reach the cache: %v", err)
	}
	// w2's kubeconfig is not usable: the RemoteKubernetesCluster controller tells the pool it has no clients.
	f.pool.Delete("w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	for range 2 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer stayed for a remote cluster the ScyllaDBCluster does not use and that has no clients")
	}
}

func TestReorderingDatacentersDoesNotRestartOneWhoseSeedsOnlyChangeOrder(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = append(sc.Spec.Datacenters, scyllav1alpha1.ScyllaDBClusterDatacenter{Name: "dc3", RemoteKubernetesClusterName: "w3"})
	f := newFixture(t, sc, "w1", "w2", "w3")
	for _, dc := range []struct{ rkc, name, ip string }{{"w1", "dc1", "10.1.0.5"}, {"w2", "dc2", "10.2.0.7"}, {"w3", "dc3", "10.3.0.2"}} {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		f.rollOut(dc.rkc, dc.name, dc.ip)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	dc3Namespace := naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc3")
	seeds := f.remoteDatacenter("w3", "dc3").Spec.ScyllaDB.ExternalSeeds
	want := []string{naming.ScyllaDBClusterSeedServiceHost(testName, "dc1", dc3Namespace), naming.ScyllaDBClusterSeedServiceHost(testName, "dc2", dc3Namespace)}
	if diff := cmp.Diff(want, seeds); diff != "" {
		t.Fatalf("dc3 does not join through dc1 and dc2 (-want +got):\n%s", diff)
	}

	t.Log("dc2 is put first: it and dc1 change their seeds, one at a time; dc3 keeps the same seeds")
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		dcs := sc.Spec.Datacenters
		sc.Spec.Datacenters = []scyllav1alpha1.ScyllaDBClusterDatacenter{dcs[1], dcs[0], dcs[2]}
	})
	f.clearActions()
	for range 4 {
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		// The remote operators roll out what changed.
		for _, dc := range []struct{ rkc, name, ip string }{{"w2", "dc2", "10.2.0.7"}, {"w1", "dc1", "10.1.0.5"}, {"w3", "dc3", "10.3.0.2"}} {
			if sdc := f.remoteDatacenter(dc.rkc, dc.name); sdc.Status.ObservedGeneration == nil || *sdc.Status.ObservedGeneration != sdc.Generation {
				f.rollOut(dc.rkc, dc.name, dc.ip)
			}
		}
	}
	if c := f.condition("Progressing"); c.Status != metav1.ConditionFalse {
		t.Errorf("the reordered datacenters did not all roll out: %+v", c)
	}
	if writes := f.datacenterWrites("w1"); len(writes) == 0 {
		t.Errorf("dc1, now second, did not take dc2's seed: %v", f.remoteDatacenter("w1", "dc1").Spec.ScyllaDB.ExternalSeeds)
	}
	if writes := f.datacenterWrites("w2"); len(writes) == 0 {
		t.Errorf("dc2, now first, did not drop dc1's seed: %v", f.remoteDatacenter("w2", "dc2").Spec.ScyllaDB.ExternalSeeds)
	}
	if writes := f.datacenterWrites("w3"); len(writes) != 0 {
		t.Errorf("dc3, whose seeds are the same datacenters, was changed (%v) and restarted: its external seeds went from %v to %v", writes, seeds, f.remoteDatacenter("w3", "dc3").Spec.ScyllaDB.ExternalSeeds)
	}
}

func TestTheClientServiceKeepsTheAddressesOfADatacenterWhoseRemoteClusterCantBeRead(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	t.Log("w1's kubeconfig Secret changes: its new client has not listed yet when the pool enqueues the ScyllaDBCluster")
	r := f.remotes["w1"]
	var lock sync.Mutex
	refusing := true
	refuse := func(clienttesting.Action) (bool, runtime.Object, error) {
		lock.Lock()
		defer lock.Unlock()
		if refusing {
			return true, nil, errors.New("the server is currently unable to handle the request")
		}
		return false, nil, nil
	}
	r.kube.PrependReactor("list", "*", refuse)
	r.scylla.PrependReactor("list", "*", refuse)
	w1Caches := slices.DeleteFunc(slices.Clone(f.synced), func(c syncedCache) bool { return !strings.HasPrefix(c.name, "w1 ") })
	f.synced = slices.DeleteFunc(f.synced, func(c syncedCache) bool { return strings.HasPrefix(c.name, "w1 ") })
	if _, err := f.pool.Update("w1", append(kubeconfig(t, remoteHost("w1")), '\n')); err != nil {
		t.Fatal(err)
	}
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.1.0.5", "10.2.0.7"}, f.clientAddresses()); diff != "" {
		t.Errorf("ScyllaDB Manager lost the agents of dc1, whose nodes run on, through the client Service (-want +got):\n%s", diff)
	}
	if writes := f.writes()["meta"]; slices.ContainsFunc(writes, func(w string) bool { return strings.HasSuffix(w, "endpointslices") }) {
		t.Errorf("the client EndpointSlices were written while nothing is known of dc1's nodes: %v", writes)
	}

	t.Log("Its caches sync: nothing changed, nothing is written")
	lock.Lock()
	refusing = false
	lock.Unlock()
	f.synced = append(f.synced, w1Caches...)
	rc, _ := f.pool.Get("w1")
	if !cache.WaitForCacheSync(f.ctx.Done(), rc.HasSynced) {
		t.Fatal("w1's caches did not sync")
	}
	f.settle()
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes()["meta"]; slices.ContainsFunc(writes, func(w string) bool { return strings.HasSuffix(w, "endpointslices") }) {
		t.Errorf("the client EndpointSlices were written though no address changed: %v", writes)
	}
}

func TestAnInvalidSpecIsReportedAndNothingIsBuilt(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters[1].Name = "dc1"
	f := newFixture(t, sc, "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	c := f.condition("Degraded")
	if c.Status != metav1.ConditionTrue || c.Reason != invalidSpecReason || !strings.Contains(c.Message, "spec.datacenters[1].name") {
		t.Errorf("want Degraded InvalidSpec naming the field, got %+v", c)
	}
	if f.remoteDatacenter("w1", "dc1") != nil {
		t.Error("a ScyllaDBDatacenter was built from an invalid spec")
	}
}

func TestASpecTheWebhookWouldRefuseIsNotActedOn(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	// Only the second datacenter's rack lacks storage, a rule no CRD schema can check; the first is built neither.
	sc.Spec.Datacenters[1].Racks = []scyllav1alpha1.RackSpec{{Name: "b", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1))}}}
	f := newFixture(t, sc, "w1", "w2")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	c := f.condition("Degraded")
	if c.Status != metav1.ConditionTrue || c.Reason != invalidSpecReason || !strings.Contains(c.Message, "spec.datacenters[1].racks[b].scyllaDB.storage.capacity: Required value") {
		t.Errorf("want Degraded InvalidSpec naming the field, got %+v", c)
	}
	if p := f.condition("Progressing"); p.Status != metav1.ConditionFalse {
		t.Errorf("want Progressing False, got %+v", p)
	}
	if f.remoteDatacenter("w1", "dc1") != nil || f.remoteDatacenter("w2", "dc2") != nil {
		t.Error("a ScyllaDBDatacenter was built from a spec the webhook would refuse")
	}
}

func TestANamespaceOfAnotherMetaClusterIsNotTakenOver(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	f := newFixture(t, sc, "w1")
	foreign := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: dc1Namespace, Labels: naming.ScyllaDBClusterRemoteLabels(testNamespace, testName, "dc1")}}
	foreign.Labels[naming.ManagedByClusterLabel] = "other-meta-cluster"
	if _, err := f.remotes["w1"].kube.CoreV1().Namespaces().Create(f.ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), "another Kubernetes cluster") {
		t.Fatalf("want an error about another meta cluster's namespace, got %v", err)
	}
	if f.remoteDatacenter("w1", "dc1") != nil {
		t.Error("a ScyllaDBDatacenter was created in another meta cluster's namespace")
	}
}

func TestAReferencedObjectIsReadOncePerSyncForAllDatacenters(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.DatacenterTemplate.ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("scylla-config")}
	f := newFixture(t, sc, "w1", "w2")
	if _, err := f.kubeClient.CoreV1().ConfigMaps(testNamespace).Create(f.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "scylla-config"}, Data: map[string]string{"scylla.yaml": "a: 1"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	gets := 0
	for _, a := range f.kubeClient.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "configmaps" {
			gets++
		}
	}
	if gets != 1 {
		t.Errorf("the ConfigMap both datacenters reference was read %d times in one sync, want once", gets)
	}
	for rkc, ns := range map[string]string{"w1": dc1Namespace, "w2": dc2Namespace} {
		if remoteObject[*corev1.ConfigMap](f, rkc, configMapsResource, ns, "scylla-config") == nil {
			t.Errorf("%s: the ConfigMap was not copied", rkc)
		}
	}
}

// setDatacenterStatus changes datacenter dcName's ScyllaDBDatacenter in rkcName as the remote cluster's API server
// and operator would, around the fake clientsets' reactors.
func (f *fixture) setDatacenterStatus(rkcName, dcName string, mutate func(sdc *scyllav1alpha1.ScyllaDBDatacenter)) {
	f.t.Helper()
	sdc := f.remoteDatacenter(rkcName, dcName).DeepCopy()
	mutate(sdc)
	bumpResourceVersion(f.t, sdc)
	if err := f.remotes[rkcName].scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), sdc, sdc.Namespace, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	f.settleAfterDirectWrite()
}

// datacenterWrites returns the writes of ScyllaDBDatacenters in the remote cluster rkcName since the last
// clearActions.
func (f *fixture) datacenterWrites(rkcName string) []string {
	return slices.DeleteFunc(fakeclient.Writes(f.remotes[rkcName].scylla.Actions()), func(w string) bool { return !strings.HasSuffix(w, " scylladbdatacenters") })
}

func TestAFirstDatacenterThatIsNotRolledOutIsNotGivenTheSeedsOfTheLaterOnes(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	t.Log("A node of the first datacenter restarts: its ScyllaDBDatacenter progresses while the second one is rolled out")
	f.setDatacenterStatus("w1", "dc1", func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
		meta.SetStatusCondition(&sdc.Status.Conditions, metav1.Condition{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "RollingOut", ObservedGeneration: sdc.Generation})
		meta.SetStatusCondition(&sdc.Status.Conditions, metav1.Condition{Type: "Available", Status: metav1.ConditionFalse, Reason: "NodeRestarting", ObservedGeneration: sdc.Generation})
	})
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes, seeds := f.datacenterWrites("w1"), f.remoteDatacenter("w1", "dc1").Spec.ScyllaDB.ExternalSeeds; len(writes) != 0 || len(seeds) != 0 {
		t.Errorf("the first datacenter's ScyllaDBDatacenter was written (%v) to external seeds %v: its nodes would roll", writes, seeds)
	}
	if remoteObject[*corev1.Service](f, "w1", servicesResource, dc1Namespace, naming.ScyllaDBClusterSeedServiceName(testName, "dc2")) != nil {
		t.Error("the first datacenter got a seed Service of the second")
	}
}

func TestADatacenterPutFirstJoinsThroughTheRunningOnesUntilItRolledOut(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	dc0Namespace := naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, "dc0")

	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.Datacenters = append([]scyllav1alpha1.ScyllaDBClusterDatacenter{{Name: "dc0", RemoteKubernetesClusterName: "w1"}}, sc.Spec.Datacenters...)
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	wantSeeds := []string{
		naming.ScyllaDBClusterSeedServiceHost(testName, "dc1", dc0Namespace),
		naming.ScyllaDBClusterSeedServiceHost(testName, "dc2", dc0Namespace),
	}
	created := f.remoteDatacenter("w1", "dc0")
	if created == nil {
		t.Fatal("the datacenter put first was not created")
	}
	if diff := cmp.Diff(wantSeeds, created.Spec.ScyllaDB.ExternalSeeds); diff != "" {
		t.Errorf("the datacenter put first does not join through the running ones (-want +got):\n%s", diff)
	}

	t.Log("While it rolls out, it keeps them")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.datacenterWrites("w1"); len(writes) != 0 {
		t.Errorf("its ScyllaDBDatacenter was written again while it joins (%v): external seeds %v", writes, f.remoteDatacenter("w1", "dc0").Spec.ScyllaDB.ExternalSeeds)
	}

	t.Log("Rolled out, it is the first datacenter: it drops them once, and never takes them again")
	f.rollOut("w1", "dc0", "10.1.0.9")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	dropped := f.remoteDatacenter("w1", "dc0")
	if len(dropped.Spec.ScyllaDB.ExternalSeeds) != 0 {
		t.Fatalf("the rolled-out first datacenter kept external seeds %v", dropped.Spec.ScyllaDB.ExternalSeeds)
	}
	// The API server gives the changed ScyllaDBDatacenter a new generation, which its status has not reached.
	f.setDatacenterStatus("w1", "dc0", func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Generation++ })
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes, seeds := f.datacenterWrites("w1"), f.remoteDatacenter("w1", "dc0").Spec.ScyllaDB.ExternalSeeds; len(writes) != 0 || len(seeds) != 0 {
		t.Errorf("the first datacenter, rolling out without external seeds, was written again (%v) to %v", writes, seeds)
	}
}

func TestDeletionAndRemovalLeaveTheNamespacesOfAnotherMetaClusterAlone(t *testing.T) {
	t.Parallel()
	sc := newTwoDatacenterCluster()
	sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	f := newFixture(t, sc, "w1", "w2")
	// A ScyllaDBCluster of the same namespace and name in another meta cluster runs dc1 in w1, under the name this
	// one's dc1 would have, and dc2, which this one does not have, in w2.
	var foreign []*corev1.Namespace
	for _, dc := range []struct{ rkc, name string }{{"w1", "dc1"}, {"w2", "dc2"}} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name:   naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, dc.name),
			Labels: naming.ScyllaDBClusterRemoteLabels(testNamespace, testName, dc.name),
		}}
		ns.Labels[naming.ManagedByClusterLabel] = "other-meta-cluster"
		if _, err := f.remotes[dc.rkc].kube.CoreV1().Namespaces().Create(f.ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		foreign = append(foreign, ns)
	}
	f.settle()
	stillThere := func(when string) {
		t.Helper()
		for i, rkc := range []string{"w1", "w2"} {
			ns := remoteObject[*corev1.Namespace](f, rkc, namespacesResource, "", foreign[i].Name)
			if ns == nil || ns.DeletionTimestamp != nil {
				t.Errorf("%s: %s: the namespace %q of another meta cluster was deleted", when, rkc, foreign[i].Name)
			}
		}
	}

	if err := f.sync(); err == nil || !strings.Contains(err.Error(), "another Kubernetes cluster") {
		t.Fatalf("want an error about another meta cluster's namespace, got %v", err)
	}
	stillThere("reconciling, with dc2 not in the spec")

	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.DeletionTimestamp = &metav1.Time{Time: sc.CreationTimestamp.Time}
		sc.Generation--
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	stillThere("deleting")
	if slices.Contains(f.scyllaDBCluster().Finalizers, naming.ScyllaDBClusterProtectionFinalizer) {
		t.Error("the finalizer stayed, though the ScyllaDBCluster has no namespace of its own left")
	}
}

func TestTheSeedServicesOfADatacenterWhoseRemoteClusterCantBeReadAreKept(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	seedName := naming.ScyllaDBClusterSeedServiceName(testName, "dc1")

	t.Log("w1's kubeconfig stops being usable: the pool has no client of it")
	f.pool.Delete("w1")
	f.synced = slices.DeleteFunc(f.synced, func(c syncedCache) bool { return strings.HasPrefix(c.name, "w1 ") })
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), `RemoteKubernetesCluster "w1" has no client`) {
		t.Fatalf("want an error naming w1, got %v", err)
	}
	if remoteObject[*corev1.Service](f, "w2", servicesResource, dc2Namespace, seedName) == nil {
		t.Fatalf("the seed Service of dc1 was deleted: dc2's external seed %q no longer resolves", naming.ScyllaDBClusterSeedServiceHost(testName, "dc1", dc2Namespace))
	}
	slice := remoteObject[*discoveryv1.EndpointSlice](f, "w2", endpointSlicesResource, dc2Namespace, seedName+"-ipv4")
	if slice == nil || len(slice.Endpoints) != 1 || slice.Endpoints[0].Addresses[0] != "10.1.0.5" {
		t.Errorf("want the seed EndpointSlice to keep dc1's last known address, got %+v", slice)
	}
	if got := f.remoteDatacenter("w2", "dc2").Spec.ScyllaDB.ExternalSeeds; !slices.Contains(got, naming.ScyllaDBClusterSeedServiceHost(testName, "dc1", dc2Namespace)) {
		t.Errorf("dc2 lost its external seed of dc1: %v", got)
	}
}

func TestARemoteClusterThatDoesNotAnswerBeforeItsCachesSyncedDegradesItsDatacenter(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	t.Log("w2's kubeconfig changes to one whose API server does not answer: the new client never lists anything")
	r := f.remotes["w2"]
	refuse := func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("dial tcp: connect: connection refused")
	}
	r.kube.PrependReactor("list", "*", refuse)
	r.scylla.PrependReactor("list", "*", refuse)
	f.synced = slices.DeleteFunc(f.synced, func(c syncedCache) bool { return strings.HasPrefix(c.name, "w2 ") })
	if _, err := f.pool.Update("w2", append(kubeconfig(t, remoteHost("w2")), '\n')); err != nil {
		t.Fatal(err)
	}
	f.setUnreachable("w2", true)

	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), `datacenter "dc2" (RemoteKubernetesCluster "w2"): RemoteKubernetesCluster "w2" is unreachable`) {
		t.Fatalf("want an error naming the unreachable datacenter, retried with back-off, got %v", err)
	}
	degraded := f.condition("Degraded")
	if degraded.Status != metav1.ConditionTrue || !strings.Contains(degraded.Message, `datacenter "dc2" (RemoteKubernetesCluster "w2"): RemoteKubernetesCluster "w2" is unreachable`) {
		t.Errorf("want Degraded saying dc2's remote cluster is unreachable, got %+v", degraded)
	}
	if progressing := f.condition("Progressing"); strings.Contains(progressing.Message, "caches") {
		t.Errorf("an unreachable remote cluster is reported as loading its caches: %+v", progressing)
	}
	if status := f.scyllaDBCluster().Status; !*status.Datacenters[1].Stale {
		t.Errorf("want dc2 stale, got %+v", status.Datacenters)
	}
}

func TestTheStatusIsAppliedOnlyToTheScyllaDBClusterItWasComputedFor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newTwoDatacenterCluster(), "w1", "w2")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	var applies int
	for _, a := range f.scyllaClient.Actions() {
		patch, ok := a.(clienttesting.PatchAction)
		if !ok || a.GetSubresource() != "status" {
			continue
		}
		applies++
		var sent struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(patch.GetPatch(), &sent); err != nil {
			t.Fatal(err)
		}
		// The API server refuses an apply whose UID is not the object's: a status computed from a ScyllaDBCluster
		// deleted meanwhile must not land on one recreated under its name.
		if sent.Metadata.UID != "sc-uid" {
			t.Errorf("the status apply names UID %q, want the ScyllaDBCluster's %q", sent.Metadata.UID, "sc-uid")
		}
	}
	if applies == 0 {
		t.Fatal("the sync applied no status")
	}
}
