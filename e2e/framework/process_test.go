package framework

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestProcessStop(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name   string
		script string
	}{
		{name: "exits on SIGTERM", script: "echo started; sleep 600 & wait"},
		{name: "is killed when it ignores SIGTERM", script: "trap '' TERM; echo started; while :; do sleep 0.05; done"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logPath := filepath.Join(t.TempDir(), "p.log")
			p, err := StartProcess(ProcessSpec{Name: "sh", Path: "/bin/sh", Args: []string{"-c", tc.script}, LogPath: logPath, Env: []string{"X=1"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := WaitFor(t.Context(), time.Minute, func(context.Context) (bool, error) {
				return strings.Contains(FileTail(logPath, 1), "started"), nil
			}); err != nil {
				t.Fatalf("process did not start: %v", err)
			}
			if exited, _ := p.Exited(); exited {
				t.Fatal("process exited before Stop")
			}
			if err := p.Stop(200 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if exited, _ := p.Exited(); !exited {
				t.Fatal("process still runs after Stop")
			}
		})
	}
}

func TestStartProcessRejectsIncompleteSpec(t *testing.T) {
	t.Parallel()
	if _, err := StartProcess(ProcessSpec{Name: "x", Path: "/bin/true"}); err == nil {
		t.Fatal("expected an error for a spec without a log path")
	}
	if _, err := StartProcess(ProcessSpec{Name: "x", Path: "/does/not/exist", LogPath: filepath.Join(t.TempDir(), "l")}); err == nil {
		t.Fatal("expected an error for a missing executable")
	}
}

func TestChildEnvDropsEtcdVariables(t *testing.T) {
	t.Parallel()
	got := childEnv([]string{"PATH=/bin", "ETCD_NAME=x", "HOME=/root"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/root" {
		t.Errorf("unexpected environment %v", got)
	}
}
