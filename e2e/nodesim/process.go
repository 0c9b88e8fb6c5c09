package nodesim

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// containerProcess is one run of a simulated container: the sidecar and, through it, the fake ScyllaDB. Like a
// container, it is a process group that goes away as a whole.
type containerProcess struct {
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	// exit is set before done is closed.
	exit exitInfo
}

// processSpec is what startContainerProcess runs.
type processSpec struct {
	Path string
	Args []string
	// Env is the whole environment; nothing is inherited.
	Env []string
	// Dir is the working directory.
	Dir string
	// LogPath receives stdout and stderr, appended across restarts.
	LogPath string
}

// processStarter starts container processes; tests replace it.
type processStarter func(spec processSpec) (runningProcess, error)

// runningProcess is a started container process.
type runningProcess interface {
	// PID is the process ID of the sidecar, which is also the process group ID.
	PID() int
	// StartedAt is when it started.
	StartedAt() time.Time
	// Done is closed once the process has exited and its group is gone.
	Done() <-chan struct{}
	// Exit is how it exited; valid once Done is closed.
	Exit() exitInfo
	// Stop sends SIGTERM to the sidecar, which forwards it to ScyllaDB, and kills the whole group after grace.
	Stop(grace time.Duration) error
}

var _ runningProcess = &containerProcess{}

// startContainerProcess starts spec in a new process group, killed if the simulator's thread dies.
func startContainerProcess(spec processSpec) (runningProcess, error) {
	logFile, err := os.OpenFile(spec.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("can't open the container log: %w", err)
	}
	fmt.Fprintf(logFile, "===== %s: starting %s %q =====\n", time.Now().Format(time.RFC3339Nano), spec.Path, spec.Args)
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = spec.Env
	cmd.Dir = spec.Dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("can't start %s: %w", spec.Path, err)
	}
	p := &containerProcess{cmd: cmd, started: time.Now(), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		code := cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		// When the container's main process ends, the container ends: nothing of the group survives it.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		p.exit = exitInfo{Code: code, StartedAt: p.started, FinishedAt: time.Now()}
		fmt.Fprintf(logFile, "===== %s: exited with code %d =====\n", time.Now().Format(time.RFC3339Nano), code)
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

func (p *containerProcess) PID() int              { return p.cmd.Process.Pid }
func (p *containerProcess) StartedAt() time.Time  { return p.started }
func (p *containerProcess) Done() <-chan struct{} { return p.done }
func (p *containerProcess) Exit() exitInfo        { return p.exit }

func (p *containerProcess) Stop(grace time.Duration) error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("can't send SIGTERM to the sidecar (pid %d): %w", p.PID(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := syscall.Kill(-p.PID(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("can't kill the process group %d: %w", p.PID(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("the sidecar (pid %d) did not exit after SIGKILL", p.PID())
	}
}
