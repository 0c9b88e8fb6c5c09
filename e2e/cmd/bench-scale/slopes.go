package main

import (
	"fmt"
	"io"
)

// Slopes are how much each figure grows per added ScyllaCluster, from the run of the smallest N to the run of the
// largest: a figure that scales linearly has the same slope for any two N, and a slope that grows with the range
// shows a cost that grows faster than N.
type Slopes struct {
	FromN                      int     `json:"fromN"`
	ToN                        int     `json:"toN"`
	AllPodsReadySeconds        float64 `json:"allPodsReadySeconds"`
	AllDatacentersExistSeconds float64 `json:"allDatacentersExistSeconds"`
	OperatorPeakRSSMiB         float64 `json:"operatorPeakRSSMiB"`
	OperatorConvergeCPUSeconds float64 `json:"operatorConvergeCPUSeconds"`
	// Conflicts are the 409 answers to every program while converging.
	Conflicts float64 `json:"conflicts"`
	// WritesPerCluster are the operator's and the manager-controller's writes per ScyllaCluster while converging.
	WritesPerCluster float64 `json:"writesPerCluster"`
}

// computeSlopes returns the slopes between the runs of the smallest and the largest N (the first of each), or nil
// when all runs have the same N.
func computeSlopes(runs []Run) *Slopes {
	if len(runs) == 0 {
		return nil
	}
	lo, hi := runs[0], runs[0]
	for _, r := range runs[1:] {
		if r.N < lo.N {
			lo = r
		}
		if r.N > hi.N {
			hi = r
		}
	}
	if lo.N == hi.N {
		return nil
	}
	slope := func(f func(Run) float64) float64 {
		return (f(hi) - f(lo)) / float64(hi.N-lo.N)
	}
	operator := func(r Run) ProgramStats {
		if s := r.Programs["operator"]; s != nil {
			return *s
		}
		return ProgramStats{}
	}
	return &Slopes{
		FromN:                      lo.N,
		ToN:                        hi.N,
		AllPodsReadySeconds:        slope(func(r Run) float64 { return r.AllPodsReadySeconds }),
		AllDatacentersExistSeconds: slope(func(r Run) float64 { return r.AllDatacentersExistSeconds }),
		OperatorPeakRSSMiB:         slope(func(r Run) float64 { return operator(r).PeakRSSMiB }),
		OperatorConvergeCPUSeconds: slope(func(r Run) float64 { return operator(r).ConvergeCPUSeconds }),
		Conflicts:                  slope(func(r Run) float64 { return float64(total(r.Converge.Conflicts)) }),
		WritesPerCluster:           slope(func(r Run) float64 { return programWritesPerCluster(r.Converge) }),
	}
}

// programWritesPerCluster are the operator's and the manager-controller's writes per ScyllaCluster.
func programWritesPerCluster(s WindowStats) float64 {
	return s.WritesPerCluster["operator"] + s.WritesPerCluster["manager-controller"]
}

// printSlopes prints the slopes of runs, if there are two N or more.
func printSlopes(w io.Writer, runs []Run) {
	s := computeSlopes(runs)
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\nSlope per added ScyllaCluster from N=%d to N=%d: pods Ready %+.3fs, DCs exist %+.3fs, op peak RSS %+.2f MiB, op CPU %+.3fs, 409s %+.2f, writes/cluster op+mc %+.3f\n",
		s.FromN, s.ToN, s.AllPodsReadySeconds, s.AllDatacentersExistSeconds, s.OperatorPeakRSSMiB, s.OperatorConvergeCPUSeconds, s.Conflicts, s.WritesPerCluster)
}
