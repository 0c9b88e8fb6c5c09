package main

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestQuantileInterpolatesWithinTheBucketLikeHistogramQuantile(t *testing.T) {
	t.Parallel()
	// 2 observations up to 0.1, 4 in (0.1, 0.5], 3 in (0.5, 1], 1 above 1.
	h := histogram{{0.1, 2}, {0.5, 6}, {1, 9}, {math.Inf(1), 10}}
	tests := []struct {
		name string
		h    histogram
		q    float64
		want float64
	}{
		{name: "rank in the first bucket starts at zero", h: h, q: 0.1, want: 0.05},   // rank 1 of 2 in [0, 0.1]
		{name: "rank inside a middle bucket", h: h, q: 0.5, want: 0.4},                // rank 3 of 4 in [0.1, 0.5]
		{name: "rank at the middle of a bucket", h: h, q: 0.75, want: 0.75},           // rank 1.5 of 3 in [0.5, 1]
		{name: "rank at a bucket's top", h: h, q: 0.9, want: 1},                       // rank 3 of 3 in [0.5, 1]
		{name: "rank in +Inf gives the highest finite bound", h: h, q: 0.99, want: 1}, // rank 9.9 > 9
		{name: "a non-positive first bound is returned as is", h: histogram{{0, 4}, {1, 8}, {math.Inf(1), 8}}, q: 0.25, want: 0},
		{name: "no observations", h: histogram{{0.1, 0}, {math.Inf(1), 0}}, q: 0.5, want: math.NaN()},
		{name: "no +Inf bucket", h: histogram{{0.1, 1}, {1, 2}}, q: 0.5, want: math.NaN()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, quantile(tc.q, tc.h), cmpopts.EquateApprox(0, 1e-12), cmpopts.EquateNaNs()); diff != "" {
				t.Errorf("quantile(%v) (-want +got):\n%s", tc.q, diff)
			}
		})
	}
}

func TestReactionLatenciesCountOnlyTheObservationsBetweenTheScrapes(t *testing.T) {
	t.Parallel()
	before := `# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="A",le="0.001"} 1
workqueue_queue_duration_seconds_bucket{name="A",le="0.01"} 1
workqueue_queue_duration_seconds_bucket{name="A",le="0.1"} 2
workqueue_queue_duration_seconds_bucket{name="A",le="+Inf"} 2
workqueue_queue_duration_seconds_sum{name="A"} 0.05
workqueue_queue_duration_seconds_count{name="A"} 2
workqueue_queue_duration_seconds_bucket{name="B",le="0.1"} 3
workqueue_queue_duration_seconds_bucket{name="B",le="+Inf"} 3
workqueue_queue_duration_seconds_sum{name="B"} 0.1
workqueue_queue_duration_seconds_count{name="B"} 3
`
	after := `# TYPE workqueue_queue_duration_seconds histogram
workqueue_queue_duration_seconds_bucket{name="A",le="0.001"} 1
workqueue_queue_duration_seconds_bucket{name="A",le="0.01"} 5
workqueue_queue_duration_seconds_bucket{name="A",le="0.1"} 6
workqueue_queue_duration_seconds_bucket{name="A",le="+Inf"} 6
workqueue_queue_duration_seconds_sum{name="A"} 0.08
workqueue_queue_duration_seconds_count{name="A"} 6
workqueue_queue_duration_seconds_bucket{name="B",le="0.1"} 3
workqueue_queue_duration_seconds_bucket{name="B",le="+Inf"} 3
workqueue_queue_duration_seconds_sum{name="B"} 0.1
workqueue_queue_duration_seconds_count{name="B"} 3
workqueue_queue_duration_seconds_bucket{name="C",le="0.1"} 2
workqueue_queue_duration_seconds_bucket{name="C",le="+Inf"} 2
workqueue_queue_duration_seconds_sum{name="C"} 0.1
workqueue_queue_duration_seconds_count{name="C"} 2
# TYPE workqueue_work_duration_seconds histogram
workqueue_work_duration_seconds_bucket{name="C",le="0.1"} 1
workqueue_work_duration_seconds_bucket{name="C",le="1"} 2
workqueue_work_duration_seconds_bucket{name="C",le="+Inf"} 2
workqueue_work_duration_seconds_sum{name="C"} 0.6
workqueue_work_duration_seconds_count{name="C"} 2
# TYPE scylla_operator_controller_sync_duration_seconds histogram
scylla_operator_controller_sync_duration_seconds_bucket{controller="A",le="0.001"} 0
scylla_operator_controller_sync_duration_seconds_bucket{controller="A",le="0.002"} 2
scylla_operator_controller_sync_duration_seconds_bucket{controller="A",le="0.004"} 4
scylla_operator_controller_sync_duration_seconds_bucket{controller="A",le="+Inf"} 4
scylla_operator_controller_sync_duration_seconds_sum{controller="A"} 0.01
scylla_operator_controller_sync_duration_seconds_count{controller="A"} 4
`
	parse := func(text string) histograms {
		h, err := parseHistograms(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	got := reactionLatencies("operator", parse(before), parse(after))
	want := []ControllerLatency{
		{
			// Queue: 4 new waits, all in (0.001, 0.01]: rank 2 of 4 is 0.001+0.009×2/4, rank 3.96 is 0.001+0.009×3.96/4.
			// Sync: 2 in (0.001, 0.002], 2 in (0.002, 0.004]: rank 2 tops the first, rank 3.96 is 0.002+0.002×1.96/2.
			Program: "operator", Controller: "A", Syncs: 4,
			QueueP50Seconds: 0.0055, QueueP99Seconds: 0.00991,
			SyncP50Seconds: 0.002, SyncP99Seconds: 0.00396,
			ReactionP50Seconds: 0.0075, ReactionP99Seconds: 0.01387,
		},
		{
			// B took no key between the scrapes. C is new since the first scrape and has no sync histogram: its work
			// duration (1 in [0, 0.1], 1 in (0.1, 1]) stands in, rank 1.98 being 0.1+0.9×0.98.
			Program: "operator", Controller: "C", Syncs: 2,
			QueueP50Seconds: 0.05, QueueP99Seconds: 0.099,
			SyncP50Seconds: 0.1, SyncP99Seconds: 0.982,
			ReactionP50Seconds: 0.15, ReactionP99Seconds: 1.081,
		},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("reactionLatencies (-want +got):\n%s", diff)
	}
}

func TestServingAddressIsReadFromTheServingLogLine(t *testing.T) {
	t.Parallel()
	log := `I0101 10:00:00.000000   42 operator.go:80] "Starting" version="dev"
I0101 10:00:00.100000   42 serving.go:118] "Serving health and metrics endpoints" address="127.0.0.1:43211" profiling=false
`
	m := servingAddressRE.FindStringSubmatch(log)
	if m == nil || m[1] != "127.0.0.1:43211" {
		t.Errorf("servingAddressRE matched %q, want address 127.0.0.1:43211", m)
	}
}
