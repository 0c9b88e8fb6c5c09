package framework

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// PollInterval is how often Poll evaluates its condition.
const PollInterval = 100 * time.Millisecond

// Condition reports whether what a test waits for holds. An error does not stop the polling: it says why the
// condition does not hold yet and is reported if the wait times out. Return StopPolling(err) to give up at once.
type Condition func(ctx context.Context) (done bool, err error)

// stopPollingError makes Poll give up.
type stopPollingError struct{ err error }

func (e *stopPollingError) Error() string { return e.err.Error() }
func (e *stopPollingError) Unwrap() error { return e.err }

// StopPolling wraps err so that Poll returns it at once instead of trying again.
func StopPolling(err error) error {
	return &stopPollingError{err: err}
}

// Poll evaluates cond right away and then every PollInterval until it holds, it returns StopPolling, or ctx ends.
// On timeout the error includes the condition's last error.
func Poll(ctx context.Context, cond Condition) error {
	ticker := time.NewTicker(PollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		done, err := cond(ctx)
		if done {
			return nil
		}
		var stop *stopPollingError
		if errors.As(err, &stop) {
			return stop.err
		}
		// Once ctx has ended, the condition's error is usually just that; keep the reason from before.
		if err != nil && ctx.Err() == nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("%w; last reason: %v", ctx.Err(), lastErr)
			}
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// WaitFor polls cond for at most timeout.
func WaitFor(ctx context.Context, timeout time.Duration, cond Condition) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return Poll(ctx, cond)
}
