package remotekubernetescluster

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestUpdateStatusWritesNothingForTheStatusTheObjectHasInAnyOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()
	stored := f.stored()
	status := stored.Status.DeepCopy()
	sortConditions(status.Conditions)
	// The API server keeps the conditions in an order of its own.
	slices.Reverse(stored.Status.Conditions)

	if err := f.controller.updateStatus(t.Context(), stored, status); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("an identical status was written (-want +got):\n%s", diff)
	}

	// A changed message is written, though no condition changed status.
	status.Conditions[0].Message = "changed"
	if err := f.controller.updateStatus(t.Context(), stored, status); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply remotekubernetesclusters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

func TestCalculateStatusKeepsTransitionTimesWhileAStatusHolds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newRKC(), kubeconfigSecret(t, testServer))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.recache()

	// An hour later the server is unreachable: Available and Degraded change, so do their times; the rest keep theirs.
	f.advance(time.Hour)
	f.remotes.setUnreachable(testServer, true)
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"apply remotekubernetesclusters/status"}, f.writes()); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
	got := map[string]time.Time{}
	for _, c := range f.stored().Status.Conditions {
		got[c.Type] = c.LastTransitionTime.Time
	}
	later := testNow.Add(time.Hour)
	want := map[string]time.Time{
		"Available":                  later,
		"Progressing":                testNow,
		"Degraded":                   later,
		"KubeconfigDegraded":         testNow,
		"ClientHealthcheckAvailable": later,
		"ClientHealthcheckDegraded":  later,
		"FinalizerProgressing":       testNow,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected transition times (-want +got):\n%s", diff)
	}
}
