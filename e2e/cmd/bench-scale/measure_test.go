package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestProcReadersTakeTheFieldsTheKernelDocuments(t *testing.T) {
	t.Parallel()
	// The command name holds a space and a parenthesis, which must not shift the fields after it.
	stat := "4242 (kube api) server) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 12 0 100 0 0"
	if got, want := parseCPUSeconds(stat), 4.0; got != want {
		t.Errorf("parseCPUSeconds = %v, want %v", got, want)
	}
	status := "Name:\tscylla-operator\nVmPeak:\t  900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40000 kB\n"
	if got, want := parseVmHWMMiB(status), 50.0; got != want {
		t.Errorf("parseVmHWMMiB = %v, want %v", got, want)
	}
}

func TestSummarizeAuditCountsWritesStatusConflictsAndEventsByProgram(t *testing.T) {
	t.Parallel()
	ev := func(ua, verb, resource, sub string, code int32) auditv1.Event {
		return auditv1.Event{
			UserAgent:      ua,
			Verb:           verb,
			ObjectRef:      &auditv1.ObjectReference{Resource: resource, Subresource: sub},
			ResponseStatus: &metav1.Status{Code: code},
		}
	}
	op := "scylla-operator-operator/v1.0 (linux/amd64)"
	events := []auditv1.Event{
		ev(op, "create", "statefulsets", "", 201),
		ev(op, "update", "scyllaclusters", "status", 200),
		ev(op, "update", "scyllaclusters", "status", 409),
		ev(op, "create", "events", "", 201),
		ev(op, "update", "leases", "", 200),
		ev(op, "get", "statefulsets", "", 200),
		ev("kube-controller-manager/v1.33.0", "create", "pods", "", 201),
	}
	got := summarizeAudit(events, 2)
	want := WindowStats{
		Writes:           map[string]int{"operator": 3, "kube-controller-manager": 1},
		WritesPerCluster: map[string]float64{"operator": 1.5, "kube-controller-manager": 0.5},
		StatusWrites:     map[string]int{"operator": 2},
		Conflicts:        map[string]int{"operator": 1},
		Events:           map[string]int{"operator": 1},
		Requests: map[string]int{
			"operator create statefulsets":          1,
			"operator update scyllaclusters/status": 2,
			"operator create events":                1,
			"operator update leases":                1,
			"operator get statefulsets":             1,
			"kube-controller-manager create pods":   1,
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summarizeAudit (-want +got):\n%s", diff)
	}
}

func TestManagerWritesCountOnlyMethodsThatChangeState(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"GET clusters": 4, "POST clusters": 2, "PUT task": 1, "DELETE task": 1, "HEAD version": 3}
	if got, want := managerWrites(counts), 4; got != want {
		t.Errorf("managerWrites = %d, want %d", got, want)
	}
}
