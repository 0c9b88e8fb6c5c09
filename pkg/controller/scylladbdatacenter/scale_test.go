package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// settledStatefulSet returns a StatefulSet whose replicas all run ready at the updated revision.
func settledStatefulSet(name string, replicas int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Generation: 4},
		Spec:       appsv1.StatefulSetSpec{Replicas: &replicas},
		Status: appsv1.StatefulSetStatus{
			ObservedGeneration: 4,
			Replicas:           replicas,
			ReadyReplicas:      replicas,
			AvailableReplicas:  replicas,
			CurrentReplicas:    replicas,
			UpdatedReplicas:    replicas,
			CurrentRevision:    name + "-1",
			UpdateRevision:     name + "-1",
		},
	}
}

// testRack returns the objects of rack name asking for desired nodes (nil: removed from the spec), its StatefulSet
// (nil: none) and member Services of ordinals 0 to services-1, the last labelled decommissioned when that is set.
func testRack(name string, desired *int32, sts *appsv1.StatefulSet, services int32, decommissioned string) *rackObjects {
	stsName := "basic-dc1-" + name
	r := &rackObjects{
		name:            name,
		statefulSetName: stsName,
		statefulSet:     sts,
		services:        map[int32]*corev1.Service{},
		pods:            map[int32]*corev1.Pod{},
		pvcs:            map[int32]*corev1.PersistentVolumeClaim{},
	}
	if desired != nil {
		r.rack = &scyllav1alpha1.RackSpec{Name: name, RackTemplate: scyllav1alpha1.RackTemplate{Nodes: desired}}
	}
	for ordinal := range services {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: naming.MemberServiceName(stsName, ordinal), Labels: map[string]string{}}}
		if ordinal == services-1 && len(decommissioned) != 0 {
			svc.Labels[naming.DecommissionedLabel] = decommissioned
		}
		r.services[ordinal] = svc
	}
	return r
}

// lagging returns a StatefulSet that observed its spec of replicas at revision name-1, whose status reports none of
// them ready yet: the StatefulSet controller did not get to write their readiness.
func lagging(name string, replicas int32) *appsv1.StatefulSet {
	sts := settledStatefulSet(name, replicas)
	sts.Status.ReadyReplicas, sts.Status.AvailableReplicas = 0, 0
	return sts
}

// withPods gives r a Ready pod of revision for each of its member Services, changed by mutate when that is set.
func withPods(r *rackObjects, revision string, mutate func(ordinal int32, pod *corev1.Pod)) *rackObjects {
	for ordinal := range r.services {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:   naming.MemberServiceName(r.statefulSetName, ordinal),
				Labels: map[string]string{appsv1.ControllerRevisionHashLabelKey: revision},
			},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		if mutate != nil {
			mutate(ordinal, pod)
		}
		r.pods[ordinal] = pod
	}
	return r
}

// withNewRacks returns first followed by racks "b" and "c" of three nodes each, not created yet.
func withNewRacks(first *rackObjects) []*rackObjects {
	return []*rackObjects{first, testRack("b", new(int32(3)), nil, 0, ""), testRack("c", new(int32(3)), nil, 0, "")}
}

func progressingReasons(plan rackPlan) []string {
	var reasons []string
	for _, c := range plan.progressing {
		reasons = append(reasons, c.Reason)
	}
	return reasons
}

func TestPlanScale(t *testing.T) {
	t.Parallel()

	type wantPlan struct {
		replicas       int32
		decommissioned map[int32]string
		reasons        []string
	}
	tt := []struct {
		name     string
		parallel bool
		racks    func() []*rackObjects
		want     []wantPlan
	}{
		{
			name: "a new rack scales up to its nodes",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(3)), nil, 0, "")}
			},
			want: []wantPlan{{replicas: 3}},
		},
		{
			name: "a settled rack stays",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 3), 3, "")}
			},
			want: []wantPlan{{replicas: 3}},
		},
		{
			name: "scaling down asks the last node to decommission",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(1)), settledStatefulSet("basic-dc1-a", 3), 3, "")}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{2: "false"}, reasons: []string{decommissionRequestedReason}}},
		},
		{
			name: "scaling down waits for every node of the datacenter to be ready",
			racks: func() []*rackObjects {
				notReady := settledStatefulSet("basic-dc1-b", 3)
				notReady.Status.ReadyReplicas = 2
				return []*rackObjects{
					testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("b", new(int32(3)), notReady, 3, ""),
				}
			},
			want: []wantPlan{{replicas: 3, reasons: []string{waitingForRolloutToScaleReason}}, {replicas: 3}},
		},
		{
			name: "scaling down waits for every node to be available, not only ready",
			racks: func() []*rackObjects {
				notAvailable := settledStatefulSet("basic-dc1-b", 3)
				notAvailable.Status.AvailableReplicas = 2
				return []*rackObjects{
					testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("b", new(int32(3)), notAvailable, 3, ""),
				}
			},
			want: []wantPlan{{replicas: 3, reasons: []string{waitingForRolloutToScaleReason}}, {replicas: 3}},
		},
		{
			name: "scaling down waits while a node of the datacenter is in maintenance, which makes it look ready",
			racks: func() []*rackObjects {
				b := testRack("b", new(int32(3)), settledStatefulSet("basic-dc1-b", 3), 3, "")
				b.services[1].Labels[naming.NodeMaintenanceLabel] = ""
				return []*rackObjects{testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, ""), b}
			},
			want: []wantPlan{{replicas: 3, reasons: []string{waitingForNodeMaintenanceReason}}, {replicas: 3}},
		},
		{
			name: "scaling down waits for a rollout to finish",
			racks: func() []*rackObjects {
				rolling := settledStatefulSet("basic-dc1-a", 3)
				rolling.Status.UpdateRevision = "basic-dc1-a-2"
				return []*rackObjects{testRack("a", new(int32(2)), rolling, 3, "")}
			},
			want: []wantPlan{{replicas: 3, reasons: []string{waitingForRolloutToScaleReason}}},
		},
		{
			name: "a decommissioning node is waited for, even when the rack is scaled back up",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(5)), settledStatefulSet("basic-dc1-a", 3), 3, "false")}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{2: "false"}, reasons: []string{waitingForDecommissionReason}}},
		},
		{
			name: "a decommissioned node is removed from the StatefulSet",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(1)), settledStatefulSet("basic-dc1-a", 3), 3, "true")}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{removingDecommissionedReason}}},
		},
		{
			name: "a rack scaled back up still removes its decommissioned node first",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 3), 3, "true")}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{removingDecommissionedReason}}},
		},
		{
			name: "a rack does not scale up while a removed node's Service is there",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 3, "true")
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{waitingForNodeRemovalReason}}},
		},
		{
			name: "a node removed without decommission, whose data is kept, comes back with its Service",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 3, "")
				r.pvcs[2] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-basic-dc1-a-2"}}
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{}}},
		},
		{
			name: "a rack does not scale up while the Service of a removed node without data is there",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 3, "")
				r.services[2].Annotations = map[string]string{naming.HostIDAnnotation: "2f1a5b5e-7a53-4a2b-9f0e-3c1a7e0b6c11"}
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{waitingForNodeRemovalReason}}},
		},
		{
			name: "a rack does not scale up while the Service of a removed node that recorded its address is there",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 3, "")
				r.services[2].Annotations = map[string]string{naming.BroadcastAddressAnnotation: "10.0.0.7"}
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{waitingForNodeRemovalReason}}},
		},
		{
			name: "a rack scales up over the Service a failed scale-up created for a node that never ran",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 3, "")}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{}}},
		},
		{
			name: "a rack does not scale up while a removed node's data claim is being deleted",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 2, "")
				r.pvcs[2] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-basic-dc1-a-2", DeletionTimestamp: new(metav1.Unix(1, 0))}}
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{}, reasons: []string{waitingForNodeRemovalReason}}},
		},
		{
			name: "a retained data claim of a node does not stop a scale-up",
			racks: func() []*rackObjects {
				r := testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 2), 2, "")
				r.pvcs[2] = &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-basic-dc1-a-2"}}
				return []*rackObjects{r}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{}}},
		},
		{
			name: "one node at a time per datacenter: the first rack in spec order goes first",
			racks: func() []*rackObjects {
				return []*rackObjects{
					testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("b", new(int32(2)), settledStatefulSet("basic-dc1-b", 3), 3, ""),
				}
			},
			want: []wantPlan{
				{replicas: 3, decommissioned: map[int32]string{2: "false"}, reasons: []string{decommissionRequestedReason}},
				{replicas: 3, reasons: []string{waitingForOtherOperationReason}},
			},
		},
		{
			name: "another rack's decommission holds back scale-ups and scale-downs",
			racks: func() []*rackObjects {
				return []*rackObjects{
					testRack("a", new(int32(4)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("b", new(int32(1)), settledStatefulSet("basic-dc1-b", 3), 3, "false"),
					testRack("c", new(int32(2)), settledStatefulSet("basic-dc1-c", 3), 3, ""),
				}
			},
			want: []wantPlan{
				{replicas: 3, reasons: []string{waitingForOtherOperationReason}},
				{replicas: 3, decommissioned: map[int32]string{2: "false"}, reasons: []string{waitingForDecommissionReason}},
				{replicas: 3, reasons: []string{waitingForOtherOperationReason}},
			},
		},
		{
			name: "a removed rack is left alone, and its decommission counts for the datacenter",
			racks: func() []*rackObjects {
				return []*rackObjects{
					testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("gone", nil, settledStatefulSet("basic-dc1-gone", 1), 1, "false"),
				}
			},
			want: []wantPlan{
				{replicas: 3, reasons: []string{waitingForOtherOperationReason}},
				{replicas: 1, decommissioned: map[int32]string{0: "false"}},
			},
		},
		{
			name: "a rack whose StatefulSet is missing keeps every node something is left of, and holds back scale-downs",
			racks: func() []*rackObjects {
				a := testRack("a", new(int32(1)), nil, 2, "")
				a.pods[2] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-a-2"}}
				return []*rackObjects{a, testRack("b", new(int32(2)), settledStatefulSet("basic-dc1-b", 3), 3, "")}
			},
			want: []wantPlan{
				{replicas: 3, reasons: []string{waitingForStatefulSetObservedReason}},
				{replicas: 3, reasons: []string{waitingForRolloutToScaleReason}},
			},
		},
		{
			name: "a rack whose StatefulSet is missing keeps its decommission labels and does not act on them",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(2)), nil, 3, "true")}
			},
			want: []wantPlan{{replicas: 3, decommissioned: map[int32]string{2: "true"}, reasons: []string{waitingForStatefulSetObservedReason}}},
		},
		{
			name: "a rack whose last write the cache does not show yet keeps that write",
			racks: func() []*rackObjects {
				a := testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, "true")
				a.pendingReplicas = new(int32(2))
				return []*rackObjects{a}
			},
			want: []wantPlan{{replicas: 2, decommissioned: map[int32]string{2: "true"}, reasons: []string{waitingForStatefulSetObservedReason}}},
		},
		{
			name: "scaling a rack to zero decommissions its last node too",
			racks: func() []*rackObjects {
				return []*rackObjects{testRack("a", new(int32(0)), settledStatefulSet("basic-dc1-a", 1), 1, "")}
			},
			want: []wantPlan{{replicas: 1, decommissioned: map[int32]string{0: "false"}, reasons: []string{decommissionRequestedReason}}},
		},
		{
			name: "a new datacenter grows its first rack only",
			racks: func() []*rackObjects {
				return withNewRacks(testRack("a", new(int32(3)), nil, 0, ""))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the next rack waits while the growing rack's nodes join",
			racks: func() []*rackObjects {
				joining := settledStatefulSet("basic-dc1-a", 3)
				joining.Status.ReadyReplicas = 1
				joining.Status.AvailableReplicas = 1
				return withNewRacks(testRack("a", new(int32(3)), joining, 3, ""))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the second rack grows once the first has settled",
			racks: func() []*rackObjects {
				return withNewRacks(testRack("a", new(int32(3)), settledStatefulSet("basic-dc1-a", 3), 3, ""))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the second rack grows once the first's nodes are ready, before minReadySeconds make them available",
			racks: func() []*rackObjects {
				ready := settledStatefulSet("basic-dc1-a", 3)
				ready.Status.AvailableReplicas = 0
				return withNewRacks(testRack("a", new(int32(3)), ready, 3, ""))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the second rack grows once the first's pods are ready, before the StatefulSet's status says so",
			racks: func() []*rackObjects {
				return withNewRacks(withPods(testRack("a", new(int32(3)), lagging("basic-dc1-a", 3), 3, ""), "basic-dc1-a-1", nil))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready while one of them is not ready",
			racks: func() []*rackObjects {
				return withNewRacks(withPods(testRack("a", new(int32(3)), lagging("basic-dc1-a", 3), 3, ""), "basic-dc1-a-1", func(ordinal int32, pod *corev1.Pod) {
					if ordinal == 2 {
						pod.Status.Conditions[0].Status = corev1.ConditionFalse
					}
				}))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready while one of them is missing",
			racks: func() []*rackObjects {
				r := withPods(testRack("a", new(int32(3)), lagging("basic-dc1-a", 3), 3, ""), "basic-dc1-a-1", nil)
				delete(r.pods, 1)
				return withNewRacks(r)
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready while one of them is being deleted",
			racks: func() []*rackObjects {
				return withNewRacks(withPods(testRack("a", new(int32(3)), lagging("basic-dc1-a", 3), 3, ""), "basic-dc1-a-1", func(ordinal int32, pod *corev1.Pod) {
					if ordinal == 0 {
						pod.DeletionTimestamp = &metav1.Time{}
					}
				}))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready while one of them runs another revision than the update revision",
			racks: func() []*rackObjects {
				return withNewRacks(withPods(testRack("a", new(int32(3)), lagging("basic-dc1-a", 3), 3, ""), "basic-dc1-a-1", func(ordinal int32, pod *corev1.Pod) {
					if ordinal == 1 {
						pod.Labels[appsv1.ControllerRevisionHashLabelKey] = "basic-dc1-a-0"
					}
				}))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready while a pod beyond its replicas is still there",
			racks: func() []*rackObjects {
				sts := lagging("basic-dc1-a", 2)
				r := withPods(testRack("a", new(int32(3)), sts, 2, ""), "basic-dc1-a-1", nil)
				extra := r.pods[0].DeepCopy()
				extra.Name = "basic-dc1-a-2"
				r.pods[2] = extra
				return withNewRacks(r)
			},
			want: []wantPlan{
				{replicas: 2, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "the pods don't make a rack ready before its StatefulSet observed its spec",
			racks: func() []*rackObjects {
				sts := lagging("basic-dc1-a", 3)
				sts.Generation = 5
				return withNewRacks(withPods(testRack("a", new(int32(3)), sts, 3, ""), "basic-dc1-a-1", nil))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "a rack does not grow while another rack's nodes run an old revision",
			racks: func() []*rackObjects {
				rolling := settledStatefulSet("basic-dc1-a", 3)
				rolling.Status.UpdateRevision = "basic-dc1-a-2"
				rolling.Status.UpdatedReplicas = 1
				return withNewRacks(testRack("a", new(int32(3)), rolling, 3, ""))
			},
			want: []wantPlan{
				{replicas: 3},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
				{replicas: 0, reasons: []string{waitingForNodesToJoinReason}},
			},
		},
		{
			name: "a node that is not ready in another rack blocks scaling up",
			racks: func() []*rackObjects {
				notReady := settledStatefulSet("basic-dc1-b", 3)
				notReady.Status.ReadyReplicas = 2
				return []*rackObjects{
					testRack("a", new(int32(4)), settledStatefulSet("basic-dc1-a", 3), 3, ""),
					testRack("b", new(int32(3)), notReady, 3, ""),
				}
			},
			want: []wantPlan{{replicas: 3, reasons: []string{waitingForNodesToJoinReason}}, {replicas: 3}},
		},
		{
			name:     "with parallel node operations every rack grows at once",
			parallel: true,
			racks: func() []*rackObjects {
				notReady := settledStatefulSet("basic-dc1-a", 3)
				notReady.Status.ReadyReplicas = 2
				return withNewRacks(testRack("a", new(int32(4)), notReady, 3, ""))
			},
			want: []wantPlan{{replicas: 4}, {replicas: 3}, {replicas: 3}},
		},
		{
			name: "a rack at zero nodes without a StatefulSet counts as settled",
			racks: func() []*rackObjects {
				return []*rackObjects{
					testRack("a", new(int32(1)), settledStatefulSet("basic-dc1-a", 2), 2, ""),
					testRack("b", new(int32(0)), nil, 0, ""),
				}
			},
			want: []wantPlan{
				{replicas: 2, decommissioned: map[int32]string{1: "false"}, reasons: []string{decommissionRequestedReason}},
				{replicas: 0},
			},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			plans := planScale("dc1", tc.parallel, tc.racks(), "")
			if len(plans) != len(tc.want) {
				t.Fatalf("expected %d plans, got %d", len(tc.want), len(plans))
			}
			for i := range plans {
				want := tc.want[i]
				if want.decommissioned == nil {
					want.decommissioned = map[int32]string{}
				}
				got := wantPlan{replicas: plans[i].replicas, decommissioned: plans[i].decommissioned, reasons: progressingReasons(plans[i])}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(wantPlan{})); diff != "" {
					t.Errorf("unexpected plan of rack %d (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestPlanScaleExplainsItself(t *testing.T) {
	t.Parallel()
	t.Run("waiting to scale up", func(t *testing.T) {
		t.Parallel()
		notReady := settledStatefulSet("basic-dc1-a", 3)
		notReady.Status.ReadyReplicas = 2
		plans := planScale("dc1", false, []*rackObjects{
			testRack("a", new(int32(3)), notReady, 3, ""),
			testRack("b", new(int32(2)), settledStatefulSet("basic-dc1-b", 1), 1, ""),
		}, "")
		want := []metav1.Condition{{
			Type:    `rack "b"`,
			Status:  metav1.ConditionTrue,
			Reason:  waitingForNodesToJoinReason,
			Message: `rack "b": waiting for every node of datacenter "dc1" to be ready before scaling up from 1 to 2 nodes`,
		}}
		if diff := cmp.Diff(want, plans[1].progressing); diff != "" {
			t.Errorf("unexpected conditions (-want +got):\n%s", diff)
		}
		plans = planScale("dc1", false, []*rackObjects{
			testRack("a", new(int32(3)), nil, 0, ""),
			testRack("b", new(int32(2)), nil, 0, ""),
		}, "")
		want = []metav1.Condition{{
			Type:    `rack "b"`,
			Status:  metav1.ConditionTrue,
			Reason:  waitingForNodesToJoinReason,
			Message: `rack "b": waiting for rack "a" to finish scaling up before scaling up from 0 to 2 nodes`,
		}}
		if diff := cmp.Diff(want, plans[1].progressing); diff != "" {
			t.Errorf("unexpected conditions (-want +got):\n%s", diff)
		}
	})
	plans := planScale("dc1", false, []*rackObjects{testRack("a", new(int32(2)), settledStatefulSet("basic-dc1-a", 3), 3, "")}, "")
	want := []metav1.Condition{{
		Type:    `rack "a"`,
		Status:  metav1.ConditionTrue,
		Reason:  decommissionRequestedReason,
		Message: `rack "a": scaling down from 3 to 2 nodes: decommissioning node basic-dc1-a-2`,
	}}
	if diff := cmp.Diff(want, plans[0].progressing); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}
}
