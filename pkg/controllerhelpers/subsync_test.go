package controllerhelpers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var cmpIgnoreTransitionTime = cmpopts.IgnoreFields(metav1.Condition{}, "LastTransitionTime")

func TestSubSyncConditions(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name            string
		subSyncName     string
		progressing     []metav1.Condition
		err             error
		wantProgressing metav1.Condition
		wantDegraded    metav1.Condition
		wantError       string
	}{
		{
			name:            "done",
			subSyncName:     "StatefulSetController",
			wantProgressing: condition("StatefulSetControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 7),
			wantDegraded:    condition("StatefulSetControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 7),
		},
		{
			name:        "waiting",
			subSyncName: "StatefulSetController",
			progressing: []metav1.Condition{
				{Type: "StatefulSetControllerProgressing", Reason: "WaitingForRollout", Message: "rack a: 1/3 updated"},
				{Type: "StatefulSetControllerProgressing", Reason: "WaitingForRollout", Message: "rack b: 0/3 updated"},
			},
			wantProgressing: condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRollout",
				"rack a: 1/3 updated\nrack b: 0/3 updated", 7),
			wantDegraded: condition("StatefulSetControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 7),
		},
		{
			name:        "failed while waiting",
			subSyncName: "StatefulSetController",
			progressing: []metav1.Condition{
				{Type: "StatefulSetControllerProgressing", Reason: "WaitingForRecreation", Message: "rack a is being deleted"},
			},
			err: errors.New(`can't update StatefulSet "scylla/basic-a": forbidden`),
			wantProgressing: condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRecreation",
				"rack a is being deleted", 7),
			wantDegraded: condition("StatefulSetControllerDegraded", metav1.ConditionTrue, "Error",
				`can't update StatefulSet "scylla/basic-a": forbidden`, 7),
		},
		{
			name:        "invalid progressing reason",
			subSyncName: "StatefulSetController",
			progressing: []metav1.Condition{{Type: "X", Reason: "waiting for rollout"}},
			wantError:   `can't make the conditions of sub-sync "StatefulSetController": progressing condition "X" has invalid reason "waiting for rollout"`,
		},
		{
			name:        "empty progressing reason",
			subSyncName: "StatefulSetController",
			progressing: []metav1.Condition{{Type: "X"}},
			wantError:   `can't make the conditions of sub-sync "StatefulSetController": progressing condition "X" has invalid reason ""`,
		},
		{
			name:      "no name",
			wantError: "can't make sub-sync conditions: the sub-sync has no name",
		},
		{
			name:        "name that makes an invalid condition type",
			subSyncName: "StatefulSet Controller",
			wantError:   `can't make the conditions of sub-sync "StatefulSet Controller": invalid condition type: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			progressing, degraded, err := SubSyncConditions(tc.subSyncName, 7, tc.progressing, tc.err)
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Fatalf("unexpected error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantProgressing, progressing); diff != "" {
				t.Errorf("unexpected progressing condition (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDegraded, degraded); diff != "" {
				t.Errorf("unexpected degraded condition (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunSubSyncsRunsEveryPartAndAggregatesErrors(t *testing.T) {
	t.Parallel()

	var ran []string
	subSync := func(name string, progressing []metav1.Condition, err error) SubSync {
		return SubSync{Name: name, Sync: func(context.Context) ([]metav1.Condition, error) {
			ran = append(ran, name)
			return progressing, err
		}}
	}

	conditions, err := RunSubSyncs(t.Context(), 2,
		subSync("ServiceController", nil, errors.New("services broke")),
		subSync("StatefulSetController", []metav1.Condition{{Type: "StatefulSetControllerProgressing", Reason: "WaitingForRollout", Message: "rack a"}}, nil),
		subSync("PDBController", nil, errors.New("pdb broke")),
	)

	if want := "[ServiceController: services broke, PDBController: pdb broke]"; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if diff := cmp.Diff([]string{"ServiceController", "StatefulSetController", "PDBController"}, ran); diff != "" {
		t.Errorf("unexpected sub-syncs run (-want +got):\n%s", diff)
	}
	want := []metav1.Condition{
		condition("ServiceControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 2),
		condition("ServiceControllerDegraded", metav1.ConditionTrue, "Error", "services broke", 2),
		condition("StatefulSetControllerProgressing", metav1.ConditionTrue, "WaitingForRollout", "rack a", 2),
		condition("StatefulSetControllerDegraded", metav1.ConditionFalse, "AsExpected", "", 2),
		condition("PDBControllerProgressing", metav1.ConditionFalse, "AsExpected", "", 2),
		condition("PDBControllerDegraded", metav1.ConditionTrue, "Error", "pdb broke", 2),
	}
	if diff := cmp.Diff(want, conditions); diff != "" {
		t.Errorf("unexpected conditions (-want +got):\n%s", diff)
	}

	// The sub-sync conditions aggregate into the top-level ones.
	if err := SetAggregatedConditions(&conditions, 2, ProgressingCondition, DegradedCondition); err != nil {
		t.Fatalf("unexpected aggregation error: %v", err)
	}
	wantAggregated := []metav1.Condition{
		condition("Progressing", metav1.ConditionTrue, "WaitingForRollout", "StatefulSetControllerProgressing: rack a", 2),
		condition("Degraded", metav1.ConditionTrue, "Error", "ServiceControllerDegraded: services broke\nPDBControllerDegraded: pdb broke", 2),
	}
	if diff := cmp.Diff(wantAggregated, conditions[len(conditions)-2:], cmpIgnoreTransitionTime); diff != "" {
		t.Errorf("unexpected aggregated conditions (-want +got):\n%s", diff)
	}
}

func TestRunSubSyncsRejectsSubSyncsWithoutFunction(t *testing.T) {
	t.Parallel()

	ran := false
	_, err := RunSubSyncs(t.Context(), 1,
		SubSync{Name: "First", Sync: func(context.Context) ([]metav1.Condition, error) { ran = true; return nil, nil }},
		SubSync{Name: "Second"},
	)
	if want := `can't run sub-sync "Second": it has no Sync function`; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if ran {
		t.Error("expected no sub-sync to run")
	}
}
