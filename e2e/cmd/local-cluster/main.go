// Command local-cluster runs a local Kubernetes control plane for people: the control plane with simulated
// nodes and cluster-fakes, the project's CRDs, the project's programs that exist so far (the operator, a fake
// ScyllaDB Manager and the manager-controller calling it), the ScyllaDB node simulator (e2e/nodesim: a real sidecar
// with a fake ScyllaDB for each ScyllaDB pod, which makes the pods' readiness real), and example ScyllaClusters. It stays in the foreground until SIGINT or SIGTERM, then stops everything it
// started.
//
// Use it through hack/local-up.sh (and hack/local-down.sh), which build the control plane binaries first.
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
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/cmd/operator"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
)

// userAgent identifies local-cluster's own requests (CRDs, the example) in the audit log.
const userAgent = "local-cluster"

// localProgram is one of the project's programs local-cluster runs once it exists in the working tree.
type localProgram struct {
	framework.Program
	// available reports whether the program exists yet.
	available func(repoRoot string) bool
	// moreArgs, when set, returns arguments only known once the programs started before it run.
	moreArgs func(ctx context.Context) ([]string, error)
}

// programs lists the project's programs to run against the cluster whose admin kubeconfig is kubeconfig, in
// start order. Programs that do not exist yet are skipped, so the list can name them ahead of time. To add one,
// append an entry.
func programs(kubeconfig string) []localProgram {
	// One replica of each runs outside the cluster: no in-cluster config, no leader election, and health endpoints on
	// a free loopback port so that several instances can run at once.
	outside := []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--serving-address=127.0.0.1:0"}
	return []localProgram{
		{
			// Pods are simulated, so the image (whose binary would be copied into ScyllaDB pods) is never pulled.
			Program: framework.Program{
				Name:    "scylla-operator",
				Package: "./cmd/scylla-operator",
				Args:    append([]string{"operator", "--image=localhost/scylla-operator:local"}, outside...),
			},
			available: operatorSubcommandExists("operator"),
		},
		{
			// ScyllaDB Manager can't run here; the fake serves its REST API for the manager-controller and for users.
			Program: framework.Program{
				Name:    "fake-scylladb-manager",
				Package: "./e2e/cmd/fake-scylladb-manager",
				Args: []string{"--listen-address=127.0.0.1:0", "--address-file=" + fakeScyllaDBManagerAddressFile(kubeconfig),
					// Backups to the local bucket upload Manager-like objects to the local S3 server (setUpBackups).
					"--knobs-file=" + fakeScyllaDBManagerKnobsFile(kubeconfig)},
			},
			available: func(string) bool { return true },
		},
		{
			// A short resync makes changes made behind its back in the fake ScyllaDB Manager show up within a minute.
			Program: framework.Program{
				Name:    "manager-controller",
				Package: "./cmd/scylla-operator",
				Args:    append([]string{"manager-controller", "--resync-period=1m"}, outside...),
			},
			available: operatorSubcommandExists("manager-controller"),
			moreArgs: func(ctx context.Context) ([]string, error) {
				url, err := waitForFakeScyllaDBManagerURL(ctx, kubeconfig)
				if err != nil {
					return nil, err
				}
				return []string{"--scylladb-manager-url=" + url}, nil
			},
		},
	}
}

// waitForFakeScyllaDBManagerURL returns the URL the fake ScyllaDB Manager writes once it listens.
func waitForFakeScyllaDBManagerURL(ctx context.Context, kubeconfig string) (string, error) {
	path := fakeScyllaDBManagerAddressFile(kubeconfig)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ticker := time.NewTicker(50 * time.Millisecond)
	defer ticker.Stop()
	for {
		if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) != 0 {
			return strings.TrimSpace(string(b)), nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the fake ScyllaDB Manager did not write its URL to %s: %w", path, ctx.Err())
		case <-ticker.C:
		}
	}
}

// fakeScyllaDBManagerAddressFile is where the fake ScyllaDB Manager writes its URL, beside the instance's kubeconfig.
func fakeScyllaDBManagerAddressFile(kubeconfig string) string {
	return filepath.Join(filepath.Dir(kubeconfig), "fake-scylladb-manager.address")
}

// fakeScyllaDBManagerKnobsFile holds the fake ScyllaDB Manager's initial knobs, beside the instance's kubeconfig.
func fakeScyllaDBManagerKnobsFile(kubeconfig string) string {
	return filepath.Join(filepath.Dir(kubeconfig), "fake-scylladb-manager.knobs.json")
}

// operatorSubcommandExists reports whether the scylla-operator binary has the named subcommand.
func operatorSubcommandExists(name string) func(string) bool {
	return func(string) bool {
		root := operator.NewScyllaOperatorCommand(genericclioptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
		found, _, err := root.Find([]string{name})
		return err == nil && found != root && found.Name() == name
	}
}

type options struct {
	dir          string
	name         string
	binDir       string
	example      string
	region       string
	zones        string
	nodesPerZone int
}

func (o *options) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.dir, "dir", o.dir, "Directory for everything the cluster writes; emptied first. Required.")
	fs.StringVar(&o.name, "name", o.name, "Name of the control plane (kubeconfig context).")
	fs.StringVar(&o.binDir, "bin-dir", o.binDir, "Directory holding kcp, its component symlinks and kwok. Required.")
	fs.StringVar(&o.example, "example", o.example,
		"Comma-separated manifests to apply once everything runs; empty picks the first ScyllaCluster in deploy/examples/ "+
			"and every ScyllaCluster example with ScyllaDB Manager tasks, 'none' applies nothing.")
	fs.StringVar(&o.region, "region", o.region, "Region label of the simulated nodes.")
	fs.StringVar(&o.zones, "zones", o.zones, "Comma-separated zone labels of the simulated nodes.")
	fs.IntVar(&o.nodesPerZone, "nodes-per-zone", o.nodesPerZone, "Simulated nodes in each zone.")
}

func (o *options) validate() error {
	var errs []error
	if o.dir == "" {
		errs = append(errs, errors.New("--dir is required"))
	}
	if o.binDir == "" {
		errs = append(errs, errors.New("--bin-dir is required"))
	}
	if o.nodesPerZone < 1 {
		errs = append(errs, fmt.Errorf("--nodes-per-zone must be at least 1, got %d", o.nodesPerZone))
	}
	if strings.TrimSpace(o.zones) == "" {
		errs = append(errs, errors.New("--zones must name at least one zone"))
	}
	return errors.Join(errs...)
}

func main() {
	klog.InitFlags(nil)
	// The defaults match the placement of the single-datacenter examples in deploy/examples/.
	o := &options{name: "local", region: "us-east-1", zones: "us-east-1a,us-east-1b,us-east-1c", nodesPerZone: 3}
	o.addFlags(flag.CommandLine)
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintf(os.Stderr, "local-cluster: %v\n", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run(o *options) error {
	if err := o.validate(); err != nil {
		return err
	}
	root, err := framework.RepoRoot()
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	if err := os.RemoveAll(o.dir); err != nil {
		return fmt.Errorf("can't clean %s: %w", o.dir, err)
	}
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return fmt.Errorf("can't create %s: %w", o.dir, err)
	}
	supervisorPID := filepath.Join(o.dir, "supervisor.pid")
	if err := os.WriteFile(supervisorPID, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return fmt.Errorf("can't write %s: %w", supervisorPID, err)
	}
	readyFile := filepath.Join(o.dir, "ready")
	defer func() {
		_ = os.Remove(readyFile)
		_ = os.Remove(supervisorPID)
	}()

	builder := framework.NewGoBuilder(root, filepath.Join(o.dir, "bin"))
	fakes, err := builder.Build(ctx, "./e2e/cmd/cluster-fakes")
	if err != nil {
		return err
	}
	var zones []string
	for _, z := range strings.Split(o.zones, ",") {
		zones = append(zones, strings.TrimSpace(z))
	}
	start := time.Now()
	cp, err := framework.StartControlPlane(ctx, framework.ControlPlaneOptions{
		Name:               o.name,
		Dir:                o.dir,
		BinDir:             o.binDir,
		KwokStagesPath:     filepath.Join(root, "hack", "kwok", "stages.yaml"),
		ClusterFakesBinary: fakes,
		Nodes:              framework.ZonedNodes(o.region, zones, o.nodesPerZone),
		Logf:               logf,
	})
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping every process of %s ...", o.name)
		if err := cp.Stop(); err != nil {
			logf("can't stop cleanly: %v", err)
		}
		logf("stopped")
	}()

	s3, err := startS3Server(ctx, root, o, cp.KubeconfigPath)
	if err != nil {
		return err
	}
	defer func() {
		if err := s3.Stop(); err != nil {
			logf("can't stop versitygw cleanly: %v", err)
		}
	}()
	sim, err := setUp(ctx, root, o, builder, cp, s3)
	if sim != nil {
		defer func() {
			if err := sim.Stop(); err != nil {
				logf("can't stop the node simulator cleanly: %v", err)
			}
		}()
	}
	if err != nil {
		return err
	}
	// A program that fails at start-up usually does so within moments; report that rather than "ready".
	settle := time.After(3 * time.Second)
	for waiting := true; waiting; {
		select {
		case <-ctx.Done():
			return nil
		case <-settle:
			waiting = false
		case <-time.After(100 * time.Millisecond):
			if err := cp.CheckProcesses(); err != nil {
				return err
			}
		}
	}
	logf("everything is up %v after the control plane started", time.Since(start).Round(time.Millisecond))
	usage := usageText(root, o, cp, s3.Endpoint)
	fmt.Fprint(os.Stdout, usage)
	if err := os.WriteFile(readyFile, []byte(usage), 0o644); err != nil {
		return fmt.Errorf("can't write ready file: %w", err)
	}
	return supervise(ctx, cp)
}

// supervise runs until ctx ends. If a project program exits, it reports it and keeps the cluster up so that its
// state can be inspected; if a control plane process exits, it returns an error, which stops everything.
func supervise(ctx context.Context, cp *framework.ControlPlane) error {
	reported := map[string]bool{}
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		for _, p := range cp.Processes() {
			exited, err := p.Exited()
			if !exited || reported[p.Name] {
				continue
			}
			if !isProgram(p.Name, cp.KubeconfigPath) {
				return fmt.Errorf("%s exited unexpectedly (%v)\n%s", p.Name, err, framework.FileTail(p.LogPath, 30))
			}
			reported[p.Name] = true
			logf("%s exited (%v); the cluster stays up. Last lines of %s:\n%s", p.Name, err, p.LogPath, framework.FileTail(p.LogPath, 30))
		}
	}
}

// isProgram reports whether name is one of the project's programs, as opposed to a control plane process.
func isProgram(name, kubeconfig string) bool {
	for _, p := range programs(kubeconfig) {
		if p.Name == name {
			return true
		}
	}
	return false
}

// setUp installs the CRDs, starts the programs that exist and the ScyllaDB node simulator, and applies the
// example. The simulator, once started, is returned even with an error, for the caller to stop.
func setUp(ctx context.Context, root string, o *options, builder *framework.GoBuilder, cp *framework.ControlPlane, s3 *framework.S3Server) (*nodesim.Simulator, error) {
	clients, err := cp.Clients(userAgent)
	if err != nil {
		return nil, err
	}
	crds, err := clients.InstallCRDs(ctx, filepath.Join(root, "deploy", "crds"), userAgent)
	if err != nil {
		return nil, err
	}
	logf("installed %d CRDs from deploy/crds", len(crds))
	if err := nodesim.InstallMemberClusterRole(ctx, clients, root, userAgent); err != nil {
		return nil, err
	}
	logf("installed the sidecars' ClusterRole from %s", nodesim.MemberClusterRoleManifest)

	if err := declareLocalBucket(ctx, clients, s3); err != nil {
		return nil, err
	}
	logf("declared the ScyllaDBBackupBucket %q (bucket %q in versitygw at %s, data in %s)", localBucketObject, localBucketName, s3.Endpoint, s3.DataDir)

	for _, p := range programs(cp.KubeconfigPath) {
		if !p.available(root) {
			logf("skipping %s: not in the working tree yet", p.Name)
			continue
		}
		if p.moreArgs != nil {
			more, err := p.moreArgs(ctx)
			if err != nil {
				return nil, fmt.Errorf("can't start %s: %w", p.Name, err)
			}
			p.Args = append(p.Args, more...)
		}
		proc, err := framework.StartProgram(ctx, builder, cp, p.Program)
		if err != nil {
			return nil, err
		}
		logf("started %s (pid %d, log %s)", p.Name, proc.PID(), proc.LogPath)
	}

	// ScyllaDB pods become Ready only through their sidecars, which the simulator runs.
	simDir := filepath.Join(o.dir, "nodesim")
	sim, err := nodesim.StartForControlPlane(ctx, builder, cp, nodesim.Options{Dir: simDir, Logger: klog.Background().WithName("nodesim")})
	if err != nil {
		return nil, err
	}
	logf("started the ScyllaDB node simulator (sidecars' logs in %s/pods/*/*/container.log)", simDir)

	examples, err := findExamples(root, o.example)
	if err != nil {
		return sim, err
	}
	if len(examples) == 0 {
		logf("no example to apply")
		return sim, nil
	}
	for _, example := range examples {
		if err := createNamespaces(ctx, clients, example); err != nil {
			return sim, err
		}
		objs, err := clients.ApplyManifestFile(ctx, example, userAgent, "default")
		if err != nil {
			return sim, err
		}
		for _, obj := range objs {
			logf("applied %s %s/%s from %s", obj.GetKind(), obj.GetNamespace(), obj.GetName(), example)
		}
	}
	return sim, nil
}

// The local S3 bucket, its declared ScyllaDBBackupBucket and its credentials Secret.
const (
	localBucketName      = "local-scylla-backups"
	localBucketObject    = "local-backups"
	localCredentialsNS   = "scylla-backup-credentials"
	localCredentialsName = "local-s3"
)

// startS3Server starts versitygw, a real S3 server built once per machine by hack/build-versitygw.sh, on a free
// loopback port with keys generated for this run, creates the local bucket in it, and writes the fake ScyllaDB
// Manager's knobs (beside kubeconfig) so that backups to s3:<bucket> upload Manager-like objects there.
func startS3Server(ctx context.Context, root string, o *options, kubeconfig string) (*framework.S3Server, error) {
	binary, err := framework.EnsureVersityGW(ctx, root, filepath.Join(o.dir, "build-versitygw.log"))
	if err != nil {
		return nil, err
	}
	s3, err := framework.StartS3Server(ctx, binary, filepath.Join(o.dir, "s3"))
	if err != nil {
		return nil, err
	}
	if err := s3.CreateBucket(ctx, localBucketName); err != nil {
		_ = s3.Stop()
		return nil, fmt.Errorf("can't create bucket %q: %w", localBucketName, err)
	}
	knobs := fakescyllamanager.Knobs{S3Endpoints: map[string]fakescyllamanager.S3Endpoint{"s3:" + localBucketName: s3.FakeManagerEndpoint()}}
	data, err := json.Marshal(knobs)
	if err == nil {
		err = os.WriteFile(fakeScyllaDBManagerKnobsFile(kubeconfig), data, 0o600)
	}
	if err != nil {
		_ = s3.Stop()
		return nil, fmt.Errorf("can't write the fake ScyllaDB Manager's knobs: %w", err)
	}
	logf("started versitygw, a real S3 server, at %s (log %s)", s3.Endpoint, s3.LogPath)
	return s3, nil
}

// declareLocalBucket declares the local bucket as a ScyllaDBBackupBucket, with a Secret holding the server's keys.
func declareLocalBucket(ctx context.Context, clients *framework.Clients, s3 *framework.S3Server) error {
	if _, err := clients.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: localCredentialsNS}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("can't create namespace %q: %w", localCredentialsNS, err)
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: localCredentialsNS, Name: localCredentialsName},
		StringData: map[string]string{
			naming.ScyllaDBBackupBucketAccessKeyIDKey:     s3.AccessKey,
			naming.ScyllaDBBackupBucketSecretAccessKeyKey: s3.SecretKey,
		},
	}
	if _, err := clients.Kube.CoreV1().Secrets(localCredentialsNS).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("can't create the S3 credentials Secret: %w", err)
	}
	scyllaClient, err := scyllaclientset.NewForConfig(clients.Config)
	if err != nil {
		return err
	}
	bucket := &scyllav1alpha1.ScyllaDBBackupBucket{
		ObjectMeta: metav1.ObjectMeta{Name: localBucketObject},
		Spec: scyllav1alpha1.ScyllaDBBackupBucketSpec{
			Provider:             scyllav1alpha1.ScyllaDBBackupProviderS3,
			BucketName:           localBucketName,
			Region:               framework.S3Region,
			Endpoint:             s3.Endpoint,
			CredentialsSecretRef: &scyllav1alpha1.ScyllaDBBackupBucketSecretReference{Namespace: localCredentialsNS, Name: localCredentialsName},
			// Short, so that deleting an example cluster shows its directory purged within a session.
			DeletionGracePeriod: &metav1.Duration{Duration: 10 * time.Minute},
		},
	}
	if _, err := scyllaClient.ScyllaV1alpha1().ScyllaDBBackupBuckets().Create(ctx, bucket, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("can't declare the local ScyllaDBBackupBucket: %w", err)
	}
	return nil
}

// createNamespaces creates the namespaces the objects of a manifest name, unless they exist.
func createNamespaces(ctx context.Context, clients *framework.Clients, path string) error {
	objs, err := framework.DecodeManifestFile(path)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		ns := obj.GetNamespace()
		if ns == "" {
			continue
		}
		_, err := clients.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("can't create namespace %q for %s: %w", ns, path, err)
		}
	}
	return nil
}

// findExamples returns the manifests to apply: flag "none" means none, a comma-separated list means those files, and
// empty means the first deploy/examples/*.yaml that holds a ScyllaCluster, "basic" ones first, followed by every
// other example whose ScyllaCluster declares backups or repairs, so that the manager-controller has tasks to schedule.
func findExamples(root, flagValue string) ([]string, error) {
	switch flagValue {
	case "none":
		return nil, nil
	case "":
	default:
		var paths []string
		for _, p := range strings.Split(flagValue, ",") {
			p = strings.TrimSpace(p)
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("can't use example: %w", err)
			}
			paths = append(paths, p)
		}
		return paths, nil
	}
	files, err := framework.ManifestFiles(filepath.Join(root, "deploy", "examples"))
	if err != nil {
		return nil, err
	}
	// A "basic" example first, then the others in name order.
	sort.SliceStable(files, func(i, j int) bool {
		return strings.Contains(filepath.Base(files[i]), "basic") && !strings.Contains(filepath.Base(files[j]), "basic")
	})
	var examples []string
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "invalid") {
			continue // Invalid examples exist on purpose, for rejection tests.
		}
		objs, err := framework.DecodeManifestFile(f)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.GetKind() != "ScyllaCluster" {
				continue
			}
			backups, _, _ := unstructured.NestedSlice(obj.Object, "spec", "backups")
			repairs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "repairs")
			if len(examples) == 0 || len(backups)+len(repairs) != 0 {
				examples = append(examples, f)
				break
			}
		}
	}
	return examples, nil
}

func usageText(root string, o *options, cp *framework.ControlPlane, s3Endpoint string) string {
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
		return p
	}
	instance := filepath.Base(o.dir)
	managerURL := "not running"
	if b, err := os.ReadFile(fakeScyllaDBManagerAddressFile(cp.KubeconfigPath)); err == nil {
		managerURL = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf(`
Local control plane %q is up: https://127.0.0.1:%d (Kubernetes from hack/kcp, simulated nodes from kwok).

  export KUBECONFIG=%s
  export PATH=%s:$PATH     # kubectl of the same Kubernetes version
  kubectl get nodes -L topology.kubernetes.io/zone
  kubectl get scyllaclusters -A

Logs of every process: %s/*.log (API audit log: %s)
Fake ScyllaDB Manager: %s
  curl %s/fake/state                      # the clusters and tasks the manager-controller registered
  kubectl get scylladbmanagertasks -A -o wide
ScyllaDB nodes: their sidecars run locally against fake ScyllaDB, logs in %s/nodesim/pods/<namespace>/<pod>-<uid>/container.log
S3 (versitygw): %s, bucket %q declared as ScyllaDBBackupBucket %q (data in %s/s3/data, keys in Secret %s/%s)
  a backup to location s3:%s gets a ScyllaDBBackupEntry, and the fake ScyllaDB Manager uploads into the bucket
  kubectl get scylladbbackupbuckets,scylladbbackupentries -A    # see docs/backups.md
Stop: Ctrl-C here, or hack/local-down.sh --instance %s
`, o.name, cp.Ports.APIServer, cp.KubeconfigPath, o.binDir, rel(o.dir), rel(cp.Audit.Path), managerURL, managerURL, rel(o.dir),
		s3Endpoint, localBucketName, localBucketObject, rel(o.dir), localCredentialsNS, localCredentialsName, localBucketName, instance)
}
