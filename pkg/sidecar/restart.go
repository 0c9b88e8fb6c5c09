package sidecar

import (
	"fmt"
	"sync"
)

// Restart is a request to restart the node's container, made when an address the node runs with has changed: the
// sidecar computes addresses only at start. It is made at most once; the first reason stays.
type Restart struct {
	once      sync.Once
	lock      sync.Mutex
	reason    error
	requested chan struct{}
}

// NewRestart returns a Restart not yet requested.
func NewRestart() *Restart {
	return &Restart{requested: make(chan struct{})}
}

// Request asks for the restart, for reason; later requests are ignored.
func (r *Restart) Request(reason error) {
	r.once.Do(func() {
		r.lock.Lock()
		r.reason = reason
		r.lock.Unlock()
		close(r.requested)
	})
}

// Requested is closed once the restart is requested.
func (r *Restart) Requested() <-chan struct{} {
	return r.requested
}

// Reason is why the restart was requested, or nil.
func (r *Restart) Reason() error {
	r.lock.Lock()
	defer r.lock.Unlock()
	return r.reason
}

// restartError is what readiness and the sidecar's exit report for a restart.
func restartError(reason error) error {
	return fmt.Errorf("the node restarts to use its member Service's new address: %w", reason)
}
