package scylladbdatacenter

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

func counts(nodes, current, updated, ready, available int32) scyllav1alpha1.NodeCounts {
	return scyllav1alpha1.NodeCounts{Nodes: &nodes, CurrentNodes: &current, UpdatedNodes: &updated, ReadyNodes: &ready, AvailableNodes: &available}
}

// aggregated returns the Available, Progressing and Degraded conditions of status and the children that are not
// in their good state.
func aggregated(status *scyllav1alpha1.ScyllaDBDatacenterStatus) []metav1.Condition {
	var out []metav1.Condition
	for _, c := range status.Conditions {
		good := metav1.ConditionFalse
		if c.Type == "Available" || c.Type == "StatefulSetControllerAvailable" {
			good = metav1.ConditionTrue
		}
		switch c.Type {
		case "Available", "Progressing", "Degraded":
			out = append(out, c)
		default:
			if c.Status != good {
				out = append(out, c)
			}
		}
	}
	return out
}

func TestStatusDuringARollingUpgrade(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	// Rack b rolls to a new version: pod 2 is updated and not yet ready, pods 0 and 1 still run the old one.
	sts := object[*appsv1.StatefulSet](t, w, "basic-dc1-b")
	sts.Status.UpdateRevision = "basic-dc1-b-rev2"
	sts.Status.UpdatedReplicas = 1
	sts.Status.CurrentReplicas = 2
	sts.Status.ReadyReplicas = 2
	sts.Status.AvailableReplicas = 2
	for _, name := range []string{"basic-dc1-b-0", "basic-dc1-b-1"} {
		object[*corev1.Pod](t, w, name).Spec.Containers[0].Image = "docker.io/scylladb/scylla:2024.2.0"
	}
	object[*corev1.Pod](t, w, "basic-dc1-b-2").Labels[appsv1.ControllerRevisionHashLabelKey] = "basic-dc1-b-rev2"
	// Rack a's StatefulSet has not observed its latest spec yet.
	object[*appsv1.StatefulSet](t, w, "basic-dc1-a").Generation++
	object[*appsv1.StatefulSet](t, w, "basic-dc1-a").Status.ObservedGeneration = 0

	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	status := &f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status

	wantRacks := []scyllav1alpha1.RackStatus{
		{Name: "a", CurrentVersion: "2026.2.0", UpdatedVersion: "2026.2.0", NodeCounts: counts(3, 3, 3, 3, 3), Stale: new(true)},
		{Name: "b", CurrentVersion: "2024.2.0", UpdatedVersion: "2026.2.0", NodeCounts: counts(3, 2, 1, 2, 2), Stale: new(false)},
	}
	if diff := cmp.Diff(wantRacks, status.Racks); diff != "" {
		t.Errorf("unexpected racks (-want +got):\n%s", diff)
	}
	wantTotals := scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(int64(2)),
		CurrentVersion:     "2024.2.0",
		UpdatedVersion:     "2026.2.0",
		NodeCounts:         counts(6, 5, 4, 5, 5),
	}
	if diff := cmp.Diff(wantTotals, *status, cmpopts.IgnoreFields(scyllav1alpha1.ScyllaDBDatacenterStatus{}, "Racks", "Conditions")); diff != "" {
		t.Errorf("unexpected totals (-want +got):\n%s", diff)
	}

	rollout := "rack \"a\": waiting for StatefulSet basic-dc1-a to observe generation 2\n" +
		"rack \"b\": rolling out StatefulSet basic-dc1-b: 1 of 3 nodes updated"
	wantConditions := []metav1.Condition{
		{Type: "StatefulSetControllerProgressing", Status: metav1.ConditionTrue, Reason: "WaitingForStatefulSetRollout", Message: rollout, ObservedGeneration: 2, LastTransitionTime: testNow},
		// One node down is what the PodDisruptionBudget allows: still available.
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
		{Type: "Progressing", Status: metav1.ConditionTrue, Reason: "WaitingForStatefulSetRollout", Message: "StatefulSetControllerProgressing: " + rollout, ObservedGeneration: 2, LastTransitionTime: testNow},
		{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
	}
	if diff := cmp.Diff(wantConditions, aggregated(status)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}

func TestStatusOfAConvergedDatacenterAndTransitionTimes(t *testing.T) {
	t.Parallel()

	w := withNodes(convergedWorld(t))
	before := w.sdc.Status.DeepCopy()
	f := newFixture(t, w)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	status := &f.written("scylladbdatacenters", "basic").(*scyllav1alpha1.ScyllaDBDatacenter).Status

	wantConditions := []metav1.Condition{
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
		{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
		{Type: "Degraded", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 2, LastTransitionTime: testNow},
	}
	if diff := cmp.Diff(wantConditions, aggregated(status)); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(counts(6, 6, 6, 6, 6), status.NodeCounts); diff != "" {
		t.Errorf("unexpected counts (-want +got):\n%s", diff)
	}

	// Conditions whose status did not change keep their transition time; the others get the clock's.
	for _, c := range status.Conditions {
		old := findCondition(before.Conditions, c.Type)
		if old == nil {
			t.Fatalf("condition %s is new", c.Type)
		}
		if c.Status == old.Status && !c.LastTransitionTime.Equal(&old.LastTransitionTime) {
			t.Errorf("condition %s kept its status but its transition time changed", c.Type)
		}
	}
}

func findCondition(conditions []metav1.Condition, condType string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == condType {
			return &conditions[i]
		}
	}
	return nil
}

func TestAvailableCondition(t *testing.T) {
	t.Parallel()

	available := func(sts *appsv1.StatefulSet, n int32) *appsv1.StatefulSet {
		sts.Status.AvailableReplicas = n
		return sts
	}
	tt := []struct {
		name        string
		racks       []*rackObjects
		wantStatus  metav1.ConditionStatus
		wantMessage string
	}{
		{
			name:       "every node available",
			racks:      []*rackObjects{testRack("a", new(int32(3)), settledStatefulSet("a", 3), 3, "")},
			wantStatus: metav1.ConditionTrue,
		},
		{
			name:       "one node down",
			racks:      []*rackObjects{testRack("a", new(int32(3)), available(settledStatefulSet("a", 3), 2), 3, "")},
			wantStatus: metav1.ConditionTrue,
		},
		{
			name: "two nodes down across racks",
			racks: []*rackObjects{
				testRack("a", new(int32(3)), available(settledStatefulSet("a", 3), 2), 3, ""),
				testRack("b", new(int32(3)), available(settledStatefulSet("b", 3), 2), 3, ""),
			},
			wantStatus:  metav1.ConditionFalse,
			wantMessage: "4 of 6 nodes are available",
		},
		{
			name:        "a single node datacenter with its node down",
			racks:       []*rackObjects{testRack("a", new(int32(1)), available(settledStatefulSet("a", 1), 0), 1, "")},
			wantStatus:  metav1.ConditionFalse,
			wantMessage: "0 of 1 nodes are available",
		},
		{
			name:        "no StatefulSet yet",
			racks:       []*rackObjects{testRack("a", new(int32(3)), nil, 0, "")},
			wantStatus:  metav1.ConditionFalse,
			wantMessage: "0 of 3 nodes are available",
		},
		{
			name:       "nodes above the spec's count while scaling down do not count",
			racks:      []*rackObjects{testRack("a", new(int32(2)), available(settledStatefulSet("a", 3), 3), 3, "")},
			wantStatus: metav1.ConditionTrue,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := availableCondition(newBasicSDC(), tc.racks)
			if got.Status != tc.wantStatus || got.Message != tc.wantMessage || got.ObservedGeneration != 2 {
				t.Errorf("expected %s %q at generation 2, got %+v", tc.wantStatus, tc.wantMessage, got)
			}
		})
	}
}

func TestStatusesCompareAsSemanticEquality(t *testing.T) {
	t.Parallel()

	status := func(mutate func(*scyllav1alpha1.ScyllaDBDatacenterStatus)) *scyllav1alpha1.ScyllaDBDatacenterStatus {
		s := &scyllav1alpha1.ScyllaDBDatacenterStatus{
			ObservedGeneration: new(int64(2)),
			Conditions: []metav1.Condition{{
				Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 2,
				LastTransitionTime: metav1.NewTime(testNow.UTC()),
			}},
			Racks: []scyllav1alpha1.RackStatus{{Name: "a"}},
		}
		if mutate != nil {
			mutate(s)
		}
		return s
	}
	tt := []struct {
		name string
		// mutateA and mutate change the first and the second status.
		mutateA, mutate func(*scyllav1alpha1.ScyllaDBDatacenterStatus)
		want            bool
	}{
		{name: "equal field by field", want: true},
		{name: "the same transition time in another location", want: true, mutate: func(s *scyllav1alpha1.ScyllaDBDatacenterStatus) {
			s.Conditions[0].LastTransitionTime = metav1.NewTime(testNow.In(time.FixedZone("UTC+2", 2*60*60)))
		}},
		{
			name:    "no racks and an empty list of racks",
			want:    true,
			mutateA: func(s *scyllav1alpha1.ScyllaDBDatacenterStatus) { s.Racks = nil },
			mutate:  func(s *scyllav1alpha1.ScyllaDBDatacenterStatus) { s.Racks = []scyllav1alpha1.RackStatus{} },
		},
		{name: "a condition changed", mutate: func(s *scyllav1alpha1.ScyllaDBDatacenterStatus) {
			s.Conditions[0].Status = metav1.ConditionFalse
		}},
		{name: "a rack more", mutate: func(s *scyllav1alpha1.ScyllaDBDatacenterStatus) {
			s.Racks = append(s.Racks, scyllav1alpha1.RackStatus{Name: "b"})
		}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b := status(tc.mutateA), status(tc.mutate)
			if got := semanticallyEqual(a, b); got != tc.want {
				t.Errorf("semanticallyEqual = %v, want %v", got, tc.want)
			}
			if got := apiequality.Semantic.DeepEqual(a, b); got != tc.want {
				t.Errorf("the table is wrong: apiequality.Semantic.DeepEqual = %v", got)
			}
		})
	}
}

func TestOwnedStatusKeepsTheOwnedConditionsSortedAndLeavesTheStatusAlone(t *testing.T) {
	t.Parallel()

	status := &scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(int64(3)),
		Conditions:         []metav1.Condition{{Type: "Progressing"}, {Type: "SidecarOwned"}, {Type: "Available"}},
		Racks:              []scyllav1alpha1.RackStatus{{Name: "a"}},
	}
	before := status.DeepCopy()
	got := ownedStatus(status, sets.New("Available", "Progressing", "Degraded"))
	want := &scyllav1alpha1.ScyllaDBDatacenterStatus{
		ObservedGeneration: new(int64(3)),
		Conditions:         []metav1.Condition{{Type: "Available"}, {Type: "Progressing"}},
		Racks:              []scyllav1alpha1.RackStatus{{Name: "a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected owned status (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, status); diff != "" {
		t.Errorf("the status was modified (-before +after):\n%s", diff)
	}
	if got := ownedStatus(&scyllav1alpha1.ScyllaDBDatacenterStatus{}, sets.New("Available")); got.Conditions != nil {
		t.Errorf("no conditions became %#v", got.Conditions)
	}
	if got := ownedStatus(&scyllav1alpha1.ScyllaDBDatacenterStatus{Conditions: []metav1.Condition{{Type: "SidecarOwned"}}}, sets.New("Available")); got.Conditions == nil || len(got.Conditions) != 0 {
		t.Errorf("conditions none of which is owned became %#v, want an empty list", got.Conditions)
	}
}
