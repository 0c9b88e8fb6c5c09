package operator

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

func TestSysctlCommand(t *testing.T) {
	t.Parallel()

	newProcSys := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "fs"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, v := range map[string]string{"aio-max-nr": "65536\n", "file-max": "100\n"} {
			if err := os.WriteFile(filepath.Join(dir, "fs", name), []byte(v), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs(append([]string{"sysctl"}, args...))
		err := cmd.Execute()
		return out.String(), err
	}

	t.Run("sets each parameter and reports it", func(t *testing.T) {
		t.Parallel()
		dir := newProcSys(t)
		out, err := run("--proc-sys-dir="+dir, "fs.aio-max-nr=30000000", "fs.file-max = 100")
		if err != nil {
			t.Fatal(err)
		}
		if want := "fs.aio-max-nr = 30000000 (was 65536)\nfs.file-max = 100 (already)\n"; out != want {
			t.Errorf("expected output %q, got %q", want, out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "fs", "aio-max-nr")); string(b) != "30000000" {
			t.Errorf("expected fs.aio-max-nr written, got %q", b)
		}
	})

	t.Run("an invalid setting is refused before anything is written", func(t *testing.T) {
		t.Parallel()
		dir := newProcSys(t)
		_, err := run("--proc-sys-dir="+dir, "fs.aio-max-nr=30000000", "fs.file-max")
		if err == nil || err.Error() != `sysctl 1: invalid sysctl "fs.file-max": must be key=value, e.g. fs.aio-max-nr=30000000` {
			t.Fatalf("unexpected error: %v", err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "fs", "aio-max-nr")); string(b) != "65536\n" {
			t.Errorf("expected nothing written, got %q", b)
		}
	})

	t.Run("a parameter the kernel does not have is skipped", func(t *testing.T) {
		t.Parallel()
		dir := newProcSys(t)
		out, err := run("--proc-sys-dir="+dir, "fs.no-such=1", "fs.aio-max-nr=30000000")
		if err != nil {
			t.Fatal(err)
		}
		if want := "fs.no-such: no such kernel parameter, skipped\nfs.aio-max-nr = 30000000 (was 65536)\n"; out != want {
			t.Errorf("expected output %q, got %q", want, out)
		}
	})

	t.Run("a parameter that can't be read fails the command", func(t *testing.T) {
		t.Parallel()
		dir := newProcSys(t)
		if err := os.MkdirAll(filepath.Join(dir, "fs", "broken"), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := run("--proc-sys-dir="+dir, "fs.broken=1"); err == nil {
			t.Fatal("expected an error")
		}
	})

	t.Run("no setting is refused", func(t *testing.T) {
		t.Parallel()
		if _, err := run(); err == nil {
			t.Fatal("expected an error")
		}
	})
}
