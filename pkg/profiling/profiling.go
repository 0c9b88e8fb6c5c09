// Package profiling serves net/http/pprof's profiles on a program's own mux, for the programs' --profiling flags.
package profiling

import (
	"net/http"
	"net/http/pprof"
)

// Path is where the profiles are served; pprof.Index resolves the profile names under exactly this prefix.
const Path = "/debug/pprof/"

// Register adds net/http/pprof's handlers under Path to mux. Importing net/http/pprof also registers them on
// http.DefaultServeMux, which no program serves, so they are reachable only where Register puts them.
func Register(mux *http.ServeMux) {
	// Index also serves every named profile (heap, goroutine, allocs, block, mutex, threadcreate) as Path+name.
	mux.HandleFunc(Path, pprof.Index)
	mux.HandleFunc(Path+"cmdline", pprof.Cmdline)
	mux.HandleFunc(Path+"profile", pprof.Profile)
	mux.HandleFunc(Path+"symbol", pprof.Symbol)
	mux.HandleFunc(Path+"trace", pprof.Trace)
}
