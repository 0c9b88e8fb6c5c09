package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		data    string
		want    procStat
		wantErr bool
	}{
		{name: "a zombie", data: "42 (sh) Z 1 42 42 0 -1 4227084 0 0 0 0 0 0", want: procStat{pid: 42, command: "sh", state: 'Z', ppid: 1}},
		{
			name: "a command with spaces and parentheses ends at the last parenthesis",
			data: "7 (a) b (c)) S 3 7 7 0 -1\n",
			want: procStat{pid: 7, command: "a) b (c)", state: 'S', ppid: 3},
		},
		{name: "no command", data: "7 S 3", wantErr: true},
		{name: "no parent pid", data: "7 (sh) Z", wantErr: true},
		{name: "a parent pid that is no number", data: "7 (sh) Z x", wantErr: true},
		{name: "a pid that is no number", data: "x (sh) Z 1", wantErr: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseProcStat([]byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseProcStat(%q) error = %v, want error %v", tc.data, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(procStat{})); diff != "" {
				t.Errorf("parseProcStat(%q) (-want +got):\n%s", tc.data, diff)
			}
		})
	}
}

func TestZombieChildrenAreTheZombiesOfTheGivenParent(t *testing.T) {
	t.Parallel()
	proc := t.TempDir()
	for pid, stat := range map[string]string{
		"10": "10 (orphan) Z 1 10 10 0",
		"11": "11 (scylla) S 1 11 11 0",
		"12": "12 (other) Z 5 12 12 0",
		"13": "13 (garbage",
		"14": "14 (orphan 2) Z 1 14 14 0",
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(proc, pid, "stat"), stat)
	}
	// Not processes; 15 ended while it was listed.
	for _, dir := range []string{"self", "sys", "15"} {
		if err := os.MkdirAll(filepath.Join(proc, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := zombieChildren(proc, 1)
	want := []procStat{{pid: 10, command: "orphan", state: 'Z', ppid: 1}, {pid: 14, command: "orphan 2", state: 'Z', ppid: 1}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(procStat{})); diff != "" {
		t.Errorf("zombieChildren() (-want +got):\n%s", diff)
	}
	if err == nil || !strings.Contains(err.Error(), "can't parse the status of process 13") {
		t.Errorf("zombieChildren() error = %v, want one naming process 13", err)
	}
	if _, err := zombieChildren(filepath.Join(proc, "nope"), 1); err == nil {
		t.Error("zombieChildren() of a missing directory gave no error")
	}
}

// processState is the state letter of pid in /proc, or 0 once it is gone.
func processState(t *testing.T, pid int) byte {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseProcStat(data)
	if err != nil {
		t.Fatal(err)
	}
	return s.state
}

func waitForState(t *testing.T, pid int, state byte) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for processState(t, pid) != state {
		if time.Now().After(deadline) {
			t.Fatalf("process %d isn't in state %q after 30s, but %q", pid, state, processState(t, pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The reaper takes every zombie child of the test process but the one it is told of, so the tests that run it are
// not parallel: the other tests' children are the test process's too, and they run only once these have ended.

// TestOrphanReaperLeavesScyllaDBsStatusToOsExec has ScyllaDB's process exit and stay a zombie before os/exec waits
// for it, next to a zombie the reaper must take.
func TestOrphanReaperLeavesScyllaDBsStatusToOsExec(t *testing.T) {
	r := newOrphanReaper()
	scylla := exec.Command("/bin/sh", "-c", "exit 5")
	if err := r.startChild(scylla); err != nil {
		t.Fatal(err)
	}
	// Started without the reaper knowing it, as a process the sidecar inherits is.
	orphan := exec.Command("/bin/sh", "-c", "exit 0")
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	waitForState(t, scylla.Process.Pid, 'Z')
	waitForState(t, orphan.Process.Pid, 'Z')

	r.reap(context.Background())

	if state := processState(t, orphan.Process.Pid); state != 0 {
		t.Errorf("the orphan's zombie is still there (state %q)", state)
	}
	err := scylla.Wait()
	r.childWaited()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 5 {
		t.Errorf("ScyllaDB's Wait() = %v, want exit status 5", err)
	}
}

// TestRunReapsOrphansAndKeepsScyllaDBsExitCode runs the sidecar, as the subreaper PID 1 is, with an entrypoint that
// double-forks a process that exits while the entrypoint runs; the entrypoint exits 3 once that process's zombie is
// gone, 4 if it is still there after 10s.
func TestRunReapsOrphansAndKeepsScyllaDBsExitCode(t *testing.T) {
	e := newTestEnv(t)
	if adoptsOrphans() {
		t.Fatal("the test process, neither PID 1 nor a subreaper, is said to adopt orphans")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Registered before start's cleanup, so it runs after the sidecar stopped.
	t.Cleanup(func() {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0); err != nil {
			t.Error(err)
		}
	})
	n := datacenterNodes(1, 1, baseTime)[0]
	e.addNode(n)
	if !adoptsOrphans() {
		t.Error("a subreaper is said not to adopt orphans")
	}
	o := e.options(n, nil)
	o.reapOrphans = true
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	entrypoint := filepath.Join(t.TempDir(), "entrypoint.sh")
	writeTestFile(t, entrypoint, `#!/bin/sh
# The subshell exits at once, leaving the process it started to the nearest subreaper.
( /bin/sh -c 'echo $$ > "$ORPHAN_PID_FILE.tmp"; mv "$ORPHAN_PID_FILE.tmp" "$ORPHAN_PID_FILE"; exit 0' & )
i=0
while [ ! -s "$ORPHAN_PID_FILE" ]; do
	i=$((i+1)); [ $i -gt 1000 ] && exit 5
	sleep 0.01
done
pid=$(cat "$ORPHAN_PID_FILE")
# A zombie keeps its /proc entry until its parent waits for it.
i=0
while [ -e /proc/$pid ]; do
	i=$((i+1)); [ $i -gt 1000 ] && exit 4
	sleep 0.01
done
exit 3
`)
	if err := os.Chmod(entrypoint, 0o755); err != nil {
		t.Fatal(err)
	}
	o.ScyllaDBEntrypoint = entrypoint
	o.childEnv = append(o.childEnv, "ORPHAN_PID_FILE="+pidFile)
	rs := e.start(o)
	select {
	case <-rs.finished:
	case <-time.After(60 * time.Second):
		t.Fatal("Run() didn't return within 60s")
	}
	exitErr, ok := rs.runErr.(*ExitError)
	if !ok || exitErr.Code != 3 {
		t.Errorf("Run() = %v, want ScyllaDB's exit code 3 (4: the orphan's zombie stayed, 5: it never started)", rs.runErr)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if state := processState(t, pid); state == 'Z' {
		t.Errorf("the orphan %d is still a zombie", pid)
	}
}
