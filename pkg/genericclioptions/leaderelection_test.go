package genericclioptions

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

func TestLeaderElectionValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*LeaderElection)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(*LeaderElection) {}},
		{name: "disabled skips checks", mutate: func(le *LeaderElection) { le.Enabled = false; le.LeaseName = "" }},
		{name: "empty lease name", mutate: func(le *LeaderElection) { le.LeaseName = "" }, wantErr: "--leader-election-lease-name must not be empty"},
		{name: "lease shorter than renew deadline", mutate: func(le *LeaderElection) { le.LeaseDuration = 5 * time.Second }, wantErr: "must be greater than --leader-election-renew-deadline"},
		{name: "renew deadline too close to retry period", mutate: func(le *LeaderElection) { le.RetryPeriod = 9 * time.Second }, wantErr: "times --leader-election-retry-period"},
		{name: "non-positive retry period", mutate: func(le *LeaderElection) { le.RetryPeriod = 0 }, wantErr: "--leader-election-retry-period must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			le := NewLeaderElection("lease")
			tc.mutate(&le)
			err := le.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

// Two replicas share one lease: only one runs at a time, and the other takes over once the first shuts down and
// releases the lease.
func TestLeaderElectionRunOneLeaderAtATime(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	newLE := func() LeaderElection {
		le := NewLeaderElection("test-lease")
		le.Namespace = "default"
		le.LeaseDuration = 2 * time.Second
		le.RenewDeadline = 1 * time.Second
		le.RetryPeriod = 100 * time.Millisecond
		return le
	}

	var running, maxRunning atomic.Int32
	work := func(ctx context.Context) {
		n := running.Add(1)
		for {
			m := maxRunning.Load()
			if n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		<-ctx.Done()
		running.Add(-1)
	}

	ctx1, cancel1 := context.WithCancel(context.Background())
	first := newLE()
	done1 := make(chan error, 1)
	go func() { done1 <- first.Run(ctx1, client, work) }()
	waitFor(t, func() bool { return running.Load() == 1 })

	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	second := newLE()
	secondStarted := make(chan struct{})
	done2 := make(chan error, 1)
	go func() {
		done2 <- second.Run(ctx2, client, func(ctx context.Context) { close(secondStarted); work(ctx) })
	}()

	select {
	case <-secondStarted:
		t.Fatal("the second replica led while the first held the lease")
	case <-time.After(500 * time.Millisecond):
	}

	cancel1()
	if err := <-done1; err != nil {
		t.Fatalf("a shutdown is not an error, got %v", err)
	}
	<-secondStarted
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("a shutdown is not an error, got %v", err)
	}
	if m := maxRunning.Load(); m != 1 {
		t.Errorf("%d replicas ran at once, want 1", m)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
