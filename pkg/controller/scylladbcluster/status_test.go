package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// reloadCaches gives the remote cluster name new clients, as a changed kubeconfig does, whose lists fail with
// listErr until the returned function is called; that function waits for their caches to sync.
func (f *fixture) reloadCaches(name string, listErr error) (whenSynced func()) {
	f.t.Helper()
	r := f.remotes[name]
	var lock sync.Mutex
	refusing := true
	refuse := func(clienttesting.Action) (bool, runtime.Object, error) {
		lock.Lock()
		defer lock.Unlock()
		if refusing {
			return true, nil, listErr
		}
		return false, nil, nil
	}
	r.kube.PrependReactor("list", "*", refuse)
	r.scylla.PrependReactor("list", "*", refuse)
	prefix := name + " "
	caches := slices.DeleteFunc(slices.Clone(f.synced), func(c syncedCache) bool { return !strings.HasPrefix(c.name, prefix) })
	f.synced = slices.DeleteFunc(f.synced, func(c syncedCache) bool { return strings.HasPrefix(c.name, prefix) })
	if _, err := f.pool.Update(name, append(kubeconfig(f.t, remoteHost(name)), '\n')); err != nil {
		f.t.Fatal(err)
	}
	return func() {
		f.t.Helper()
		lock.Lock()
		refusing = false
		lock.Unlock()
		f.synced = append(f.synced, caches...)
		rc, _ := f.pool.Get(name)
		if !cache.WaitForCacheSync(f.ctx.Done(), rc.HasSynced) {
			f.t.Fatalf("the caches of %q did not sync", name)
		}
		f.settle()
	}
}

func statusWrites(writes []string) []string {
	return slices.DeleteFunc(slices.Clone(writes), func(w string) bool { return !strings.HasSuffix(w, "scylladbclusters/status") })
}

func TestWhileARemoteClustersCachesLoadTheStatusKeepsWhatItSaidOfItsDatacenter(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	before := f.scyllaDBCluster().Status
	if c := f.condition("Available"); c.Status != metav1.ConditionTrue {
		t.Fatalf("want the rolled-out cluster Available, got %+v", c)
	}

	t.Log("w2's kubeconfig changes: its new caches have not listed when the ScyllaDBCluster is synced")
	cachesSynced := f.reloadCaches("w2", errors.New("the server is currently unable to handle the request"))
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := statusWrites(f.writes()["meta"]); len(writes) != 0 {
		t.Errorf("the status was written though only w2's caches are loading: %v", writes)
	}
	if diff := cmp.Diff(before, f.scyllaDBCluster().Status); diff != "" {
		t.Errorf("the status changed while w2's caches load (-want +got):\n%s", diff)
	}

	t.Log("Something else changes meanwhile: the status is written, and still says of dc2 what it said")
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.Datacenters[0].ForceRedeploymentReason = new("first only")
	})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	status := f.scyllaDBCluster().Status
	if diff := cmp.Diff(before.Datacenters[1], status.Datacenters[1]); diff != "" {
		t.Errorf("the status of dc2 changed while its caches load (-want +got):\n%s", diff)
	}
	if c := f.condition(datacentersAvailableCondition); strings.Contains(c.Message, `"dc2"`) {
		t.Errorf("dc2, available before its caches reloaded, is reported not available: %+v", c)
	}
	progressing := f.condition("Progressing")
	if progressing.Status != metav1.ConditionTrue || !strings.Contains(progressing.Message, `datacenter "dc2": RemoteKubernetesCluster "w2": the caches of the remote cluster have not synced yet`) ||
		!strings.Contains(progressing.Reason, waitingForClusterReason) {
		t.Errorf("want Progressing saying dc2's caches are loading, got %+v", progressing)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Degraded False while caches load, got %+v", c)
	}

	t.Log("The caches sync and dc1 rolls out: the status says what the caches hold")
	cachesSynced()
	f.rollOut("w1", "dc1", "10.1.0.5")
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if c := f.condition("Available"); c.Status != metav1.ConditionTrue {
		t.Errorf("want Available True once the caches synced, got %+v", c)
	}
	if c := f.condition("Progressing"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Progressing False once the caches synced, got %+v", c)
	}
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("a sync at rest wrote: %v", writes)
	}
}

func TestTheAvailabilityOfADatacenterWhoseCachesLoadIsWhatTheStatusSaidOfIt(t *testing.T) {
	t.Parallel()
	loading := fmt.Errorf("RemoteKubernetesCluster %q: %w", "w2", errCachesNotSynced)
	available := func(name string) *scyllav1alpha1.ScyllaDBDatacenter {
		return &scyllav1alpha1.ScyllaDBDatacenter{
			ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 1},
			Status: scyllav1alpha1.ScyllaDBDatacenterStatus{Conditions: []metav1.Condition{
				{Type: controllerhelpers.AvailableCondition, Status: metav1.ConditionTrue, ObservedGeneration: 1},
			}},
		}
	}
	dcStatuses := []scyllav1alpha1.ScyllaDBClusterDatacenterStatus{{Name: "dc1"}, {Name: "dc2"}}
	tt := []struct {
		name        string
		previous    *metav1.Condition
		dcStatuses  []scyllav1alpha1.ScyllaDBClusterDatacenterStatus
		wantStatus  metav1.ConditionStatus
		wantMessage string
	}{
		{
			name:       "available before",
			previous:   &metav1.Condition{Type: datacentersAvailableCondition, Status: metav1.ConditionTrue, Reason: controllerhelpers.AsExpectedReason},
			dcStatuses: dcStatuses,
			wantStatus: metav1.ConditionTrue,
		},
		{
			name: "not available before",
			previous: &metav1.Condition{Type: datacentersAvailableCondition, Status: metav1.ConditionFalse, Reason: datacentersNotAvailableReason,
				Message: "datacenter \"dc1\": ScyllaDBDatacenter \"a\" is not available\ndatacenter \"dc2\": ScyllaDBDatacenter \"b\" is not available"},
			dcStatuses:  dcStatuses,
			wantStatus:  metav1.ConditionFalse,
			wantMessage: `datacenter "dc2": ScyllaDBDatacenter "b" is not available`,
		},
		{
			name: "another datacenter not available before",
			previous: &metav1.Condition{Type: datacentersAvailableCondition, Status: metav1.ConditionFalse, Reason: datacentersNotAvailableReason,
				Message: `datacenter "dc1": ScyllaDBDatacenter "a" is not available`},
			dcStatuses: dcStatuses,
			wantStatus: metav1.ConditionTrue,
		},
		{
			name:        "no status before",
			wantStatus:  metav1.ConditionFalse,
			wantMessage: `datacenter "dc2": not known yet, the caches of its remote cluster are loading`,
		},
		{
			name:        "a datacenter added since",
			previous:    &metav1.Condition{Type: datacentersAvailableCondition, Status: metav1.ConditionTrue, Reason: controllerhelpers.AsExpectedReason},
			dcStatuses:  dcStatuses[:1],
			wantStatus:  metav1.ConditionFalse,
			wantMessage: `datacenter "dc2": not known yet, the caches of its remote cluster are loading`,
		},
		{
			name:        "an invalid spec before",
			previous:    &metav1.Condition{Type: datacentersAvailableCondition, Status: metav1.ConditionFalse, Reason: invalidSpecReason, Message: "the spec is not valid"},
			dcStatuses:  dcStatuses,
			wantStatus:  metav1.ConditionFalse,
			wantMessage: `datacenter "dc2": not known yet, the caches of its remote cluster are loading`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newTwoDatacenterCluster()
			sc.Status.Datacenters = tc.dcStatuses
			if tc.previous != nil {
				sc.Status.Conditions = []metav1.Condition{*tc.previous}
			}
			dcs := []*remoteDatacenter{
				{spec: &sc.Spec.Datacenters[0], cluster: &remoteclient.Cluster{}, sdc: available("a")},
				{spec: &sc.Spec.Datacenters[1], err: loading},
			}
			got := availableCondition(sc, dcs)
			if got.Status != tc.wantStatus || got.Message != tc.wantMessage {
				t.Errorf("want %s %q, got %s %q", tc.wantStatus, tc.wantMessage, got.Status, got.Message)
			}
		})
	}
}

func TestADatacenterWhoseRemoteClusterCantBeReadKeepsItsLastKnownStatusMarkedStale(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	before := f.scyllaDBCluster().Status

	t.Log("w2's kubeconfig changes to one whose API server does not answer: its new caches never sync")
	f.reloadCaches("w2", errors.New("dial tcp: connect: connection refused"))
	f.setUnreachable("w2", true)
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), `RemoteKubernetesCluster "w2" is unreachable`) {
		t.Fatalf("want an error saying w2 is unreachable, got %v", err)
	}
	if c := f.condition(datacentersAvailableCondition); c.Status != metav1.ConditionTrue {
		t.Errorf("dc2, available when last read, is reported not available: %+v", c)
	}
	wantDC2 := *before.Datacenters[1].DeepCopy()
	wantDC2.Stale = new(true)
	if diff := cmp.Diff(wantDC2, f.scyllaDBCluster().Status.Datacenters[1]); diff != "" {
		t.Errorf("want dc2's last known status, stale (-want +got):\n%s", diff)
	}

	t.Log("A datacenter never read before is not known")
	sc := newTwoDatacenterCluster()
	dcs := []*remoteDatacenter{
		{spec: &sc.Spec.Datacenters[0], err: errors.New("unreachable")},
		{spec: &sc.Spec.Datacenters[1], err: fmt.Errorf("w2: %w", errCachesNotSynced)},
	}
	want := "datacenter \"dc1\": not known, its remote cluster can't be read\ndatacenter \"dc2\": not known yet, the caches of its remote cluster are loading"
	if c := availableCondition(sc, dcs); c.Status != metav1.ConditionFalse || c.Message != want {
		t.Errorf("want False %q, got %s %q", want, c.Status, c.Message)
	}
}

func TestRightAfterARestartADatacenterWhoseClientIsNotBuiltYetIsLoadingNotDegraded(t *testing.T) {
	t.Parallel()
	f := newFixtureBuilding(t, newTwoDatacenterCluster(), []string{"w1", "w2"}, []string{"w1"})
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

	if err := f.sync(); err != nil {
		t.Fatalf("a datacenter whose client is not built yet failed the sync: %v", err)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Degraded False while w2's client is not built yet, got %+v", c)
	}
	if c := f.condition("Progressing"); !strings.Contains(c.Message, `datacenter "dc2": RemoteKubernetesCluster "w2": its client is not built yet`) {
		t.Errorf("want Progressing saying dc2's client is not built yet, got %+v", c)
	}

	t.Log("Once the pool was told w2 has no usable kubeconfig, dc2 is degraded")
	f.pool.Delete("w2")
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), `RemoteKubernetesCluster "w2" has no client`) {
		t.Fatalf("want an error saying w2 has no client, got %v", err)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `RemoteKubernetesCluster "w2" has no client`) {
		t.Errorf("want Degraded saying w2 has no client, got %+v", c)
	}
}

func TestCachesThatFailToListForAWhileDegradeTheirDatacenterUntilTheySync(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	before := f.scyllaDBCluster().Status

	t.Log("w2's new kubeconfig passes the health check, but its user may not list anything")
	forbidden := apierrors.NewForbidden(scyllav1alpha1.Resource("scylladbdatacenters"), "",
		errors.New(`User "x" cannot list resource "scylladbdatacenters" in API group "scylla.scylladb.com" at the cluster scope`))
	cachesSynced := f.reloadCaches("w2", forbidden)
	f.setUnreachable("w2", false)
	rc, _ := f.pool.Get("w2")
	err := wait.PollUntilContextTimeout(f.ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return rc.SyncError() != nil, nil
	})
	if err != nil {
		t.Fatal("w2's informers reported no list error")
	}
	queue := &delayRecordingQueue{TypedRateLimitingInterface: f.controller.queue, after: map[string]time.Duration{}}
	f.controller.queue = queue
	if err := f.sync(); err != nil {
		t.Fatalf("caches failing to list for a moment are a wait, got %v", err)
	}
	if d := queue.delay(testKey); d <= cachesSyncTimeout-time.Minute || d > cachesSyncTimeout {
		t.Errorf("the ScyllaDBCluster is not synced again when cachesSyncTimeout passes: requeued after %v", d)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Degraded False before cachesSyncTimeout, got %+v", c)
	}

	t.Log("cachesSyncTimeout later, they still fail: dc2 is degraded with the list error")
	f.controller.clock = func() time.Time { return time.Now().Add(cachesSyncTimeout) }
	err = f.sync()
	wantMessage := `datacenter "dc2" (RemoteKubernetesCluster "w2"): RemoteKubernetesCluster "w2": the caches of the remote cluster have not synced for over 3m0s: failed to list`
	if err == nil || !strings.Contains(err.Error(), wantMessage) {
		t.Fatalf("want an error saying dc2's caches do not sync, retried with back-off, got %v", err)
	}
	degraded := f.condition("Degraded")
	if degraded.Status != metav1.ConditionTrue || !strings.Contains(degraded.Message, wantMessage) ||
		!strings.Contains(degraded.Message, `is forbidden: User "x" cannot list resource "scylladbdatacenters"`) || strings.Contains(degraded.Message, `"dc1"`) {
		t.Errorf("want Degraded naming dc2 with the forbidden list error, got %+v", degraded)
	}
	if progressing := f.condition("Progressing"); strings.Contains(progressing.Message, "caches") {
		t.Errorf("caches that fail to list are reported as loading: %+v", progressing)
	}
	status := f.scyllaDBCluster().Status
	wantDC2 := *before.Datacenters[1].DeepCopy()
	wantDC2.Stale = new(true)
	if diff := cmp.Diff(wantDC2, status.Datacenters[1]); diff != "" {
		t.Errorf("want dc2's last known status, stale (-want +got):\n%s", diff)
	}
	if c := f.condition(datacentersAvailableCondition); c.Status != metav1.ConditionTrue {
		t.Errorf("dc2, available when its caches were last read, is reported not available: %+v", c)
	}

	t.Log("The RBAC is fixed: the informers' retries list, and dc2 is not degraded any more")
	cachesSynced()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if c := f.condition("Degraded"); c.Status != metav1.ConditionFalse {
		t.Errorf("want Degraded False once the caches synced, got %+v", c)
	}
	if diff := cmp.Diff(before, f.scyllaDBCluster().Status, cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")); diff != "" {
		t.Errorf("the status is not back to what it was (-want +got):\n%s", diff)
	}
}
