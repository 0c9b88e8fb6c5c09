package controllerhelpers

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func condition(condType string, status metav1.ConditionStatus, reason, message string, observedGeneration int64) metav1.Condition {
	return metav1.Condition{Type: condType, Status: status, Reason: reason, Message: message, ObservedGeneration: observedGeneration}
}

func TestAggregateCondition(t *testing.T) {
	t.Parallel()

	const generation = 3

	tt := []struct {
		name       string
		conditions []metav1.Condition
		condType   string
		want       metav1.Condition
		wantError  string
	}{
		{
			name: "all available",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerAvailable", metav1.ConditionTrue, "AsExpected", "", 3),
				condition("RackAvailable", metav1.ConditionTrue, "AsExpected", "", 3),
				condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "Waiting", "not this one", 3),
			},
			condType: AvailableCondition,
			want:     condition("Available", metav1.ConditionTrue, "AsExpected", "", 3),
		},
		{
			name: "one unavailable",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerAvailable", metav1.ConditionTrue, "AsExpected", "", 3),
				condition("RackAvailable", metav1.ConditionFalse, "RackDown", "rack a has no ready member", 3),
			},
			condType: AvailableCondition,
			want:     condition("Available", metav1.ConditionFalse, "RackDown", "RackAvailable: rack a has no ready member", 3),
		},
		{
			name: "unknown availability",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerAvailable", metav1.ConditionTrue, "AsExpected", "", 3),
				condition("RackAvailable", metav1.ConditionUnknown, "NoData", "no pods seen", 3),
			},
			condType: AvailableCondition,
			want:     condition("Available", metav1.ConditionUnknown, "NoData", "RackAvailable: no pods seen", 3),
		},
		{
			name: "a stale child does not make availability progress",
			conditions: []metav1.Condition{
				condition("RackAvailable", metav1.ConditionTrue, "AsExpected", "", 2),
			},
			condType: AvailableCondition,
			want:     condition("Available", metav1.ConditionTrue, "AsExpected", "", 3),
		},
		{
			name: "a stale child of unknown availability makes availability unknown",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerAvailable", metav1.ConditionTrue, "AsExpected", "", 3),
				condition("ManagerControllerAvailable", metav1.ConditionUnknown, "NotReported", "no word yet", 2),
			},
			condType: AvailableCondition,
			want:     condition("Available", metav1.ConditionUnknown, "NotReported", "ManagerControllerAvailable: no word yet", 3),
		},
		{
			name: "a stale child in an unknown state makes Degraded unknown",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("ManagerControllerDegraded", metav1.ConditionUnknown, "NotReported", "no word yet", 2),
			},
			condType: DegradedCondition,
			want:     condition("Degraded", metav1.ConditionUnknown, "NotReported", "ManagerControllerDegraded: no word yet", 3),
		},
		{
			name: "a stale child in an unknown state keeps Progressing True until it observes the generation",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("ManagerControllerProgressing", metav1.ConditionUnknown, "NotReported", "no word yet", 2),
			},
			condType: ProgressingCondition,
			want: condition("Progressing", metav1.ConditionTrue, "NotObserved",
				"ManagerControllerProgressing: observed generation 2, not 3 yet", 3),
		},
		{
			name: "nothing progressing",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("ServiceControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("Progressing", metav1.ConditionTrue, "Old", "the aggregate itself is not a child", 2),
			},
			condType: ProgressingCondition,
			want:     condition("Progressing", metav1.ConditionFalse, "AsExpected", "", 3),
		},
		{
			name: "several progressing, reasons deduplicated",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRollout", "rack a: 1/3 updated", 3),
				condition("ServiceControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("PDBControllerProgressing", metav1.ConditionTrue, "WaitingForRollout", "pdb", 3),
				condition("ConfigControllerProgressing", metav1.ConditionTrue, "Applying", "config", 3),
			},
			condType: ProgressingCondition,
			want: condition("Progressing", metav1.ConditionTrue, "WaitingForRollout,Applying",
				"StatefulSetControllerProgressing: rack a: 1/3 updated\nPDBControllerProgressing: pdb\nConfigControllerProgressing: config", 3),
		},
		{
			name: "a part that has not observed the current generation is progressing",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 3),
				condition("ManagerControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 2),
			},
			condType: ProgressingCondition,
			want: condition("Progressing", metav1.ConditionTrue, "NotObserved",
				"ManagerControllerProgressing: observed generation 2, not 3 yet", 3),
		},
		{
			name: "degraded",
			conditions: []metav1.Condition{
				condition("StatefulSetControllerDegraded", metav1.ConditionTrue, "Error", "can't update StatefulSet", 3),
				condition("ServiceControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 3),
			},
			condType: DegradedCondition,
			want:     condition("Degraded", metav1.ConditionTrue, "Error", "StatefulSetControllerDegraded: can't update StatefulSet", 3),
		},
		{
			name: "a stale degraded child still counts",
			conditions: []metav1.Condition{
				condition("ManagerControllerDegraded", metav1.ConditionTrue, "Error", "manager unreachable", 1),
			},
			condType: DegradedCondition,
			want:     condition("Degraded", metav1.ConditionTrue, "Error", "ManagerControllerDegraded: manager unreachable", 3),
		},
		{
			name:       "no children",
			conditions: []metav1.Condition{condition("Available", metav1.ConditionTrue, "AsExpected", "", 3)},
			condType:   AvailableCondition,
			wantError:  `can't aggregate conditions of type "Available": there are no conditions with that suffix`,
		},
		{
			name:      "unsupported type",
			condType:  "Ready",
			wantError: `can't aggregate conditions of type "Ready": only Available, Progressing and Degraded are aggregated`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := AggregateCondition(tc.conditions, tc.condType, generation)
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Fatalf("unexpected error (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetAggregatedConditionsKeepsTransitionTimesWhileStatusHolds(t *testing.T) {
	t.Parallel()

	longAgo := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	conditions := []metav1.Condition{
		condition("StatefulSetControllerAvailable", metav1.ConditionTrue, "AsExpected", "", 4),
		condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRollout", "rack a", 4),
		condition("StatefulSetControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 4),
		{Type: "Available", Status: metav1.ConditionTrue, Reason: "AsExpected", ObservedGeneration: 3, LastTransitionTime: longAgo},
		{Type: "Progressing", Status: metav1.ConditionFalse, Reason: "AsExpected", ObservedGeneration: 3, LastTransitionTime: longAgo},
	}

	if err := SetAggregatedConditions(&conditions, 4, AvailableCondition, ProgressingCondition, DegradedCondition); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	got := map[string]metav1.Condition{}
	for _, c := range conditions {
		got[c.Type] = c
	}
	if c := got["Available"]; c.LastTransitionTime != longAgo || c.ObservedGeneration != 4 || c.Status != metav1.ConditionTrue {
		t.Errorf("expected Available to stay True since %v at generation 4, got %+v", longAgo, c)
	}
	if c := got["Progressing"]; c.LastTransitionTime == longAgo || c.Status != metav1.ConditionTrue || c.Reason != "WaitingForRollout" {
		t.Errorf("expected Progressing to turn True now with reason WaitingForRollout, got %+v", c)
	}
	if c := got["Degraded"]; c.LastTransitionTime.IsZero() || c.Status != metav1.ConditionFalse {
		t.Errorf("expected a new Degraded False condition with a transition time, got %+v", c)
	}
	if len(conditions) != 6 {
		t.Errorf("expected 6 conditions, got %d", len(conditions))
	}
}

func TestSetAggregatedConditionsChangesNothingOnError(t *testing.T) {
	t.Parallel()

	conditions := []metav1.Condition{
		condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRollout", "rack a", 4),
	}
	want := append([]metav1.Condition(nil), conditions...)

	err := SetAggregatedConditions(&conditions, 4, ProgressingCondition, AvailableCondition)
	if want := `can't aggregate conditions of type "Available": there are no conditions with that suffix`; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if diff := cmp.Diff(want, conditions); diff != "" {
		t.Errorf("expected the conditions untouched (-want +got):\n%s", diff)
	}
}

func TestTruncateMessage(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		message string
		wantLen int
		wantEnd string
	}{
		{name: "short", message: "fine", wantLen: 4, wantEnd: "fine"},
		{name: "at the limit", message: strings.Repeat("a", maxConditionMessageLength), wantLen: maxConditionMessageLength, wantEnd: "aaa"},
		{name: "over the limit", message: strings.Repeat("a", maxConditionMessageLength+1), wantLen: maxConditionMessageLength, wantEnd: "a... (truncated)"},
		{
			name:    "never splits a multi-byte character",
			message: strings.Repeat("é", maxConditionMessageLength),
			wantLen: maxConditionMessageLength - 1,
			wantEnd: "é... (truncated)",
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got := truncateMessage(tc.message)
			if len(got) != tc.wantLen || !strings.HasSuffix(got, tc.wantEnd) {
				t.Errorf("expected %d bytes ending in %q, got %d bytes ending in %q", tc.wantLen, tc.wantEnd, len(got), got[max(0, len(got)-20):])
			}
		})
	}
}

func TestSetTransitionTimesKeepsTheTimeOfAConditionWhoseStatusHolds(t *testing.T) {
	t.Parallel()

	before := metav1.NewTime(time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC))
	now := metav1.NewTime(before.Add(time.Hour))
	withTime := func(c metav1.Condition, t metav1.Time) metav1.Condition {
		c.LastTransitionTime = t
		return c
	}

	tt := []struct {
		name       string
		existing   []metav1.Condition
		conditions []metav1.Condition
		want       []metav1.Condition
	}{
		{
			name:       "a new condition gets now",
			conditions: []metav1.Condition{condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1)},
			want:       []metav1.Condition{withTime(condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1), now)},
		},
		{
			name:       "a status that holds keeps its time, even when the reason and message change",
			existing:   []metav1.Condition{withTime(condition("Degraded", metav1.ConditionTrue, "Error", "a", 1), before)},
			conditions: []metav1.Condition{condition("Degraded", metav1.ConditionTrue, "Other", "b", 2)},
			want:       []metav1.Condition{withTime(condition("Degraded", metav1.ConditionTrue, "Other", "b", 2), before)},
		},
		{
			name:       "a status that changes gets now",
			existing:   []metav1.Condition{withTime(condition("Degraded", metav1.ConditionTrue, "Error", "a", 1), before)},
			conditions: []metav1.Condition{condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1)},
			want:       []metav1.Condition{withTime(condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1), now)},
		},
		{
			name:       "an existing condition without a time gets now",
			existing:   []metav1.Condition{condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1)},
			conditions: []metav1.Condition{condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1)},
			want:       []metav1.Condition{withTime(condition("Degraded", metav1.ConditionFalse, "AsExpected", "", 1), now)},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			SetTransitionTimes(tc.conditions, tc.existing, now)
			if diff := cmp.Diff(tc.want, tc.conditions); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
		})
	}
}
