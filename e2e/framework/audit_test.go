package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const auditLines = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete","verb":"create","userAgent":"e2e-test/TestX","objectRef":{"resource":"statefulsets","namespace":"ns1","name":"s"},"responseStatus":{"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseStarted","verb":"watch","userAgent":"op/v1 (linux/amd64)","objectRef":{"resource":"pods"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a2","stage":"ResponseComplete","verb":"watch","userAgent":"op/v1 (linux/amd64)","objectRef":{"resource":"pods"},"responseStatus":{"code":200}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a3","stage":"ResponseComplete","verb":"update","userAgent":"op/v1 (linux/amd64)","objectRef":{"resource":"statefulsets","namespace":"ns1","name":"s","subresource":"status"},"responseStatus":{"code":409}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a4","stage":"ResponseComplete","verb":"patch","userAgent":"e2e-test/TestX","objectRef":{"resource":"services","namespace":"ns2","name":"lb"},"responseStatus":{"code":200}}
`

func TestAuditLogCounts(t *testing.T) {
	t.Parallel()

	dir := t.TempDir()
	log := &AuditLog{Path: filepath.Join(dir, "audit.log")}
	// The last line is being written: no newline yet.
	partial := `{"kind":"Event","auditID":"a5","verb":"delete"`
	if err := os.WriteFile(log.Path, []byte(auditLines+partial), 0o644); err != nil {
		t.Fatal(err)
	}
	events, err := log.EventsSince(AuditMark{})
	if err != nil {
		t.Fatal(err)
	}

	tt := []struct {
		name    string
		filters []AuditFilter
		want    RequestCounts
	}{
		{
			name: "all requests, a watch counted once",
			want: RequestCounts{
				{UserAgent: "e2e-test/TestX", Verb: "create"}:      1,
				{UserAgent: "e2e-test/TestX", Verb: "patch"}:       1,
				{UserAgent: "op/v1 (linux/amd64)", Verb: "watch"}:  1,
				{UserAgent: "op/v1 (linux/amd64)", Verb: "update"}: 1,
			},
		},
		{
			name:    "writes of a user agent prefix",
			filters: []AuditFilter{Writes(), UserAgentPrefix("op/")},
			want:    RequestCounts{{UserAgent: "op/v1 (linux/amd64)", Verb: "update"}: 1},
		},
		{
			name:    "successful writes only",
			filters: []AuditFilter{Writes(), Succeeded()},
			want: RequestCounts{
				{UserAgent: "e2e-test/TestX", Verb: "create"}: 1,
				{UserAgent: "e2e-test/TestX", Verb: "patch"}:  1,
			},
		},
		{
			name:    "exact user agent in a namespace",
			filters: []AuditFilter{UserAgent("e2e-test/TestX"), InNamespace("ns1")},
			want:    RequestCounts{{UserAgent: "e2e-test/TestX", Verb: "create"}: 1},
		},
		{
			name:    "status subresource",
			filters: []AuditFilter{OnResource("statefulsets", "status")},
			want:    RequestCounts{{UserAgent: "op/v1 (linux/amd64)", Verb: "update"}: 1},
		},
		{
			name:    "nothing matches",
			filters: []AuditFilter{UserAgent("nobody")},
			want:    RequestCounts{},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := CountRequests(events, tc.filters...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected counts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAuditLogMarkSkipsEarlierEvents(t *testing.T) {
	t.Parallel()

	log := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.log")}
	mark, err := log.Mark()
	if err != nil {
		t.Fatalf("marking a log that does not exist yet: %v", err)
	}
	lines := strings.SplitAfter(auditLines, "\n")
	if err := os.WriteFile(log.Path, []byte(lines[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	mark2, err := log.Mark()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log.Path, []byte(lines[0]+lines[4]), 0o644); err != nil {
		t.Fatal(err)
	}

	all, err := log.EventsSince(mark)
	if err != nil {
		t.Fatal(err)
	}
	later, err := log.EventsSince(mark2)
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{len(all), len(later)}; !cmp.Equal(got, []int{2, 1}) {
		t.Fatalf("expected 2 events in all and 1 after the mark, got %v", got)
	}
	if later[0].AuditID != "a4" {
		t.Errorf("expected event a4 after the mark, got %s", later[0].AuditID)
	}
}

func TestAuditLogRejectsGarbage(t *testing.T) {
	t.Parallel()

	log := &AuditLog{Path: filepath.Join(t.TempDir(), "audit.log")}
	if err := os.WriteFile(log.Path, []byte("not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := log.EventsSince(AuditMark{}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("expected a decoding error naming line 1, got %v", err)
	}
}
