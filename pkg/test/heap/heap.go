// Package heap measures the memory tests and benchmarks retain.
package heap

import "runtime"

// Live returns the bytes of the live heap after a garbage collection: the difference of two calls is what was
// retained between them.
func Live() uint64 {
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}
