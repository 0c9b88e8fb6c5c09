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
		ev("kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/abc/statefulset-controller", "create", "pods", "", 201),
		ev("kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/abc/statefulset-controller", "create", "events", "", 201),
		ev("kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/abc/statefulset-controller", "get", "pods", "", 200),
		ev("kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/abc/disruption-controller", "update", "poddisruptionbudgets", "status", 409),
	}
	got := summarizeAudit(events, 2)
	want := WindowStats{
		Writes:           map[string]int{"operator": 3, "kube-controller-manager": 2},
		WritesPerCluster: map[string]float64{"operator": 1.5, "kube-controller-manager": 1},
		StatusWrites:     map[string]int{"operator": 2, "kube-controller-manager": 1},
		Conflicts:        map[string]int{"operator": 1, "kube-controller-manager": 1},
		Events:           map[string]int{"operator": 1, "kube-controller-manager": 1},
		Requests: map[string]int{
			"operator create statefulsets":          1,
			"operator update scyllaclusters/status": 2,
			"operator create events":                1,
			"operator update leases":                1,
			"operator get statefulsets":             1,
			"kube-controller-manager create pods":   1,
			"kube-controller-manager create events": 1,
			"kube-controller-manager get pods":      1,

			"kube-controller-manager update poddisruptionbudgets/status": 1,
		},
		// Events count against a controller's rate limit like any write.
		ControllerManagerWrites: map[string]int{"statefulset-controller": 2, "disruption-controller": 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("summarizeAudit (-want +got):\n%s", diff)
	}
}

func TestFormatControllerManagerWritesSortsByCountAndNamesTheFloor(t *testing.T) {
	t.Parallel()
	writes := map[string]int{"disruption-controller": 700, "statefulset-controller": 2013, "endpoint-controller": 700}
	want := "    2013  statefulset-controller (floor: 1531)\n     700  disruption-controller (floor: 0)\n     700  endpoint-controller (floor: 0)\n"
	if got := formatControllerManagerWrites(writes, map[string]int{"statefulset-controller": 1531}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := formatControllerManagerWrites(map[string]int{"statefulset-controller": 3}, nil), "       3  statefulset-controller\n"; got != want {
		t.Errorf("without a floor: got %q, want %q", got, want)
	}
}

func TestManagerWritesCountOnlyMethodsThatChangeState(t *testing.T) {
	t.Parallel()
	counts := map[string]int{"GET clusters": 4, "POST clusters": 2, "PUT task": 1, "DELETE task": 1, "HEAD version": 3}
	if got, want := managerWrites(counts), 4; got != want {
		t.Errorf("managerWrites = %d, want %d", got, want)
	}
}
