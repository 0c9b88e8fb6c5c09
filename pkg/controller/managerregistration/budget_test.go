package managerregistration

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The writes of a registration, as the journal describes them.
const (
	writeWaitingForRollout = "apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=True/WaitingForRollout ScyllaDBManagerRegistrationDegraded=False/AsExpected"
	writeFinalizer         = "patch scylladbdatacenters: finalizers=[other scylladb-manager-cluster]"
	writeCreateCluster     = "ScyllaDB Manager CreateCluster"
	writeClusterID         = "patch scylladbdatacenters: +scylladb-manager-clusterid"
	writeRegistered        = "apply scylladbdatacenters/status: ScyllaDBManagerRegistrationProgressing=False/AsExpected ScyllaDBManagerRegistrationDegraded=False/AsExpected"
	writeDeleteCluster     = "ScyllaDB Manager DeleteCluster"
	writeNoFinalizer       = "patch scylladbdatacenters: finalizers=[other]"
	writeNoClusterID       = "patch scylladbdatacenters: -scylladb-manager-clusterid"
	writeNoConditions      = "apply scylladbdatacenters/status: nothing"
)

// registrationWrites is what registering a rolled-out datacenter writes, in order: the finalizer right before
// ScyllaDB Manager's create, the create, the cluster ID annotation right after it, and the conditions saying so.
var registrationWrites = []string{writeFinalizer, writeCreateCluster, writeClusterID, writeRegistered}

// newCreatedSDC returns the test datacenter as the operator creates it for a ScyllaCluster: labelled, named after
// the ScyllaCluster in ScyllaDB Manager, at generation 1, with another controller's finalizer and no status yet.
func newCreatedSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := newTranslatedSDC()
	sdc.Generation = 1
	sdc.Finalizers = []string{"example.com/other"}
	sdc.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{}
	return sdc
}

// operatorReports returns a change that makes the stored datacenter's status say what the operator reports: the
// generation it observed and its Available condition.
func operatorReports(observedGeneration int64, available metav1.ConditionStatus) func(f *fixture) {
	return func(f *fixture) {
		sdc := f.stored().DeepCopy()
		sdc.Status.ObservedGeneration = new(observedGeneration)
		conditions := ownedConditions(sdc)
		conditions = append(conditions, metav1.Condition{
			Type: "Available", Status: available, Reason: "AsExpected", ObservedGeneration: observedGeneration, LastTransitionTime: metav1.NewTime(testNow),
		})
		sdc.Status.Conditions = conditions
		f.update(sdc)
	}
}

// TestRegistrationWriteBudget drives a ScyllaCluster's datacenter from its creation to its registration through
// every step the manager-controller sees, and pins every write of each sync, ScyllaDB Manager's included: one status
// write per observable change (waiting, registered), the finalizer right before the only ScyllaDB Manager write, the
// cluster ID right after it, and nothing once registered.
func TestRegistrationWriteBudget(t *testing.T) {
	t.Parallel()

	f := newFixture(t, newCreatedSDC())
	steps := []struct {
		name string
		// change is what others did since the previous sync.
		change func(f *fixture)
		// stale leaves the cache as the previous sync found it, as when the events of the previous sync's writes
		// enqueue the object before the informer has them.
		stale bool
		want  []string
	}{
		{
			name: "created: waits for its rollout",
			want: []string{writeWaitingForRollout},
		},
		{
			name: "the operator observes generation 1 and creates the auth-token Secret",
			change: func(f *fixture) {
				operatorReports(1, metav1.ConditionFalse)(f)
				f.cache(newAuthTokenSecret(t, testToken))
			},
		},
		{
			name:   "the operator reports generation 1 Available",
			change: operatorReports(1, metav1.ConditionTrue),
			want:   registrationWrites,
		},
		{
			name:  "the events of its own writes, before the informer has them",
			stale: true,
		},
		{
			name: "the informer caught up",
		},
		{
			name: "a resync",
		},
	}
	total := 0
	for _, s := range steps {
		if !s.stale {
			f.cache(f.stored())
		}
		if s.change != nil {
			s.change(f)
		}
		if err := f.sync(); err != nil {
			t.Fatalf("%s: unexpected error: %v", s.name, err)
		}
		got := f.journal.Take()
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", s.name, diff)
		}
		total += len(got)
	}

	// The irreducible ones: two status writes (waiting, registered), the finalizer before ScyllaDB Manager's create
	// and the annotation after it, which no patch can share.
	if total != 5 {
		t.Errorf("expected 4 Kubernetes writes and 1 ScyllaDB Manager write in all, got %d", total)
	}
	if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, "scylla/basic", testToken)}, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
}

// newWaitingSDC returns the test datacenter rolled out after an earlier sync reported that it waits for its rollout:
// where a first registration starts.
func newWaitingSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := newSDC()
	sdc.Finalizers = []string{"example.com/other"}
	sdc.Status.Conditions = append(sdc.Status.Conditions, []metav1.Condition{
		{Type: ScyllaDBManagerRegistrationProgressingCondition, Status: metav1.ConditionTrue, Reason: waitingForRolloutReason, Message: "waiting", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
		{Type: ScyllaDBManagerRegistrationDegradedCondition, Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: metav1.NewTime(testNow)},
	}...)
	return sdc
}

// crashAfter runs one sync of the fixture's datacenter as a process that dies after n writes, checks that exactly the
// first n of full were made, and starts the process again with the informer caught up.
func crashAfter(t *testing.T, f *fixture, n int, full []string) {
	t.Helper()
	f.journal.ExpectCrashAfter(t, n, full, f.sync)
	f.recache()
}

// TestRegistrationKilledBetweenAnyTwoWritesLeaksAndLosesNothing kills the process of a first registration after each
// of its writes. Restarted, the next sync writes exactly the writes that had not been made, and ScyllaDB Manager ends
// up with the one cluster; deleted instead, the datacenter takes its cluster out of ScyllaDB Manager, if it got there,
// before it goes.
func TestRegistrationKilledBetweenAnyTwoWritesLeaksAndLosesNothing(t *testing.T) {
	t.Parallel()

	for n := range len(registrationWrites) + 1 {
		t.Run(fmt.Sprintf("restarted after %d writes", n), func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newWaitingSDC(), newAuthTokenSecret(t, testToken))
			crashAfter(t, f, n, registrationWrites)

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(registrationWrites[n:], f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected writes after the restart (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]fakescyllamanager.ClusterState{wantCluster(t, testClusterID, testClusterName, testToken)}, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(goodConditions(), ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})

		t.Run(fmt.Sprintf("deleted after %d writes", n), func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newWaitingSDC(), newAuthTokenSecret(t, testToken))
			crashAfter(t, f, n, registrationWrites)

			sdc := f.stored().DeepCopy()
			sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
			f.update(sdc)
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			var want []string
			switch {
			case n >= 2:
				want = []string{writeDeleteCluster, writeNoFinalizer}
			case n == 1:
				// The finalizer went on, the cluster never got to ScyllaDB Manager.
				want = []string{writeNoFinalizer}
			}
			if diff := cmp.Diff(want, f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected writes of the deletion (-want +got):\n%s", diff)
			}
			f.expectDeregistered()
		})
	}
}

// TestDeregistrationKilledBetweenAnyTwoWritesResumesWithTheRest kills the process of a deregistration after each of
// its writes: ScyllaDB Manager's delete comes before anything the object loses, so that the restarted sync still
// finds the cluster to delete, or finds it gone, and writes exactly what the killed one did not.
func TestDeregistrationKilledBetweenAnyTwoWritesResumesWithTheRest(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name   string
		change func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		full   []string
	}{
		{
			name:   "deleted",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.DeletionTimestamp = new(metav1.NewTime(testNow)) },
			full:   []string{writeDeleteCluster, writeNoFinalizer},
		},
		{
			name: "unlabelled",
			change: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
			},
			full: []string{writeDeleteCluster, writeNoClusterID, writeNoConditions, writeNoFinalizer},
		},
	}
	for _, tc := range tt {
		for n := range len(tc.full) + 1 {
			t.Run(fmt.Sprintf("%s, restarted after %d writes", tc.name, n), func(t *testing.T) {
				t.Parallel()

				f := newRegisteredFixture(t, tc.change)

				crashAfter(t, f, n, tc.full)
				if err := f.sync(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.full[n:], f.journal.Take(), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("unexpected writes after the restart (-want +got):\n%s", diff)
				}
				f.expectDeregistered()
			})
		}
	}
}
