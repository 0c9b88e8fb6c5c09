package fakescyllamanager

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer(Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSetKnobsRejectsInvalidKnobs(t *testing.T) {
	t.Parallel()
	tt := []struct {
		name    string
		knobs   Knobs
		wantErr string
	}{
		{name: "unknown latency endpoint", knobs: Knobs{Latency: map[Endpoint]Duration{"Nope": {time.Second}}}, wantErr: `unknown endpoint "Nope"`},
		{name: "negative latency", knobs: Knobs{Latency: map[Endpoint]Duration{EndpointPing: {-time.Second}}}, wantErr: "must not be negative"},
		{name: "negative backup latency", knobs: Knobs{BackupValidationLatency: Duration{-time.Second}}, wantErr: "must not be negative"},
		{name: "unknown failure endpoint", knobs: Knobs{Failures: map[Endpoint]Failure{"Nope": {Status: 500}}}, wantErr: `unknown endpoint "Nope"`},
		{name: "success status", knobs: Knobs{Failures: map[Endpoint]Failure{EndpointPing: {Status: 200}}}, wantErr: "between 400 and 599"},
		{name: "status on a dropped connection", knobs: Knobs{Failures: map[Endpoint]Failure{EndpointPing: {Status: 500, DropConnection: true}}}, wantErr: "no status"},
		{name: "negative times", knobs: Knobs{Failures: map[Endpoint]Failure{EndpointPing: {Status: 500, Times: -1}}}, wantErr: "times"},
		{name: "down node that is not an IP", knobs: Knobs{DownNodes: []string{"node-1"}}, wantErr: "not an IP address"},
		{name: "suspended cluster that is not a UUID", knobs: Knobs{SuspendedClusters: []string{"c1"}}, wantErr: "not a UUID"},
		{name: "location that does not parse", knobs: Knobs{Locations: map[string]LocationState{"bucket": LocationInaccessible}}, wantErr: "invalid location"},
		{name: "unknown location state", knobs: Knobs{Locations: map[string]LocationState{"s3:b": "Flooded"}}, wantErr: "unknown state"},
		{name: "topology without datacenters", knobs: Knobs{Topologies: map[string]Topology{"h": {}}}, wantErr: "no datacenters"},
		{name: "datacenter without nodes", knobs: Knobs{Topologies: map[string]Topology{"h": {Datacenters: []Datacenter{{Name: "dc"}}}}}, wantErr: "has no nodes"},
		{name: "datacenter without name", knobs: Knobs{Topologies: map[string]Topology{"h": {Datacenters: []Datacenter{{Nodes: []Node{{Address: "10.0.0.1"}}}}}}}, wantErr: "name must not be empty"},
		{name: "duplicate datacenter", knobs: Knobs{Topologies: map[string]Topology{"h": {Datacenters: []Datacenter{
			{Name: "dc", Nodes: []Node{{Address: "10.0.0.1"}}}, {Name: "dc", Nodes: []Node{{Address: "10.0.0.2"}}},
		}}}}, wantErr: "listed twice"},
		{name: "duplicate node", knobs: Knobs{Topologies: map[string]Topology{"h": {Datacenters: []Datacenter{
			{Name: "a", Nodes: []Node{{Address: "10.0.0.1"}}}, {Name: "b", Nodes: []Node{{Address: "10.0.0.1"}}},
		}}}}, wantErr: "listed twice"},
		{name: "node address that is not an IP", knobs: Knobs{Topologies: map[string]Topology{"h": {Datacenters: []Datacenter{{Name: "dc", Nodes: []Node{{Address: "n1"}}}}}}}, wantErr: "not an IP address"},
		{name: "unknown run status", knobs: Knobs{RunStatus: "SLEEPING"}, wantErr: "run status"},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newTestServer(t)
			mustNot(t, s.SetLatency(EndpointVersion, time.Second))
			before := s.Knobs()
			err := s.SetKnobs(tc.knobs)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
			diffOrFail(t, "knobs after a rejected change", before, s.Knobs())
		})
	}
}

func TestKnobSettersToggle(t *testing.T) {
	t.Parallel()
	s := newTestServer(t)
	s.SetAgentsUnreachable("h1", true)
	s.SetAgentsUnreachable("h1", true)
	s.SetAgentsUnreachable("h2", true)
	s.SetAgentsUnreachable("h1", false)
	s.SetAgentAuthToken("h1", "t")
	s.SetAgentAuthToken("h2", "u")
	s.SetAgentAuthToken("h2", "")
	mustNot(t, s.SetNodeDown("10.0.0.1", true))
	mustNot(t, s.SetNodeDown("10.0.0.2", true))
	mustNot(t, s.SetNodeDown("10.0.0.1", false))
	diffOrFail(t, "knobs", Knobs{
		UnreachableAgents: []string{"h2"},
		AgentAuthTokens:   map[string]string{"h1": "t"},
		DownNodes:         []string{"10.0.0.2"},
	}, s.Knobs())

	k := s.Knobs()
	k.DownNodes[0] = "10.9.9.9"
	diffOrFail(t, "knobs are a copy", []string{"10.0.0.2"}, s.Knobs().DownNodes)
}

func TestFakeControlEndpoints(t *testing.T) {
	t.Parallel()

	t.Run("knobs round-trip over HTTP and invalid ones are rejected", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		body := `{"latency":{"ListClusters":"1.5s"},"backupValidationLatency":"10s","failures":{"*":{"status":503,"times":2}},` +
			`"unreachableAgents":["10.0.0.9"],"downNodes":["10.0.0.2"],"locations":{"s3:b":"BucketMissing"},` +
			`"topologies":{"h":{"datacenters":[{"name":"dc1","nodes":[{"address":"10.1.0.1","hostID":"x"}]}],"keyspaces":["ks"]}},"runStatus":"ERROR"}`
		h.do(http.MethodPut, "/fake/knobs", body).expectStatus(t, http.StatusOK)
		want := Knobs{
			Latency:                 map[Endpoint]Duration{EndpointListClusters: {1500 * time.Millisecond}},
			BackupValidationLatency: Duration{10 * time.Second},
			Failures:                map[Endpoint]Failure{EndpointAll: {Status: 503, Times: 2}},
			UnreachableAgents:       []string{"10.0.0.9"},
			DownNodes:               []string{"10.0.0.2"},
			Locations:               map[string]LocationState{"s3:b": LocationBucketMissing},
			Topologies: map[string]Topology{"h": {
				Datacenters: []Datacenter{{Name: "dc1", Nodes: []Node{{Address: "10.1.0.1", HostID: "x"}}}},
				Keyspaces:   []string{"ks"},
			}},
			RunStatus: "ERROR",
		}
		diffOrFail(t, "knobs", want, h.srv.Knobs())
		var got Knobs
		mustNot(t, json.Unmarshal(h.do(http.MethodGet, "/fake/knobs", nil).expectStatus(t, http.StatusOK).Body, &got))
		diffOrFail(t, "knobs over HTTP", want, got)

		h.do(http.MethodPut, "/fake/knobs", `{"latency":{"ListClusters":"soon"}}`).expectError(t, http.StatusBadRequest, "malformed request")
		h.do(http.MethodPut, "/fake/knobs", `{"downNodes":["x"]}`).expectError(t, http.StatusBadRequest, "not an IP address")
		h.do(http.MethodPost, "/fake/knobs", `{}`).expectError(t, http.StatusMethodNotAllowed)
		diffOrFail(t, "knobs after rejected changes", want, h.srv.Knobs())
		// Knob endpoints are not subject to the injected failures.
		h.do(http.MethodPut, "/fake/knobs", `{}`).expectStatus(t, http.StatusOK)
		h.do(http.MethodGet, "/api/v1/clusters", nil).expectStatus(t, http.StatusOK)
	})

	t.Run("state shows clusters and tasks with their properties", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, Options{})
		cid := h.createCluster(`{"name":"c1","host":"10.0.0.1","auth_token":"t","without_repair":true,"labels":{"a":"b"},"username":"u","password":"p"}`)
		tid := h.createTask(cid, `{"type":"backup","name":"daily","enabled":true,"labels":{"x":"y"},`+
			`"schedule":{"cron":"0 3 * * *","interval":"0","num_retries":2,"retry_wait":"30m","window":["1:00","5:00"],"timezone":"UTC","start_date":"2025-02-01T00:00:00Z"},`+
			`"properties":{"location":["s3:b"],"retention":7,"extra":[1, 2]}}`)
		var st State
		mustNot(t, json.Unmarshal(h.do(http.MethodGet, "/fake/state", nil).expectStatus(t, http.StatusOK).Body, &st))
		diffOrFail(t, "clusters", []ClusterState{{
			ID: cid, Name: "c1", Labels: map[string]string{"a": "b"}, Host: "10.0.0.1", AuthToken: "t", Username: "u", Password: "p",
		}}, st.Clusters)
		task := st.Tasks[len(st.Tasks)-1]
		start := time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
		diffOrFail(t, "task", TaskState{
			ClusterID: cid, ID: tid, Type: "backup", Name: "daily", Enabled: true, Labels: map[string]string{"x": "y"},
			Schedule: ScheduleState{
				Cron: "0 3 * * *", StartDate: &start, Window: []string{"1:00", "5:00"}, Timezone: "UTC", NumRetries: 2, RetryWait: "30m",
			},
			Properties: json.RawMessage(`{"location":["s3:b"],"retention":7,"extra":[1,2]}`),
		}, task)
		diffOrFail(t, "state over HTTP equals State()", h.srv.State(), st)
		h.do(http.MethodPut, "/fake/state", `{}`).expectError(t, http.StatusMethodNotAllowed, "read-only")
		h.do(http.MethodGet, "/fake/nothing", nil).expectError(t, http.StatusNotFound, "no fake endpoint")
	})

	t.Run("the request log records API calls and can be reset", func(t *testing.T) {
		t.Parallel()
		var hooked []Request
		var mu sync.Mutex
		h := newHarness(t, Options{OnRequest: func(r Request) {
			mu.Lock()
			defer mu.Unlock()
			hooked = append(hooked, r)
		}})
		cid := h.newCluster()
		h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?all=true", nil)
		h.do(http.MethodGet, "/nowhere", nil)
		var got []string
		for _, r := range h.srv.Requests() {
			got = append(got, fmt.Sprintf("%s %s?%s %s %d write=%v location=%s", r.Method, r.Path, r.Query, r.Endpoint, r.Status, r.IsWrite(), r.Location))
		}
		diffOrFail(t, "requests", []string{
			"POST /api/v1/clusters? CreateCluster 201 write=true location=/api/v1/cluster/" + cid,
			"GET /api/v1/cluster/" + cid + "/tasks?all=true ListTasks 200 write=false location=",
			"GET /nowhere?  404 write=false location=",
		}, got)
		mu.Lock()
		diffOrFail(t, "hooked requests", 3, len(hooked))
		mu.Unlock()

		var overHTTP []Request
		mustNot(t, json.Unmarshal(h.do(http.MethodGet, "/fake/requests", nil).Body, &overHTTP))
		diffOrFail(t, "requests over HTTP", 3, len(overHTTP))
		h.do(http.MethodDelete, "/fake/requests", nil).expectStatus(t, http.StatusNoContent)
		// The DELETE itself is logged after the reset.
		diffOrFail(t, "requests after reset", 1, len(h.srv.Requests()))
		h.srv.ResetRequests()
		diffOrFail(t, "requests after ResetRequests", 0, len(h.srv.Requests()))
	})
}

func TestOptions(t *testing.T) {
	t.Parallel()
	if err := ValidateOptions(Options{ServerTimezone: "Mars/Olympus"}); err == nil || !strings.Contains(err.Error(), "server timezone") {
		t.Errorf("want a timezone error, got %v", err)
	}
	if err := ValidateOptions(Options{DefaultTopology: &Topology{}}); err == nil || !strings.Contains(err.Error(), "default topology") {
		t.Errorf("want a topology error, got %v", err)
	}
	if _, err := NewServer(Options{ServerTimezone: "Mars/Olympus"}); err == nil || !strings.Contains(err.Error(), "invalid fake ScyllaDB Manager options") {
		t.Errorf("want NewServer to reject invalid options, got %v", err)
	}

	h := newHarness(t, Options{Version: "3.99.0", DefaultTopology: &Topology{
		Datacenters: []Datacenter{{Name: "only", Nodes: []Node{{Address: "10.5.0.1"}, {Address: "10.5.0.2"}}}},
	}})
	diffOrFail(t, "version", map[string]any{"version": "3.99.0"}, h.do(http.MethodGet, "/version", nil).object(t))
	cid := h.newCluster()
	hosts := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/status", nil).list(t)
	diffOrFail(t, "hosts of the default topology", []any{"10.5.0.1", "10.5.0.2"}, []any{hosts[0]["host"], hosts[1]["host"]})
}

// TestConcurrentUse exercises the fake from many goroutines; run with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	h := newHarness(t, Options{})
	cid := h.newCluster()
	const workers, perWorker = 8, 10
	errs := make(chan error, workers*perWorker*2)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWorker {
				body := fmt.Sprintf(`{"type":"repair","name":"w%d-%d","enabled":true,"schedule":{"cron":"@daily"}}`, w, i)
				resp, err := http.Post(h.url+"/api/v1/cluster/"+cid+"/tasks", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					errs <- fmt.Errorf("create: status %d", resp.StatusCode)
				}
				resp, err = http.Get(h.url + "/api/v1/cluster/" + cid + "/tasks?all=true")
				if err != nil {
					errs <- err
					continue
				}
				resp.Body.Close()
				h.srv.State()
				if err := h.srv.SetNodeDown("10.0.0.9", i%2 == 0); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	items := h.do(http.MethodGet, "/api/v1/cluster/"+cid+"/tasks?type=repair", nil).list(t)
	diffOrFail(t, "tasks created concurrently", workers*perWorker, len(items))
}
