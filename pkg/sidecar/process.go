package sidecar

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"

	"k8s.io/klog/v2"
)

// ExitError is returned by Run when ScyllaDB exited unsuccessfully; the sidecar exits with Code.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("ScyllaDB exited with code %d", e.Code)
}

// exitCode is the process's exit status, or 128 plus the signal that killed it, as a shell reports it.
func exitCode(state *os.ProcessState) int {
	if ws, ok := state.Sys().(syscall.WaitStatus); ok {
		return waitStatusCode(ws)
	}
	return state.ExitCode()
}

// waitStatusCode is the exit status in ws, or 128 plus the signal that killed the process.
func waitStatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// runChild starts cmd, forwards every signal from signals to it, sends it SIGTERM when ctx is done, and returns its
// exit code once it exits (and its output is read, for at most cmd.WaitDelay once it exited). reaper, when not nil,
// is told which process os/exec waits for, so that it leaves it alone.
func runChild(ctx context.Context, cmd *exec.Cmd, signals <-chan os.Signal, reaper *orphanReaper) (int, error) {
	logger := klog.FromContext(ctx)
	if err := reaper.startChild(cmd); err != nil {
		return 0, fmt.Errorf("can't start ScyllaDB %q: %w", cmd.Path, err)
	}
	logger.Info("Started ScyllaDB", "pid", cmd.Process.Pid, "path", cmd.Path, "args", redactArgs(cmd.Args[1:]))
	waitErr := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		reaper.childWaited()
		waitErr <- err
	}()

	done := ctx.Done()
	for {
		select {
		case sig := <-signals:
			logger.Info("Forwarding a signal to ScyllaDB", "signal", sig)
			if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
				logger.Error(err, "Can't forward a signal to ScyllaDB", "signal", sig)
			}
		case <-done:
			done = nil
			logger.Info("Stopping ScyllaDB")
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
				logger.Error(err, "Can't stop ScyllaDB")
			}
		case err := <-waitErr:
			var exitErr *exec.ExitError
			// ErrWaitDelay: ScyllaDB exited, but processes it started held its output open for longer than
			// cmd.WaitDelay; its exit status is known all the same.
			if err != nil && !errors.As(err, &exitErr) && !errors.Is(err, exec.ErrWaitDelay) {
				return 0, fmt.Errorf("can't wait for ScyllaDB: %w", err)
			}
			code := exitCode(cmd.ProcessState)
			logger.Info("ScyllaDB exited", "code", code)
			return code, nil
		}
	}
}

// sensitiveOptionWords mark an option whose value may be a secret: users can pass any ScyllaDB option, such as
// --auth-superuser-salted-password or --ldap-bind-passwd, in spec.scyllaArgs. "pass" covers password and passwd.
var sensitiveOptionWords = []string{"pass", "secret", "token", "credential", "key"}

// redactArgs returns args for logging, with the values of options whose names look sensitive replaced by
// "REDACTED", whether the value is attached (--name=value) or the next argument.
func redactArgs(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		name, hasValue := optionName(out[i])
		if !slices.ContainsFunc(sensitiveOptionWords, func(w string) bool { return strings.Contains(strings.ToLower(name), w) }) {
			continue
		}
		switch {
		case hasValue:
			out[i] = out[i][:strings.Index(out[i], "=")+1] + "REDACTED"
		case i+1 < len(out) && !strings.HasPrefix(out[i+1], "-"):
			out[i+1] = "REDACTED"
			i++
		}
	}
	return out
}
