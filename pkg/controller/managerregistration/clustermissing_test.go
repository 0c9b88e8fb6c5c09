package managerregistration

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
)

// newLostClusterFixture returns a fixture whose datacenter a sync registered as testClusterID, which ScyllaDB Manager
// then lost (its database reset, or sctool cluster delete); what happened so far is forgotten, and nothing is queued.
func newLostClusterFixture(t *testing.T) *fixture {
	t.Helper()
	f := newRegisteredFixture(t, func(*scyllav1alpha1.ScyllaDBDatacenter) {})
	t.Cleanup(f.controller.queue.ShutDown)
	now := testNow
	f.controller.clock = func() time.Time { return now }
	if err := f.managerClient.DeleteCluster(t.Context(), testClusterID); err != nil {
		t.Fatal(err)
	}
	f.reset()
	if n := f.controller.queue.Len(); n != 0 {
		t.Fatalf("expected an empty queue, got %d keys", n)
	}
	return f
}

// advance moves the clock of f's reports by d.
func (f *fixture) advance(d time.Duration) {
	now := f.controller.clock().Add(d)
	f.controller.clock = func() time.Time { return now }
}

// takeQueued returns the keys queued, in order, and marks them done.
func takeQueued(queue workqueue.TypedRateLimitingInterface[string]) []string {
	var keys []string
	for queue.Len() > 0 {
		key, _ := queue.Get()
		keys = append(keys, key)
		queue.Done(key)
	}
	return keys
}

func managerEndpoints(requests []fakescyllamanager.Request) []fakescyllamanager.Endpoint {
	var out []fakescyllamanager.Endpoint
	for _, r := range requests {
		out = append(out, r.Endpoint)
	}
	return out
}

func TestClusterMissingSyncsTheObjectWhichRegistersItAgainUnderTheSameID(t *testing.T) {
	t.Parallel()

	f := newLostClusterFixture(t)

	f.controller.ClusterMissing(testNamespace, testName, testClusterID)
	if requests := f.manager.Requests(); len(requests) != 0 {
		t.Errorf("expected the report to cost no ScyllaDB Manager request, got %v", managerEndpoints(requests))
	}
	if diff := cmp.Diff([]string{testKey}, takeQueued(f.controller.queue)); diff != "" {
		t.Fatalf("unexpected queue (-want +got):\n%s", diff)
	}

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointGetCluster, fakescyllamanager.EndpointCreateCluster}, managerEndpoints(f.manager.Requests())); diff != "" {
		t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
	}
	want := []fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}
	if diff := cmp.Diff(want, f.manager.State().Clusters); diff != "" {
		t.Errorf("expected ScyllaDB Manager to hold the cluster again under the same ID (-want +got):\n%s", diff)
	}
	// Finalizer, annotation and conditions are as they were: the object is not written.
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("expected no Kubernetes writes, got %v", writes)
	}
}

// TestClusterMissingStartsOneSyncPerInterval: every task of a lost cluster reports it on each of its looks (every 30
// seconds), and the first report starts the one sync that registers it again.
func TestClusterMissingStartsOneSyncPerInterval(t *testing.T) {
	t.Parallel()

	f := newLostClusterFixture(t)
	report := func() []string {
		f.controller.ClusterMissing(testNamespace, testName, testClusterID)
		return takeQueued(f.controller.queue)
	}

	if diff := cmp.Diff([]string{testKey}, report()); diff != "" {
		t.Errorf("unexpected queue after the first report (-want +got):\n%s", diff)
	}
	// The other tasks of the cluster, in the same look.
	for range 3 {
		if keys := report(); len(keys) != 0 {
			t.Errorf("expected a report within the interval to be dropped, got %v", keys)
		}
	}
	f.advance(defaultClusterMissingInterval - time.Second)
	if keys := report(); len(keys) != 0 {
		t.Errorf("expected a report within the interval to be dropped, got %v", keys)
	}
	// The tasks' next look.
	f.advance(time.Second)
	if diff := cmp.Diff([]string{testKey}, report()); diff != "" {
		t.Errorf("unexpected queue after the interval (-want +got):\n%s", diff)
	}
	if requests := f.manager.Requests(); len(requests) != 0 {
		t.Errorf("expected the reports to cost no ScyllaDB Manager request, got %v", managerEndpoints(requests))
	}
}

// TestClusterMissingDoesNotBypassAScheduledRetry: a registration that keeps failing is retried as the queue's back-off
// or the rejection's delay says, however often its tasks report the cluster missing.
func TestClusterMissingDoesNotBypassAScheduledRetry(t *testing.T) {
	t.Parallel()

	t.Run("a retry with back-off after an error", func(t *testing.T) {
		t.Parallel()

		f := newLostClusterFixture(t)
		// A back-off long enough that the retry does not come during the test.
		f.controller.queue = workqueue.NewTypedRateLimitingQueue(workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Hour, time.Hour))
		t.Cleanup(f.controller.queue.ShutDown)
		if err := f.manager.InjectFailure(fakescyllamanager.EndpointCreateCluster, fakescyllamanager.Failure{Status: http.StatusInternalServerError, Message: "database is down"}); err != nil {
			t.Fatal(err)
		}
		if err := f.sync(); err == nil {
			t.Fatal("expected an error for the queue to retry")
		}
		// What the worker does with the error.
		f.controller.queue.AddRateLimited(testKey)

		f.controller.ClusterMissing(testNamespace, testName, testClusterID)
		if n := f.controller.queue.Len(); n != 0 {
			t.Errorf("expected the report to leave the retry to the back-off, got %d keys queued", n)
		}

		// Once a sync succeeds the queue forgets the back-off, and reports are taken again.
		f.manager.ClearFailures()
		f.controller.queue.Forget(testKey)
		f.controller.ClusterMissing(testNamespace, testName, testClusterID)
		if n := f.controller.queue.Len(); n != 1 {
			t.Errorf("expected the report to queue the datacenter, got %d keys queued", n)
		}
	})

	t.Run("a retry after a delay after a rejection", func(t *testing.T) {
		t.Parallel()

		f := newLostClusterFixture(t)
		if err := f.manager.InjectFailure(fakescyllamanager.EndpointCreateCluster, fakescyllamanager.Failure{
			Status: http.StatusBadRequest, Message: "create cluster: connectivity check: 10.0.0.2: agent is not responding",
		}); err != nil {
			t.Fatal(err)
		}
		if err := f.sync(); err != nil {
			t.Fatalf("expected the rejection not to be retried with back-off, got %v", err)
		}
		// Right away, at the tasks' next look, and just before the delayed retry.
		for _, d := range []time.Duration{0, defaultClusterMissingInterval, defaultRejectedRetryDelay - defaultClusterMissingInterval - time.Second} {
			f.advance(d)
			f.controller.ClusterMissing(testNamespace, testName, testClusterID)
			if n := f.controller.queue.Len(); n != 0 {
				t.Fatalf("expected a report before the delayed retry to be dropped, got %d keys queued", n)
			}
		}
		f.advance(time.Second)
		f.controller.ClusterMissing(testNamespace, testName, testClusterID)
		if diff := cmp.Diff([]string{testKey}, takeQueued(f.controller.queue)); diff != "" {
			t.Errorf("unexpected queue once the delay passed (-want +got):\n%s", diff)
		}
	})
}

func TestClusterMissingDropsReportsThatNoLongerDescribeTheObject(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct {
		name      string
		change    func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		clusterID string
	}{
		{
			name:      "another ID in the annotation since",
			change:    func(*scyllav1alpha1.ScyllaDBDatacenter) {},
			clusterID: "0b8e2f4c-1d3a-4e5b-8c7d-9e0f1a2b3c4d",
		},
		{
			name: "no longer labelled",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
			},
			clusterID: testClusterID,
		},
		{
			name: "being deleted",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
			},
			clusterID: testClusterID,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newRegisteredFixture(t, tc.change)
			t.Cleanup(f.controller.queue.ShutDown)
			f.controller.ClusterMissing(testNamespace, testName, tc.clusterID)
			if n := f.controller.queue.Len(); n != 0 {
				t.Errorf("expected the report to be dropped, got %d keys queued", n)
			}
		})
	}

	t.Run("gone", func(t *testing.T) {
		t.Parallel()

		f := newLostClusterFixture(t)
		f.controller.ClusterMissing(testNamespace, "other", testClusterID)
		if n := f.controller.queue.Len(); n != 0 {
			t.Errorf("expected the report to be dropped, got %d keys queued", n)
		}
	})
}

func TestClusterMissingReporterHandsEachKindToItsController(t *testing.T) {
	t.Parallel()

	sdcFixture := newLostClusterFixture(t)
	scFixture := newSCFixture(t, newSC(), newSCAuthTokenSecret(t, testToken))
	t.Cleanup(scFixture.controller.queue.ShutDown)
	if err := scFixture.sync(); err != nil {
		t.Fatal(err)
	}
	scFixture.recache()

	reporter, err := NewClusterMissingReporter(sdcFixture.controller, scFixture.controller)
	if err != nil {
		t.Fatal(err)
	}
	reporter.ReportClusterMissing("ScyllaDBDatacenter", testNamespace, testName, testClusterID)
	reporter.ReportClusterMissing("ScyllaDBCluster", testNamespace, testName, testSCClusterID)
	reporter.ReportClusterMissing("ScyllaCluster", testNamespace, testName, testClusterID)
	if diff := cmp.Diff([]string{testKey}, takeQueued(sdcFixture.controller.queue)); diff != "" {
		t.Errorf("unexpected ScyllaDBDatacenter queue (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{testKey}, takeQueued(scFixture.controller.queue)); diff != "" {
		t.Errorf("unexpected ScyllaDBCluster queue (-want +got):\n%s", diff)
	}

	if _, err := NewClusterMissingReporter(sdcFixture.controller, nil); err == nil || err.Error() != "can't create the ClusterMissingReporter: both registration controllers are needed" {
		t.Errorf("expected an error for a missing controller, got %v", err)
	}
}
