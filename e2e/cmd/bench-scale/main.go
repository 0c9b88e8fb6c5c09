// Command bench-scale measures how the operator and the manager-controller scale: for each N of a list, it starts a
// fresh local control plane (kwok nodes), the real operator and manager-controller built from the working tree and a
// fake ScyllaDB Manager, creates N ScyllaClusters (3 racks × 1 node, one backup and one repair each) at once, and
// measures the time until everything converged, the API requests of every program (from the audit log), the
// ScyllaDB Manager requests (from the fake's request log), the programs' peak RSS and CPU time, each controller's
// reaction latency (queue wait and sync, from the programs' /metrics), and the writes at rest over two resync
// periods. It prints a table, the slope of the main figures per added ScyllaCluster when there are several N, and
// writes JSON.
//
// ScyllaDB pods are made Ready by kwok stages (a copy of hack/kwok/stages.yaml in which they become Ready a second
// after they run, in a status update of its own as from a kubelet), not by the node simulator, so that large N fit
// on a small machine: readiness does not come from real sidecars here. --node-simulator keeps hack/kwok/stages.yaml as it is and runs the node simulator (e2e/nodesim)
// instead, a real sidecar and a fake ScyllaDB per pod, which is only practical for a small N.
//
// Run it through 'make bench-scale'; it is not part of 'make test'.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// userAgent identifies bench-scale's own requests in the audit log.
const userAgent = "bench-scale"

const (
	operatorUserAgentPrefix          = "scylla-operator-operator/"
	managerControllerUserAgentPrefix = "scylla-operator-manager-controller/"
)

// zones are the zones of the simulated nodes, one rack in each.
var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// nodesPerZone returns how many simulated nodes each zone needs for n ScyllaClusters: the pods ask for little, so a
// node takes up to its 110 pods, and one node more than that leaves room.
func nodesPerZone(n int) int {
	return max(2, (n+99)/100+1)
}

var (
	scyllaClusterGVR = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1", Resource: "scyllaclusters"}
	sdcGVR           = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1alpha1", Resource: "scylladbdatacenters"}
	taskGVR          = schema.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1alpha1", Resource: "scylladbmanagertasks"}
)

type options struct {
	ns           string
	outDir       string
	binDir       string
	resync       time.Duration
	steadyPeriod int
	timeout      time.Duration
	keep         bool
	floor        bool
	rolling      bool
	nodeSim      bool
	// parallel runs ScyllaDB versions with parallel node operations (parallelVersions).
	parallel bool
	// profileSeconds, when not 0, runs the programs with --profiling and records their CPU profile over that many
	// seconds after the ScyllaClusters are created, and their heap once converged.
	profileSeconds int
}

func main() {
	o := &options{ns: "10,100", outDir: "_output/bench", binDir: "_output/bin", resync: time.Minute, steadyPeriod: 2, timeout: 15 * time.Minute}
	flag.StringVar(&o.ns, "n", o.ns, "Comma-separated numbers of ScyllaClusters; one fresh control plane each.")
	flag.StringVar(&o.outDir, "out", o.outDir, "Directory for the runs' files and the JSON results.")
	flag.StringVar(&o.binDir, "bin-dir", o.binDir, "Directory holding kcp, its component symlinks and kwok.")
	flag.DurationVar(&o.resync, "resync-period", o.resync, "The manager-controller's --resync-period.")
	flag.IntVar(&o.steadyPeriod, "steady-resyncs", o.steadyPeriod, "Resync periods to measure the steady state over; 0 skips it.")
	flag.DurationVar(&o.timeout, "timeout", o.timeout, "How long one N may take to converge.")
	flag.BoolVar(&o.floor, "floor", true, "Also measure the floor: the same pods as single-replica StatefulSets with a claim each, no operator.")
	flag.BoolVar(&o.rolling, "rolling", true, "Also measure a rolling change (a new ScyllaDB version) on every ScyllaCluster, after the steady state.")
	flag.BoolVar(&o.nodeSim, "node-simulator", o.nodeSim, "Make ScyllaDB pods Ready through real sidecars run by the node simulator (e2e/nodesim) instead of at once by kwok stages. Each pod then runs two local processes, so keep N small (1 to 10).")
	flag.BoolVar(&o.parallel, "parallel-node-operations", o.parallel, fmt.Sprintf("Create the ScyllaClusters at ScyllaDB %s with enableParallelNodeOperations, as the mutating webhook sets for it, so that every rack bootstraps at once (roll to %s), instead of %s, which bootstraps rack by rack (roll to %s).",
		parallelVersions.initial, parallelVersions.rolling, sequentialVersions.initial, sequentialVersions.rolling))
	flag.BoolVar(&o.keep, "keep", o.keep, "Keep each run's directory (logs, audit log) after it ends.")
	flag.IntVar(&o.profileSeconds, "profile-seconds", o.profileSeconds, "Run the operator and the manager-controller with --profiling and write, under <out>/profiles-n<N>, "+
		"their CPU profiles over this many seconds from the ScyllaClusters' creation and their heap profiles once converged; 0 records none.")
	flag.Parse()
	if o.profileSeconds < 0 {
		fmt.Fprintf(os.Stderr, "bench-scale: --profile-seconds must not be negative, got %d\n", o.profileSeconds)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "bench-scale: %v\n", err)
		os.Exit(1)
	}
}

// versions are the ScyllaDB versions the run uses.
func (o *options) versions() versions {
	if o.parallel {
		return parallelVersions
	}
	return sequentialVersions
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(o *options) error {
	var ns []int
	for _, s := range strings.Split(o.ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("can't parse N %q: want a positive integer", s)
		}
		ns = append(ns, n)
	}
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	outDir, binDir := absIn(root, o.outDir), absIn(root, o.binDir)
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	builder := framework.NewGoBuilder(root, filepath.Join(outDir, "build"))
	stages := filepath.Join(root, "hack", "kwok", "stages.yaml")
	if !o.nodeSim {
		stages = filepath.Join(outDir, "stages.yaml")
		if err := writeBenchStages(filepath.Join(root, "hack", "kwok", "stages.yaml"), stages); err != nil {
			return err
		}
	} else if slices.Max(ns) > 10 {
		logf("--node-simulator runs two processes per ScyllaDB pod: N=%d means %d of them", slices.Max(ns), 6*slices.Max(ns))
	}
	hostname, _ := os.Hostname()
	report := Report{Started: time.Now().UTC(), Machine: machine(), Host: hostname}
	for _, n := range ns {
		r, err := runOne(ctx, o, root, binDir, outDir, stages, builder, n)
		if err != nil {
			return fmt.Errorf("N=%d: %w", n, err)
		}
		if o.floor {
			floor, floorWrites, err := measureFloor(ctx, o, binDir, outDir, stages, builder, n)
			if err != nil {
				return fmt.Errorf("floor N=%d: %w", n, err)
			}
			r.FloorPodsReadySeconds, r.FloorControllerManagerWrites = floor, floorWrites
			r.PodsReadyToFloor = r.AllPodsReadySeconds / floor
		}
		report.Runs = append(report.Runs, r)
		printTable(os.Stdout, report.Runs)
	}
	report.Slopes = computeSlopes(report.Runs)
	path := filepath.Join(outDir, "scale-"+report.Started.Format("20060102-150405")+".json")
	data, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	logf("wrote %s", path)
	return nil
}

func absIn(root, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(root, p)
}

// readyAfter is how long a ScyllaDB pod of the benchmark stays Running and unready before it becomes Ready.
const readyAfter = time.Second

// writeBenchStages writes a copy of the kwok stages at from in which a ScyllaDB pod, once Running with its IPs and
// unready as hack/kwok/stages.yaml makes it, becomes Ready readyAfter later by a stage of its own, instead of
// waiting for the node simulator: as with a kubelet, the pod's readiness comes in a status update of its own, after
// the one that gives it its IPs. The floor's pods carry the ScyllaDB pod label too, so they go the same way.
func writeBenchStages(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	objs, err := framework.DecodeManifestFile(from)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(objs, func(obj *unstructured.Unstructured) bool { return obj.GetName() == "scylladb-pod-running" }) {
		return fmt.Errorf("%s has no scylladb-pod-running stage for the pods to become Ready after", from)
	}
	stage := fmt.Sprintf(scyllaDBPodReadyStage, naming.PodTypeLabel, naming.PodTypeScyllaDBNode, readyAfter.Milliseconds())
	return os.WriteFile(to, []byte(strings.TrimRight(string(data), "\n")+"\n---\n"+stage), 0o644)
}

// scyllaDBPodReadyStage makes a Running, unready pod labelled %[1]s=%[2]s Ready %[3]d milliseconds later, all of its
// containers ready, as the node simulator does when the sidecar reports ScyllaDB up. The status template is merged
// into the pod's status: its IPs and start time stay.
const scyllaDBPodReadyStage = `apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: bench-scylladb-pod-ready
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchLabels:
      %[1]s: %[2]s
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values: ['Running']
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: 'NotIn'
      values: ['True']
  delay:
    durationMilliseconds: %[3]d
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range list "PodScheduled" "Initialized" "ContainersReady" "Ready" }}
      - type: {{ . | Quote }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      {{ range .spec.readinessGates }}
      - type: {{ .conditionType | Quote }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
`

// runOne measures one N on a fresh control plane.
func runOne(ctx context.Context, o *options, root, binDir, outDir, stages string, builder *framework.GoBuilder, n int) (Run, error) {
	r := Run{N: n, ResyncPeriod: o.resync.String(), NodeSimulator: o.nodeSim, ScyllaDBVersion: o.versions().initial, ParallelNodeOperations: o.parallel}
	dir := filepath.Join(outDir, fmt.Sprintf("run-n%d", n))
	cp, clients, stop, err := startControlPlane(ctx, o, binDir, stages, builder, fmt.Sprintf("bench-n%d", n), dir, n)
	if err != nil {
		return r, err
	}
	defer stop()
	if _, err := clients.InstallCRDs(ctx, filepath.Join(root, "deploy", "crds"), userAgent); err != nil {
		return r, err
	}
	if err := nodesim.InstallMemberClusterRole(ctx, clients, root, userAgent); err != nil {
		return r, err
	}

	addressFile := filepath.Join(dir, "fake-scylladb-manager.address")
	if _, err := framework.StartProgram(ctx, builder, cp, framework.Program{
		Name:    "fake-scylladb-manager",
		Package: "./e2e/cmd/fake-scylladb-manager",
		Args:    []string{"--listen-address=127.0.0.1:0", "--address-file=" + addressFile},
	}); err != nil {
		return r, err
	}
	var managerURL string
	if err := framework.WaitFor(ctx, 30*time.Second, func(context.Context) (bool, error) {
		b, err := os.ReadFile(addressFile)
		managerURL = strings.TrimSpace(string(b))
		return err == nil && managerURL != "", nil
	}); err != nil {
		return r, fmt.Errorf("the fake ScyllaDB Manager did not write its address: %w", err)
	}
	fake := &framework.FakeScyllaDBManager{URL: managerURL}

	outside := []string{"--kubeconfig=" + cp.KubeconfigPath, "--leader-elect=false", "--serving-address=127.0.0.1:0"}
	if o.profileSeconds != 0 {
		outside = append(outside, "--profiling")
	}
	operator, err := framework.StartProgram(ctx, builder, cp, framework.Program{
		Name:    "operator",
		Package: "./cmd/scylla-operator",
		Args:    append([]string{"operator", "--image=localhost/scylla-operator:bench"}, outside...),
	})
	if err != nil {
		return r, err
	}
	mc, err := framework.StartProgram(ctx, builder, cp, framework.Program{
		Name:    "manager-controller",
		Package: "./cmd/scylla-operator",
		Args:    append([]string{"manager-controller", "--resync-period=" + o.resync.String(), "--scylladb-manager-url=" + managerURL}, outside...),
	})
	if err != nil {
		return r, err
	}
	procs := map[string]int{"operator": operator.PID(), "manager-controller": mc.PID(), "kube-apiserver": cp.Process("kube-apiserver").PID()}
	metricsAddresses := map[string]string{}
	for name, p := range map[string]*framework.Process{"operator": operator, "manager-controller": mc} {
		if metricsAddresses[name], err = waitServingAddress(ctx, name, p.LogPath); err != nil {
			return r, err
		}
	}
	if o.nodeSim {
		stopSim, err := startNodeSimulator(ctx, builder, cp, filepath.Join(dir, "nodesim"))
		if err != nil {
			return r, err
		}
		defer stopSim()
	}
	// Let the programs sync their (empty) caches, so that start-up does not count as convergence.
	time.Sleep(3 * time.Second)
	if err := cp.CheckProcesses(); err != nil {
		return r, err
	}

	mark, err := cp.Audit.Mark()
	if err != nil {
		return r, err
	}
	if err := fake.ResetRequests(ctx); err != nil {
		return r, err
	}
	cpuBefore := cpuSeconds(procs)
	metricsBefore, err := scrapeAll(ctx, metricsAddresses)
	if err != nil {
		return r, err
	}

	profiles, err := startProfiles(ctx, filepath.Join(outDir, fmt.Sprintf("profiles-n%d", n)), o.profileSeconds, metricsAddresses)
	if err != nil {
		return r, err
	}
	logf("N=%d: creating %d ScyllaClusters at ScyllaDB %s (parallel node operations: %t)", n, n, o.versions().initial, o.parallel)
	start := time.Now()
	if err := createClusters(ctx, clients, n, o.versions()); err != nil {
		return r, err
	}
	r.CreateSeconds = time.Since(start).Seconds()

	if err := waitConverged(ctx, cp, clients, n, start, o.timeout, &r); err != nil {
		return r, err
	}
	logf("N=%d: converged in %.1fs", n, r.ConvergedSeconds)
	cpuAfter := cpuSeconds(procs)
	if err := profiles.finish(ctx); err != nil {
		// Figures already measured are worth more than the profiles.
		logf("N=%d: profiles: %v", n, err)
	}
	// Figures already measured are worth more than the latencies: a failed scrape is recorded, not returned.
	if metricsAfter, err := scrapeAll(ctx, metricsAddresses); err != nil {
		logf("N=%d: reaction latency: %v", n, err)
		r.LatencyError = err.Error()
	} else {
		for _, name := range []string{"operator", "manager-controller"} {
			r.Latencies = append(r.Latencies, reactionLatencies(name, metricsBefore[name], metricsAfter[name])...)
		}
	}

	events, err := cp.Audit.EventsSince(mark)
	if err != nil {
		return r, err
	}
	r.Converge = summarizeAudit(events, n)
	reqs, err := fake.Requests(ctx)
	if err != nil {
		return r, err
	}
	r.Converge.Manager = summarizeManager(reqs)
	r.Converge.ManagerWrites = managerWrites(r.Converge.Manager)
	r.Programs = map[string]*ProgramStats{}
	for name := range procs {
		r.Programs[name] = &ProgramStats{ConvergeCPUSeconds: cpuAfter[name] - cpuBefore[name]}
	}

	if o.steadyPeriod > 0 {
		window := time.Duration(o.steadyPeriod) * o.resync
		logf("N=%d: measuring the steady state for %v", n, window)
		mark, err := cp.Audit.Mark()
		if err != nil {
			return r, err
		}
		if err := fake.ResetRequests(ctx); err != nil {
			return r, err
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(window + 5*time.Second):
		}
		if err := cp.CheckProcesses(); err != nil {
			return r, err
		}
		events, err := cp.Audit.EventsSince(mark)
		if err != nil {
			return r, err
		}
		steady := summarizeAudit(events, n)
		reqs, err := fake.Requests(ctx)
		if err != nil {
			return r, err
		}
		steady.Manager = summarizeManager(reqs)
		steady.ManagerWrites = managerWrites(steady.Manager)
		steady.WindowSeconds = window.Seconds() + 5
		r.Steady = &steady
		cpuSteady := cpuSeconds(procs)
		for name := range procs {
			r.Programs[name].SteadyCPUSeconds = cpuSteady[name] - cpuAfter[name]
		}
	}
	if o.rolling {
		// A roll-out that does not finish is a finding, not a reason to lose the other figures.
		rolling, err := measureRolling(ctx, cp, clients, fake, procs, n, o.versions().rolling, o.timeout)
		if err != nil {
			logf("N=%d: rolling change: %v", n, err)
			r.RollingError = err.Error()
		}
		r.Rolling = rolling
	}
	for name, pid := range procs {
		r.Programs[name].PeakRSSMiB = peakRSSMiB(pid)
	}
	return r, nil
}

// scrapeAll scrapes the /metrics of each program at its address.
func scrapeAll(ctx context.Context, addresses map[string]string) (map[string]histograms, error) {
	out := map[string]histograms{}
	for name, address := range addresses {
		h, err := scrapeHistograms(ctx, address)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = h
	}
	return out, nil
}

// startNodeSimulator starts the node simulator for cp with its state and its log (simulator.log) in dir, and returns
// a function that stops it; the control plane must outlive it.
func startNodeSimulator(ctx context.Context, builder *framework.GoBuilder, cp *framework.ControlPlane, dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "simulator.log"))
	if err != nil {
		return nil, fmt.Errorf("can't create the node simulator's log: %w", err)
	}
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintln(logFile, prefix, args)
	}, funcr.Options{LogTimestamp: true, Verbosity: 2})
	sim, err := nodesim.StartForControlPlane(ctx, builder, cp, nodesim.Options{Dir: dir, Logger: logger})
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("can't start the node simulator: %w", err)
	}
	logf("started the node simulator (sidecars' logs in %s/pods/*/*/container.log)", dir)
	return func() {
		if err := sim.Stop(); err != nil {
			logf("can't stop the node simulator cleanly: %v", err)
		}
		_ = logFile.Close()
	}, nil
}

// createClusters creates n namespaces with one ScyllaCluster each, concurrently, as users would all at once.
func createClusters(ctx context.Context, clients *framework.Clients, n int, v versions) error {
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ns := fmt.Sprintf("bench-%d", i)
			if _, err := clients.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("can't create namespace %q: %w", ns, err)
				return
			}
			_, err := clients.Dynamic.Resource(scyllaClusterGVR).Namespace(ns).Create(ctx, makeScyllaCluster(ns, v), metav1.CreateOptions{})
			if err != nil {
				err = fmt.Errorf("can't create ScyllaCluster %s/bench: %w", ns, err)
			}
			errs <- err
		}()
	}
	var all []error
	for range n {
		all = append(all, <-errs)
	}
	return errors.Join(all...)
}

// makeScyllaCluster returns a ScyllaCluster of 3 racks of 1 node, one per zone, with one backup and one repair, at
// the initial version of v.
func makeScyllaCluster(ns string, v versions) *unstructured.Unstructured {
	var racks []any
	for _, zone := range zones {
		racks = append(racks, map[string]any{
			"name":    zone,
			"members": int64(1),
			"storage": map[string]any{"capacity": "1Gi"},
			"resources": map[string]any{
				"requests": map[string]any{"cpu": "10m", "memory": "64Mi"},
				"limits":   map[string]any{"cpu": "10m", "memory": "64Mi"},
			},
			"placement": map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{
					"key": corev1.LabelTopologyZone, "operator": "In", "values": []any{zone},
				}}}},
			}}},
		})
	}
	spec := map[string]any{
		"version":      v.initial,
		"agentVersion": "3.5.0",
		"datacenter":   map[string]any{"name": "us-east-1", "racks": racks},
		"backups":      []any{map[string]any{"name": "nightly", "cron": "0 2 * * *", "location": []any{"s3:bench"}}},
		"repairs":      []any{map[string]any{"name": "weekly", "cron": "0 3 * * SUN"}},
	}
	if v.parallelNodeOperations {
		spec["enableParallelNodeOperations"] = true
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scylla.scylladb.com/v1",
		"kind":       "ScyllaCluster",
		"metadata":   map[string]any{"name": "bench", "namespace": ns},
		"spec":       spec,
	}}
}

// waitConverged polls until every ScyllaDBDatacenter is Available, every ScyllaDB pod Ready, every task has a
// ScyllaDB Manager task ID and every ScyllaCluster reports all of it (rolledOut), and records when each first held.
// Only then is nothing left to write: the steady state starts there.
func waitConverged(ctx context.Context, cp *framework.ControlPlane, clients *framework.Clients, n int, start time.Time, timeout time.Duration, r *Run) error {
	deadline := time.Now().Add(timeout)
	var last string
	for {
		if err := cp.CheckProcesses(); err != nil {
			return err
		}
		sdcs, err := clients.Dynamic.Resource(sdcGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		available := 0
		for _, sdc := range sdcs.Items {
			if conditionTrue(&sdc, "Available") {
				available++
			}
		}
		pods, err := clients.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: naming.PodTypeLabel + "=" + naming.PodTypeScyllaDBNode})
		if err != nil {
			return err
		}
		ready := 0
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		tasks, err := clients.Dynamic.Resource(taskGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		withID := 0
		for _, t := range tasks.Items {
			if id, _, _ := unstructured.NestedString(t.Object, "status", "taskID"); id != "" {
				withID++
			}
		}
		scs, err := clients.Dynamic.Resource(scyllaClusterGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		rolledOutClusters := 0
		for i := range scs.Items {
			if rolledOut(&scs.Items[i]) {
				rolledOutClusters++
			}
		}
		elapsed := time.Since(start).Seconds()
		if len(sdcs.Items) == n && r.AllDatacentersExistSeconds == 0 {
			r.AllDatacentersExistSeconds = elapsed
		}
		if available == n && r.AllAvailableSeconds == 0 {
			r.AllAvailableSeconds = elapsed
		}
		if ready == 3*n && r.AllPodsReadySeconds == 0 {
			r.AllPodsReadySeconds = elapsed
		}
		if withID == 2*n && r.AllTasksScheduledSeconds == 0 {
			r.AllTasksScheduledSeconds = elapsed
		}
		if rolledOutClusters == n && r.AllRolledOutSeconds == 0 {
			r.AllRolledOutSeconds = elapsed
		}
		if r.AllAvailableSeconds != 0 && r.AllPodsReadySeconds != 0 && r.AllTasksScheduledSeconds != 0 && r.AllRolledOutSeconds != 0 {
			r.ConvergedSeconds = elapsed
			return nil
		}
		state := fmt.Sprintf("datacenters %d/%d available, pods %d/%d ready, tasks %d/%d with an ID, ScyllaClusters %d/%d rolled out",
			available, n, ready, 3*n, withID, 2*n, rolledOutClusters, n)
		if state != last {
			logf("N=%d: %.1fs: %s", n, elapsed, state)
			last = state
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not converged after %v: %s", timeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// rolledOut tells whether a ScyllaCluster's status describes its generation as Available, not Progressing, with the
// ScyllaDB Manager IDs of every backup and repair.
func rolledOut(sc *unstructured.Unstructured) bool {
	observed, found, _ := unstructured.NestedInt64(sc.Object, "status", "observedGeneration")
	if !found || observed != sc.GetGeneration() || !conditionTrue(sc, "Available") || !conditionFalse(sc, "Progressing") {
		return false
	}
	for _, field := range []string{"backups", "repairs"} {
		specTasks, _, _ := unstructured.NestedSlice(sc.Object, "spec", field)
		statusTasks, _, _ := unstructured.NestedSlice(sc.Object, "status", field)
		if len(statusTasks) != len(specTasks) {
			return false
		}
		for _, t := range statusTasks {
			if m, ok := t.(map[string]any); !ok || m["id"] == nil || m["id"] == "" {
				return false
			}
		}
	}
	return true
}

func conditionTrue(obj *unstructured.Unstructured, condType string) bool {
	return conditionStatus(obj, condType) == "True"
}

func conditionFalse(obj *unstructured.Unstructured, condType string) bool {
	return conditionStatus(obj, condType) == "False"
}

// conditionStatus returns the status of obj's condition of condType, nil when it has none.
func conditionStatus(obj *unstructured.Unstructured, condType string) any {
	conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if ok && m["type"] == condType {
			return m["status"]
		}
	}
	return nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// startControlPlane starts a fresh control plane named name in dir, with nodes for n ScyllaClusters and the kwok
// stages of the benchmark, and returns its admin clients and a function that stops it (and removes dir unless --keep).
func startControlPlane(ctx context.Context, o *options, binDir, stages string, builder *framework.GoBuilder, name, dir string, n int) (*framework.ControlPlane, *framework.Clients, func(), error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, nil, nil, err
	}
	fakes, err := builder.Build(ctx, "./e2e/cmd/cluster-fakes")
	if err != nil {
		return nil, nil, nil, err
	}
	cp, err := framework.StartControlPlane(ctx, framework.ControlPlaneOptions{
		Name:               name,
		Dir:                dir,
		BinDir:             binDir,
		KwokStagesPath:     stages,
		ClusterFakesBinary: fakes,
		Nodes:              framework.ZonedNodes("us-east-1", zones, nodesPerZone(n)),
		StartTimeout:       5 * time.Minute,
		Logf:               logf,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	stop := func() {
		if err := cp.Stop(); err != nil {
			logf("can't stop the control plane cleanly: %v", err)
		}
		if !o.keep {
			_ = os.RemoveAll(dir)
		}
	}
	clients, err := cp.Clients(userAgent)
	if err != nil {
		stop()
		return nil, nil, nil, err
	}
	return cp, clients, stop, nil
}
