package fakescyllamanager

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tests in this file check each item of the fidelity checklist of scylla-manager-api.md, over raw HTTP.

// Checklist 1: IDs come from the Location header's last segment; create responses have empty bodies; a
// predesignated cluster ID is honoured.
func TestFidelityLocationAndPredesignatedID(t *testing.T) {
	t.Parallel()

	t.Run("cluster create answers 201 with an empty body and a Location naming the new cluster", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		id := h.createCluster(`{"name":"c1","host":"10.0.0.1","auth_token":"t"}`)
		got := h.do(http.MethodGet, "/api/v1/cluster/"+id, nil).expectStatus(t, http.StatusOK).object(t)
		if got["id"] != id {
			t.Errorf("GET of the Location's ID returned cluster %v", got["id"])
		}
	})

	t.Run("task create answers 201 with a Location under the cluster, type and new ID", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		resp := h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"type":"repair","name":"r1"}`)
		id := resp.locationID(t, "/api/v1/cluster/"+cid+"/task/repair/")
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).expectStatus(t, http.StatusOK)
	})

	t.Run("a predesignated cluster ID is used, and posting it again updates the cluster", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		const want = "0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10"
		if got := h.createCluster(`{"id":"` + want + `","name":"c1","host":"10.0.0.1","auth_token":"t"}`); got != want {
			t.Fatalf("created cluster %q, want the predesignated %q", got, want)
		}
		if got := h.createCluster(`{"id":"` + want + `","name":"renamed","host":"10.0.0.1","auth_token":"t"}`); got != want {
			t.Fatalf("second create returned %q, want %q", got, want)
		}
		st := h.srv.State()
		if len(st.Clusters) != 1 || st.Clusters[0].Name != "renamed" {
			t.Errorf("want one cluster renamed by the second create, got %+v", st.Clusters)
		}
		// The second create is an update: the default tasks are not added twice.
		if n := len(st.LiveTasks()); n != 4 {
			t.Errorf("want the 4 default tasks once, got %d tasks", n)
		}
	})

	t.Run("a task create carrying an ID is rejected", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"id":"0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10","type":"repair"}`).
			expectError(t, http.StatusBadRequest, `malformed request: unexpected ID "0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10"`)
	})

	t.Run("a cluster ID that is not a UUID is a malformed request", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		h.do(http.MethodPost, "/api/v1/clusters", `{"id":"abc","host":"10.0.0.1"}`).expectError(t, http.StatusBadRequest, "malformed request")
	})
}

// Checklist 2: cron echo, enabled defaulting, disabled tasks hidden from lists, null lists.
func TestFidelityCronEnabledAndLists(t *testing.T) {
	t.Parallel()

	t.Run("a plain cron is echoed as a JSON document inside a string", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","enabled":true,"schedule":{"cron":"0 2 * * *"}}`)
		sched := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)["schedule"].(map[string]any)
		diffOrFail(t, "cron", `{"spec":"0 2 * * *","start_date":"0001-01-01T00:00:00Z"}`, sched["cron"])
	})

	t.Run("the JSON document form is accepted on input and carries the start date", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","schedule":{"cron":"{\"spec\":\"@daily\",\"start_date\":\"0001-01-01T00:00:00Z\"}","start_date":"2025-02-01T00:00:00Z"}}`)
		sched := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)["schedule"].(map[string]any)
		diffOrFail(t, "cron", `{"spec":"@daily","start_date":"2025-02-01T00:00:00Z"}`, sched["cron"])
		diffOrFail(t, "start date", "2025-02-01T00:00:00Z", sched["start_date"])
	})

	// ScyllaDB Manager stores the start date in a CQL timestamp, which keeps milliseconds.
	t.Run("the start date is kept to the millisecond", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","schedule":{"cron":"@daily","start_date":"2030-01-01T00:00:00.123456789Z"}}`)
		sched := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)["schedule"].(map[string]any)
		diffOrFail(t, "start date", "2030-01-01T00:00:00.123Z", sched["start_date"])
		diffOrFail(t, "cron", `{"spec":"@daily","start_date":"2030-01-01T00:00:00.123Z"}`, sched["cron"])
	})

	t.Run("an empty cron is echoed with an empty spec", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","schedule":{"start_date":"2025-03-01T00:00:00Z"}}`)
		sched := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)["schedule"].(map[string]any)
		diffOrFail(t, "cron", `{"spec":"","start_date":"2025-03-01T00:00:00Z"}`, sched["cron"])
	})

	t.Run("invalid crons are bad requests", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		for _, spec := range []string{`61 * * * *`, `* * *`, `@fortnightly`, `{\"spec\":`} {
			h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"type":"repair","schedule":{"cron":"`+spec+`"}}`).
				expectError(t, http.StatusBadRequest, "malformed request: cron")
		}
	})

	t.Run("seconds, descriptors, @every and TZ prefixes are valid crons", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		for _, spec := range []string{`30 0 2 * * *`, `@weekly`, `@every 90m`, `TZ=Europe/Warsaw 0 2 * * *`, `CRON_TZ=UTC 0 2 * * MON-FRI`} {
			h.createTask(cid, `{"type":"repair","schedule":{"cron":"`+spec+`"}}`)
		}
	})

	t.Run("a task created without enabled is disabled and has no enabled key", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","name":"off"}`)
		got := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)
		if _, present := got["enabled"]; present {
			t.Errorf("a disabled task has an enabled key: %v", got)
		}
		on := h.createTask(cid, `{"type":"repair","name":"on","enabled":true}`)
		if got := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+on, nil).object(t); got["enabled"] != true {
			t.Errorf("an enabled task has enabled %v", got["enabled"])
		}
	})

	t.Run("lists hide disabled tasks unless all=true", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.createTask(cid, `{"type":"repair","name":"off"}`)
		h.createTask(cid, `{"type":"repair","name":"on","enabled":true,"schedule":{"cron":"@daily"}}`)
		base := "/api/v1/cluster/" + cid + "/tasks?type=repair"
		diffOrFail(t, "enabled tasks", []string{"repair/on"}, taskNames(h.do(http.MethodGet, base, nil).list(t)))
		diffOrFail(t, "all tasks", []string{"repair/on", "repair/off"}, taskNames(h.do(http.MethodGet, base+"&all=true", nil).list(t)))
	})

	t.Run("an empty task list is JSON null and an empty cluster list is []", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		diffOrFail(t, "cluster list", "[]", strings.TrimSpace(string(h.do(http.MethodGet, "/api/v1/clusters", nil).Body)))
		cid := h.newCluster()
		body := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?type=backup", nil).expectStatus(t, http.StatusOK).Body
		diffOrFail(t, "task list", "null", strings.TrimSpace(string(body)))
	})

	t.Run("properties default to {} when absent or null", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		for _, body := range []string{`{"type":"repair"}`, `{"type":"repair","properties":null}`} {
			id := h.createTask(cid, body)
			got := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)
			diffOrFail(t, "properties", map[string]any{}, got["properties"])
		}
	})
}

// Checklist 3: default tasks, fields never echoed, credential masking.
func TestFidelityDefaultTasksAndMasking(t *testing.T) {
	t.Parallel()

	t.Run("a new cluster gets healthchecks cql, rest and alternator and the weekly repair", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{ServerTimezone: "Europe/Warsaw"})
		cid := h.createCluster(`{"name":"c1","host":"10.0.0.1","auth_token":"t"}`)
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks", nil).list(t)
		names := taskNames(items)
		slices.Sort(names)
		diffOrFail(t, "default tasks", []string{"healthcheck/alternator", "healthcheck/cql", "healthcheck/rest", "repair/all-weekly"}, names)
		for _, it := range items {
			if it["name"] != "all-weekly" {
				continue
			}
			sched := it["schedule"].(map[string]any)
			diffOrFail(t, "weekly repair schedule", map[string]any{
				"cron":        `{"spec":"0 23 * * SAT","start_date":"0001-01-01T00:00:00Z"}`,
				"num_retries": float64(3), "timezone": "Europe/Warsaw",
			}, map[string]any{"cron": sched["cron"], "num_retries": sched["num_retries"], "timezone": sched["timezone"]})
			diffOrFail(t, "weekly repair properties", map[string]any{}, it["properties"])
			// Saturday 23:00 in Warsaw is 22:00 UTC in winter.
			diffOrFail(t, "weekly repair next activation", "2025-01-04T22:00:00Z", it["next_activation"])
		}
	})

	t.Run("without_repair skips the weekly repair and is never echoed", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.createCluster(`{"name":"c1","host":"10.0.0.1","auth_token":"t","without_repair":true,"username":"u","password":"p"}`)
		names := taskNames(h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?all=true", nil).list(t))
		slices.Sort(names)
		diffOrFail(t, "default tasks", []string{"healthcheck/alternator", "healthcheck/cql", "healthcheck/rest"}, names)
		got := h.do(http.MethodGet, "/api/v1/cluster/"+cid, nil).object(t)
		for _, key := range []string{"without_repair", "username", "password", "ssl_user_cert_file", "ssl_user_key_file"} {
			if _, present := got[key]; present {
				t.Errorf("GET echoes %q: %v", key, got)
			}
		}
		if got["auth_token"] != "t" {
			t.Errorf("auth_token %v, want it in plain text", got["auth_token"])
		}
	})

	t.Run("the list masks credentials as set or not set", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		h.createCluster(`{"name":"with","host":"10.0.0.1","auth_token":"t","username":"u","password":"p","alternator_access_key_id":"k","alternator_secret_access_key":"s"}`)
		h.createCluster(`{"name":"without","host":"10.0.0.1","auth_token":"t"}`)
		var got []map[string]any
		for _, c := range h.do(http.MethodGet, "/api/v1/clusters", nil).list(t) {
			got = append(got, map[string]any{
				"name": c["name"], "username": c["username"], "password": c["password"],
				"alternator_access_key_id": c["alternator_access_key_id"], "alternator_secret_access_key": c["alternator_secret_access_key"],
			})
		}
		diffOrFail(t, "masked clusters", []map[string]any{
			{"name": "with", "username": "set", "password": "set", "alternator_access_key_id": "set", "alternator_secret_access_key": "set"},
			{"name": "without", "username": "not set", "password": "not set", "alternator_access_key_id": nil, "alternator_secret_access_key": nil},
		}, got)
		// The secrets are stored, not lost.
		if st := h.srv.State(); st.Clusters[0].Username != "u" || st.Clusters[0].Password != "p" {
			t.Errorf("stored credentials %q/%q", st.Clusters[0].Username, st.Clusters[0].Password)
		}
	})
}

// Checklist 4: status codes.
func TestFidelityStatusCodes(t *testing.T) {
	t.Parallel()

	t.Run("success codes", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		h.do(http.MethodGet, "/ping", nil).expectStatus(t, http.StatusNoContent)
		diffOrFail(t, "version", map[string]any{"version": DefaultVersion}, h.do(http.MethodGet, "/version", nil).expectStatus(t, http.StatusOK).object(t))
		diffOrFail(t, "api version", map[string]any{"version": DefaultVersion}, h.do(http.MethodGet, "/api/v1/version", nil).expectStatus(t, http.StatusOK).object(t))
		cid := h.newCluster()
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodGet, "/api/v1/cluster/"+cid, nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodPut, "/api/v1/cluster/"+cid, `{"name":"c1","host":"10.0.0.1","auth_token":"token"}`).expectStatus(t, http.StatusOK)
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/status", nil).expectStatus(t, http.StatusOK)
		tid := h.createTask(cid, `{"type":"repair","name":"r"}`)
		task := "/api/v1/cluster/" + cid + "/task/repair/" + tid
		h.do(http.MethodGet, task, nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodPut, task, `{"type":"repair","name":"r","enabled":true}`).expectStatus(t, http.StatusOK)
		for _, p := range []string{task + "/start", task + "/stop"} {
			if resp := h.do(http.MethodPut, p, nil).expectStatus(t, http.StatusOK); len(resp.Body) != 0 {
				t.Errorf("PUT %s has a body: %s", p, resp.Body)
			}
		}
		h.do(http.MethodGet, task+"/history", nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodGet, task+"/latest", nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodDelete, task, nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodDelete, "/api/v1/cluster/"+cid, nil).expectStatus(t, http.StatusOK)
	})

	t.Run("every response is JSON", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		for _, p := range []string{"/api/v1/clusters", "/api/v1/nowhere"} {
			if ct := h.do(http.MethodGet, p, nil).Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("GET %s content type %q", p, ct)
			}
		}
	})

	t.Run("not found answers 404 with the get resource prefix", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		const missing = "5b6f6a1e-0000-4000-8000-000000000000"
		h.do(http.MethodGet, "/api/v1/cluster/"+missing, nil).
			expectError(t, http.StatusNotFound, `get resource: load cluster "`+missing+`": not found`)
		h.do(http.MethodGet, "/api/v1/cluster/nope/tasks", nil).
			expectError(t, http.StatusNotFound, `get resource: load cluster "nope": not found`)
		cid := h.newCluster()
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/backup/"+missing, nil).
			expectError(t, http.StatusNotFound, `get resource: load task "`+missing+`": not found`)
		h.do(http.MethodGet, "/api/v1/nowhere", nil).
			expectError(t, http.StatusNotFound, "find endpoint for path /api/v1/nowhere - make sure api-url is correct")
	})

	t.Run("malformed requests and validation failures answer 400", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		tasks := "/api/v1/cluster/" + cid + "/tasks"
		for _, tc := range []struct {
			method, path, body string
			fragments          []string
		}{
			{http.MethodPost, "/api/v1/clusters", `{`, []string{"malformed request"}},
			{http.MethodPost, "/api/v1/clusters", ``, []string{"malformed request: EOF"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"3f2504e0-4f89-41d3-9a0c-0305e82c3301","host":"h"}`, []string{"create cluster: invalid cluster: name cannot be an UUID"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"x","host":"h","username":"u"}`, []string{"missing password"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"x","host":"h","password":"p"}`, []string{"missing user"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"x","host":"h","alternator_access_key_id":"k"}`, []string{"missing alternator secret access key"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"x","host":"h","ssl_user_cert_file":"Zm9v"}`, []string{"missing SSL user key"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"x","host":"h","ssl_user_cert_file":"Zm9v","ssl_user_key_file":"YmFy"}`, []string{"invalid SSL user key pair"}},
			{http.MethodPost, "/api/v1/clusters", `{"name":"c1","host":"10.0.0.2"}`, []string{`create cluster: name "c1" is already taken`}},
			{http.MethodPost, tasks, `{"type":"snapshot"}`, []string{`malformed request: unrecognized TaskType "snapshot"`}},
			{http.MethodPost, tasks, `{"name":"x"}`, []string{"create task: invalid task: no TaskType specified"}},
			{http.MethodPost, tasks, `{"type":"repair","name":"3f2504e0-4f89-41d3-9a0c-0305e82c3301"}`, []string{"create task: invalid task: name cannot be an UUID"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"window":["Sat-22:00"]}}`, []string{"malformed request: window: number of points must be even"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"window":["Sat-25:00","Sun-06:00"]}}`, []string{"malformed request: window: invalid point"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"timezone":"Mars/Olympus"}}`, []string{"malformed request: timezone"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"interval":"500ms"}}`, []string{"malformed request: invalid duration"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"interval":"1w"}}`, []string{"malformed request: invalid duration"}},
			{http.MethodPost, tasks, `{"type":"repair","schedule":{"start_date":"yesterday"}}`, []string{"malformed request"}},
			{http.MethodGet, "/api/v1/cluster/" + cid + "/task/snapshot/x", ``, []string{`malformed request: unrecognized TaskType "snapshot"`}},
			{http.MethodGet, tasks + "?all=maybe", ``, []string{"malformed request", "ParseBool"}},
			{http.MethodGet, tasks + "?type=bogus", ``, []string{`unrecognized TaskType "bogus"`}},
			{http.MethodGet, tasks + "?status=SLEEPING", ``, []string{`unrecognized Status "SLEEPING"`}},
			{http.MethodGet, tasks + "?task_id=abc", ``, []string{`invalid task ID "abc"`}},
			{http.MethodDelete, "/api/v1/cluster/" + cid + "?cql_creds=sure", ``, []string{"malformed request"}},
		} {
			var body any
			if tc.body != "" || tc.method == http.MethodPost {
				body = tc.body
			}
			h.do(tc.method, tc.path, body).expectError(t, http.StatusBadRequest, tc.fragments...)
		}
	})

	t.Run("a duplicate task name of the same type is a 500; other types and deleted tasks do not clash", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.createTask(cid, `{"type":"repair","name":"nightly"}`)
		h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"type":"repair","name":"nightly"}`).
			expectError(t, http.StatusInternalServerError, "create task: task name nightly is already used")
		h.createTask(cid, `{"type":"backup","name":"nightly","properties":{"location":["s3:b"]}}`)
		other := h.createTask(cid, `{"type":"repair","name":"other"}`)
		h.do(http.MethodPut, "/api/v1/cluster/"+cid+"/task/repair/"+other, `{"type":"repair","name":"nightly"}`).
			expectError(t, http.StatusInternalServerError, `update task "`+other+`": task name nightly is already used`)
		// Unnamed tasks never clash.
		h.createTask(cid, `{"type":"repair"}`)
		h.createTask(cid, `{"type":"repair"}`)
	})

	t.Run("a past start date with a legacy interval is a 500", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"type":"repair","schedule":{"interval":"1d","start_date":"2024-01-01T00:00:00Z"}}`).
			expectError(t, http.StatusInternalServerError, "start date of scheduled task cannot be in the past")
		// A past start date with cron is fine.
		h.createTask(cid, `{"type":"repair","schedule":{"cron":"@daily","start_date":"2024-01-01T00:00:00Z"}}`)
	})

	t.Run("unknown methods on known paths answer 405", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		h.do(http.MethodDelete, "/api/v1/clusters", nil).expectError(t, http.StatusMethodNotAllowed, "not allowed")
	})
}

// Checklist 4, continued: the documented semantic failures that answer 500.
func TestFidelityBackupAndRepairTargets(t *testing.T) {
	t.Parallel()
	backup := func(props string) string { return `{"type":"backup","properties":` + props + `}` }
	repair := func(props string) string { return `{"type":"repair","properties":` + props + `}` }
	twoDCs := Topology{
		Datacenters: []Datacenter{
			{Name: "us-east", Nodes: []Node{{Address: "10.1.0.1"}, {Address: "10.1.0.2"}}},
			{Name: "eu-west", Nodes: []Node{{Address: "10.2.0.1"}}},
		},
		Keyspaces: []string{"system_auth", "system_traces", "ks1"},
	}
	tt := []struct {
		name      string
		setup     func(t *testing.T, s *Server)
		body      string
		status    int
		fragments []string
		details   string
	}{
		{name: "backup without location is a 500", body: backup(`{}`), status: 500, fragments: []string{"create backup target: missing location"}},
		{name: "backup with a prefix path is a 400", body: backup(`{"location":["s3:bucket/prefix"]}`), status: 400, fragments: []string{`invalid location "s3:bucket/prefix"`, "[dc:]<provider>:<path>"}},
		{name: "backup with an unknown provider is a 400", body: backup(`{"location":["ftp:bucket"]}`), status: 400, fragments: []string{"unsupported provider"}},
		{name: "backup with an upper-case bucket is a 400", body: backup(`{"location":["s3:Bucket"]}`), status: 400, fragments: []string{"invalid location"}},
		{name: "backup properties that are not an object are a 400", body: backup(`["s3:b"]`), status: 400, fragments: []string{"parse properties"}},
		{name: "backup properties of a wrong type are a 400", body: backup(`{"location":"s3:b"}`), status: 400, fragments: []string{"parse properties"}},
		{name: "negative retention is a 500", body: backup(`{"location":["s3:b"],"retention":-1}`), status: 500, fragments: []string{"negative retention"}},
		{name: "a location for an unknown datacenter is a 500", body: backup(`{"location":["mars:s3:b"]}`), status: 500, fragments: []string{"no such datacenter mars"}},
		{
			name:  "locations that miss a backed-up datacenter are a 500",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetTopology("10.0.0.1", twoDCs)) },
			body:  backup(`{"location":["us-east:s3:b"]}`), status: 500, fragments: []string{"missing object for datacenter eu-west"},
		},
		{
			name:  "per-datacenter locations covering the filtered datacenters are fine",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetTopology("10.0.0.1", twoDCs)) },
			body:  backup(`{"location":["us-east:s3:b"],"dc":["us-*"]}`), status: 201,
		},
		{name: "a dc filter matching nothing is a 400", body: backup(`{"location":["s3:b"],"dc":["nowhere"]}`), status: 400, fragments: []string{"no matching datacenters"}},
		{name: "a malformed rate limit is a 400", body: backup(`{"location":["s3:b"],"rate_limit":["fast"]}`), status: 400, fragments: []string{"rate_limit", "[dc:]<limit>"}},
		{name: "an unknown method is a 400", body: backup(`{"location":["s3:b"],"method":"ftp"}`), status: 400, fragments: []string{"invalid method"}},
		{name: "a retention lock outside gcs is a 400", body: backup(`{"location":["s3:b"],"retention_lock_mode":"locked"}`), status: 400, fragments: []string{"gcs only"}},
		{
			name:  "a missing bucket is a 500",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetLocationState("s3:gone", LocationBucketMissing)) },
			body:  backup(`{"location":["s3:gone"]}`), status: 500, fragments: []string{"specified bucket does not exist"},
		},
		{
			name:  "an inaccessible location is a 400",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetLocationState("s3:locked", LocationInaccessible)) },
			body:  backup(`{"location":["s3:locked"]}`), status: 400, fragments: []string{"location is not accessible"},
		},
		{
			name:  "unreachable agents fail backup validation with a 500",
			setup: func(t *testing.T, s *Server) { s.SetAgentsUnreachable("10.0.0.1", true) },
			body:  backup(`{"location":["s3:b"]}`), status: 500, fragments: []string{"make sure the IP is correct and access to port 10001 is unblocked"},
		},
		{name: "a keyspace filter matching nothing is a 400", body: backup(`{"location":["s3:b"],"keyspace":["nope"]}`), status: 400, fragments: []string{"no keyspace matched criteria"}},
		{name: "a valid backup with unknown properties is created", body: backup(`{"location":["s3:b","gcs:c"],"retention":3,"keyspace":["system_*","!system_traces"],"new_field":{"x":1}}`), status: 201},
		{name: "a repair host that is not an IP is a 400", body: repair(`{"host":"node-1"}`), status: 400, fragments: []string{"parse host IP address"}},
		{
			name: "repair of a single-node cluster is a 400",
			setup: func(t *testing.T, s *Server) {
				mustNot(t, s.SetTopology("10.0.0.1", Topology{Datacenters: []Datacenter{{Name: "dc1", Nodes: []Node{{Address: "10.0.0.1"}}}}}))
			},
			body: repair(`{}`), status: 400, fragments: []string{"at least 2 nodes"},
		},
		{
			name:  "a down node without ignore_down_hosts is a 500 with details",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetNodeDown("10.0.0.2", true)) },
			body:  repair(`{}`), status: 500, fragments: []string{"create repair target: host 10.0.0.2 is down"},
			details: "One of the nodes is down. Task cannot be created. Check --ignore-down-hosts to repair the live nodes only.",
		},
		{
			name:  "a down node with ignore_down_hosts is fine",
			setup: func(t *testing.T, s *Server) { mustNot(t, s.SetNodeDown("10.0.0.2", true)) },
			body:  repair(`{"ignore_down_hosts":true}`), status: 201,
		},
		{
			name:  "unreachable agents fail repair validation with a 500",
			setup: func(t *testing.T, s *Server) { s.SetAgentsUnreachable("*", true) },
			body:  repair(`{}`), status: 500, fragments: []string{"couldn't connect"},
		},
		{name: "a repair keyspace filter matching nothing is a 400", body: repair(`{"keyspace":["nope"]}`), status: 400, fragments: []string{"no keyspace matched criteria"}},
		{name: "allow_empty accepts a keyspace filter matching nothing", body: repair(`{"keyspace":["nope"],"allow_empty":true}`), status: 201},
		{name: "repair intensity is stored as sent", body: repair(`{"intensity":2.7,"parallel":1,"small_table_threshold":1024}`), status: 201},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, Options{})
			cid := h.newCluster()
			if tc.setup != nil {
				tc.setup(t, h.srv)
			}
			resp := h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", tc.body)
			if tc.status == http.StatusCreated {
				resp.locationID(t, "/api/v1/cluster/"+cid+"/task/")
				return
			}
			doc := resp.expectError(t, tc.status, tc.fragments...)
			diffOrFail(t, "details", tc.details, doc.Details)
			if n := len(h.srv.State().LiveTasks()); n != 3 {
				t.Errorf("a rejected task was stored: %d tasks", n)
			}
		})
	}

	t.Run("update validates the target too", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, backup(`{"location":["s3:b"]}`))
		h.do(http.MethodPut, "/api/v1/cluster/"+cid+"/task/backup/"+id, backup(`{}`)).
			expectError(t, http.StatusInternalServerError, `update task "`+id+`": missing location`)
		if got := string(h.srv.State().LiveTasks()[3].Properties); got != `{"location":["s3:b"]}` {
			t.Errorf("a rejected update changed the properties to %s", got)
		}
	})

	t.Run("unreachable agents fail cluster create and a connection change with a 500", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.srv.SetAgentsUnreachable("10.9.9.9", true)
		h.do(http.MethodPost, "/api/v1/clusters", `{"name":"down","host":"10.9.9.9","auth_token":"t"}`).
			expectError(t, http.StatusInternalServerError, "create cluster: couldn't connect to 10.9.9.9:10001", "make sure the IP is correct and access to port 10001 is unblocked")
		h.do(http.MethodPut, "/api/v1/cluster/"+cid, `{"name":"c1","host":"10.9.9.9","auth_token":"token"}`).
			expectError(t, http.StatusInternalServerError, `update cluster "`+cid+`"`, "couldn't connect")
		// An update that keeps host, port and token does not contact the agents.
		h.srv.SetAgentsUnreachable("10.0.0.1", true)
		h.do(http.MethodPut, "/api/v1/cluster/"+cid, `{"name":"renamed","host":"10.0.0.1","auth_token":"token"}`).expectStatus(t, http.StatusOK)
	})

	t.Run("a wrong auth token fails with the auth token hint", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		h.srv.SetAgentAuthToken("10.0.0.5", "right")
		h.do(http.MethodPost, "/api/v1/clusters", `{"name":"c","host":"10.0.0.5","auth_token":"wrong"}`).
			expectError(t, http.StatusInternalServerError, "make sure auth_token config option on nodes is set correctly")
		h.createCluster(`{"name":"c","host":"10.0.0.5","auth_token":"right"}`)
	})
}

func mustNot(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Checklist 5: soft-deleted tasks, cluster delete cascading.
func TestFidelitySoftDelete(t *testing.T) {
	t.Parallel()

	t.Run("a deleted task is hidden, answers 500 and frees its name", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","name":"nightly","enabled":true}`)
		task := "/api/v1/cluster/" + cid + "/task/repair/" + id
		h.do(http.MethodDelete, task, nil).expectStatus(t, http.StatusOK)

		if names := taskNames(h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?all=true&type=repair", nil).list(t)); len(names) != 0 {
			t.Errorf("deleted task listed: %v", names)
		}
		h.do(http.MethodGet, task, nil).expectError(t, http.StatusInternalServerError, `task "`+id+`" is deleted`)
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/nightly", nil).expectError(t, http.StatusNotFound, "get resource")
		reused := h.createTask(cid, `{"type":"repair","name":"nightly"}`)
		if reused == id {
			t.Errorf("the new task reused the deleted task's ID")
		}
		var deleted TaskState
		for _, ts := range h.srv.State().Tasks {
			if ts.ID == id {
				deleted = ts
			}
		}
		if !deleted.Deleted || deleted.Enabled || deleted.Name != "" {
			t.Errorf("want the deleted task kept, disabled and nameless, got %+v", deleted)
		}
	})

	t.Run("deleting a cluster soft-deletes its tasks and leaves buckets alone", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		other := h.createCluster(`{"name":"c2","host":"10.0.0.1","auth_token":"t","without_repair":true}`)
		h.createTask(cid, `{"type":"backup","properties":{"location":["s3:b"]}}`)
		mustNot(t, h.srv.SetLocationState("s3:b", LocationAccessible))
		knobsBefore := h.srv.Knobs()

		h.do(http.MethodDelete, "/api/v1/cluster/"+cid, nil).expectStatus(t, http.StatusOK)
		h.do(http.MethodGet, "/api/v1/cluster/"+cid, nil).expectError(t, http.StatusNotFound, "get resource")
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks", nil).expectError(t, http.StatusNotFound, "get resource")
		st := h.srv.State()
		for _, ts := range st.Tasks {
			if ts.ClusterID == cid && !ts.Deleted {
				t.Errorf("task %s of the deleted cluster is not deleted", ts.ID)
			}
			if ts.ClusterID == other && ts.Deleted {
				t.Errorf("task %s of another cluster was deleted", ts.ID)
			}
		}
		diffOrFail(t, "knobs (bucket states)", knobsBefore, h.srv.Knobs())
	})

	t.Run("deleting secrets keeps the cluster", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.createCluster(`{"name":"c","host":"10.0.0.1","auth_token":"t","without_repair":true,"username":"u","password":"p","alternator_access_key_id":"k","alternator_secret_access_key":"s"}`)
		h.do(http.MethodDelete, "/api/v1/cluster/"+cid+"?cql_creds=true", nil).expectStatus(t, http.StatusOK)
		st := h.srv.State()
		if len(st.Clusters) != 1 || st.Clusters[0].Username != "" || st.Clusters[0].AlternatorAccessKeyID != "k" {
			t.Fatalf("want the cluster kept with only CQL credentials removed, got %+v", st.Clusters)
		}
		h.do(http.MethodDelete, "/api/v1/cluster/"+cid+"?alternator_creds=true&ssl_user_cert=true", nil).expectStatus(t, http.StatusOK)
		if st := h.srv.State(); len(st.Clusters) != 1 || st.Clusters[0].AlternatorAccessKeyID != "" {
			t.Fatalf("want the cluster kept without Alternator credentials, got %+v", st.Clusters)
		}
	})

	t.Run("an update without credentials keeps them", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.createCluster(`{"name":"c","host":"10.0.0.1","auth_token":"t","username":"u","password":"p"}`)
		h.do(http.MethodPut, "/api/v1/cluster/"+cid, `{"name":"c","host":"10.0.0.1","auth_token":"t"}`).expectStatus(t, http.StatusOK)
		if st := h.srv.State(); st.Clusters[0].Username != "u" {
			t.Errorf("credentials lost on update: %+v", st.Clusters[0])
		}
	})
}

// Checklist 6: next_activation only in lists; run progress through latest, ~N and run IDs.
func TestFidelityNextActivationAndRuns(t *testing.T) {
	t.Parallel()

	t.Run("next_activation is in the list and not in GET", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","enabled":true,"schedule":{"cron":"0 2 * * *"}}`)
		got := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id, nil).object(t)
		if _, present := got["next_activation"]; present {
			t.Errorf("GET has next_activation: %v", got)
		}
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?all=true&type=repair&task_id="+id, nil).list(t)
		if len(items) != 1 {
			t.Fatalf("want the task listed alone, got %v", items)
		}
		diffOrFail(t, "next activation", "2025-01-02T02:00:00Z", items[0]["next_activation"])
		diffOrFail(t, "suspended and retry", []any{false, float64(0)}, []any{items[0]["suspended"], items[0]["retry"]})
	})

	t.Run("next activation follows cron, start date, timezone and interval", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		for _, tc := range []struct {
			schedule string
			want     any
		}{
			{`{"cron":"0 2 * * *"}`, "2025-01-02T02:00:00Z"},
			{`{"cron":"0 2 * * *","start_date":"2025-03-10T05:00:00Z"}`, "2025-03-11T02:00:00Z"},
			{`{"cron":"0 2 * * *","timezone":"America/New_York"}`, "2025-01-02T07:00:00Z"},
			{`{"cron":"TZ=Asia/Tokyo 0 2 * * *"}`, "2025-01-01T17:00:00Z"},
			{`{"cron":"@every 90m"}`, "2025-01-01T13:30:00Z"},
			{`{"interval":"1d","start_date":"2025-01-03T00:00:00Z"}`, "2025-01-03T00:00:00Z"},
			{`{"interval":"1d12h"}`, "2025-01-03T00:00:00Z"},
			{`{"start_date":"2025-06-01T00:00:00Z"}`, "2025-06-01T00:00:00Z"},
			{`{}`, nil},
		} {
			id := h.createTask(cid, `{"type":"healthcheck","enabled":true,"schedule":`+tc.schedule+`}`)
			items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?task_id="+id, nil).list(t)
			if len(items) != 1 {
				t.Fatalf("schedule %s: want one task, got %v", tc.schedule, items)
			}
			diffOrFail(t, "next activation of "+tc.schedule, tc.want, items[0]["next_activation"])
		}
		// Legacy interval repeats from the start date as time passes.
		id := h.createTask(cid, `{"type":"healthcheck","enabled":true,"schedule":{"interval":"1d","start_date":"2025-01-03T00:00:00Z"}}`)
		h.setNow(testNow.Add(100 * time.Hour))
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?task_id="+id, nil).list(t)
		diffOrFail(t, "next activation after time passed", "2025-01-06T00:00:00Z", items[0]["next_activation"])
	})

	// ScyllaDB Manager lists the activation its scheduler queued when the task was scheduled (created or updated), not
	// one computed from the time of the list: for "@every", which counts from when it is asked, that activation stays
	// put between lists.
	t.Run("an @every activation does not move from one list to the next", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"healthcheck","enabled":true,"schedule":{"cron":"@every 90m"}}`)
		for _, tc := range []struct {
			after time.Duration
			want  string
		}{
			{10 * time.Minute, "2025-01-01T13:30:00Z"},
			{89 * time.Minute, "2025-01-01T13:30:00Z"},
			{100 * time.Minute, "2025-01-01T15:00:00Z"},
		} {
			h.setNow(testNow.Add(tc.after))
			items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?task_id="+id, nil).list(t)
			diffOrFail(t, fmt.Sprintf("next activation %v after creation", tc.after), tc.want, items[0]["next_activation"])
		}

		// An update schedules the task again, from the time of the update.
		h.setNow(testNow.Add(2 * time.Hour))
		h.do(http.MethodPut, "/api/v1/cluster/"+cid+"/task/healthcheck/"+id, `{"type":"healthcheck","enabled":true,"schedule":{"cron":"@every 90m"}}`).expectStatus(t, http.StatusOK)
		h.setNow(testNow.Add(2*time.Hour + 10*time.Minute))
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?task_id="+id, nil).list(t)
		diffOrFail(t, "next activation after an update", "2025-01-01T15:30:00Z", items[0]["next_activation"])
	})

	t.Run("lists are sorted by next activation, tasks without one last", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		h.createTask(cid, `{"type":"repair","name":"none","enabled":true,"schedule":{"start_date":"2024-01-01T00:00:00Z"}}`)
		h.createTask(cid, `{"type":"repair","name":"late","enabled":true,"schedule":{"cron":"@monthly"}}`)
		h.createTask(cid, `{"type":"repair","name":"soon","enabled":true,"schedule":{"cron":"@hourly"}}`)
		diffOrFail(t, "order", []string{"repair/soon", "repair/late", "repair/none"},
			taskNames(h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?type=repair", nil).list(t)))
	})

	t.Run("latest progress of a task that never ran is a NEW run with empty progress", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","schedule":{"cron":"@daily"}}`)
		got := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id+"/latest", nil).expectStatus(t, http.StatusOK).object(t)
		run := got["run"].(map[string]any)
		diffOrFail(t, "run", map[string]any{
			"cluster_id": cid, "type": "repair", "task_id": id, "id": "00000000-0000-0000-0000-000000000000",
			"status": "NEW", "owner": "", "start_time": "0001-01-01T00:00:00Z",
		}, run)
		if p, isObject := got["progress"].(map[string]any); !isObject || p["token_ranges"] != float64(0) {
			t.Errorf("progress %v, want an empty repair progress", got["progress"])
		}
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?all=true&status=NEW&type=repair", nil).list(t)
		diffOrFail(t, "status filter", 1, len(items))
	})

	t.Run("runs are reached by latest, ~N and ID, and history is newest first", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"backup","enabled":true,"schedule":{"cron":"@daily"},"properties":{"location":["s3:b"]}}`)
		first, err := h.srv.RecordRun(cid, id, "DONE", "")
		mustNot(t, err)
		h.setNow(testNow.Add(time.Hour))
		second, err := h.srv.RecordRun(cid, id, "ERROR", "boom")
		mustNot(t, err)
		task := "/api/v1/cluster/" + cid + "/task/backup/" + id

		runID := func(p string) any {
			return h.do(http.MethodGet, task+"/"+p, nil).expectStatus(t, http.StatusOK).object(t)["run"].(map[string]any)["id"]
		}
		diffOrFail(t, "latest", second, runID("latest"))
		diffOrFail(t, "~0", second, runID("~0"))
		diffOrFail(t, "~1", first, runID("~1"))
		diffOrFail(t, "by ID", first, runID(first))
		h.do(http.MethodGet, task+"/~2", nil).expectError(t, http.StatusNotFound, "get resource")
		h.do(http.MethodGet, task+"/a0000000-0000-4000-8000-000000000000", nil).expectError(t, http.StatusNotFound, "get resource")
		h.do(http.MethodGet, task+"/yesterday", nil).expectError(t, http.StatusBadRequest, "malformed request")

		var ids []any
		for _, r := range h.do(http.MethodGet, task+"/history", nil).list(t) {
			ids = append(ids, r["id"])
		}
		diffOrFail(t, "history", []any{second, first}, ids)
		diffOrFail(t, "limited history", 1, len(h.do(http.MethodGet, task+"/history?limit=1", nil).list(t)))
		h.do(http.MethodGet, task+"/history?limit=x", nil).expectError(t, http.StatusBadRequest, "malformed request")

		got := h.do(http.MethodGet, task, nil).object(t)
		diffOrFail(t, "task counters", map[string]any{
			"status": "ERROR", "success_count": float64(1), "error_count": float64(1),
			"last_success": "2025-01-01T12:00:00Z", "last_error": "2025-01-01T13:00:00Z",
		}, map[string]any{
			"status": got["status"], "success_count": got["success_count"], "error_count": got["error_count"],
			"last_success": got["last_success"], "last_error": got["last_error"],
		})
		items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?status=ERROR", nil).list(t)
		diffOrFail(t, "status filter", []string{"backup/"}, taskNames(items))
	})

	t.Run("empty history is []", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","schedule":{"cron":"@daily"}}`)
		body := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+id+"/history", nil).expectStatus(t, http.StatusOK).Body
		diffOrFail(t, "history", "[]", strings.TrimSpace(string(body)))
	})

	t.Run("a task without start date and cron runs immediately, only when enabled", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		now := h.createTask(cid, `{"type":"repair","enabled":true}`)
		later := h.createTask(cid, `{"type":"repair","enabled":true,"schedule":{"cron":"@daily"}}`)
		off := h.createTask(cid, `{"type":"repair"}`)
		runs := map[string]int{}
		for _, ts := range h.srv.State().Tasks {
			runs[ts.ID] = len(ts.Runs)
		}
		diffOrFail(t, "runs", map[string]int{now: 1, later: 0, off: 0}, map[string]int{now: runs[now], later: runs[later], off: runs[off]})
		sched := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/task/repair/"+now, nil).object(t)["schedule"].(map[string]any)
		diffOrFail(t, "start date set to creation time", "2025-01-01T12:00:00Z", sched["start_date"])
	})

	t.Run("start records a run and stop with disable stops it and disables the task", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","enabled":true,"schedule":{"cron":"@daily"}}`)
		task := "/api/v1/cluster/" + cid + "/task/repair/" + id
		mustNot(t, h.srv.SetRunStatus("RUNNING"))
		h.do(http.MethodPut, task+"/start?continue=false", nil).expectStatus(t, http.StatusOK)
		diffOrFail(t, "status after start", "RUNNING", h.do(http.MethodGet, task, nil).object(t)["status"])
		h.do(http.MethodPut, task+"/stop?disable=true", nil).expectStatus(t, http.StatusOK)
		got := h.do(http.MethodGet, task, nil).object(t)
		diffOrFail(t, "after stop", []any{"STOPPED", nil}, []any{got["status"], got["enabled"]})
		h.do(http.MethodPut, task+"/start?continue=nope", nil).expectError(t, http.StatusBadRequest, "malformed request")
	})

	t.Run("healthcheck runs have no progress", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		latest := "/api/v1/cluster/" + cid + "/task/healthcheck/cql/latest"
		got := h.do(http.MethodGet, latest, nil).expectStatus(t, http.StatusOK).object(t)
		diffOrFail(t, "progress of a healthcheck that never ran", nil, got["progress"])
		var cql string
		for _, ts := range h.srv.State().Tasks {
			if ts.Name == "cql" {
				cql = ts.ID
			}
		}
		_, err := h.srv.RecordRun(cid, cql, "DONE", "")
		mustNot(t, err)
		h.do(http.MethodGet, latest, nil).expectError(t, http.StatusBadRequest, "unsupported task type healthcheck")
	})
}

// Checklist 7, and the knobs the issue asks for.
func TestFidelityKnobs(t *testing.T) {
	t.Parallel()

	t.Run("backup validation latency holds task creation until the client gives up", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		mustNot(t, h.srv.SetBackupValidationLatency(time.Hour))
		client := &http.Client{Timeout: 50 * time.Millisecond}
		resp, err := client.Post(h.url+"/api/v1/cluster/"+cid+"/tasks", "application/json",
			strings.NewReader(`{"type":"backup","properties":{"location":["s3:b"]}}`))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("want the client to time out, got status %d", resp.StatusCode)
		}
		// Repair creation is not delayed.
		h.createTask(cid, `{"type":"repair"}`)
		for _, ts := range h.srv.State().LiveTasks() {
			if ts.Type == "backup" {
				t.Errorf("a backup task was stored although the client gave up")
			}
		}
	})

	t.Run("per-endpoint latency holds only that endpoint", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		mustNot(t, h.srv.SetLatency(EndpointListClusters, time.Hour))
		client := &http.Client{Timeout: 50 * time.Millisecond}
		if resp, err := client.Get(h.url + "/api/v1/clusters"); err == nil {
			resp.Body.Close()
			t.Fatalf("want the client to time out, got status %d", resp.StatusCode)
		}
		h.do(http.MethodGet, "/ping", nil).expectStatus(t, http.StatusNoContent)
		mustNot(t, h.srv.SetLatency(EndpointListClusters, 0))
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectStatus(t, http.StatusOK)
	})

	t.Run("injected failures answer the status a given number of times", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		mustNot(t, h.srv.InjectFailure(EndpointListClusters, Failure{Status: 503, Message: "maintenance", Times: 2}))
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectError(t, 503, "maintenance")
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectError(t, 503, "maintenance")
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectStatus(t, http.StatusOK)
	})

	t.Run("a failure on every endpoint stays until cleared, and endpoint failures win", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		mustNot(t, h.srv.InjectFailure(EndpointAll, Failure{Status: 500}))
		mustNot(t, h.srv.InjectFailure(EndpointPing, Failure{Status: 502}))
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectError(t, 500, "injected failure")
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectError(t, 500, "injected failure")
		h.do(http.MethodGet, "/ping", nil).expectError(t, 502)
		h.srv.ClearFailures()
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectStatus(t, http.StatusOK)
	})

	t.Run("a dropped connection gets no response", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		mustNot(t, h.srv.InjectFailure(EndpointVersion, Failure{DropConnection: true, Times: 1}))
		// Without keep-alive the transport can't retry on a reused connection, so exactly one request is dropped.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		if resp, err := client.Get(h.url + "/api/v1/version"); err == nil {
			resp.Body.Close()
			t.Fatalf("want a connection error, got status %d", resp.StatusCode)
		}
		h.do(http.MethodGet, "/api/v1/version", nil).expectStatus(t, http.StatusOK)
		reqs := h.srv.Requests()
		diffOrFail(t, "recorded statuses", []int{0, 200}, []int{reqs[0].Status, reqs[1].Status})
	})

	t.Run("a suspended cluster refuses new tasks and lists its tasks as suspended", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		id := h.createTask(cid, `{"type":"repair","enabled":true,"schedule":{"cron":"@daily"}}`)
		mustNot(t, h.srv.SetClusterSuspended(cid, true))
		h.do(http.MethodPost, "/api/v1/cluster/"+cid+"/tasks", `{"type":"repair"}`).
			expectError(t, http.StatusBadRequest, "cluster is suspended, scheduling tasks is not allowed")
		suspended := map[string]any{}
		for _, it := range h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks", nil).list(t) {
			suspended[it["type"].(string)+"/"+it["id"].(string)] = it["suspended"]
		}
		if suspended["repair/"+id] != true {
			t.Errorf("repair task not suspended: %v", suspended)
		}
		for k, v := range suspended {
			if strings.HasPrefix(k, "healthcheck/") && v != false {
				t.Errorf("healthcheck %s suspended", k)
			}
		}
		// Updates are still allowed.
		h.do(http.MethodPut, "/api/v1/cluster/"+cid+"/task/repair/"+id, `{"type":"repair","enabled":true}`).expectStatus(t, http.StatusOK)
		if st := h.srv.State(); !st.Clusters[0].Suspended {
			t.Errorf("state does not show the cluster suspended")
		}
	})

	t.Run("cluster status reports down nodes and fails with unreachable agents", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.newCluster()
		mustNot(t, h.srv.SetNodeDown("10.0.0.3", true))
		var got []string
		for _, hs := range h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/status", nil).list(t) {
			got = append(got, hs["dc"].(string)+"/"+hs["host"].(string)+"/"+hs["status"].(string)+"/"+hs["cql_status"].(string))
		}
		diffOrFail(t, "status", []string{"dc1/10.0.0.1/UN/UP", "dc1/10.0.0.2/UN/UP", "dc1/10.0.0.3/DN/DOWN"}, got)
		h.srv.SetAgentsUnreachable("10.0.0.1", true)
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/status", nil).expectError(t, http.StatusInternalServerError, "status: couldn't connect")
	})

	t.Run("a bearer token is required when configured", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{BearerToken: "s3cr3t"})
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectError(t, http.StatusUnauthorized, "bearer token")
		req, err := http.NewRequest(http.MethodGet, h.url+"/api/v1/clusters", nil)
		mustNot(t, err)
		req.Header.Set("Authorization", "Bearer s3cr3t")
		resp, err := h.client.Do(req)
		mustNot(t, err)
		resp.Body.Close()
		diffOrFail(t, "status with token", http.StatusOK, resp.StatusCode)
	})
}

// Cluster lookups by name, as ScyllaDB Manager allows in every cluster path.
func TestFidelityClusterByName(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	cid := h.createCluster(`{"name":"ns/ScyllaDBCluster/basic","host":"10.0.0.1","auth_token":"t","without_repair":true}`)
	got := h.do(http.MethodGet, "/api/v1/cluster/ns%2FScyllaDBCluster%2Fbasic", nil).expectStatus(t, http.StatusOK).object(t)
	diffOrFail(t, "cluster by escaped name", cid, got["id"])
	h.createTask("ns%2FScyllaDBCluster%2Fbasic", `{"type":"repair","name":"r"}`)
	got = h.do(http.MethodGet, "/api/v1/cluster/"+strings.ToUpper(cid)+"/task/repair/r", nil).expectStatus(t, http.StatusOK).object(t)
	diffOrFail(t, "task by name in a cluster by upper-case ID", "r", got["name"])
}
