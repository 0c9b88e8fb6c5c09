package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/tools/clientcmd"
)

// SuiteOptions configures a test suite's control planes.
type SuiteOptions struct {
	// Name names the suite's artifacts directory, _output/e2e/<Name>-<time> (the base directory can be changed
	// with E2E_ARTIFACTS_DIR). Required.
	Name string
	// ControlPlanes is how many control planes to start (several stand for several datacenters). Defaults to 1.
	ControlPlanes int
	// InstallCRDs installs the CRDs of deploy/crds/ into every control plane before the tests run.
	InstallCRDs bool
	// ControlPlane, if set, adjusts the options of each control plane before it starts.
	ControlPlane func(index int, opts *ControlPlaneOptions)
}

// Suite is the shared state of one test binary: its control planes and the binaries it built.
type Suite struct {
	// RepoRoot is the root of the working tree.
	RepoRoot string
	// Dir holds the suite's artifacts: control plane directories (logs, audit logs), program logs, dumps.
	Dir string
	// ControlPlanes are the running control planes.
	ControlPlanes []*ControlPlane
	// Builder builds the project's programs from the working tree.
	Builder *GoBuilder
	// CRDs are the names of the CRDs installed from deploy/crds/, if SuiteOptions.InstallCRDs.
	CRDs []string
	// RBAC is what the install manifests grant the programs; it is applied to every control plane, and the
	// operator and the manager-controller run with its ServiceAccounts' tokens (see ProgramKubeconfig).
	RBAC *DeployedRBAC

	mu sync.Mutex
	// credentials are those handed to programs; RunSuite fails the suite if RBAC refused any of their requests.
	credentials []*ServiceAccountCredential
}

// StartSuite builds what is needed (the control plane binaries once per machine, cluster-fakes once per suite)
// and starts the suite's control planes.
func StartSuite(ctx context.Context, opts SuiteOptions) (*Suite, error) {
	if opts.Name == "" {
		return nil, errors.New("suite options need a Name")
	}
	if opts.ControlPlanes == 0 {
		opts.ControlPlanes = 1
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	base := os.Getenv("E2E_ARTIFACTS_DIR")
	if base == "" {
		base = filepath.Join(root, "_output", "e2e")
	}
	dir := filepath.Join(base, fmt.Sprintf("%s-%s-%d", opts.Name, time.Now().Format("20060102-150405"), os.Getpid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("can't create suite directory: %w", err)
	}
	rbac, err := LoadDeployedRBAC(root)
	if err != nil {
		return nil, err
	}
	s := &Suite{RepoRoot: root, Dir: dir, Builder: NewGoBuilder(root, filepath.Join(dir, "bin")), RBAC: rbac}

	buildLog := filepath.Join(dir, "build-control-plane.log")
	fmt.Fprintf(os.Stderr, "e2e: checking the control plane binaries; the first build on a machine takes about 8 minutes (log %s)\n", buildLog)
	binDir, err := EnsureControlPlaneBinaries(ctx, root, buildLog)
	if err != nil {
		return nil, err
	}
	fakes, err := s.Builder.Build(ctx, "./e2e/cmd/cluster-fakes")
	if err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...) }
	cpOpts := make([]ControlPlaneOptions, opts.ControlPlanes)
	for i := range cpOpts {
		o := ControlPlaneOptions{
			Name:               "kcp",
			Dir:                dir,
			BinDir:             binDir,
			KwokStagesPath:     filepath.Join(root, "hack", "kwok", "stages.yaml"),
			ClusterFakesBinary: fakes,
			StopGracePeriod:    2 * time.Second,
			Logf:               logf,
		}
		if opts.ControlPlanes == 1 {
			o.Dir = filepath.Join(dir, o.Name)
		} else {
			o = ControlPlaneOptionsFor(o, i)
		}
		if opts.ControlPlane != nil {
			opts.ControlPlane(i, &o)
		}
		cpOpts[i] = o
	}
	if s.ControlPlanes, err = StartControlPlanes(ctx, cpOpts); err != nil {
		return nil, err
	}

	for _, cp := range s.ControlPlanes {
		if err := s.install(ctx, cp, opts.InstallCRDs); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// install applies the install manifests' RBAC and, if crds, the CRDs to cp.
func (s *Suite) install(ctx context.Context, cp *ControlPlane, crds bool) error {
	clients, err := cp.Clients(suiteFieldManager)
	if err != nil {
		return err
	}
	if err := s.RBAC.Apply(ctx, clients, suiteFieldManager); err != nil {
		return fmt.Errorf("can't install RBAC into %s: %w", cp.Name, err)
	}
	if !crds {
		return nil
	}
	if s.CRDs, err = clients.InstallCRDs(ctx, filepath.Join(s.RepoRoot, "deploy", "crds"), suiteFieldManager); err != nil {
		return fmt.Errorf("can't install CRDs into %s: %w", cp.Name, err)
	}
	return nil
}

// suiteFieldManager is the user agent and field manager of what the suite itself installs.
const suiteFieldManager = "e2e-suite"

// ProgramKubeconfig writes <cp.Dir>/<name>.kubeconfig for one process of subcommand (OperatorSubcommand,
// ManagerControllerSubcommand), with a fresh token of the ServiceAccount the subcommand's Deployment runs as: the
// program gets exactly the permissions the install manifests give it.
func (s *Suite) ProgramKubeconfig(ctx context.Context, cp *ControlPlane, subcommand, name string) (*ServiceAccountCredential, error) {
	sa, err := s.RBAC.ServiceAccountFor(subcommand)
	if err != nil {
		return nil, err
	}
	cred, err := cp.WriteServiceAccountKubeconfig(ctx, sa, name)
	if err != nil {
		return nil, err
	}
	s.addCredential(cred)
	return cred, nil
}

func (s *Suite) addCredential(cred *ServiceAccountCredential) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.credentials = append(s.credentials, cred)
}

// GrantRemoteAccess creates, in cp, the ServiceAccount a meta cluster's operator reaches cp as, bound to the remote
// ClusterRole of the install manifests (RemoteClusterRoleManifest), and returns it.
func (s *Suite) GrantRemoteAccess(ctx context.Context, cp *ControlPlane) (ServiceAccount, error) {
	clients, err := cp.Clients(suiteFieldManager)
	if err != nil {
		return ServiceAccount{}, err
	}
	return s.RBAC.ApplyRemote(ctx, clients, suiteFieldManager)
}

// RemoteKubeconfig returns a kubeconfig for cp as the ServiceAccount of GrantRemoteAccess, to put into the Secret of
// a RemoteKubernetesCluster that reaches cp.
func (s *Suite) RemoteKubeconfig(ctx context.Context, cp *ControlPlane) ([]byte, error) {
	sa, err := s.GrantRemoteAccess(ctx, cp)
	if err != nil {
		return nil, err
	}
	cred, err := cp.ServiceAccountKubeconfig(ctx, sa)
	if err != nil {
		return nil, err
	}
	s.addCredential(cred)
	data, err := clientcmd.Write(*cred.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("can't encode the remote kubeconfig of %s: %w", cp.Name, err)
	}
	return data, nil
}

// Stop stops every control plane and deletes the bulky parts (etcd data, about 120 MB per control plane, and the
// built binaries); logs, audit logs and dumps stay in Dir.
func (s *Suite) Stop() error {
	err := StopControlPlanes(s.ControlPlanes)
	for _, cp := range s.ControlPlanes {
		if cp != nil {
			err = errors.Join(err, os.RemoveAll(filepath.Join(cp.Dir, "etcd")))
		}
	}
	return errors.Join(err, os.RemoveAll(s.Builder.OutDir))
}

// StartProgram runs one of the project's programs against cp (see the package-level StartProgram), built by the
// suite's builder. The operator and the manager-controller are refused the admin kubeconfig: in a suite they run
// with their ServiceAccounts' (ProgramKubeconfig).
func (s *Suite) StartProgram(ctx context.Context, cp *ControlPlane, prog Program) (*Process, error) {
	if err := checkProgramIdentity(cp, prog); err != nil {
		return nil, err
	}
	return StartProgram(ctx, s.Builder, cp, prog)
}

// StartProgram builds a main package of the working tree and runs it as a process of cp, with KUBECONFIG set to
// cp's admin kubeconfig. Its log is <cp.Dir>/<prog.Name>.log.
func StartProgram(ctx context.Context, builder *GoBuilder, cp *ControlPlane, prog Program) (*Process, error) {
	if prog.Name == "" {
		return nil, errors.New("program needs a Name")
	}
	path, err := builder.Build(ctx, prog.Package)
	if err != nil {
		return nil, err
	}
	return cp.StartProcess(ProcessSpec{
		Name: prog.Name,
		Path: path,
		Args: prog.Args,
		Env:  append([]string{"KUBECONFIG=" + cp.KubeconfigPath}, prog.Env...),
	})
}

// checkProgramIdentity refuses to run the operator or the manager-controller with the admin kubeconfig, which
// would hide permissions missing from the install manifests: they must name a kubeconfig with --kubeconfig.
func checkProgramIdentity(cp *ControlPlane, prog Program) error {
	if len(prog.Args) == 0 || (prog.Args[0] != OperatorSubcommand && prog.Args[0] != ManagerControllerSubcommand) {
		return nil
	}
	kubeconfig := ""
	for _, arg := range prog.Args {
		if v, ok := strings.CutPrefix(arg, "--kubeconfig="); ok {
			kubeconfig = v
		}
	}
	switch kubeconfig {
	case "":
		return fmt.Errorf("program %s (%s) needs --kubeconfig with its ServiceAccount's credentials (Suite.ProgramKubeconfig)", prog.Name, prog.Args[0])
	case cp.KubeconfigPath:
		return fmt.Errorf("program %s (%s) must not run with the admin kubeconfig: use its ServiceAccount's (Suite.ProgramKubeconfig)", prog.Name, prog.Args[0])
	}
	return nil
}

// Program is one of the project's programs, run as a real process built from the working tree.
type Program struct {
	// Name identifies the process; it must be unique among the processes of its control plane.
	Name string
	// Package is the main package, relative to the repository root, such as "./cmd/scylla-operator".
	Package string
	// Args are the program's arguments.
	Args []string
	// Env holds extra KEY=VALUE pairs.
	Env []string
}

// currentSuite is the suite RunSuite started for this test binary.
var currentSuite *Suite

// RunSuite is the body of a suite's TestMain: it starts the suite, runs the tests and stops the suite, and
// returns the exit code for os.Exit.
//
//	func TestMain(m *testing.M) {
//		os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "smoke", InstallCRDs: true}))
//	}
func RunSuite(m *testing.M, opts SuiteOptions) int {
	start := time.Now()
	s, err := StartSuite(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: can't start suite %q: %v\n", opts.Name, err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: suite %q ready in %v; artifacts in %s\n", opts.Name, time.Since(start).Round(time.Millisecond), s.Dir)
	currentSuite = s
	code := m.Run()
	currentSuite = nil
	if err := s.checkProgramPermissions(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: suite %q: %v\n", opts.Name, err)
		code = 1
	}
	stopStart := time.Now()
	if err := s.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: can't stop suite %q cleanly: %v\n", opts.Name, err)
		if code == 0 {
			code = 1
		}
	}
	fmt.Fprintf(os.Stderr, "e2e: suite %q stopped in %v\n", opts.Name, time.Since(stopStart).Round(time.Millisecond))
	return code
}

// CurrentSuite returns the suite of this test binary; it fails the test if TestMain did not call RunSuite.
func CurrentSuite(t testing.TB) *Suite {
	t.Helper()
	if currentSuite == nil {
		t.Fatal("no e2e suite is running: the package's TestMain must call framework.RunSuite")
	}
	return currentSuite
}

// sanitizeName turns a test name into something usable in Kubernetes names and file names.
func sanitizeName(name string, maxLen int) string {
	var b strings.Builder
	lastDash := true
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			lastDash = false
		case !lastDash:
			b.WriteByte('-')
			lastDash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > maxLen {
		out = strings.Trim(out[:maxLen], "-")
	}
	if out == "" {
		out = "test"
	}
	return out
}
