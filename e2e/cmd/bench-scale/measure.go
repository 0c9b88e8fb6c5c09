package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbdatacenter"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// Report is what one bench-scale invocation measured; it is written as JSON.
type Report struct {
	Started time.Time `json:"started"`
	Machine string    `json:"machine"`
	Host    string    `json:"host"`
	Runs    []Run     `json:"runs"`
	// Slopes are set when the runs have two N or more.
	Slopes *Slopes `json:"slopes,omitempty"`
}

// Run is what was measured for one N. Times are seconds since the ScyllaClusters' creation started.
type Run struct {
	N                          int     `json:"n"`
	ResyncPeriod               string  `json:"resyncPeriod"`
	CreateSeconds              float64 `json:"createSeconds"`
	AllDatacentersExistSeconds float64 `json:"allDatacentersExistSeconds"`
	AllAvailableSeconds        float64 `json:"allAvailableSeconds"`
	AllPodsReadySeconds        float64 `json:"allPodsReadySeconds"`
	AllTasksScheduledSeconds   float64 `json:"allTasksScheduledSeconds"`
	// AllRolledOutSeconds is when every ScyllaCluster first reported, at its generation, Available and not
	// Progressing, with the ScyllaDB Manager IDs of its backup and repair: what its user waits for.
	AllRolledOutSeconds float64 `json:"allRolledOutSeconds"`
	ConvergedSeconds    float64 `json:"convergedSeconds"`
	// NodeSimulator tells that ScyllaDB pods became Ready through real sidecars (--node-simulator), not kwok stages.
	NodeSimulator bool `json:"nodeSimulator,omitempty"`
	// ScyllaDBVersion is the version the ScyllaClusters were created at.
	ScyllaDBVersion string `json:"scyllaDBVersion"`
	// ParallelNodeOperations tells that every rack bootstrapped at once (--parallel-node-operations).
	ParallelNodeOperations bool `json:"parallelNodeOperations,omitempty"`
	// FloorPodsReadySeconds is how long the same pods took as bare StatefulSets, 0 if not measured.
	FloorPodsReadySeconds float64 `json:"floorPodsReadySeconds,omitempty"`
	// FloorControllerManagerWrites are kube-controller-manager's writes by controller until the floor's pods were all
	// Ready (WindowStats.ControllerManagerWrites).
	FloorControllerManagerWrites map[string]int `json:"floorControllerManagerWrites,omitempty"`
	// PodsReadyToFloor is AllPodsReadySeconds divided by FloorPodsReadySeconds.
	PodsReadyToFloor float64                  `json:"podsReadyToFloor,omitempty"`
	Converge         WindowStats              `json:"converge"`
	Steady           *WindowStats             `json:"steady,omitempty"`
	Programs         map[string]*ProgramStats `json:"programs"`
	// Rolling is the rolling change's cost, nil if not measured or not finished (RollingError says why).
	Rolling      *Rolling `json:"rolling,omitempty"`
	RollingError string   `json:"rollingError,omitempty"`
	// Latencies are each controller's reaction latency while converging, from the programs' /metrics.
	Latencies []ControllerLatency `json:"latencies,omitempty"`
	// LatencyError says why Latencies are missing.
	LatencyError string `json:"latencyError,omitempty"`
}

// ProgramStats are one process's resources: peak RSS over its life, CPU time while converging and at rest.
type ProgramStats struct {
	PeakRSSMiB         float64 `json:"peakRSSMiB"`
	ConvergeCPUSeconds float64 `json:"convergeCPUSeconds"`
	SteadyCPUSeconds   float64 `json:"steadyCPUSeconds"`
}

// WindowStats are the API and ScyllaDB Manager requests of a time window.
type WindowStats struct {
	WindowSeconds float64 `json:"windowSeconds,omitempty"`
	// Writes counts successful and failed writes by program, leaving out Events and Leases.
	Writes map[string]int `json:"writes"`
	// WritesPerCluster is Writes divided by N.
	WritesPerCluster map[string]float64 `json:"writesPerCluster"`
	// StatusWrites counts writes to status subresources by program.
	StatusWrites map[string]int `json:"statusWrites"`
	// Conflicts counts 409 answers by program.
	Conflicts map[string]int `json:"conflicts"`
	// Events counts Event writes by program.
	Events map[string]int `json:"events"`
	// Requests counts every request by "program verb resource[/subresource]".
	Requests map[string]int `json:"requests"`
	// Manager counts ScyllaDB Manager API requests by "METHOD endpoint".
	Manager map[string]int `json:"manager"`
	// ManagerWrites counts the ScyllaDB Manager requests that could change its state.
	ManagerWrites int `json:"managerWrites"`
	// ControllerManagerWrites counts kube-controller-manager's writes, Events included, by controller (the last part
	// of its user agent). Each controller has a client of its own, rate-limited to 20 requests per second by default:
	// the StatefulSet controller's count over that rate bounds how soon the pods exist.
	ControllerManagerWrites map[string]int `json:"controllerManagerWrites"`
}

// program names the program of a user agent, "<name>/<version> ..." giving "<name>".
func program(userAgent string) string {
	name, _, _ := strings.Cut(userAgent, "/")
	name = strings.TrimPrefix(name, "scylla-operator-")
	if name == "" {
		return "(none)"
	}
	return name
}

// summarizeAudit counts the audit events of a window for n ScyllaClusters.
func summarizeAudit(events []auditv1.Event, n int) WindowStats {
	s := WindowStats{
		Writes:           map[string]int{},
		WritesPerCluster: map[string]float64{},
		StatusWrites:     map[string]int{},
		Conflicts:        map[string]int{},
		Events:           map[string]int{},
		Requests:         map[string]int{},

		ControllerManagerWrites: map[string]int{},
	}
	for i := range events {
		e := &events[i]
		p := program(e.UserAgent)
		resource, subresource := "", ""
		if e.ObjectRef != nil {
			resource, subresource = e.ObjectRef.Resource, e.ObjectRef.Subresource
		}
		key := p + " " + e.Verb + " " + resource
		if subresource != "" {
			key += "/" + subresource
		}
		s.Requests[key]++
		if e.ResponseStatus != nil && e.ResponseStatus.Code == 409 {
			s.Conflicts[p]++
		}
		if !framework.IsWriteVerb(e.Verb) {
			continue
		}
		if p == "kube-controller-manager" {
			s.ControllerManagerWrites[e.UserAgent[strings.LastIndex(e.UserAgent, "/")+1:]]++
		}
		switch {
		case resource == "events":
			s.Events[p]++
		case resource == "leases":
		default:
			s.Writes[p]++
			if subresource == "status" {
				s.StatusWrites[p]++
			}
		}
	}
	for p, w := range s.Writes {
		s.WritesPerCluster[p] = float64(w) / float64(n)
	}
	return s
}

// summarizeManager counts ScyllaDB Manager API requests by method and endpoint.
func summarizeManager(reqs []fakescyllamanager.Request) map[string]int {
	counts := map[string]int{}
	for _, r := range framework.ManagerAPIRequests(reqs) {
		endpoint := string(r.Endpoint)
		if endpoint == "" {
			endpoint = r.Path
		}
		counts[r.Method+" "+endpoint]++
	}
	return counts
}

// managerWrites sums the counts of summarizeManager whose method could change state.
func managerWrites(counts map[string]int) int {
	total := 0
	for k, c := range counts {
		if m, _, _ := strings.Cut(k, " "); m != "GET" && m != "HEAD" {
			total += c
		}
	}
	return total
}

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat; 100 on every Linux architecture Go runs on.
const clockTicks = 100

// cpuSeconds returns the user plus system CPU time of each process, 0 for those it can't read.
func cpuSeconds(pids map[string]int) map[string]float64 {
	out := map[string]float64{}
	for name, pid := range pids {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		out[name] = parseCPUSeconds(string(data))
	}
	return out
}

// parseCPUSeconds reads utime and stime (fields 14 and 15) from a /proc/<pid>/stat line. The command name (field
// 2) is in parentheses and may hold spaces, so fields are counted after its closing parenthesis.
func parseCPUSeconds(stat string) float64 {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state): utime is field 14, fields[11].
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// peakRSSMiB returns the VmHWM of a process in MiB, 0 if it can't be read.
func peakRSSMiB(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	return parseVmHWMMiB(string(data))
}

// parseVmHWMMiB reads the "VmHWM: <n> kB" line of a /proc/<pid>/status file.
func parseVmHWMMiB(status string) float64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// machine describes the machine: CPUs and model.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs, %s, %s/%s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH)
}

// printTable prints one row per N and the details of the last run.
func printTable(w io.Writer, runs []Run) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "N\tScyllaDB\tDCs exist\tDCs Available\tpods Ready\tfloor\tto floor\ttasks have IDs\trolled out\twrites/cluster op\tmc\top+mc\tstatus writes/cluster\t409s\tevents/cluster\tManager reqs\top RSS MiB\top CPU s\tmc RSS MiB\tmc CPU s\tapiserver CPU s\tDC reaction p50/p99\tsteady API writes\tsteady Manager writes\trolling\trolling writes/cluster\t")
	for _, r := range runs {
		c := r.Converge
		status := float64(c.StatusWrites["operator"]+c.StatusWrites["manager-controller"]) / float64(r.N)
		events := float64(c.Events["operator"]+c.Events["manager-controller"]) / float64(r.N)
		conflicts := total(c.Conflicts)
		reaction := "-"
		for _, l := range r.Latencies {
			if l.Controller == scylladbdatacenter.ControllerName {
				reaction = formatSeconds(l.ReactionP50Seconds) + "/" + formatSeconds(l.ReactionP99Seconds)
			}
		}
		steadyAPI, steadyManager := "-", "-"
		if r.Steady != nil {
			steadyAPI = strconv.Itoa(r.Steady.Writes["operator"] + r.Steady.Writes["manager-controller"] + r.Steady.Events["operator"] + r.Steady.Events["manager-controller"])
			steadyManager = strconv.Itoa(r.Steady.ManagerWrites)
		}
		floor, toFloor := "-", "-"
		if r.FloorPodsReadySeconds != 0 {
			floor, toFloor = fmt.Sprintf("%.1fs", r.FloorPodsReadySeconds), fmt.Sprintf("%.2fx", r.PodsReadyToFloor)
		}
		rollingTime, rollingWrites := "-", "-"
		if r.Rolling != nil {
			rc := r.Rolling.Requests
			rollingTime = fmt.Sprintf("%.1fs", r.Rolling.Seconds)
			rollingWrites = fmt.Sprintf("%.1f", rc.WritesPerCluster["operator"]+rc.WritesPerCluster["manager-controller"])
		} else if r.RollingError != "" {
			rollingTime = "failed"
		}
		p := func(name string) *ProgramStats {
			if s := r.Programs[name]; s != nil {
				return s
			}
			return &ProgramStats{}
		}
		version := r.ScyllaDBVersion
		if r.ParallelNodeOperations {
			version += " parallel"
		}
		fmt.Fprintf(tw, "%d\t%s\t%.1fs\t%.1fs\t%.1fs\t%s\t%s\t%.1fs\t%.1fs\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%d\t%.0f\t%.1f\t%.0f\t%.1f\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n",
			r.N, version, r.AllDatacentersExistSeconds, r.AllAvailableSeconds, r.AllPodsReadySeconds, floor, toFloor, r.AllTasksScheduledSeconds, r.AllRolledOutSeconds,
			c.WritesPerCluster["operator"], c.WritesPerCluster["manager-controller"], programWritesPerCluster(c), status, conflicts, events,
			total(c.Manager), p("operator").PeakRSSMiB, p("operator").ConvergeCPUSeconds,
			p("manager-controller").PeakRSSMiB, p("manager-controller").ConvergeCPUSeconds, p("kube-apiserver").ConvergeCPUSeconds,
			reaction, steadyAPI, steadyManager, rollingTime, rollingWrites)
	}
	_ = tw.Flush()
	if len(runs) == 0 {
		return
	}
	printSlopes(w, runs)
	last := runs[len(runs)-1]
	if len(last.Latencies) != 0 {
		fmt.Fprintf(w, "\nN=%d, reaction latency while converging (p50/p99; reaction adds the queue's and the sync's quantiles):\n%s", last.N, formatLatencies(last.Latencies))
	} else if last.LatencyError != "" {
		fmt.Fprintf(w, "\nN=%d, reaction latency: %s\n", last.N, last.LatencyError)
	}
	fmt.Fprintf(w, "\nN=%d, API requests while converging (program verb resource):\n%s", last.N, formatCounts(last.Converge.Requests))
	fmt.Fprintf(w, "N=%d, ScyllaDB Manager requests while converging:\n%s", last.N, formatCounts(last.Converge.Manager))
	fmt.Fprintf(w, "N=%d, kube-controller-manager writes by controller while converging, Events included (each controller's client is limited to 20/s by default):\n%s",
		last.N, formatControllerManagerWrites(last.Converge.ControllerManagerWrites, last.FloorControllerManagerWrites))
	if last.Steady != nil {
		fmt.Fprintf(w, "N=%d, API writes at rest (%.0fs):\n%s", last.N, last.Steady.WindowSeconds, formatCounts(last.Steady.Writes))
		fmt.Fprintf(w, "N=%d, ScyllaDB Manager requests at rest:\n%s", last.N, formatCounts(last.Steady.Manager))
	}
	if last.Rolling != nil {
		fmt.Fprintf(w, "N=%d, API writes of the rolling change:\n%s", last.N, formatCounts(last.Rolling.Requests.Writes))
		fmt.Fprintf(w, "N=%d, ScyllaDB Manager requests of the rolling change:\n%s", last.N, formatCounts(last.Rolling.Requests.Manager))
	}
}

// formatControllerManagerWrites prints kube-controller-manager's writes by controller, most first, next to the
// floor's when it was measured.
func formatControllerManagerWrites(writes, floor map[string]int) string {
	var b strings.Builder
	for _, controller := range slices.SortedFunc(maps.Keys(writes), func(a, b string) int {
		return cmp.Or(writes[b]-writes[a], strings.Compare(a, b))
	}) {
		fmt.Fprintf(&b, "%8d  %s", writes[controller], controller)
		if floor != nil {
			fmt.Fprintf(&b, " (floor: %d)", floor[controller])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// formatLatencies prints one line per controller.
func formatLatencies(latencies []ControllerLatency) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  program\tcontroller\tsyncs\tqueue wait\tsync\treaction")
	for _, l := range latencies {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%s/%s\t%s/%s\t%s/%s\n", l.Program, l.Controller, l.Syncs,
			formatSeconds(l.QueueP50Seconds), formatSeconds(l.QueueP99Seconds), formatSeconds(l.SyncP50Seconds), formatSeconds(l.SyncP99Seconds),
			formatSeconds(l.ReactionP50Seconds), formatSeconds(l.ReactionP99Seconds))
	}
	_ = tw.Flush()
	return b.String()
}

func total(counts map[string]int) int {
	t := 0
	for _, c := range counts {
		t += c
	}
	return t
}

func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %6d  %s\n", counts[k], k)
	}
	if b.Len() == 0 {
		return "  (none)\n"
	}
	return b.String()
}
