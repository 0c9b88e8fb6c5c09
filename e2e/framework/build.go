package framework

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
)

// modulePath is the root module of the working tree the framework runs in.
const modulePath = "github.com/scyllakube/scylla-operator"

// RepoRoot returns the root of the scylla-operator working tree: the nearest directory at or above the current
// one whose go.mod declares the root module.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("can't get working directory: %w", err)
	}
	for {
		if isRootModule(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("can't find the %s module above the working directory", modulePath)
		}
		dir = parent
	}
}

func isRootModule(goMod string) bool {
	f, err := os.Open(goMod)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == modulePath
		}
	}
	return false
}

// EnsureControlPlaneBinaries runs hack/build-control-plane.sh, which returns at once when the binaries are up to
// date and otherwise builds them (about 8 minutes on 2 cores, once per machine), and returns the directory that
// holds kcp, its component symlinks and kwok. The script's output goes to logPath.
func EnsureControlPlaneBinaries(ctx context.Context, repoRoot, logPath string) (string, error) {
	binDir := os.Getenv("KCP_BIN_DIR")
	if binDir == "" {
		binDir = filepath.Join(repoRoot, "_output", "bin")
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return "", fmt.Errorf("can't create log directory: %w", err)
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return "", fmt.Errorf("can't create build log: %w", err)
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "hack", "build-control-plane.sh"))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "KCP_BIN_DIR="+binDir)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("can't build the control plane binaries: %w\n%s", err, FileTail(logPath, 30))
	}
	return binDir, nil
}

// GoBuilder builds main packages of the working tree, each once per builder.
type GoBuilder struct {
	// RepoRoot is the root of the working tree; packages are relative to it.
	RepoRoot string
	// OutDir receives the binaries.
	OutDir string

	mu     sync.Mutex
	builds map[string]*goBuild
}

type goBuild struct {
	once sync.Once
	path string
	err  error
}

// NewGoBuilder returns a builder that puts binaries into outDir.
func NewGoBuilder(repoRoot, outDir string) *GoBuilder {
	return &GoBuilder{RepoRoot: repoRoot, OutDir: outDir, builds: map[string]*goBuild{}}
}

// Build compiles the main package pkg (such as "./cmd/scylla-operator") and returns the binary's path. Concurrent
// and repeated calls for one package share a single build.
func (b *GoBuilder) Build(ctx context.Context, pkg string) (string, error) {
	if !strings.HasPrefix(pkg, "./") {
		return "", fmt.Errorf("package %q must be a path relative to the repository root, starting with ./", pkg)
	}
	pkg = path.Clean(pkg)
	b.mu.Lock()
	build, ok := b.builds[pkg]
	if !ok {
		for other := range b.builds {
			if path.Base(other) == path.Base(pkg) {
				b.mu.Unlock()
				return "", fmt.Errorf("can't build %s: its binary name clashes with %s", pkg, other)
			}
		}
		build = &goBuild{}
		b.builds[pkg] = build
	}
	b.mu.Unlock()

	build.once.Do(func() {
		if err := os.MkdirAll(b.OutDir, 0o755); err != nil {
			build.err = fmt.Errorf("can't create %s: %w", b.OutDir, err)
			return
		}
		out := filepath.Join(b.OutDir, path.Base(pkg))
		cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./"+pkg)
		cmd.Dir = b.RepoRoot
		var output bytes.Buffer
		cmd.Stdout = &output
		cmd.Stderr = &output
		if err := cmd.Run(); err != nil {
			build.err = fmt.Errorf("can't build %s: %w\n%s", pkg, err, output.String())
			return
		}
		build.path = out
	})
	return build.path, build.err
}
