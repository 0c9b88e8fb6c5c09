package controllerhelpers

import (
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestStatusBatcherSpacesWritesOfEachObject(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := NewStatusBatcherWithClock(5*time.Second, func() time.Time { return now })

	if wait := b.Wait("ns/a"); wait != 0 {
		t.Errorf("an object never written: expected no wait, got %v", wait)
	}
	b.Wrote("ns/a")
	now = now.Add(2 * time.Second)
	if wait := b.Wait("ns/a"); wait != 3*time.Second {
		t.Errorf("2s after a write: expected to wait 3s, got %v", wait)
	}
	if wait := b.Wait("ns/b"); wait != 0 {
		t.Errorf("another object: expected no wait, got %v", wait)
	}
	now = now.Add(3 * time.Second)
	if wait := b.Wait("ns/a"); wait != 0 {
		t.Errorf("a period after a write: expected no wait, got %v", wait)
	}
	if len(b.lastWrites) != 0 {
		t.Errorf("expected writes older than the period to be dropped, got %v", b.lastWrites)
	}

	b.Wrote("ns/a")
	b.Forget("ns/a")
	if wait := b.Wait("ns/a"); wait != 0 {
		t.Errorf("a forgotten object: expected no wait, got %v", wait)
	}
}

func TestStatusBatcherGrowsThePeriodUnderLoad(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := NewStatusBatcherWithClock(5*time.Second, func() time.Time { return now }).WithLoadLimit(4, 30*time.Second)

	write := func(n int) {
		for i := range n {
			b.Wrote(fmt.Sprintf("ns/%d", i))
		}
	}
	write(10)
	if period := b.Period(); period != 5*time.Second {
		t.Errorf("10 objects at 4 writes/s: expected the configured period of 5s, got %v", period)
	}
	write(100)
	if period := b.Period(); period != 25*time.Second {
		t.Errorf("100 objects at 4 writes/s: expected a period of 25s, got %v", period)
	}
	now = now.Add(10 * time.Second)
	if wait := b.Wait("ns/1"); wait != 15*time.Second {
		t.Errorf("10s after a write among 100 objects: expected to wait 15s, got %v", wait)
	}
	if wait := b.Wait("ns/other"); wait != 0 {
		t.Errorf("an object not written lately: expected no wait, got %v", wait)
	}
	write(1000)
	if period := b.Period(); period != 30*time.Second {
		t.Errorf("1000 objects: expected the maximum period of 30s, got %v", period)
	}

	// Writes age out: once the maximum period has passed, the load is gone.
	now = now.Add(30 * time.Second)
	b.Wrote("ns/1")
	if period := b.Period(); period != 5*time.Second {
		t.Errorf("one object written in the last 30s: expected the configured period of 5s, got %v", period)
	}
	if len(b.lastWrites) != 1 {
		t.Errorf("expected writes older than the maximum period to be dropped, got %d", len(b.lastWrites))
	}
}

func TestStatusBatcherOfZeroPeriodNeverWaits(t *testing.T) {
	t.Parallel()

	b := NewStatusBatcher(0)
	b.Wrote("ns/a")
	if wait := b.Wait("ns/a"); wait != 0 {
		t.Errorf("expected no wait, got %v", wait)
	}
}

func TestUrgentStatusChange(t *testing.T) {
	t.Parallel()

	condition := func(condType string, status metav1.ConditionStatus, generation int64, message string) metav1.Condition {
		return metav1.Condition{Type: condType, Status: status, ObservedGeneration: generation, Reason: "Reason", Message: message}
	}
	existing := []metav1.Condition{
		condition(AvailableCondition, metav1.ConditionFalse, 1, "0 of 3 nodes are available"),
		condition(ProgressingCondition, metav1.ConditionTrue, 1, "scaling up"),
		condition("StatefulSetControllerProgressing", metav1.ConditionTrue, 1, "scaling up"),
	}
	with := func(c metav1.Condition) []metav1.Condition {
		out := append([]metav1.Condition{}, existing...)
		for i := range out {
			if out[i].Type == c.Type {
				out[i] = c
				return out
			}
		}
		return append(out, c)
	}
	gen := func(g int64) *int64 { return &g }

	tt := []struct {
		name                           string
		existingGeneration, generation *int64
		conditions                     []metav1.Condition
		want                           bool
	}{
		{name: "nothing changes", existingGeneration: gen(1), generation: gen(1), conditions: existing, want: false},
		{name: "a message changes", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(AvailableCondition, metav1.ConditionFalse, 1, "1 of 3 nodes are available")), want: false},
		{name: "a condition that is not aggregated changes status", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition("StatefulSetControllerProgressing", metav1.ConditionFalse, 1, "")), want: false},
		{name: "the first observed generation", existingGeneration: nil, generation: gen(1), conditions: existing, want: false},
		{name: "a new observed generation", existingGeneration: gen(1), generation: gen(2), conditions: existing, want: true},
		{name: "Available turns True", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(AvailableCondition, metav1.ConditionTrue, 1, "")), want: true},
		{name: "Available observes a new generation", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(AvailableCondition, metav1.ConditionFalse, 2, "0 of 3 nodes are available")), want: true},
		{name: "Degraded appears False", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(DegradedCondition, metav1.ConditionFalse, 1, "")), want: false},
		{name: "Degraded appears True", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(DegradedCondition, metav1.ConditionTrue, 1, "")), want: true},
		{name: "Available goes from False to Unknown", existingGeneration: gen(1), generation: gen(1),
			conditions: with(condition(AvailableCondition, metav1.ConditionUnknown, 1, "")), want: false},
		{name: "Progressing goes", existingGeneration: gen(1), generation: gen(1), conditions: existing[:1], want: true},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := UrgentStatusChange(tc.existingGeneration, tc.generation, existing, tc.conditions, AvailableCondition, ProgressingCondition, DegradedCondition)
			if got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}
