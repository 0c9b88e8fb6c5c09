package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
)

// waitForFile polls until path exists: the child wrote it once its trap was set.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestRunChildExitCodes(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name   string
		script string
		// Once the child wrote its ready file, signal is sent through the signal channel, or the context is
		// cancelled when cancel is set.
		signal   os.Signal
		cancel   bool
		wantCode int
	}{
		{name: "success", script: "exit 0", wantCode: 0},
		{name: "failure code is kept", script: "exit 3", wantCode: 3},
		{
			name:     "signals are forwarded",
			script:   `trap 'exit 7' USR1; touch "$READY"; while :; do sleep 0.01; done`,
			signal:   syscall.SIGUSR1,
			wantCode: 7,
		},
		{
			// SIGUSR2, not SIGHUP: nohup and some CI runners start processes with SIGHUP ignored, and a shell can't
			// undo an ignored signal.
			name:     "a child killed by a forwarded signal reports 128+signal",
			script:   `touch "$READY"; while :; do sleep 0.01; done`,
			signal:   syscall.SIGUSR2,
			wantCode: 128 + int(syscall.SIGUSR2),
		},
		{
			name:     "cancelling sends SIGTERM",
			script:   `trap 'exit 42' TERM; touch "$READY"; while :; do sleep 0.01; done`,
			cancel:   true,
			wantCode: 42,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ready := filepath.Join(t.TempDir(), "ready")
			cmd := exec.Command("/bin/sh", "-c", tc.script)
			cmd.Env = append(os.Environ(), "READY="+ready)
			signals := make(chan os.Signal, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.signal != nil || tc.cancel {
				go func() {
					waitForFile(t, ready)
					if tc.cancel {
						cancel()
						return
					}
					signals <- tc.signal
				}()
			}
			code, err := runChild(ctx, cmd, signals, nil)
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.wantCode {
				t.Errorf("exit code = %d, want %d", code, tc.wantCode)
			}
		})
	}
}

func TestRunChildReportsAMissingProgram(t *testing.T) {
	t.Parallel()
	_, err := runChild(context.Background(), exec.Command(filepath.Join(t.TempDir(), "nope")), nil, nil)
	if err == nil {
		t.Error("expected an error for a missing program")
	}
}

// TestRunExitsWithScyllaDBsCode runs the sidecar with a fake ScyllaDB that crashes on start.
func TestRunExitsWithScyllaDBsCode(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	n := datacenterNodes(1, 1, baseTime)[0]
	e.addNode(n)
	o := e.options(n, nil)
	o.childEnv = append(o.childEnv, "FAKE_SCYLLADB_EXIT_CODE=5")
	rs := e.start(o)
	<-rs.finished
	exitErr, ok := rs.runErr.(*ExitError)
	if !ok || exitErr.Code != 5 {
		t.Errorf("Run() = %v, want ExitError{5}", rs.runErr)
	}
}

func TestRunChildLogsNoSecretArguments(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx := klog.NewContext(context.Background(), textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logs))))
	// ScyllaDB's LDAP role manager takes its bind password as ldap_bind_passwd.
	cmd := exec.Command("/bin/true", "--smp=2", "--auth-superuser-salted-password=s3cr3t-hash", "--client-token", "t0k3n-value",
		"--SECRET_key", "k3y-value", "--ldap-bind-passwd=b1nd-pa55", "--ldap_bind_passwd", "b1nd-pa55-again", "--developer-mode=1")
	if code, err := runChild(ctx, cmd, nil, nil); err != nil || code != 0 {
		t.Fatalf("runChild() = %d, %v", code, err)
	}
	for _, secret := range []string{"s3cr3t-hash", "t0k3n-value", "k3y-value", "b1nd-pa55"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the logs contain %q:\n%s", secret, logs.String())
		}
	}
	want := `args=["--smp=2","--auth-superuser-salted-password=REDACTED","--client-token","REDACTED","--SECRET_key","REDACTED",` +
		`"--ldap-bind-passwd=REDACTED","--ldap_bind_passwd","REDACTED","--developer-mode=1"]`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("the logs lack %s:\n%s", want, logs.String())
	}
}

// TestRunExitsWhenScyllaDBExitsWhileItsDescendantsHoldItsOutput runs the sidecar with an entrypoint that leaves a
// process behind holding its output open, as an image entrypoint that dies before the daemons it started does: the
// sidecar still exits with the entrypoint's code instead of waiting for the last holder of its output.
func TestRunExitsWhenScyllaDBExitsWhileItsDescendantsHoldItsOutput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		code     int
		wantCode int
	}{
		{name: "a failure's code is kept", code: 3, wantCode: 3},
		{name: "a success stays one", code: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			n := datacenterNodes(1, 1, baseTime)[0]
			e.addNode(n)
			o := e.options(n, nil)
			pidFile := filepath.Join(t.TempDir(), "descendant.pid")
			entrypoint := filepath.Join(t.TempDir(), "entrypoint.sh")
			writeTestFile(t, entrypoint, fmt.Sprintf("#!/bin/sh\nsleep 120 &\necho $! > \"$DESCENDANT_PID_FILE\"\nexit %d\n", tc.code))
			if err := os.Chmod(entrypoint, 0o755); err != nil {
				t.Fatal(err)
			}
			o.ScyllaDBEntrypoint = entrypoint
			o.childEnv = append(o.childEnv, "DESCENDANT_PID_FILE="+pidFile)
			rs := e.start(o)
			// Registered after start's, so it runs first: a failing run doesn't wait for the descendant.
			t.Cleanup(func() {
				data, err := os.ReadFile(pidFile)
				if err != nil {
					return
				}
				if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			select {
			case <-rs.finished:
			case <-time.After(60 * time.Second):
				t.Fatal("Run() didn't return within 60s of ScyllaDB's exit: it waits for the process holding ScyllaDB's output")
			}
			var gotCode int
			if exitErr, ok := rs.runErr.(*ExitError); ok {
				gotCode = exitErr.Code
			} else if rs.runErr != nil {
				t.Fatalf("Run() = %v, want exit code %d", rs.runErr, tc.wantCode)
			}
			if gotCode != tc.wantCode {
				t.Errorf("exit code = %d, want %d", gotCode, tc.wantCode)
			}
		})
	}
}

// TestSignalWatchHandsOnEverySignalItDoesNotActOn checks the hand-over from the sidecar's own signal handling to
// ScyllaDB's: once stop returns, a terminating signal has either cancelled the context or is still there for
// ScyllaDB, never taken without effect.
func TestSignalWatchHandsOnEverySignalItDoesNotActOn(t *testing.T) {
	t.Parallel()
	for i := range 2000 {
		signals := make(chan os.Signal, 1)
		ctx, stop := contextCancelledBySignal(context.Background(), signals)
		signals <- syscall.SIGTERM
		stop()
		cancelled, kept := ctx.Err() != nil, len(signals) == 1
		// Nothing may act on the signal after stop returned.
		time.Sleep(50 * time.Microsecond)
		if cancelled != (ctx.Err() != nil) || kept != (len(signals) == 1) {
			t.Fatalf("attempt %d: the signal was handled after stop returned", i)
		}
		if cancelled == kept {
			t.Fatalf("attempt %d: when stop returned, cancelled = %v and signal kept = %v; want exactly one", i, cancelled, kept)
		}
	}
}
