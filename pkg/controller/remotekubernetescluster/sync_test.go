package remotekubernetescluster

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
)

// healthy is the condition summary of a RemoteKubernetesCluster whose remote API server answers.
var healthy = map[string]string{
	"Available":                  "True AsExpected",
	"Progressing":                "False AsExpected",
	"Degraded":                   "False AsExpected",
	"KubeconfigDegraded":         "False AsExpected",
	"ClientHealthcheckAvailable": "True AsExpected",
	"ClientHealthcheckDegraded":  "False AsExpected",
	"FinalizerProgressing":       "False AsExpected",
}

// withKubeconfigProblem is the condition summary of a RemoteKubernetesCluster whose kubeconfig is not usable for
// reason.
func withKubeconfigProblem(reason string) map[string]string {
	return map[string]string{
		"Available":                  "False NoUsableKubeconfig",
		"Progressing":                "False AsExpected",
		"Degraded":                   "True " + reason,
		"KubeconfigDegraded":         "True " + reason,
		"ClientHealthcheckAvailable": "False NoUsableKubeconfig",
		"ClientHealthcheckDegraded":  "False AsExpected",
		"FinalizerProgressing":       "False AsExpected",
	}
}

func TestSyncAddsTheFinalizerAloneAndOnce(t *testing.T) {
	t.Parallel()
	rkc := newRKC()
	rkc.Finalizers = []string{"example.com/other"}
	f := newFixture(t, rkc, kubeconfigSecret(t, testServer))

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch remotekubernetesclusters"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.com/other", naming.RemoteKubernetesClusterFinalizer}, f.stored().Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
	if _, ok := f.pool.Get(testName); ok {
		t.Error("the sync that added the finalizer built a client")
	}

	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply remotekubernetesclusters/status"}, f.writes()); diff != "" {
		t.Errorf("the next sync wrote other than its status (-want +got):\n%s", diff)
	}
}

func TestSyncReportsAHealthyRemoteCluster(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply remotekubernetesclusters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(healthy, f.summary()); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	stored := f.stored()
	if stored.Status.ObservedGeneration == nil || *stored.Status.ObservedGeneration != 3 {
		t.Errorf("want observedGeneration 3, got %v", stored.Status.ObservedGeneration)
	}
	for _, c := range stored.Status.Conditions {
		if c.ObservedGeneration != 3 || !c.LastTransitionTime.Time.Equal(testNow) {
			t.Errorf("condition %s has observedGeneration %d and lastTransitionTime %v, want 3 and %v", c.Type, c.ObservedGeneration, c.LastTransitionTime, testNow)
		}
	}
	cluster, ok := f.pool.Get(testName)
	if !ok || cluster.KubeconfigHash() != remoteclient.KubeconfigHash(kubeconfig(t, testServer)) {
		t.Fatal("the pool has no client of the Secret's kubeconfig")
	}
	if f.remotes.probes() != 1 {
		t.Errorf("want one health check, got %d", f.remotes.probes())
	}
	if d, ok := f.queue.requeueAfter(testName); !ok || d != time.Minute {
		t.Errorf("want the next sync in the default probe period of 1m, got %v (requeued %v)", d, ok)
	}
	events := f.events()
	if diff := cmp.Diff([]string{`Normal RemoteClientBuilt Built the client of the remote cluster from key "kubeconfig" of Secret "credentials/dc2-kubeconfig"`}, events); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	f.assertNoTokenLeak(events)
}

func TestSyncReportsAnUnusableKubeconfigSecret(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		secret      *corev1.Secret
		mutate      func(*scyllav1alpha1.RemoteKubernetesCluster)
		wantReason  string
		wantMessage string
	}{
		{
			name:        "missing Secret",
			wantReason:  secretNotFoundReason,
			wantMessage: `KubeconfigDegraded: Secret "credentials/dc2-kubeconfig", the kubeconfig Secret spec.kubeconfigSecretRef names, does not exist`,
		},
		{
			name:        "Secret without the kubeconfig key",
			secret:      newSecret(map[string][]byte{"config": []byte("whatever")}),
			wantReason:  kubeconfigKeyMissingReason,
			wantMessage: `KubeconfigDegraded: Secret "credentials/dc2-kubeconfig" has no key "kubeconfig" holding the kubeconfig of the remote cluster`,
		},
		{
			name:        "kubeconfig that is not one",
			secret:      newSecret(map[string][]byte{naming.KubeconfigSecretKey: []byte("token: " + testToken + "\n  : [")}),
			wantReason:  invalidKubeconfigReason,
			wantMessage: `KubeconfigDegraded: key "kubeconfig" of Secret "credentials/dc2-kubeconfig" does not hold a usable kubeconfig: it can't be decoded as a kubeconfig`,
		},
		{
			name: "kubeconfig with a token file",
			secret: newSecret(map[string][]byte{naming.KubeconfigSecretKey: []byte(strings.ReplaceAll(
				string(kubeconfig(t, testServer)), "token: "+testToken, "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token"))}),
			wantReason:  invalidKubeconfigReason,
			wantMessage: `KubeconfigDegraded: key "kubeconfig" of Secret "credentials/dc2-kubeconfig" does not hold a usable kubeconfig: user "operator" uses tokenFile`,
		},
		{
			name:        "reference without a namespace",
			secret:      kubeconfigSecret(t, testServer),
			mutate:      func(rkc *scyllav1alpha1.RemoteKubernetesCluster) { rkc.Spec.KubeconfigSecretRef.Namespace = "" },
			wantReason:  invalidSecretRefReason,
			wantMessage: "KubeconfigDegraded: spec.kubeconfigSecretRef must set both the name and the namespace of the kubeconfig Secret",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rkc := newRKC()
			if tc.mutate != nil {
				tc.mutate(rkc)
			}
			f := newFixture(t, rkc, tc.secret)

			// A bad kubeconfig can only be fixed by a change of the Secret: no error, no back-off.
			if err := f.sync(); err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if diff := cmp.Diff(withKubeconfigProblem(tc.wantReason), f.summary()); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			if got := f.condition("Degraded").Message; !strings.HasPrefix(got, tc.wantMessage) {
				t.Errorf("want a Degraded message starting with %q, got %q", tc.wantMessage, got)
			}
			if _, ok := f.pool.Get(testName); ok {
				t.Error("the pool has a client without a usable kubeconfig")
			}
			// The Secret is not watched: it is read again a probe period later.
			if d, ok := f.queue.requeueAfter(testName); !ok || d != time.Minute {
				t.Errorf("want the next sync in 1m, got %v (requeued %v)", d, ok)
			}
			f.assertNoTokenLeak(f.events())
		})
	}
}

func TestSyncStopsTheClientWhenTheSecretGoes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	cluster, _ := f.pool.Get(testName)

	if err := f.kubeClient.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("secrets"), testSecretNamespace, testSecretName); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.pool.Get(testName); ok {
		t.Error("the client outlived its Secret")
	}
	select {
	case <-cluster.Done():
	default:
		t.Error("the client's informers still run")
	}
	if diff := cmp.Diff(withKubeconfigProblem(secretNotFoundReason), f.summary()); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

func TestDeletionKeepsTheClientScyllaDBClustersNeedWhenTheSecretGoesToo(t *testing.T) {
	t.Parallel()
	// kubectl delete -f of the RemoteKubernetesCluster's manifest deletes its kubeconfig Secret with it, while a
	// ScyllaDBCluster still has to remove its datacenter from the remote cluster.
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer), newScyllaDBCluster("team-a", "users", testName))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	f.waitForRemoteCaches()
	cluster, _ := f.pool.Get(testName)

	f.cache(deleting(f.stored()))
	if err := f.kubeClient.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("secrets"), testSecretNamespace, testSecretName); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.pool.Get(testName); !ok || got != cluster {
		t.Fatal("the client the ScyllaDBCluster needs to remove its datacenter was stopped with the Secret")
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 1 {
		t.Errorf("the finalizer was removed while a ScyllaDBCluster uses the RemoteKubernetesCluster: %v", finalizers)
	}
	want := map[string]string{
		"Available":                  "True AsExpected",
		"Progressing":                "True " + inUseReason,
		"Degraded":                   "True " + secretNotFoundReason,
		"KubeconfigDegraded":         "True " + secretNotFoundReason,
		"ClientHealthcheckAvailable": "True AsExpected",
		"ClientHealthcheckDegraded":  "False AsExpected",
		"FinalizerProgressing":       "True " + inUseReason,
	}
	if diff := cmp.Diff(want, f.summary()); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	t.Log("The ScyllaDBCluster goes: so do the finalizer and the client")
	f.recache()
	f.cache(deleting(f.stored()))
	f.uncache(newScyllaDBCluster("team-a", "users", testName))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 0 {
		t.Errorf("the finalizer was kept once no ScyllaDBCluster uses the RemoteKubernetesCluster: %v", finalizers)
	}
	if _, ok := f.pool.Get(testName); ok {
		t.Error("the client outlived its RemoteKubernetesCluster")
	}
}

func TestSyncReportsAnUnreachableAPIServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	f.remotes.setUnreachable(testServer, true)

	// The remote cluster's failure is reported, not retried with back-off: the next probe is timed.
	if err := f.sync(); err != nil {
		t.Fatalf("want no error, got %v", err)
	}
	want := map[string]string{
		"Available":                  "False ProbeFailed",
		"Progressing":                "False AsExpected",
		"Degraded":                   "True ProbeFailed",
		"KubeconfigDegraded":         "False AsExpected",
		"ClientHealthcheckAvailable": "False ProbeFailed",
		"ClientHealthcheckDegraded":  "True ProbeFailed",
		"FinalizerProgressing":       "False AsExpected",
	}
	if diff := cmp.Diff(want, f.summary()); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	wantMessage := `ClientHealthcheckAvailable: can't reach the remote API server with the kubeconfig of Secret "credentials/dc2-kubeconfig": can't get the version of the API server: Get "https://dc2.example.com:6443/version": dial tcp: connect: connection refused`
	if diff := cmp.Diff(wantMessage, f.condition("Available").Message); diff != "" {
		t.Errorf("unexpected Available message (-want +got):\n%s", diff)
	}
	if _, ok := f.pool.Get(testName); !ok {
		t.Error("an unreachable cluster lost its client: it must be kept to recover")
	}
	f.assertNoTokenLeak(f.events())

	// It recovers on the next probe.
	f.recache()
	f.remotes.setUnreachable(testServer, false)
	f.advance(time.Minute)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(healthy, f.summary()); diff != "" {
		t.Errorf("unexpected conditions after recovery (-want +got):\n%s", diff)
	}
}

func TestSyncProbesOncePerPeriodAndWritesNothingWhenNothingChanged(t *testing.T) {
	t.Parallel()
	rkc := newRKC()
	rkc.Spec.ClientHealthcheckProbes = &scyllav1alpha1.ClientHealthcheckProbes{PeriodSeconds: 30}
	f := newFixture(t, rkc, kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()

	// Synced again early (a ScyllaDBCluster changed): no probe, nothing written, the next probe still on time.
	f.advance(10 * time.Second)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.remotes.probes(); got != 1 {
		t.Errorf("want no new health check before the period, got %d in all", got)
	}
	if d, _ := f.queue.requeueAfter(testName); d != 20*time.Second {
		t.Errorf("want the next sync when the probe is due, in 20s, got %v", d)
	}

	// The probe is due: it runs, succeeds again, and the status it yields is the one written.
	f.advance(20 * time.Second)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.remotes.probes(); got != 2 {
		t.Errorf("want a second health check once due, got %d in all", got)
	}
	if d, _ := f.queue.requeueAfter(testName); d != 30*time.Second {
		t.Errorf("want the next sync in the 30s period, got %v", d)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("a steady state wrote (-want +got):\n%s", diff)
	}
	if events := f.events(); len(events) != 0 {
		t.Errorf("a steady state recorded events: %v", events)
	}
	if f.remotes.builds[0] != testServer || len(f.remotes.builds) != 1 {
		t.Errorf("the client was rebuilt with an unchanged kubeconfig: %v", f.remotes.builds)
	}
}

func TestSyncRebuildsTheClientWhenTheKubeconfigChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	old, _ := f.pool.Get(testName)

	f.setSecret(kubeconfigSecret(t, testOtherServer))
	f.advance(time.Second)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	current, ok := f.pool.Get(testName)
	if !ok || current == old || current.KubeconfigHash() != remoteclient.KubeconfigHash(kubeconfig(t, testOtherServer)) {
		t.Fatal("the client was not rebuilt from the new kubeconfig")
	}
	select {
	case <-old.Done():
	default:
		t.Error("the old client's informers still run")
	}
	if diff := cmp.Diff([]string{testServer, testOtherServer}, f.remotes.builds); diff != "" {
		t.Errorf("unexpected client builds (-want +got):\n%s", diff)
	}
	// The new client is checked at once, not a period after the old one was.
	if got := f.remotes.probes(); got != 2 {
		t.Errorf("want the new client checked at once, got %d checks in all", got)
	}
	if diff := cmp.Diff([]string{`Normal RemoteClientBuilt Built the client of the remote cluster from key "kubeconfig" of Secret "credentials/dc2-kubeconfig"`}, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("an unchanged status was written (-want +got):\n%s", diff)
	}
}

func TestSyncKeepsTheClientWhenTheSecretCantBeRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	f.kubeClient.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewServiceUnavailable("etcd is down")
	})

	err := f.sync()
	if err == nil || !strings.Contains(err.Error(), `can't get Secret "credentials/dc2-kubeconfig"`) {
		t.Fatalf("want the read error returned for a retry, got %v", err)
	}
	if _, ok := f.pool.Get(testName); !ok {
		t.Error("a failed read of the Secret stopped the client")
	}
	got := f.summary()
	if got["KubeconfigDegraded"] != "True SecretError" || got["ClientHealthcheckAvailable"] != "True AsExpected" {
		t.Errorf("want KubeconfigDegraded True SecretError and the client still available, got %v", got)
	}
}

func TestSyncWithoutAClientYetAndAnUnreadableSecretSaysAvailabilityIsUnknown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	f.kubeClient.PrependReactor("get", "secrets", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("connection reset")
	})
	if err := f.sync(); err == nil {
		t.Fatal("want the read error returned for a retry")
	}
	if got := f.summary()["Available"]; got != "Unknown SecretError" {
		t.Errorf("want Available Unknown SecretError, got %q", got)
	}
}

func deleting(rkc *scyllav1alpha1.RemoteKubernetesCluster) *scyllav1alpha1.RemoteKubernetesCluster {
	now := metav1.NewTime(testNow.Add(-time.Minute))
	rkc.DeletionTimestamp = &now
	return rkc
}

func TestDeletionWithoutUsersRemovesTheFinalizerAndStopsTheClient(t *testing.T) {
	t.Parallel()
	rkc := newRKC()
	f := newFixture(t, rkc, kubeconfigSecret(t, testServer), newScyllaDBCluster("scylla", "other", "dc3"))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	f.waitForRemoteCaches()
	cluster, _ := f.pool.Get(testName)

	f.cache(deleting(f.stored()))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch remotekubernetesclusters"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 0 {
		t.Errorf("the finalizer was kept: %v", finalizers)
	}
	if _, ok := f.pool.Get(testName); ok {
		t.Error("the client outlived its RemoteKubernetesCluster")
	}
	select {
	case <-cluster.Done():
	default:
		t.Error("the client's informers still run")
	}
}

func TestDeletionWaitsForEveryScyllaDBClusterUsingIt(t *testing.T) {
	t.Parallel()
	a := newScyllaDBCluster("team-a", "users", "dc1", testName)
	b := newScyllaDBCluster("team-b", "orders", testName)
	f := newFixture(t, deleting(newRKC()), kubeconfigSecret(t, testServer), a, b, newScyllaDBCluster("team-c", "other", "dc3"))

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply remotekubernetesclusters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 1 {
		t.Errorf("the finalizer was removed while ScyllaDBClusters use the RemoteKubernetesCluster: %v", finalizers)
	}
	want := metav1.Condition{
		Type:               "Progressing",
		Status:             metav1.ConditionTrue,
		Reason:             inUseReason,
		Message:            "FinalizerProgressing: the RemoteKubernetesCluster is being deleted, but ScyllaDBClusters still use it: team-a/users, team-b/orders; it is deleted once none does",
		ObservedGeneration: 3,
		LastTransitionTime: metav1.NewTime(testNow),
	}
	if diff := cmp.Diff(want, f.condition("Progressing")); diff != "" {
		t.Errorf("unexpected Progressing condition (-want +got):\n%s", diff)
	}
	// The ScyllaDBClusters need the client to remove what they created in the remote cluster.
	if _, ok := f.pool.Get(testName); !ok {
		t.Error("the client was stopped while ScyllaDBClusters still use it")
	}
	if f.condition("Available").Status != metav1.ConditionTrue {
		t.Error("the client is no longer checked while the RemoteKubernetesCluster waits for its users")
	}

	// One user goes: the condition names the other.
	f.recache()
	f.uncache(a)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.condition("FinalizerProgressing").Message; !strings.Contains(got, "team-b/orders") || strings.Contains(got, "team-a/users") {
		t.Errorf("the condition does not name exactly the remaining user: %q", got)
	}

	// The last goes: the finalizer goes.
	f.recache()
	f.waitForRemoteCaches()
	f.uncache(b)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"patch remotekubernetesclusters"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 0 {
		t.Errorf("the finalizer was kept once no ScyllaDBCluster uses the RemoteKubernetesCluster: %v", finalizers)
	}
}

func TestDeletionWaitsForTheNamespacesScyllaDBClustersStillHaveInTheRemoteCluster(t *testing.T) {
	t.Parallel()
	// team-a/users moved its datacenter to another RemoteKubernetesCluster; it deletes its namespace in this one once
	// the datacenter has no node left, for which it needs this one's client.
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer), newScyllaDBCluster("team-a", "users", "dc1"))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	rc, _ := f.pool.Get(testName)
	remoteNamespaces := rc.KubeClient().CoreV1().Namespaces()
	namespaceLister := rc.KubeInformers().Core().V1().Namespaces().Lister()
	waitForNamespaces := func(want int) {
		t.Helper()
		err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			namespaces, err := namespaceLister.List(labels.Everything())
			return len(namespaces) == want, err
		})
		if err != nil {
			t.Fatalf("the remote namespace cache does not hold %d namespaces: %v", want, err)
		}
	}
	moved := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a-x7k2p", Labels: naming.ScyllaDBClusterRemoteLabels("team-a", "users", "dca")}}
	// A namespace whose ScyllaDBCluster is gone (its finalizer removed by hand) holds nothing up.
	orphan := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-z-q9w4m", Labels: naming.ScyllaDBClusterRemoteLabels("team-z", "gone", "dca")}}
	for _, ns := range []*corev1.Namespace{moved, orphan} {
		if _, err := remoteNamespaces.Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitForNamespaces(2)

	f.cache(deleting(f.stored()))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 1 {
		t.Errorf("the finalizer was removed while a ScyllaDBCluster still has a namespace in the remote cluster: %v", finalizers)
	}
	if got := f.condition("FinalizerProgressing").Message; !strings.Contains(got, "team-a/users") || strings.Contains(got, "team-z/gone") {
		t.Errorf("the condition does not name exactly the ScyllaDBCluster with a namespace left: %q", got)
	}
	if _, ok := f.pool.Get(testName); !ok {
		t.Error("the client was stopped while a ScyllaDBCluster needs it")
	}

	t.Log("The namespace goes: its deletion syncs the RemoteKubernetesCluster, whose finalizer goes")
	f.queue.takeAdded()
	if err := remoteNamespaces.Delete(t.Context(), moved.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForNamespaces(1)
	if added := f.queue.takeAdded(); !slices.Contains(added, testName) {
		t.Errorf("the namespace's deletion did not enqueue the RemoteKubernetesCluster: %v", added)
	}
	f.recache()
	f.cache(deleting(f.stored()))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 0 {
		t.Errorf("the finalizer was kept once no ScyllaDBCluster has a namespace in the remote cluster: %v", finalizers)
	}
}

func TestDeletionRightAfterARestartWaitsForTheRemoteCachesToListTheNamespaces(t *testing.T) {
	t.Parallel()
	// The operator restarted while the RemoteKubernetesCluster was being deleted: its pool has no client yet, and
	// team-a/users, whose datacenter moved to another RemoteKubernetesCluster, still has a namespace in this one.
	f := newFixture(t, deleting(newRKC()), kubeconfigSecret(t, testServer), newScyllaDBCluster("team-a", "users", "dc1"))
	f.remotes.objects = map[string][]runtime.Object{testServer: {
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a-x7k2p", Labels: naming.ScyllaDBClusterRemoteLabels("team-a", "users", "dca")}},
	}}
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 1 {
		t.Fatalf("the finalizer was removed before the remote cluster's caches could tell its namespaces: %v", finalizers)
	}
	if _, ok := f.pool.Get(testName); !ok {
		t.Fatal("the client the ScyllaDBCluster needs to delete its namespace was not built")
	}
	if got := f.condition("FinalizerProgressing"); got.Status != metav1.ConditionTrue {
		t.Errorf("want FinalizerProgressing True while waiting, got %+v", got)
	}

	t.Log("The caches sync: that enqueues the RemoteKubernetesCluster, whose next sync names the ScyllaDBCluster")
	f.waitForRemoteCaches()
	// The client's build enqueued it once, during the sync; the caches' sync does again, maybe already.
	var added []string
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		added = append(added, f.queue.takeAdded()...)
		n := 0
		for _, key := range added {
			if key == testName {
				n++
			}
		}
		return n >= 2, nil
	})
	if err != nil {
		t.Errorf("the sync of the remote caches did not enqueue the RemoteKubernetesCluster: %v", err)
	}
	f.recache()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 1 {
		t.Errorf("the finalizer was removed while a ScyllaDBCluster still has a namespace in the remote cluster: %v", finalizers)
	}
	want := metav1.Condition{
		Type:               "FinalizerProgressing",
		Status:             metav1.ConditionTrue,
		Reason:             inUseReason,
		Message:            "the RemoteKubernetesCluster is being deleted, but ScyllaDBClusters still use it: team-a/users; it is deleted once none does",
		ObservedGeneration: 3,
		LastTransitionTime: metav1.NewTime(testNow),
	}
	if diff := cmp.Diff(want, f.condition("FinalizerProgressing")); diff != "" {
		t.Errorf("unexpected FinalizerProgressing condition (-want +got):\n%s", diff)
	}
}

func TestDeletionRightAfterARestartDoesNotWaitForARemoteClusterThatDoesNotAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, deleting(newRKC()), kubeconfigSecret(t, testServer), newScyllaDBCluster("team-a", "users", "dc1"))
	f.remotes.setUnreachable(testServer, true)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if finalizers := f.stored().Finalizers; len(finalizers) != 0 {
		t.Errorf("the finalizer was kept for a remote cluster that has not answered since the operator started: %v", finalizers)
	}
	if _, ok := f.pool.Get(testName); ok {
		t.Error("the client outlived its RemoteKubernetesCluster")
	}
}

func TestFinalizerConditionNamesAtMostTenUsers(t *testing.T) {
	t.Parallel()
	users := []string{"ns/a", "ns/b", "ns/c", "ns/d", "ns/e", "ns/f", "ns/g", "ns/h", "ns/i", "ns/j", "ns/k", "ns/l"}
	got := finalizerCondition(deleting(newRKC()), users, true).Message
	want := "the RemoteKubernetesCluster is being deleted, but ScyllaDBClusters still use it: ns/a, ns/b, ns/c, ns/d, ns/e, ns/f, ns/g, ns/h, ns/i, ns/j and 2 more; it is deleted once none does"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected message (-want +got):\n%s", diff)
	}
}

func TestSyncOfAGoneOrUnprotectedDeletedObjectStopsItsClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after func(f *fixture)
	}{
		{name: "gone", after: func(f *fixture) {
			if err := f.scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters().Informer().GetIndexer().Delete(f.stored()); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted without the finalizer", after: func(f *fixture) {
			rkc := deleting(f.stored())
			rkc.Finalizers = []string{"example.com/other"}
			f.cache(rkc)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			f.recache()
			tc.after(f)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.pool.Get(testName); ok {
				t.Error("the client outlived its RemoteKubernetesCluster")
			}
			if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
				t.Errorf("unexpected writes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProbePeriodDefaultsToAMinute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		probes *scyllav1alpha1.ClientHealthcheckProbes
		want   time.Duration
	}{
		{name: "unset", want: time.Minute},
		{name: "zero", probes: &scyllav1alpha1.ClientHealthcheckProbes{}, want: time.Minute},
		{name: "negative", probes: &scyllav1alpha1.ClientHealthcheckProbes{PeriodSeconds: -5}, want: time.Minute},
		{name: "set", probes: &scyllav1alpha1.ClientHealthcheckProbes{PeriodSeconds: 5}, want: 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rkc := newRKC()
			rkc.Spec.ClientHealthcheckProbes = tc.probes
			if got := probePeriod(rkc); got != tc.want {
				t.Errorf("want %v, got %v", tc.want, got)
			}
		})
	}
}
