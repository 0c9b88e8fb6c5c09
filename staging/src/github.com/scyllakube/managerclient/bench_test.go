package managerclient

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkListTasks decodes a list of a thousand tasks in the server's form, cron quirk included, through the
// whole client.
func BenchmarkListTasks(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range 1000 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"cluster_id":%q,"type":"backup","id":"6e4d2b1a-0f9e-4c8d-b7a6-%012d","name":"t%d","labels":{"k":"v"},"enabled":true,`+
			`"schedule":{"cron":"{\"spec\":\"%d 3 * * *\",\"start_date\":\"0001-01-01T00:00:00Z\"}","window":null,"timezone":"UTC",`+
			`"start_date":"2025-01-02T00:00:00Z","interval":"0","num_retries":3,"retry_wait":"10m"},`+
			`"properties":{"location":["s3:backups"],"retention":7},"status":"DONE","success_count":3,"error_count":0,`+
			`"last_success":"2025-01-01T00:05:00Z","last_error":null,"next_activation":"2025-01-02T03:00:00Z","suspended":false,"retry":0}`,
			testClusterID, i, i, i%60)
	}
	sb.WriteString("]")
	body := sb.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	b.Cleanup(srv.Close)
	c, err := New(Options{URL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		tasks, err := c.ListTasks(b.Context(), testClusterID, ListTasksOptions{All: true})
		if err != nil {
			b.Fatal(err)
		}
		if len(tasks) != 1000 || tasks[999].Schedule.Cron != "39 3 * * *" {
			b.Fatalf("decoded %d tasks, last cron %q", len(tasks), tasks[len(tasks)-1].Schedule.Cron)
		}
	}
}
