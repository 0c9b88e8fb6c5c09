package framework

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// ProcessSpec describes a program to run as a child process.
type ProcessSpec struct {
	// Name identifies the process in logs, PID files and error messages.
	Name string
	// Path is the executable. A symlink is run as is, so a multi-call binary sees the link's name as argv[0].
	Path string
	// Args are the arguments after argv[0].
	Args []string
	// Env holds extra KEY=VALUE pairs added to the environment of the current process.
	Env []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// LogPath receives the process's stdout and stderr. It is truncated on start.
	LogPath string
}

// Process is a running child process whose output goes to a log file.
type Process struct {
	// Name is ProcessSpec.Name.
	Name string
	// LogPath is where the process logs.
	LogPath string

	cmd     *exec.Cmd
	logFile *os.File
	done    chan struct{}
	waitErr error
}

// StartProcess starts spec. The child gets its own process group, so a Ctrl-C in the terminal reaches only the
// supervisor, which then stops children in order; and it is killed if the thread that started it dies, so a
// crashed supervisor leaves nothing behind.
func StartProcess(spec ProcessSpec) (*Process, error) {
	if spec.Name == "" || spec.Path == "" || spec.LogPath == "" {
		return nil, fmt.Errorf("process spec needs a name, a path and a log path, got %+v", spec)
	}
	logFile, err := os.Create(spec.LogPath)
	if err != nil {
		return nil, fmt.Errorf("can't create log file for %s: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(childEnv(os.Environ()), spec.Env...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("can't start %s (%s): %w", spec.Name, spec.Path, err)
	}
	p := &Process{Name: spec.Name, LogPath: spec.LogPath, cmd: cmd, logFile: logFile, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		_ = logFile.Close()
		close(p.done)
	}()
	return p, nil
}

// childEnv drops variables that would change a child's behaviour behind its flags: etcd reads every ETCD_*
// variable as a flag.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "ETCD_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// PID returns the process ID.
func (p *Process) PID() int {
	return p.cmd.Process.Pid
}

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} {
	return p.done
}

// Exited reports whether the process has exited and, if so, how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM, waits up to grace for the process to exit, then sends SIGKILL. It returns an error only if
// the process does not go away.
func (p *Process) Stop(grace time.Duration) error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("can't send SIGTERM to %s (pid %d): %w", p.Name, p.PID(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("can't kill %s (pid %d): %w", p.Name, p.PID(), err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.Name, p.PID())
	}
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	return FileTail(p.LogPath, n)
}

// Describe returns a one-line summary: name, PID, whether it runs, and the log path.
func (p *Process) Describe() string {
	state := "running"
	if exited, err := p.Exited(); exited {
		state = fmt.Sprintf("exited (%v)", err)
	}
	return fmt.Sprintf("%s (pid %d, %s, log %s)", p.Name, p.PID(), state, p.LogPath)
}

// FileTail returns the last n lines of a file, or a note saying why it can't.
func FileTail(path string, n int) string {
	const maxRead = 256 << 10
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(can't read %s: %v)", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(can't stat %s: %v)", path, err)
	}
	offset := info.Size() - maxRead
	if offset < 0 {
		offset = 0
	}
	data, err := io.ReadAll(io.NewSectionReader(f, offset, info.Size()-offset))
	if err != nil {
		return fmt.Sprintf("(can't read %s: %v)", path, err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// formatLogTail frames the tail of a process's log for an error message.
func formatLogTail(p *Process, n int) string {
	return fmt.Sprintf("----- last %d lines of %s -----\n%s\n----- end of %s -----", n, p.LogPath, p.LogTail(n), p.Name)
}
