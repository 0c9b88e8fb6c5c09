package scylladbdatacenter

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestStatefulSetExpectations(t *testing.T) {
	t.Parallel()

	written := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-a", UID: "uid-1", Generation: 5},
		Spec:       appsv1.StatefulSetSpec{Replicas: new(int32(2))},
	}
	cached := func(uid types.UID, generation int64) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-a", UID: uid, Generation: generation}}
	}

	tt := []struct {
		name        string
		cached      *appsv1.StatefulSet
		elapsed     time.Duration
		wantPending bool
	}{
		{name: "not in the cache yet", cached: nil, wantPending: true},
		{name: "an older generation in the cache", cached: cached("uid-1", 4), wantPending: true},
		{name: "the written generation in the cache", cached: cached("uid-1", 5)},
		{name: "a newer generation in the cache", cached: cached("uid-1", 6)},
		{name: "another StatefulSet of that name in the cache", cached: cached("uid-2", 1)},
		{name: "never seen in time", cached: cached("uid-1", 4), elapsed: expectationsTTL + time.Second},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			e := newExpectations(func() time.Time { return now })
			e.wroteStatefulSet("scylla/basic", written)
			now = now.Add(tc.elapsed)

			replicas, pending := e.pendingReplicas("scylla/basic", "basic-dc1-a", tc.cached)
			if pending != tc.wantPending || (pending && replicas != 2) {
				t.Fatalf("expected pending %v (2 replicas), got %v (%d replicas)", tc.wantPending, pending, replicas)
			}
			// Once satisfied an expectation is gone, even for an older cache.
			if _, again := e.pendingReplicas("scylla/basic", "basic-dc1-a", cached("uid-1", 4)); again != tc.wantPending {
				t.Errorf("expected the expectation to remain %v, got %v", tc.wantPending, again)
			}
			if _, other := e.pendingReplicas("scylla/other", "basic-dc1-a", nil); other {
				t.Error("another datacenter's StatefulSet of that name is pending")
			}
			e.forget("scylla/basic")
			if _, forgotten := e.pendingReplicas("scylla/basic", "basic-dc1-a", nil); forgotten {
				t.Error("a forgotten datacenter's StatefulSet is pending")
			}
		})
	}
}

func TestDecommissionExpectations(t *testing.T) {
	t.Parallel()

	service := func(uid types.UID, decommissioned string) *corev1.Service {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-a-2", UID: uid, Labels: map[string]string{}}}
		if len(decommissioned) != 0 {
			svc.Labels["scylla/decommissioned"] = decommissioned
		}
		return svc
	}

	tt := []struct {
		name        string
		cached      *corev1.Service
		elapsed     time.Duration
		wantPending bool
	}{
		{name: "the cache has the Service without the request", cached: service("uid-1", ""), wantPending: true},
		{name: "the cache has the request", cached: service("uid-1", "false")},
		{name: "the cache has the node decommissioned", cached: service("uid-1", "true")},
		{name: "the Service is gone", cached: nil},
		{name: "another Service of that name", cached: service("uid-2", "")},
		{name: "never seen in time", cached: service("uid-1", ""), elapsed: expectationsTTL + time.Second},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
			e := newExpectations(func() time.Time { return now })
			e.wroteDecommission("scylla/basic", service("uid-1", "false"))
			now = now.Add(tc.elapsed)

			if got := e.pendingDecommission("scylla/basic", "basic-dc1-a-2", tc.cached); got != tc.wantPending {
				t.Fatalf("expected pending %v, got %v", tc.wantPending, got)
			}
			if again := e.pendingDecommission("scylla/basic", "basic-dc1-a-2", service("uid-1", "")); again != tc.wantPending {
				t.Errorf("expected the expectation to remain %v, got %v", tc.wantPending, again)
			}
			e.forget("scylla/basic")
			if e.pendingDecommission("scylla/basic", "basic-dc1-a-2", service("uid-1", "")) {
				t.Error("a forgotten datacenter's decommission is pending")
			}
		})
	}
}
