package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSlopesArePerAddedClusterBetweenTheSmallestAndLargestN(t *testing.T) {
	t.Parallel()
	run := func(n int, podsReady, dcsExist, rss, cpu float64, conflicts map[string]int, opWrites, mcWrites float64) Run {
		return Run{
			N:                          n,
			AllPodsReadySeconds:        podsReady,
			AllDatacentersExistSeconds: dcsExist,
			Programs:                   map[string]*ProgramStats{"operator": {PeakRSSMiB: rss, ConvergeCPUSeconds: cpu}},
			Converge: WindowStats{
				Conflicts:        conflicts,
				WritesPerCluster: map[string]float64{"operator": opWrites, "manager-controller": mcWrites, "kube-controller-manager": 100},
			},
		}
	}
	tests := []struct {
		name string
		runs []Run
		want *Slopes
	}{
		{
			// From N=10 to N=500 is 490 clusters: pods Ready 5s→54s is +49s, so 0.1s per cluster, and so on. The run
			// of N=100 in between does not count, nor do other programs' writes.
			name: "runs in any order",
			runs: []Run{
				run(100, 1000, 1000, 1000, 1000, map[string]int{"operator": 1000}, 1000, 1000),
				run(500, 54, 51, 148, 52, map[string]int{"operator": 200, "manager-controller": 48}, 14, 2.9),
				run(10, 5, 2, 50, 3, map[string]int{"operator": 2, "manager-controller": 1}, 10, 2),
			},
			want: &Slopes{
				FromN: 10, ToN: 500,
				AllPodsReadySeconds: 0.1, AllDatacentersExistSeconds: 0.1,
				OperatorPeakRSSMiB: 0.2, OperatorConvergeCPUSeconds: 0.1,
				Conflicts:        0.5,  // 3 → 248
				WritesPerCluster: 0.01, // 12 → 16.9
			},
		},
		{
			name: "a missing operator counts as zero",
			runs: []Run{
				run(1, 1, 1, 0, 0, nil, 0, 0),
				{N: 3, AllPodsReadySeconds: 2, AllDatacentersExistSeconds: 2},
			},
			want: &Slopes{FromN: 1, ToN: 3, AllPodsReadySeconds: 0.5, AllDatacentersExistSeconds: 0.5},
		},
		{name: "one run has no slope", runs: []Run{run(10, 5, 2, 50, 3, nil, 10, 2)}},
		{name: "one N twice has no slope", runs: []Run{run(10, 5, 2, 50, 3, nil, 10, 2), run(10, 6, 3, 51, 4, nil, 11, 2)}},
		{name: "no runs", runs: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, computeSlopes(tc.runs), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("computeSlopes (-want +got):\n%s", diff)
			}
		})
	}
}
