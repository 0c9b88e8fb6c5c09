package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPlanRollout(t *testing.T) {
	t.Parallel()

	// rack returns rack name with 3 nodes, whose StatefulSet (from modify) has the pod template hash "old".
	rack := func(name string, modify func(sts *appsv1.StatefulSet)) *rackObjects {
		sts := settledStatefulSet("basic-dc1-"+name, 3)
		sts.Annotations = map[string]string{"scylla-operator.scylladb.com/pod-template-hash": "old"}
		if modify != nil {
			modify(sts)
		}
		return testRack(name, new(int32(3)), sts, 3, "")
	}
	rolling := func(updated, available int32) func(sts *appsv1.StatefulSet) {
		return func(sts *appsv1.StatefulSet) {
			sts.Status.UpdateRevision = sts.Name + "-2"
			sts.Status.UpdatedReplicas = updated
			sts.Status.ReadyReplicas = available
			sts.Status.AvailableReplicas = available
		}
	}
	held := func(sts *appsv1.StatefulSet) {
		rolling(0, 3)(sts)
		setPartition(sts, 3)
	}
	unobserved := func(sts *appsv1.StatefulSet) { sts.Generation++ }
	unavailable := func(sts *appsv1.StatefulSet) { sts.Status.AvailableReplicas = 2 }

	tt := []struct {
		name   string
		racks  []*rackObjects
		hashes []string
		// replicas are the replicas this sync applies to each rack's StatefulSet; nil: 3 each.
		replicas      []int32
		nodeOperation string
		want          []int32
	}{
		{
			name:     "a template change waits while another rack scales up in the same sync",
			racks:    []*rackObjects{rack("a", nil), rack("b", nil)},
			hashes:   []string{"new", "old"},
			replicas: []int32{3, 4},
			want:     []int32{3, 0},
		},
		{
			name:   "a template change waits while another rack is created with nodes in the same sync",
			racks:  []*rackObjects{rack("a", nil), testRack("b", new(int32(3)), nil, 0, "")},
			hashes: []string{"new", "new"},
			want:   []int32{3, 0},
		},
		{
			name: "a template change waits while a node of another rack is in maintenance, which makes it look ready",
			racks: []*rackObjects{rack("a", nil), func() *rackObjects {
				r := rack("b", nil)
				r.services[1].Labels["scylla/node-maintenance"] = ""
				return r
			}()},
			hashes: []string{"new", "old"},
			want:   []int32{3, 0},
		},
		{
			name: "a template change waits while a node of its own rack is in maintenance",
			racks: []*rackObjects{func() *rackObjects {
				r := rack("a", nil)
				r.services[0].Labels["scylla/node-maintenance"] = ""
				return r
			}()},
			hashes: []string{"new"},
			want:   []int32{3},
		},
		{
			name:     "a rack scaling up in the same sync rolls itself: its StatefulSet adds the node before restarting any",
			racks:    []*rackObjects{rack("a", nil), rack("b", nil)},
			hashes:   []string{"new", "old"},
			replicas: []int32{4, 3},
			want:     []int32{0, 0},
		},
		{
			name:   "a template change rolls the first rack and holds the others",
			racks:  []*rackObjects{rack("a", nil), rack("b", nil), rack("c", nil)},
			hashes: []string{"new", "new", "new"},
			want:   []int32{0, 3, 3},
		},
		{
			name:   "a template change waits while another rack has a node down",
			racks:  []*rackObjects{rack("a", nil), rack("b", unavailable)},
			hashes: []string{"new", "old"},
			want:   []int32{3, 0},
		},
		{
			name:          "a template change waits for a node operation",
			racks:         []*rackObjects{rack("a", nil), rack("b", nil)},
			hashes:        []string{"new", "new"},
			nodeOperation: "node basic-dc1-b-2 to be decommissioned and removed",
			want:          []int32{3, 3},
		},
		{
			name:   "the rolling rack goes on while the held one waits",
			racks:  []*rackObjects{rack("a", rolling(1, 2)), rack("b", held)},
			hashes: []string{"old", "old"},
			want:   []int32{0, 3},
		},
		{
			name:          "a node operation holds a rack mid-rollout",
			racks:         []*rackObjects{rack("a", rolling(1, 3))},
			hashes:        []string{"old"},
			nodeOperation: "node basic-dc1-a-2 to be decommissioned and removed",
			want:          []int32{3},
		},
		{
			name:   "the held rack rolls once the previous one is done and available",
			racks:  []*rackObjects{rack("a", nil), rack("b", held)},
			hashes: []string{"old", "old"},
			want:   []int32{0, 0},
		},
		{
			name:   "the held rack waits while the previous one is updated but not available",
			racks:  []*rackObjects{rack("a", unavailable), rack("b", held)},
			hashes: []string{"old", "old"},
			want:   []int32{0, 3},
		},
		{
			name:   "racks all rolling at once, after kubectl rollout restart, are held but the first",
			racks:  []*rackObjects{rack("a", rolling(1, 2)), rack("b", rolling(1, 2)), rack("c", rolling(0, 3))},
			hashes: []string{"old", "old", "old"},
			want:   []int32{0, 3, 3},
		},
		{
			name: "racks whose StatefulSet controller has not acted yet keep their partition and hold back the others",
			racks: []*rackObjects{
				rack("a", unobserved),
				rack("b", func(sts *appsv1.StatefulSet) { held(sts); unobserved(sts) }),
				rack("c", nil),
			},
			hashes: []string{"old", "old", "new"},
			want:   []int32{0, 3, 3},
		},
		{
			name: "new racks and a StatefulSet recreated over running pods",
			racks: []*rackObjects{
				testRack("a", new(int32(3)), nil, 0, ""),
				func() *rackObjects {
					r := testRack("b", new(int32(3)), nil, 0, "")
					r.pods[0] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-b-0"}}
					return r
				}(),
				rack("c", nil),
			},
			hashes: []string{"new", "new", "new"},
			// Rack a is created at zero nodes: it bootstraps none.
			replicas: []int32{0, 3, 3},
			want:     []int32{0, 0, 3},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			required := make([]*appsv1.StatefulSet, len(tc.racks))
			for i, r := range tc.racks {
				replicas := int32(3)
				if tc.replicas != nil {
					replicas = tc.replicas[i]
				}
				required[i] = &appsv1.StatefulSet{
					ObjectMeta: metav1.ObjectMeta{Name: r.statefulSetName, Annotations: map[string]string{"scylla-operator.scylladb.com/pod-template-hash": tc.hashes[i]}},
					Spec:       appsv1.StatefulSetSpec{Replicas: &replicas},
				}
			}
			progressing := planRollout(tc.racks, required, tc.nodeOperation)
			var got []int32
			var wantConditions, gotConditions []string
			for i, sts := range required {
				got = append(got, partitionOf(sts))
				if partitionOf(sts) != 0 {
					wantConditions = append(wantConditions, tc.racks[i].name+" "+waitingToRollOutReason)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected partitions (-want +got):\n%s", diff)
			}
			// Every held rack says why.
			for _, c := range progressing {
				gotConditions = append(gotConditions, c.Type[len(`rack "`):len(c.Type)-1]+" "+c.Reason)
			}
			if diff := cmp.Diff(wantConditions, gotConditions); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}
