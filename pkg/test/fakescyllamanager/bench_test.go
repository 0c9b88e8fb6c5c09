package fakescyllamanager

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// BenchmarkListTasks lists a cluster with a thousand tasks, each with a cron to evaluate and a run to summarise.
func BenchmarkListTasks(b *testing.B) {
	s, err := NewServer(Options{Clock: func() time.Time { return testNow }})
	if err != nil {
		b.Fatal(err)
	}
	serve := func(method, path, body string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		return rec
	}
	rec := serve(http.MethodPost, "/api/v1/clusters", `{"name":"c","host":"10.0.0.1","auth_token":"t","without_repair":true}`)
	cid := rec.Header().Get("Location")[len("/api/v1/cluster/"):]
	for i := range 1000 {
		body := fmt.Sprintf(`{"type":"repair","name":"t%d","enabled":true,"schedule":{"cron":"%d 2 * * *","num_retries":3},"properties":{"keyspace":["system_auth"],"parallel":%d}}`, i, i%60, i)
		if rec := serve(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", body); rec.Code != http.StatusCreated {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
	for _, id := range s.taskOrder {
		if _, err := s.RecordRun(cid, id, statusDone, ""); err != nil {
			b.Fatal(err)
		}
	}
	path := "/api/v1/cluster/" + cid + "/tasks?all=true"
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if rec := serve(http.MethodGet, path, ""); rec.Code != http.StatusOK {
			b.Fatalf("list: %d", rec.Code)
		}
	}
}
