package fakescyllamanager_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/scyllakube/managerclient"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescyllamanager"
)

// The contract tests run the real managerclient against the fake: every client operation, and every class of
// error the client distinguishes.

var contractNow = time.Date(2025, time.January, 1, 12, 0, 0, 0, time.UTC)

func newContract(t *testing.T, opts fakescyllamanager.Options, clientOpts managerclient.Options) (*fakescyllamanager.Server, *managerclient.Client) {
	t.Helper()
	if opts.Clock == nil {
		opts.Clock = func() time.Time { return contractNow }
	}
	srv := check(fakescyllamanager.NewServer(opts)).get(t)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	clientOpts.URL = ts.URL + "/api/v1"
	c, err := managerclient.New(clientOpts)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// checked carries a result and its error until a test takes the result with get.
type checked[T any] struct {
	v   T
	err error
}

func check[T any](v T, err error) checked[T] {
	return checked[T]{v: v, err: err}
}

// get returns the result, failing the test on an error.
func (c checked[T]) get(t *testing.T) T {
	t.Helper()
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.v
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func ptr[T any](v T) *T {
	return &v
}

// equateJSON compares raw JSON by value, not by formatting.
var equateJSON = cmp.Transformer("JSON", func(raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON: " + string(raw)
	}
	return v
})

func TestContractClusters(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv, c := newContract(t, fakescyllamanager.Options{}, managerclient.Options{})

	mustOK(t, c.Ping(ctx))
	if v := check(c.Version(ctx)).get(t); v != fakescyllamanager.DefaultVersion {
		t.Errorf("version %q", v)
	}
	if got := check(c.ListClusters(ctx)).get(t); got == nil || len(got) != 0 {
		t.Errorf("want an empty, non-nil list, got %#v", got)
	}

	const chosen = "0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10"
	labels := map[string]string{"scylla-operator.scylladb.com/owner-uid": "u1"}
	id := check(c.CreateCluster(ctx, &managerclient.Cluster{
		ID: chosen, Name: "ns/ScyllaDBCluster/basic", Labels: labels, Host: "10.0.0.1", AuthToken: "t",
		ForceTLSDisabled: true, ForceNonSSLSessionPort: true, WithoutRepair: true, Username: "u", Password: "p",
	})).get(t)
	if id != chosen {
		t.Fatalf("created %q, want the chosen %q", id, chosen)
	}
	wantCluster := &managerclient.Cluster{
		ID: chosen, Name: "ns/ScyllaDBCluster/basic", Labels: labels, Host: "10.0.0.1", AuthToken: "t",
		ForceTLSDisabled: true, ForceNonSSLSessionPort: true,
	}
	if diff := cmp.Diff(wantCluster, check(c.GetCluster(ctx, chosen)).get(t)); diff != "" {
		t.Errorf("get by ID (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantCluster, check(c.GetCluster(ctx, "ns/ScyllaDBCluster/basic")).get(t)); diff != "" {
		t.Errorf("get by name (-want +got):\n%s", diff)
	}
	listed := *wantCluster
	listed.Username, listed.Password = managerclient.CredentialsSet, managerclient.CredentialsSet
	if diff := cmp.Diff([]managerclient.Cluster{listed}, check(c.ListClusters(ctx)).get(t)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}

	// Creating again with the same ID updates.
	if again := check(c.CreateCluster(ctx, &managerclient.Cluster{ID: chosen, Name: "renamed", Host: "10.0.0.1", AuthToken: "t"})).get(t); again != chosen {
		t.Errorf("re-create returned %q", again)
	}
	updated := check(c.UpdateCluster(ctx, &managerclient.Cluster{ID: chosen, Name: "renamed", Host: "10.0.0.1", AuthToken: "t2", Labels: labels})).get(t)
	if diff := cmp.Diff(&managerclient.Cluster{ID: chosen, Name: "renamed", Host: "10.0.0.1", AuthToken: "t2", Labels: labels}, updated); diff != "" {
		t.Errorf("update (-want +got):\n%s", diff)
	}

	hosts := check(c.ClusterStatus(ctx, chosen)).get(t)
	if len(hosts) != 3 || hosts[0].Status != "UN" || hosts[0].DC != "dc1" {
		t.Errorf("status %+v", hosts)
	}

	mustOK(t, c.DeleteClusterSecrets(ctx, chosen, managerclient.DeleteSecretsOptions{CQLCredentials: true}))
	if st := srv.State(); len(st.Clusters) != 1 || st.Clusters[0].Username != "" {
		t.Errorf("want the cluster kept without credentials, got %+v", st.Clusters)
	}
	mustOK(t, c.DeleteCluster(ctx, chosen))
	if _, err := c.GetCluster(ctx, chosen); !managerclient.IsNotFound(err) {
		t.Errorf("want not found after delete, got %v", err)
	}
	if st := srv.State(); len(st.Clusters) != 0 || len(st.LiveTasks()) != 0 {
		t.Errorf("want no clusters and no live tasks, got %+v", st)
	}
}

func TestContractTasks(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv, c := newContract(t, fakescyllamanager.Options{}, managerclient.Options{})
	cid := check(c.CreateCluster(ctx, &managerclient.Cluster{Name: "c1", Host: "10.0.0.1", AuthToken: "t"})).get(t)

	defaults := check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{})).get(t)
	var defaultNames []string
	for _, it := range defaults {
		defaultNames = append(defaultNames, string(it.Type)+"/"+it.Name)
	}
	slices.Sort(defaultNames)
	if diff := cmp.Diff([]string{"healthcheck/alternator", "healthcheck/cql", "healthcheck/rest", "repair/all-weekly"}, defaultNames); diff != "" {
		t.Errorf("default tasks (-want +got):\n%s", diff)
	}
	if got := check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{Type: managerclient.TaskTypeBackup})).get(t); got == nil || len(got) != 0 {
		t.Errorf("want an empty, non-nil backup list from a null body, got %#v", got)
	}

	props := managerclient.BackupProperties{
		Location: []string{"s3:backups"}, Retention: ptr[int64](7), Continue: ptr(false),
		Extra: map[string]json.RawMessage{"future_field": json.RawMessage(`{"a":1}`)},
	}
	raw := check(props.Raw()).get(t)
	start := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)
	sched := &managerclient.Schedule{Cron: "0 3 * * *", StartDate: &start, NumRetries: 3, RetryWait: "10m", Timezone: "UTC", Window: []string{"Sat-22:00", "Sun-06:00"}}
	update := &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
		Labels: map[string]string{"scylla-operator.scylladb.com/managed-hash": "h1"}, Schedule: sched, Properties: raw,
	}
	tid := check(c.CreateTask(ctx, cid, update)).get(t)

	got := check(c.GetTask(ctx, cid, managerclient.TaskTypeBackup, tid)).get(t)
	want := &managerclient.Task{
		ClusterID: cid, ID: tid, Type: managerclient.TaskTypeBackup, Name: "daily", Enabled: true,
		Labels: update.Labels, Schedule: *sched, Properties: raw, Status: managerclient.TaskStatusNew,
	}
	if diff := cmp.Diff(want, got, equateJSON); diff != "" {
		t.Errorf("get: the task read back differs from the one sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&props, check(got.BackupProperties()).get(t), equateJSON); diff != "" {
		t.Errorf("typed properties (-want +got):\n%s", diff)
	}
	if byName := check(c.GetTask(ctx, cid, managerclient.TaskTypeBackup, "daily")).get(t); byName.ID != tid {
		t.Errorf("get by name returned %q", byName.ID)
	}

	items := check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{All: true, Type: managerclient.TaskTypeBackup, TaskID: tid, Status: managerclient.TaskStatusNew})).get(t)
	if len(items) != 1 || items[0].NextActivation == nil || !items[0].NextActivation.Equal(time.Date(2025, 1, 2, 3, 0, 0, 0, time.UTC)) {
		t.Fatalf("want the task with its next activation, got %+v", items)
	}
	if diff := cmp.Diff(*want, items[0].Task, equateJSON); diff != "" {
		t.Errorf("list item (-want +got):\n%s", diff)
	}

	// Update: disable the task, change the repair-free fields; the stored task comes back.
	update.Enabled = false
	update.Schedule = &managerclient.Schedule{Interval: "7d", StartDate: &start}
	updated := check(c.UpdateTask(ctx, cid, managerclient.TaskTypeBackup, tid, update)).get(t)
	if updated.Enabled || updated.Schedule.Interval != "7d" || updated.Schedule.Cron != "" {
		t.Errorf("update returned %+v", updated)
	}
	if hidden := check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{Type: managerclient.TaskTypeBackup})).get(t); len(hidden) != 0 {
		t.Errorf("a disabled task is listed without All: %+v", hidden)
	}

	// Runs and progress.
	never := check(c.TaskRunProgress(ctx, cid, managerclient.TaskTypeBackup, tid, managerclient.RunLatest)).get(t)
	if never.Run.Status != managerclient.TaskStatusNew {
		t.Errorf("latest of a task that never ran: %+v", never.Run)
	}
	mustOK(t, c.StartTask(ctx, cid, managerclient.TaskTypeBackup, tid, managerclient.StartTaskOptions{NoContinue: true}))
	mustOK(t, srv.SetRunStatus("RUNNING"))
	mustOK(t, c.StartTask(ctx, cid, managerclient.TaskTypeBackup, tid, managerclient.StartTaskOptions{}))
	mustOK(t, c.StopTask(ctx, cid, managerclient.TaskTypeBackup, tid, managerclient.StopTaskOptions{Disable: true}))
	history := check(c.TaskHistory(ctx, cid, managerclient.TaskTypeBackup, tid, 0)).get(t)
	var statuses []managerclient.TaskStatus
	for _, r := range history {
		statuses = append(statuses, r.Status)
	}
	if diff := cmp.Diff([]managerclient.TaskStatus{managerclient.TaskStatusStopped, managerclient.TaskStatusDone}, statuses); diff != "" {
		t.Errorf("history statuses (-want +got):\n%s", diff)
	}
	if limited := check(c.TaskHistory(ctx, cid, managerclient.TaskTypeBackup, tid, 1)).get(t); len(limited) != 1 {
		t.Errorf("limited history has %d runs", len(limited))
	}
	previous := check(c.TaskRunProgress(ctx, cid, managerclient.TaskTypeBackup, tid, managerclient.PreviousRun(1))).get(t)
	bp := check(previous.BackupProgress()).get(t)
	if previous.Run.ID != history[1].ID || bp == nil || bp.Stage != "DONE" || len(bp.DCs) != 1 {
		t.Errorf("previous run %+v with progress %+v", previous.Run, bp)
	}
	byID := check(c.TaskRunProgress(ctx, cid, managerclient.TaskTypeBackup, tid, history[0].ID)).get(t)
	if byID.Run.Status != managerclient.TaskStatusStopped {
		t.Errorf("run by ID %+v", byID.Run)
	}

	repairID := check(c.CreateTask(ctx, cid, &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeRepair, Name: "nightly", Enabled: true,
		Schedule:   &managerclient.Schedule{Cron: "@daily"},
		Properties: check(managerclient.RepairProperties{Intensity: ptr(2.0), Keyspace: []string{"system_auth"}}.Raw()).get(t),
	})).get(t)
	mustOK(t, srv.SetRunStatus("DONE"))
	mustOK(t, c.StartTask(ctx, cid, managerclient.TaskTypeRepair, repairID, managerclient.StartTaskOptions{}))
	latest := check(c.TaskRunProgress(ctx, cid, managerclient.TaskTypeRepair, repairID, managerclient.RunLatest)).get(t)
	rp := check(latest.RepairProgress()).get(t)
	if rp == nil || rp.CompletedAt == nil {
		t.Errorf("repair progress %+v", rp)
	}

	// Delete: the task is gone from lists, its GET is a server error, its name is free.
	mustOK(t, c.DeleteTask(ctx, cid, managerclient.TaskTypeRepair, repairID))
	if _, err := c.GetTask(ctx, cid, managerclient.TaskTypeRepair, repairID); !managerclient.IsServerError(err) {
		t.Errorf("want a server error for a deleted task, got %v", err)
	}
	check(c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeRepair, Name: "nightly"})).get(t)
}

func TestContractErrorClasses(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	srv, c := newContract(t, fakescyllamanager.Options{}, managerclient.Options{})
	cid := check(c.CreateCluster(ctx, &managerclient.Cluster{Name: "c1", Host: "10.0.0.1", AuthToken: "t", WithoutRepair: true})).get(t)
	check(c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeRepair, Name: "taken"})).get(t)

	apiErr := func(err error) *managerclient.APIError {
		var e *managerclient.APIError
		if !errors.As(err, &e) {
			t.Fatalf("want an APIError, got %v", err)
		}
		if e.TraceID == "" {
			t.Errorf("APIError without trace ID: %v", e)
		}
		return e
	}

	_, err := c.GetCluster(ctx, "5b6f6a1e-0000-4000-8000-000000000000")
	if e := apiErr(err); !managerclient.IsNotFound(err) || e.Message != `get resource: load cluster "5b6f6a1e-0000-4000-8000-000000000000": not found` {
		t.Errorf("not found: %v", err)
	}

	_, err = c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeRepair, Schedule: &managerclient.Schedule{Cron: "61 * * * *"}})
	if apiErr(err); !managerclient.IsBadRequest(err) {
		t.Errorf("invalid cron: %v", err)
	}

	_, err = c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeRepair, Name: "taken"})
	if e := apiErr(err); !managerclient.IsServerError(err) || e.Message != "create task: task name taken is already used" {
		t.Errorf("duplicate name: %v", err)
	}

	mustOK(t, srv.SetNodeDown("10.0.0.2", true))
	_, err = c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeRepair})
	if e := apiErr(err); !managerclient.IsServerError(err) || e.Details == "" {
		t.Errorf("down node: %v", err)
	}

	_, err = c.CreateTask(ctx, cid, &managerclient.TaskUpdate{Type: managerclient.TaskTypeBackup, Properties: json.RawMessage(`{}`)})
	if e := apiErr(err); !managerclient.IsServerError(err) || e.Message != "create backup target: missing location" {
		t.Errorf("missing location: %v", err)
	}

	mustOK(t, srv.InjectFailure(fakescyllamanager.EndpointListClusters, fakescyllamanager.Failure{Status: 503, Times: 1}))
	_, err = c.ListClusters(ctx)
	if e := apiErr(err); e.StatusCode != 503 || !managerclient.IsServerError(err) {
		t.Errorf("injected 503: %v", err)
	}

	// Without a limit on times: Go's transport retries an idempotent request once when a reused connection drops.
	mustOK(t, srv.InjectFailure(fakescyllamanager.EndpointVersion, fakescyllamanager.Failure{DropConnection: true}))
	_, err = c.Version(ctx)
	if err == nil || managerclient.StatusCode(err) != 0 {
		t.Errorf("dropped connection: want an error without status, got %v", err)
	}
	srv.ClearFailures()
	check(c.Version(ctx)).get(t)
}

func TestContractSlowBackupValidation(t *testing.T) {
	t.Parallel()
	srv, c := newContract(t, fakescyllamanager.Options{}, managerclient.Options{TaskWriteTimeout: 50 * time.Millisecond})
	ctx := t.Context()
	cid := check(c.CreateCluster(ctx, &managerclient.Cluster{Name: "c1", Host: "10.0.0.1", AuthToken: "t", WithoutRepair: true})).get(t)
	mustOK(t, srv.SetBackupValidationLatency(time.Hour))
	_, err := c.CreateTask(ctx, cid, &managerclient.TaskUpdate{
		Type: managerclient.TaskTypeBackup, Properties: json.RawMessage(`{"location":["s3:b"]}`),
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the task write timeout to end the call, got %v", err)
	}
	// Other calls are not slowed down.
	check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{})).get(t)
}

func TestContractBearerToken(t *testing.T) {
	t.Parallel()
	_, withToken := newContract(t, fakescyllamanager.Options{BearerToken: "s3cr3t"}, managerclient.Options{Token: "s3cr3t"})
	check(withToken.ListClusters(t.Context())).get(t)

	_, withoutToken := newContract(t, fakescyllamanager.Options{BearerToken: "s3cr3t"}, managerclient.Options{})
	_, err := withoutToken.ListClusters(t.Context())
	if managerclient.StatusCode(err) != 401 {
		t.Errorf("want 401 without a token, got %v", err)
	}
}

// TestContractSteadyStateIsReadOnly shows how controller tests can assert that a reconcile wrote nothing.
func TestContractSteadyStateIsReadOnly(t *testing.T) {
	t.Parallel()
	srv, c := newContract(t, fakescyllamanager.Options{}, managerclient.Options{})
	ctx := t.Context()
	cid := check(c.CreateCluster(ctx, &managerclient.Cluster{Name: "c1", Host: "10.0.0.1", AuthToken: "t"})).get(t)
	srv.ResetRequests()
	check(c.ListClusters(ctx)).get(t)
	check(c.ListTasks(ctx, cid, managerclient.ListTasksOptions{All: true})).get(t)
	writes := slices.DeleteFunc(srv.Requests(), func(r fakescyllamanager.Request) bool { return !r.IsWrite() })
	if diff := cmp.Diff([]fakescyllamanager.Request{}, writes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
}
