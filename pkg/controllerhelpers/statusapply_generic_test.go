package controllerhelpers

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

type taskStatusApplier = StatusApplier[*scyllav1alpha1.ScyllaDBManagerTask, scyllav1alpha1.ScyllaDBManagerTaskStatus, scyllav1alpha1applyconfigurations.ScyllaDBManagerTaskStatusApplyConfiguration]

// applyRecorder records what a StatusApplier sends, written and enqueues.
type applyRecorder struct {
	applied  []string
	options  []metav1.ApplyOptions
	written  []string
	enqueued []string
	err      error
}

func (r *applyRecorder) AddAfter(key string, d time.Duration) {
	r.enqueued = append(r.enqueued, key+" after "+d.String())
}

// newTaskStatusApplier returns an applier of ScyllaDBManagerTask statuses that records into r; ownedTypes are its
// ConditionTypes.
func newTaskStatusApplier(r *applyRecorder, ownedTypes []string) *taskStatusApplier {
	return &taskStatusApplier{
		Kind:           "ScyllaDBManagerTask",
		FieldManager:   "test-manager",
		ConditionTypes: ownedTypes,
		Status: func(task *scyllav1alpha1.ScyllaDBManagerTask) *scyllav1alpha1.ScyllaDBManagerTaskStatus {
			return &task.Status
		},
		Conditions: func(status *scyllav1alpha1.ScyllaDBManagerTaskStatus) *[]metav1.Condition { return &status.Conditions },
		Apply: func(_ context.Context, task *scyllav1alpha1.ScyllaDBManagerTask, status *scyllav1alpha1applyconfigurations.ScyllaDBManagerTaskStatusApplyConfiguration, opts metav1.ApplyOptions) (*scyllav1alpha1.ScyllaDBManagerTask, error) {
			if r.err != nil {
				return nil, r.err
			}
			data, err := json.Marshal(status)
			if err != nil {
				return nil, err
			}
			r.applied = append(r.applied, string(data))
			r.options = append(r.options, opts)
			applied := task.DeepCopy()
			applied.ResourceVersion = "2"
			return applied, nil
		},
		Written: func(task *scyllav1alpha1.ScyllaDBManagerTask) {
			r.written = append(r.written, task.Namespace+"/"+task.Name+"@"+task.ResourceVersion)
		},
	}
}

func ownedTestCondition(condType string, status metav1.ConditionStatus) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: AsExpectedReason, ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
}

func taskWithStatus(status scyllav1alpha1.ScyllaDBManagerTaskStatus) *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "daily", UID: "uid", ResourceVersion: "1", Generation: 1},
		Status:     status,
	}
}

// mustJSON is status as the apply sends it.
func mustJSON(t *testing.T, status scyllav1alpha1.ScyllaDBManagerTaskStatus) string {
	t.Helper()
	data, err := json.Marshal(status)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestStatusApplierWritesOnlyWhatItOwnsAndOnlyWhenItChanged(t *testing.T) {
	t.Parallel()

	owned := []string{AvailableCondition, DegradedCondition}
	tt := []struct {
		name       string
		ownedTypes []string
		existing   scyllav1alpha1.ScyllaDBManagerTaskStatus
		desired    scyllav1alpha1.ScyllaDBManagerTaskStatus
		want       []scyllav1alpha1.ScyllaDBManagerTaskStatus
	}{
		{
			name: "an equal status writes nothing, whatever the order of its conditions and others' conditions",
			existing: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(1)),
				TaskID:             new("a"),
				Conditions: []metav1.Condition{
					ownedTestCondition(DegradedCondition, metav1.ConditionFalse),
					ownedTestCondition("ScyllaDBManagerRegistrationDegraded", metav1.ConditionTrue),
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
				},
			},
			ownedTypes: owned,
			desired: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(1)),
				TaskID:             new("a"),
				Conditions: []metav1.Condition{
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
					ownedTestCondition(DegradedCondition, metav1.ConditionFalse),
				},
			},
		},
		{
			name: "a changed field sends every owned field and owned condition, none of others",
			existing: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(1)),
				TaskID:             new("a"),
				Conditions: []metav1.Condition{
					ownedTestCondition("ScyllaDBManagerRegistrationDegraded", metav1.ConditionTrue),
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
				},
			},
			ownedTypes: owned,
			desired: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				ObservedGeneration: new(int64(1)),
				TaskID:             new("b"),
				Conditions: []metav1.Condition{
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
					ownedTestCondition("NotOwned", metav1.ConditionTrue),
				},
			},
			want: []scyllav1alpha1.ScyllaDBManagerTaskStatus{{
				ObservedGeneration: new(int64(1)),
				TaskID:             new("b"),
				Conditions:         []metav1.Condition{ownedTestCondition(AvailableCondition, metav1.ConditionTrue)},
			}},
		},
		{
			name: "an owned condition gone from the desired status is a change",
			existing: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
					ownedTestCondition(DegradedCondition, metav1.ConditionFalse),
				},
			},
			ownedTypes: owned,
			desired: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{ownedTestCondition(AvailableCondition, metav1.ConditionTrue)},
			},
			want: []scyllav1alpha1.ScyllaDBManagerTaskStatus{{
				Conditions: []metav1.Condition{ownedTestCondition(AvailableCondition, metav1.ConditionTrue)},
			}},
		},
		{
			name: "without condition types, the desired status's types are owned and others' conditions are not compared",
			existing: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{
					ownedTestCondition("Other", metav1.ConditionTrue),
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
				},
			},
			desired: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{ownedTestCondition(AvailableCondition, metav1.ConditionTrue)},
			},
		},
		{
			name: "without condition types, a changed condition sends all the desired conditions",
			existing: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{
					ownedTestCondition("Other", metav1.ConditionTrue),
					ownedTestCondition(AvailableCondition, metav1.ConditionFalse),
				},
			},
			desired: scyllav1alpha1.ScyllaDBManagerTaskStatus{
				Conditions: []metav1.Condition{
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
					ownedTestCondition("Mine", metav1.ConditionFalse),
				},
			},
			want: []scyllav1alpha1.ScyllaDBManagerTaskStatus{{
				Conditions: []metav1.Condition{
					ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
					ownedTestCondition("Mine", metav1.ConditionFalse),
				},
			}},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			r := &applyRecorder{}
			a := newTaskStatusApplier(r, tc.ownedTypes)
			task := taskWithStatus(tc.existing)
			desiredBefore := mustJSON(t, tc.desired)
			got, err := a.ApplyStatus(context.Background(), task, &tc.desired)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff(desiredBefore, mustJSON(t, tc.desired)); diff != "" {
				t.Errorf("the desired status changed (-before +after):\n%s", diff)
			}

			var want, wantWritten []string
			wantVersion := "1"
			for _, w := range tc.want {
				want = append(want, mustJSON(t, w))
				wantWritten = append(wantWritten, "ns/daily@2")
				wantVersion = "2"
			}
			if diff := cmp.Diff(want, r.applied); diff != "" {
				t.Errorf("unexpected applies (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantWritten, r.written); diff != "" {
				t.Errorf("unexpected objects told written (-want +got):\n%s", diff)
			}
			for _, opts := range r.options {
				if diff := cmp.Diff(metav1.ApplyOptions{FieldManager: "test-manager", Force: true}, opts); diff != "" {
					t.Errorf("unexpected apply options (-want +got):\n%s", diff)
				}
			}
			if got.ResourceVersion != wantVersion {
				t.Errorf("expected the object at resourceVersion %q returned, got %q", wantVersion, got.ResourceVersion)
			}
		})
	}
}

func TestStatusApplierReturnsTheApplyError(t *testing.T) {
	t.Parallel()

	r := &applyRecorder{err: errors.New("conflict")}
	a := newTaskStatusApplier(r, []string{AvailableCondition})
	task := taskWithStatus(scyllav1alpha1.ScyllaDBManagerTaskStatus{})
	got, err := a.ApplyStatus(context.Background(), task, &scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a")})
	if diff := cmp.Diff(`can't apply the status of ScyllaDBManagerTask "ns/daily": conflict`, errorString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	if got != task {
		t.Errorf("expected the object passed in back on error")
	}
	if len(r.written) != 0 {
		t.Errorf("expected nothing told written after a failed apply, got %q", r.written)
	}
}

func TestStatusApplierBatchesChangesNoOneWaitsFor(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &applyRecorder{}
	a := newTaskStatusApplier(r, []string{AvailableCondition})
	a.Batcher = NewStatusBatcherWithClock(5*time.Second, func() time.Time { return now })
	a.Queue = r
	// Only a new task ID is urgent here.
	a.Urgent = func(existing, status *scyllav1alpha1.ScyllaDBManagerTaskStatus) bool {
		return !cmp.Equal(existing.TaskID, status.TaskID)
	}

	task := taskWithStatus(scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a"), ErrorCount: new(int64(0))})
	steps := []struct {
		name         string
		status       scyllav1alpha1.ScyllaDBManagerTaskStatus
		advance      time.Duration
		wantApplies  int
		wantEnqueued []string
	}{
		{name: "a first write is not held back", status: scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a"), ErrorCount: new(int64(1))}, wantApplies: 1},
		{name: "a change within the period waits for its end", status: scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a"), ErrorCount: new(int64(2))}, advance: 2 * time.Second, wantApplies: 1, wantEnqueued: []string{"ns/daily after 3s"}},
		{name: "an urgent change is written at once", status: scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("b"), ErrorCount: new(int64(2))}, wantApplies: 2, wantEnqueued: []string{"ns/daily after 3s"}},
		{name: "a change once the period passed is written", status: scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("b"), ErrorCount: new(int64(3))}, advance: 5 * time.Second, wantApplies: 3, wantEnqueued: []string{"ns/daily after 3s"}},
	}
	for _, step := range steps {
		now = now.Add(step.advance)
		got, err := a.ApplyStatus(context.Background(), task, &step.status)
		if err != nil {
			t.Fatalf("%s: unexpected error: %v", step.name, err)
		}
		if len(r.applied) != step.wantApplies {
			t.Errorf("%s: expected %d applies, got %d", step.name, step.wantApplies, len(r.applied))
		}
		if diff := cmp.Diff(step.wantEnqueued, r.enqueued); diff != "" {
			t.Errorf("%s: unexpected enqueues (-want +got):\n%s", step.name, diff)
		}
		// The next sync reads the object as written, or as it was when nothing was.
		task = got.DeepCopy()
		if got.ResourceVersion != "1" {
			task.Status = *step.status.DeepCopy()
			task.ResourceVersion = "1"
		}
	}
}

func TestStatusApplierRejectsAnIncompleteApplier(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		change  func(a *taskStatusApplier)
		wantErr string
	}{
		{
			name:    "no field manager",
			change:  func(a *taskStatusApplier) { a.FieldManager = "" },
			wantErr: `can't apply the status of ScyllaDBManagerTask "ns/daily": the status applier lacks FieldManager`,
		},
		{
			name:    "no apply nor conditions",
			change:  func(a *taskStatusApplier) { a.Apply, a.Conditions = nil, nil },
			wantErr: `can't apply the status of ScyllaDBManagerTask "ns/daily": the status applier lacks Conditions, Apply`,
		},
		{
			name:    "a batcher without a queue and an urgency test",
			change:  func(a *taskStatusApplier) { a.Batcher = NewStatusBatcher(time.Second) },
			wantErr: `can't apply the status of ScyllaDBManagerTask "ns/daily": the status applier lacks Queue (with a Batcher), Urgent (with a Batcher)`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			r := &applyRecorder{}
			a := newTaskStatusApplier(r, []string{AvailableCondition})
			tc.change(a)
			_, err := a.ApplyStatus(context.Background(), taskWithStatus(scyllav1alpha1.ScyllaDBManagerTaskStatus{}), &scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a")})
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if len(r.applied) != 0 {
				t.Errorf("expected no apply, got %q", r.applied)
			}
		})
	}
}

func TestOwnedStatusKeepsOwnedConditionsInOrderAndLeavesTheInputAlone(t *testing.T) {
	t.Parallel()

	a := newTaskStatusApplier(&applyRecorder{}, []string{DegradedCondition, AvailableCondition})
	status := &scyllav1alpha1.ScyllaDBManagerTaskStatus{
		TaskID: new("a"),
		Conditions: []metav1.Condition{
			ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
			ownedTestCondition("Other", metav1.ConditionTrue),
			ownedTestCondition(DegradedCondition, metav1.ConditionFalse),
		},
	}
	before := mustJSON(t, *status)

	tt := []struct {
		name  string
		owned sets.Set[string]
		want  scyllav1alpha1.ScyllaDBManagerTaskStatus
	}{
		{
			name: "the applier's types",
			want: scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a"), Conditions: []metav1.Condition{
				ownedTestCondition(AvailableCondition, metav1.ConditionTrue),
				ownedTestCondition(DegradedCondition, metav1.ConditionFalse),
			}},
		},
		{
			name:  "the types asked for",
			owned: sets.New("Other"),
			want:  scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a"), Conditions: []metav1.Condition{ownedTestCondition("Other", metav1.ConditionTrue)}},
		},
		{
			name:  "no type owned leaves no conditions",
			owned: sets.New("Missing"),
			want:  scyllav1alpha1.ScyllaDBManagerTaskStatus{TaskID: new("a")},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			got := a.OwnedStatus(status, tc.owned)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("unexpected owned status (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(before, mustJSON(t, *status)); diff != "" {
		t.Errorf("the input status changed (-before +after):\n%s", diff)
	}
}
