package sysctl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPath(t *testing.T) {
	tests := []struct {
		key     string
		want    string
		wantErr bool
	}{
		{key: "fs.aio-max-nr", want: "/proc/sys/fs/aio-max-nr"},
		{key: "fs/aio-max-nr", want: "/proc/sys/fs/aio-max-nr"},
		{key: "kernel.shmmax", want: "/proc/sys/kernel/shmmax"},
		{key: "net.ipv4.conf.eth0/100.forwarding", want: "/proc/sys/net/ipv4/conf/eth0.100/forwarding"},
		{key: "net/ipv4/conf/eth0.100/forwarding", want: "/proc/sys/net/ipv4/conf/eth0.100/forwarding"},
		{key: "vm", want: "/proc/sys/vm"},
		{key: "", wantErr: true},
		{key: "fs..aio-max-nr", wantErr: true},
		{key: ".fs", wantErr: true},
		{key: "fs.", wantErr: true},
		{key: "net/../../etc/passwd", wantErr: true},
		{key: "net/./ipv4", wantErr: true},
		{key: "net.ipv4.conf.*.rp_filter", want: "/proc/sys/net/ipv4/conf/*/rp_filter"},
		{key: "net.ipv4.conf.eth?.rp_filter", wantErr: true},
		{key: "fs.aio max", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			got, err := Path(ProcSysDir, tc.key)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("expected an ErrInvalid error, got %q, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Setting
		wantErr string
	}{
		{in: "fs.aio-max-nr=30000000", want: Setting{Key: "fs.aio-max-nr", Value: "30000000"}},
		{in: " net.ipv4.ip_local_port_range = 1024 65000 ", want: Setting{Key: "net.ipv4.ip_local_port_range", Value: "1024 65000"}},
		{in: "kernel.core_pattern=|/bin/false=x", want: Setting{Key: "kernel.core_pattern", Value: "|/bin/false=x"}},
		{in: "fs.aio-max-nr", wantErr: `invalid sysctl "fs.aio-max-nr": must be key=value, e.g. fs.aio-max-nr=30000000`},
		{in: "fs.aio-max-nr=", wantErr: `invalid sysctl "fs.aio-max-nr=": must be key=value, e.g. fs.aio-max-nr=30000000`},
		{in: "=1", wantErr: "invalid sysctl: the key is empty"},
		{in: "net.ipv4.conf.*.rp_filter=1", want: Setting{Key: "net.ipv4.conf.*.rp_filter", Value: "1"}},
		{in: "fs.[a]=1", wantErr: `invalid sysctl key "fs.[a]": must be names of letters, digits and '_', '-', '+', ':', '@', '*' separated by '.' or '/', e.g. fs.aio-max-nr`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if len(tc.wantErr) != 0 {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("expected error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("expected %#v, got %#v", tc.want, got)
			}
		})
	}
}

func TestParseAllNamesTheInvalidSetting(t *testing.T) {
	_, err := ParseAll([]string{"fs.aio-max-nr=1", "vm.swappiness"})
	if err == nil || err.Error() != `sysctl 1: invalid sysctl "vm.swappiness": must be key=value, e.g. fs.aio-max-nr=30000000` {
		t.Fatalf("unexpected error: %v", err)
	}
}

// procSys makes a directory laid out as /proc/sys with the given parameters' values.
func procSys(t *testing.T, values map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, v := range values {
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSet(t *testing.T) {
	dir := procSys(t, map[string]string{
		"fs/aio-max-nr":                     "65536",
		"net/ipv4/ip_local_port_range":      "1024\t65000",
		"net/ipv4/conf/eth0.100/forwarding": "0",
	})
	settings := []Setting{
		{Key: "fs.aio-max-nr", Value: "30000000"},
		{Key: "net.ipv4.ip_local_port_range", Value: "1024 65000"},
		{Key: "net.ipv4.conf.eth0/100.forwarding", Value: "1"},
	}
	got, err := Set(dir, settings)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Setting: settings[0], Parameter: "fs.aio-max-nr", Previous: "65536", Written: true},
		// The kernel prints the range with a tab: the same value, nothing to write.
		{Setting: settings[1], Parameter: "net.ipv4.ip_local_port_range", Previous: "1024\t65000", Written: false},
		{Setting: settings[2], Parameter: "net.ipv4.conf.eth0/100.forwarding", Previous: "0", Written: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected results (-want +got):\n%s", diff)
	}
	for rel, v := range map[string]string{
		"fs/aio-max-nr":                     "30000000",
		"net/ipv4/ip_local_port_range":      "1024\t65000\n",
		"net/ipv4/conf/eth0.100/forwarding": "1",
	} {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != v {
			t.Errorf("%s: expected %q, got %q", rel, v, b)
		}
	}
}

func TestSetAlreadySetNeedsNoWriteAccess(t *testing.T) {
	dir := procSys(t, map[string]string{"fs/aio-max-nr": "30000000"})
	if err := os.Chmod(filepath.Join(dir, "fs", "aio-max-nr"), 0o444); err != nil {
		t.Fatal(err)
	}
	got, err := Set(dir, []Setting{{Key: "fs.aio-max-nr", Value: "30000000"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Written {
		t.Errorf("expected one setting left unwritten, got %#v", got)
	}
}

func TestSetStopsAtTheFirstFailure(t *testing.T) {
	dir := procSys(t, map[string]string{"fs/aio-max-nr": "65536", "vm/swappiness": "60"})
	// A parameter that can't be read (tests may run as root, whom file modes do not stop): a directory.
	if err := os.MkdirAll(filepath.Join(dir, "fs", "file-max"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := Set(dir, []Setting{
		{Key: "fs.aio-max-nr", Value: "30000000"},
		{Key: "fs.file-max", Value: "200"},
		{Key: "vm.swappiness", Value: "1"},
	})
	if err == nil || !strings.HasPrefix(err.Error(), "can't read kernel parameter fs.file-max: ") {
		t.Fatalf("expected fs.file-max's read error, got %v", err)
	}
	if len(got) != 1 || got[0].Setting.Key != "fs.aio-max-nr" || !got[0].Written {
		t.Errorf("expected the first setting done and reported, got %#v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "vm", "swappiness")); string(b) != "60\n" {
		t.Errorf("expected vm.swappiness untouched, got %q", b)
	}
}

func TestSetSkipsParametersTheKernelDoesNotHave(t *testing.T) {
	dir := procSys(t, map[string]string{"fs/aio-max-nr": "65536"})
	settings := []Setting{
		{Key: "fs.no-such-parameter", Value: "1"},
		{Key: "net.ipv4.conf.*.rp_filter", Value: "1"},
		{Key: "fs.aio-max-nr", Value: "30000000"},
	}
	got, err := Set(dir, settings)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Setting: settings[0], Parameter: "fs.no-such-parameter", Missing: true},
		{Setting: settings[1], Parameter: "net.ipv4.conf.*.rp_filter", Missing: true},
		{Setting: settings[2], Parameter: "fs.aio-max-nr", Previous: "65536", Written: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected results (-want +got):\n%s", diff)
	}
}

func TestSetAPatternSetsEveryParameterItMatches(t *testing.T) {
	dir := procSys(t, map[string]string{
		"net/ipv4/conf/all/rp_filter":      "0",
		"net/ipv4/conf/eth0/rp_filter":     "1",
		"net/ipv4/conf/eth0.100/rp_filter": "0",
		"net/ipv4/conf/eth0/forwarding":    "0",
	})
	s := Setting{Key: "net.ipv4.conf.*.rp_filter", Value: "1"}
	// A pattern that matches the directories grouping parameters, and one that matches nothing but them.
	all := Setting{Key: "net.ipv4.conf.eth0.*", Value: "1"}
	dirs := Setting{Key: "net.ipv4.*", Value: "1"}
	got, err := Set(dir, []Setting{s, dirs})
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{
		{Setting: s, Parameter: "net/ipv4/conf/all/rp_filter", Previous: "0", Written: true},
		{Setting: s, Parameter: "net/ipv4/conf/eth0/rp_filter", Previous: "1"},
		{Setting: s, Parameter: "net/ipv4/conf/eth0.100/rp_filter", Previous: "0", Written: true},
		{Setting: dirs, Parameter: "net.ipv4.*", Missing: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected results (-want +got):\n%s", diff)
	}
	got, err = Set(dir, []Setting{all})
	if err != nil {
		t.Fatal(err)
	}
	want = []Result{
		{Setting: all, Parameter: "net/ipv4/conf/eth0/forwarding", Previous: "0", Written: true},
		{Setting: all, Parameter: "net/ipv4/conf/eth0/rp_filter", Previous: "1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected results of %s (-want +got):\n%s", all.Key, diff)
	}

}
