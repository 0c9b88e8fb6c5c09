package controllerhelpers

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// DefaultStatusBatchPeriod is how long a status change that does not have to be written at once waits for others,
	// counted from the object's last status write, while few objects change.
	DefaultStatusBatchPeriod = 5 * time.Second
	// DefaultStatusWritesPerSecond is the rate of batched status writes a controller keeps under when many objects
	// change at once: the batch period grows with the number of objects written lately (see StatusBatcher).
	DefaultStatusWritesPerSecond = 4
	// DefaultMaxStatusBatchPeriod bounds the batch period however many objects change: a count shown by kubectl lags
	// by at most this long.
	DefaultMaxStatusBatchPeriod = 30 * time.Second
)

// StatusBatcher spaces out the status writes of each object of a controller, as kube-controller-manager's
// --endpoint-updates-batch-period does for Endpoints: a change of counts, versions or messages is written only once
// the batch period has passed since the object's last status write, together with every change made meanwhile, while
// a change clients wait for (UrgentStatusChange) is written at once. A controller asks Wait before writing a status
// that is not urgent, and when it must wait, enqueues the object again after that long instead of writing; it reports
// every write with Wrote.
//
// The batch period depends on load. It is the configured period while few objects change; when many do (hundreds of
// clusters created at once), it grows to (objects written within the maximum period) / (writes per second), up to the
// maximum period, so that each object's intermediate states merge into fewer writes while the API server is busiest,
// instead of every object writing every period. The zero period writes everything at once. A StatusBatcher is safe for
// concurrent use.
type StatusBatcher struct {
	period          time.Duration
	writesPerSecond float64
	maxPeriod       time.Duration
	now             func() time.Time

	lock sync.Mutex
	// lastWrites holds, by object key, when the object's status was last written, for the keys written less than the
	// longest period ago (older ones are dropped when asked about).
	lastWrites map[string]time.Time
}

// NewStatusBatcher returns a StatusBatcher of period (0: no batching) that grows the period under load
// (DefaultStatusWritesPerSecond, DefaultMaxStatusBatchPeriod).
func NewStatusBatcher(period time.Duration) *StatusBatcher {
	return NewStatusBatcherWithClock(period, time.Now).WithLoadLimit(DefaultStatusWritesPerSecond, DefaultMaxStatusBatchPeriod)
}

// NewStatusBatcherWithClock returns a StatusBatcher of fixed period that tells the time with now.
func NewStatusBatcherWithClock(period time.Duration, now func() time.Time) *StatusBatcher {
	return &StatusBatcher{period: period, maxPeriod: period, now: now, lastWrites: map[string]time.Time{}}
}

// WithLoadLimit makes the batch period grow so that batched writes stay under writesPerSecond, up to maxPeriod. It
// returns b.
func (b *StatusBatcher) WithLoadLimit(writesPerSecond float64, maxPeriod time.Duration) *StatusBatcher {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.writesPerSecond = writesPerSecond
	b.maxPeriod = max(maxPeriod, b.period)
	return b
}

// Wait returns how long the status write of the object key must wait; 0 when it may be written now.
func (b *StatusBatcher) Wait(key string) time.Duration {
	b.lock.Lock()
	defer b.lock.Unlock()
	now := b.now()
	b.dropOlderThanLocked(now, b.maxPeriod)
	last, ok := b.lastWrites[key]
	if !ok {
		return 0
	}
	return max(b.periodLocked()-now.Sub(last), 0)
}

// Period returns the batch period at the current load.
func (b *StatusBatcher) Period() time.Duration {
	b.lock.Lock()
	defer b.lock.Unlock()
	b.dropOlderThanLocked(b.now(), b.maxPeriod)
	return b.periodLocked()
}

// periodLocked returns the batch period for the objects in lastWrites, which holds only writes of the last maxPeriod.
func (b *StatusBatcher) periodLocked() time.Duration {
	if b.writesPerSecond <= 0 || b.maxPeriod <= b.period {
		return b.period
	}
	loaded := time.Duration(float64(len(b.lastWrites)) / b.writesPerSecond * float64(time.Second))
	return min(max(b.period, loaded), b.maxPeriod)
}

func (b *StatusBatcher) dropOlderThanLocked(now time.Time, age time.Duration) {
	for key, last := range b.lastWrites {
		if now.Sub(last) >= age {
			delete(b.lastWrites, key)
		}
	}
}

// Wrote records that the status of the object key was written now.
func (b *StatusBatcher) Wrote(key string) {
	if b.period <= 0 {
		return
	}
	b.lock.Lock()
	defer b.lock.Unlock()
	b.lastWrites[key] = b.now()
}

// Forget drops what the StatusBatcher knows of the object key, once it is gone.
func (b *StatusBatcher) Forget(key string) {
	b.lock.Lock()
	defer b.lock.Unlock()
	delete(b.lastWrites, key)
}

// UrgentStatusChange tells whether a status with observedGeneration and conditions differs from the existing one in
// what clients wait for (kubectl wait, rollout checks), which is written at once: a new observed generation, a
// condition of one of condTypes (the aggregated Available, Progressing and Degraded) becoming or ceasing to be True,
// or such a condition observing another generation. Neither a first observed generation nor a condition going from
// Unknown or nothing to False is: no one waits for them, and whatever does come with them (Progressing or Available
// turning True) is urgent on its own.
func UrgentStatusChange(existingGeneration, generation *int64, existing, conditions []metav1.Condition, condTypes ...string) bool {
	if existingGeneration != nil && (generation == nil || *existingGeneration != *generation) {
		return true
	}
	for _, condType := range condTypes {
		old, cur := meta.FindStatusCondition(existing, condType), meta.FindStatusCondition(conditions, condType)
		if isTrue(old) != isTrue(cur) || (old != nil && cur != nil && old.ObservedGeneration != cur.ObservedGeneration) {
			return true
		}
	}
	return false
}

func isTrue(c *metav1.Condition) bool {
	return c != nil && c.Status == metav1.ConditionTrue
}
