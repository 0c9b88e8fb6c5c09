package sidecar

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
	"k8s.io/klog/v2"
)

// orphanReapPeriod is how often the reaper looks for zombies without a SIGCHLD: a backstop, since every zombie the
// sidecar inherits sends one.
const orphanReapPeriod = time.Minute

// adoptsOrphans reports whether processes orphaned below the sidecar become its children: it is PID 1 of its PID
// namespace (the ScyllaDB container's command; the Pod shares no process namespace) or a child subreaper.
func adoptsOrphans() bool {
	if os.Getpid() == 1 {
		return true
	}
	var subreaper int32
	if err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(&subreaper)), 0, 0, 0); err != nil {
		return false
	}
	return subreaper != 0
}

// orphanReaper waits for the processes that ScyllaDB's entrypoint starts and that outlive their parent: the kernel
// re-parents them to the sidecar, and nothing else would collect their exit status, so their zombies would fill the
// process table for the container's life. It never waits for the ScyllaDB process itself, whose status os/exec
// collects: it skips that pid, and it doesn't look while the process is being started and its pid isn't known yet.
// It takes every other zombie child, so the sidecar must start no other process.
type orphanReaper struct {
	procDir string
	self    int
	period  time.Duration

	// mu is held while looking and while ScyllaDB starts.
	mu sync.Mutex
	// child is the pid of ScyllaDB's process, which os/exec waits for; 0 when none runs.
	child int
}

func newOrphanReaper() *orphanReaper {
	return &orphanReaper{procDir: "/proc", self: os.Getpid(), period: orphanReapPeriod}
}

// run reaps the zombies there are, then again at every SIGCHLD and every period, until ctx is done.
func (r *orphanReaper) run(ctx context.Context) {
	// A channel of its own: SIGCHLD is the sidecar's business, never forwarded to ScyllaDB.
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, syscall.SIGCHLD)
	defer signal.Stop(sigchld)
	ticker := time.NewTicker(r.period)
	defer ticker.Stop()
	for {
		r.reap(ctx)
		select {
		case <-ctx.Done():
			return
		case <-sigchld:
		case <-ticker.C:
		}
	}
}

// startChild starts cmd, which os/exec waits for. While it starts, nothing is reaped: a child that exited before its
// pid is known would look like an orphan.
func (r *orphanReaper) startChild(cmd *exec.Cmd) error {
	if r == nil {
		return cmd.Start()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	r.child = cmd.Process.Pid
	return nil
}

// childWaited tells the reaper that os/exec has collected the child's status: its pid may be reused by an orphan.
func (r *orphanReaper) childWaited() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.child = 0
}

// reap waits for every zombie child but ScyllaDB's process, without blocking.
func (r *orphanReaper) reap(ctx context.Context) {
	logger := klog.FromContext(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	zombies, err := zombieChildren(r.procDir, r.self)
	if err != nil {
		logger.Error(err, "Can't look at every process for orphans to reap")
	}
	for _, z := range zombies {
		if z.pid == r.child {
			continue
		}
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(z.pid, &status, syscall.WNOHANG, nil)
		if err != nil || pid != z.pid {
			// Gone already: another look reaped it.
			logger.V(4).Info("An orphaned process's zombie was gone before it was reaped", "pid", z.pid, "err", err)
			continue
		}
		logger.V(2).Info("Reaped an orphaned process", "pid", z.pid, "command", z.command, "code", waitStatusCode(status))
	}
}

// procStat is what the reaper reads of /proc/<pid>/stat.
type procStat struct {
	pid     int
	command string
	state   byte
	ppid    int
}

// parseProcStat parses the start of /proc/<pid>/stat: "pid (comm) state ppid ...". comm may hold spaces and
// parentheses, so it ends at the last ')'.
func parseProcStat(data []byte) (procStat, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 1 || end < open {
		return procStat{}, fmt.Errorf("no (command) in %q", data)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return procStat{}, fmt.Errorf("bad pid in %q: %w", data, err)
	}
	fields := bytes.Fields(data[end+1:])
	if len(fields) < 2 || len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("no state and parent pid in %q", data)
	}
	ppid, err := strconv.Atoi(string(fields[1]))
	if err != nil {
		return procStat{}, fmt.Errorf("bad parent pid in %q: %w", data, err)
	}
	return procStat{pid: pid, command: string(data[open+1 : end]), state: fields[0][0], ppid: ppid}, nil
}

// zombieChildren lists the zombies (state Z) whose parent is ppid, from procDir (/proc). A process it can't read is
// left out and reported in the error, which comes with the zombies it found.
func zombieChildren(procDir string, ppid int) ([]procStat, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("can't list processes: %w", err)
	}
	var zombies []procStat
	var errs []error
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			// The process ended and was reaped meanwhile.
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("can't read the status of process %s: %w", e.Name(), err))
			continue
		}
		s, err := parseProcStat(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("can't parse the status of process %s: %w", e.Name(), err))
			continue
		}
		if s.state == 'Z' && s.ppid == ppid {
			zombies = append(zombies, s)
		}
	}
	return zombies, errors.Join(errs...)
}
