package sidecar

import (
	"errors"
	"testing"
)

func TestRestartKeepsTheFirstReason(t *testing.T) {
	t.Parallel()
	r := NewRestart()
	if err := r.Reason(); err != nil {
		t.Fatalf("a new Restart has reason %v", err)
	}
	select {
	case <-r.Requested():
		t.Fatal("a new Restart is requested")
	default:
	}
	first, second := errors.New("first"), errors.New("second")
	r.Request(first)
	r.Request(second)
	if err := r.Reason(); err != first {
		t.Errorf("Reason() = %v, want %v", err, first)
	}
	<-r.Requested()
}
