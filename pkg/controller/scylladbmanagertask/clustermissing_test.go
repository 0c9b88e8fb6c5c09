package scylladbmanagertask

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSyncHandsAClusterMissingFromScyllaDBManagerToTheRegistrationController(t *testing.T) {
	t.Parallel()

	scClusterID := naming.ScyllaDBManagerClusterID(scyllaDBClusterKind, "sc-uid")
	sc := &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   testNamespace,
			Name:        "multi",
			UID:         "sc-uid",
			Labels:      map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"},
			Annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: scClusterID},
		},
	}
	ofScyllaDBCluster := func(task *scyllav1alpha1.ScyllaDBManagerTask) *scyllav1alpha1.ScyllaDBManagerTask {
		task.Spec.ScyllaDBClusterRef = scyllav1alpha1.LocalScyllaDBReference{Kind: scyllaDBClusterKind, Name: "multi"}
		return task
	}

	for _, tc := range []struct {
		name      string
		objects   []runtime.Object
		clusterID string
		cluster   managerclient.Cluster
		// wantReport is what each sync of a task that finds the cluster missing reports.
		wantReport string
	}{
		{
			name:       "tasks of a ScyllaDBDatacenter",
			objects:    []runtime.Object{newRegisteredDatacenter(), newBackupTask("daily"), newRepairTask("weekly")},
			clusterID:  testClusterID,
			cluster:    managerclient.Cluster{ID: testClusterID, Name: "scylla/basic", Host: "basic-client.scylla.svc", AuthToken: "token", WithoutRepair: true},
			wantReport: "ScyllaDBDatacenter scylla/basic " + testClusterID,
		},
		{
			name:       "tasks of a ScyllaDBCluster",
			objects:    []runtime.Object{sc, ofScyllaDBCluster(newBackupTask("daily")), ofScyllaDBCluster(newRepairTask("weekly"))},
			clusterID:  scClusterID,
			cluster:    managerclient.Cluster{ID: scClusterID, Name: "scylla/ScyllaDBCluster/multi", Host: "multi-client.scylla.svc", AuthToken: "token", WithoutRepair: true},
			wantReport: "ScyllaDBCluster scylla/multi " + scClusterID,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, tc.objects...)
			if tc.clusterID != testClusterID {
				if _, err := f.managerClient.CreateCluster(t.Context(), &tc.cluster); err != nil {
					t.Fatal(err)
				}
			}
			syncAll := func() {
				t.Helper()
				for _, name := range []string{"daily", "weekly"} {
					f.mustSync(t, name)
				}
			}
			syncAll()
			if got := len(f.tasksIn(tc.clusterID)); got != 2 {
				t.Fatalf("expected ScyllaDB Manager to hold 2 tasks, got %d", got)
			}
			f.managerRequests()

			// At rest a refresh reads one task list, and reports nothing.
			f.expireMemo()
			syncAll()
			if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointListTasks}, endpoints(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests at rest (-want +got):\n%s", diff)
			}
			if reports := f.clusterMissing.take(); len(reports) != 0 {
				t.Errorf("expected no report at rest, got %v", reports)
			}

			// ScyllaDB Manager loses the cluster, and its tasks with it.
			if err := f.managerClient.DeleteCluster(t.Context(), tc.clusterID); err != nil {
				t.Fatal(err)
			}
			f.managerRequests()
			f.expireMemo()
			syncAll()
			if diff := cmp.Diff([]string{tc.wantReport, tc.wantReport}, f.clusterMissing.take()); diff != "" {
				t.Errorf("unexpected reports (-want +got):\n%s", diff)
			}
			// The report costs no request: only each sync's task list read, which found the cluster missing.
			if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointListTasks, fakescyllamanager.EndpointListTasks}, endpoints(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			for _, name := range []string{"daily", "weekly"} {
				want := []string{"Available=False/TaskNotScheduled", "Degraded=False/AsExpected", "Progressing=True/ScyllaDBManagerClusterMissing"}
				if diff := cmp.Diff(want, conditionStatuses(f.task(t, name))); diff != "" {
					t.Errorf("unexpected conditions of %q (-want +got):\n%s", name, diff)
				}
			}

			// The registration controller registers it again under the same ID; the tasks' next look creates them.
			if _, err := f.managerClient.CreateCluster(t.Context(), &tc.cluster); err != nil {
				t.Fatal(err)
			}
			f.managerRequests()
			f.clock.Advance(f.controller.clusterMissingRequeueDelay)
			syncAll()
			if diff := cmp.Diff([]fakescyllamanager.Endpoint{fakescyllamanager.EndpointCreateTask, fakescyllamanager.EndpointCreateTask}, managerWrites(f.managerRequests())); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			if got := len(f.tasksIn(tc.clusterID)); got != 2 {
				t.Errorf("expected ScyllaDB Manager to hold 2 tasks again, got %d", got)
			}
			if reports := f.clusterMissing.take(); len(reports) != 0 {
				t.Errorf("expected no report once the cluster is back, got %v", reports)
			}
		})
	}
}

func TestNewControllerNeedsAClusterMissingReporter(t *testing.T) {
	t.Parallel()

	f := newFixture(t)
	_, err := NewController(f.controller.kubeClient, f.scyllaClient, f.managerClient, nil,
		f.factory.Scylla().V1alpha1().ScyllaDBManagerTasks(),
		f.factory.Scylla().V1alpha1().ScyllaDBDatacenters(),
		f.factory.Scylla().V1alpha1().ScyllaDBClusters(),
		f.factory.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		f.factory.Scylla().V1alpha1().ScyllaDBBackupEntries(),
	)
	want := "can't create the ScyllaDBManagerTask controller without a reporter of missing ScyllaDB Manager clusters: a lost cluster would be registered again only at the next resync"
	if err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
}

// endpoints returns the endpoints of requests, in order.
func endpoints(requests []fakescyllamanager.Request) []fakescyllamanager.Endpoint {
	out := make([]fakescyllamanager.Endpoint, 0, len(requests))
	for _, r := range requests {
		out = append(out, r.Endpoint)
	}
	return out
}
