package managerclient

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	testClusterID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	testBackupID  = "6e4d2b1a-0f9e-4c8d-b7a6-958473625140"
	testRepairID  = "9d3f2a10-5b7c-4e8f-a1b2-c3d4e5f60718"
)

// callCase is one client call against recorded exchanges.
type callCase struct {
	name      string
	exchanges []string
	call      func(ctx context.Context, c *Client) (any, error)
	want      any
	// wantAPIErr is the expected *APIError; wantErrText a substring of any other expected error.
	wantAPIErr  *APIError
	wantErrText string
}

func runCallCases(t *testing.T, file string, cases []callCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newReplayClient(t, file, tc.exchanges...)
			got, err := tc.call(t.Context(), c)
			checkErr(t, err, tc.wantAPIErr, tc.wantErrText)
			if err != nil {
				return
			}
			if diff := cmp.Diff(tc.want, got, equateJSON); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func checkErr(t *testing.T, err error, wantAPIErr *APIError, wantErrText string) {
	t.Helper()
	switch {
	case wantAPIErr != nil:
		var apiErr *APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("want an APIError, got %v", err)
		}
		if diff := cmp.Diff(wantAPIErr, apiErr); diff != "" {
			t.Errorf("APIError (-want +got):\n%s", diff)
		}
	case wantErrText != "":
		expectError(t, err, wantErrText)
		if code := StatusCode(err); code != 0 {
			t.Errorf("want an error without HTTP status, got status %d: %v", code, err)
		}
	case err != nil:
		t.Fatalf("unexpected error: %v", err)
	}
}

// expectError fails the test unless err matches want: nil when want is empty, otherwise an error containing want.
// It returns whether an error was expected, in which case the caller has nothing more to check.
func expectError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, got %v", want, err)
	}
	return true
}

func timePtr(s string) *time.Time {
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &tm
}

func ptr[T any](v T) *T {
	return &v
}

func TestClientGeneral(t *testing.T) {
	t.Parallel()
	runCallCases(t, "general.json", []callCase{
		{
			name:      "ping answers with no content",
			exchanges: []string{"ping"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.Ping(ctx)
			},
		},
		{
			name:      "version reads the version document",
			exchanges: []string{"version"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Version(ctx)
			},
			want: "3.12.0",
		},
		{
			name:      "an unknown endpoint is a 404 with the server's message and trace ID",
			exchanges: []string{"unknown-endpoint"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Version(ctx)
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: "/api/v1/version", StatusCode: 404,
				Message: "find endpoint for path /api/v1/version - make sure api-url is correct",
				TraceID: "kq1lcr0DTGuG6WQHrz6XYA",
			},
		},
		{
			name:      "an error that is not an error document keeps the raw body as message",
			exchanges: []string{"proxy-bad-gateway"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Version(ctx)
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: "/api/v1/version", StatusCode: 502,
				Message: "<html><body>502 Bad Gateway</body></html>",
			},
		},
		{
			name:      "a success body that is not JSON is a decoding error",
			exchanges: []string{"version-not-json"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Version(ctx)
			},
			wantErrText: "can't decode response of GET /api/v1/version",
		},
		{
			name:      "an empty success body where one is expected is an error",
			exchanges: []string{"version-empty-body"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.Version(ctx)
			},
			wantErrText: "empty body",
		},
	})
}

func TestClientSendsBearerToken(t *testing.T) {
	t.Parallel()
	srv := newReplayServer(t, "general.json", "ping-with-token")
	c, err := New(Options{URL: srv.URL + "/api/v1/", Token: "s3cr3t"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestClientClusters(t *testing.T) {
	t.Parallel()
	ownerLabels := map[string]string{"scylla-operator.scylladb.com/owner-uid": "8a1b4f3c-0c8e-4e57-9a55-1f6f5f2e0b7a"}
	newCluster := func() *Cluster {
		return &Cluster{
			Name: "ns/ScyllaDBCluster/basic", Host: "basic-client.ns.svc", AuthToken: "token-1",
			ForceTLSDisabled: true, ForceNonSSLSessionPort: true, WithoutRepair: true, Labels: ownerLabels,
		}
	}
	abs := &Cluster{Name: "abs", Host: "10.0.0.1", AuthToken: "t"}

	runCallCases(t, "clusters.json", []callCase{
		{
			name:      "list returns clusters with masked credentials",
			exchanges: []string{"list"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListClusters(ctx)
			},
			want: []Cluster{
				{
					ID: testClusterID, Name: "ns/ScyllaDBCluster/basic",
					Labels: map[string]string{
						"scylla-operator.scylladb.com/owner-uid":    "8a1b4f3c-0c8e-4e57-9a55-1f6f5f2e0b7a",
						"scylla-operator.scylladb.com/managed-hash": "abc123",
					},
					Host: "basic-client.ns.svc", AuthToken: "token-1", ForceTLSDisabled: true, ForceNonSSLSessionPort: true,
					Username: CredentialsSet, Password: CredentialsSet,
				},
				{
					ID: "7c9e6679-7425-40de-944b-e07fc1f90ae7", Name: "other", Host: "10.0.0.7", Port: 10011,
					AuthToken: "token-2", Username: "not set", Password: "not set",
				},
			},
		},
		{
			name:      "an empty list is an empty, non-nil slice",
			exchanges: []string{"list-empty"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListClusters(ctx)
			},
			want: []Cluster{},
		},
		{
			name:      "create returns the ID from the Location header",
			exchanges: []string{"create"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, newCluster())
			},
			want: testClusterID,
		},
		{
			name:      "create sends a caller-chosen ID",
			exchanges: []string{"create-with-id"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, &Cluster{
					ID: "0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10", Name: "predesignated", Host: "10.0.0.1",
					AuthToken: "token-1", WithoutRepair: true,
				})
			},
			want: "0b7e3a86-3ad6-4c4c-8c33-7a3b2a1e9f10",
		},
		{
			name:      "create reads the ID from an absolute Location",
			exchanges: []string{"create-absolute-location"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, abs)
			},
			want: "1d6f5a2e-77b1-4c83-b0a4-1b0a1e2c3d4e",
		},
		{
			name:      "create without a Location header is an error",
			exchanges: []string{"create-no-location"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, abs)
			},
			wantErrText: "no Location header",
		},
		{
			name:      "create with a Location not ending in a UUID is an error",
			exchanges: []string{"create-bad-location"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, abs)
			},
			wantErrText: "is not a UUID",
		},
		{
			name:      "a taken name is a bad request",
			exchanges: []string{"create-name-taken"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, &Cluster{Name: "other", Host: "10.0.0.1", AuthToken: "t"})
			},
			wantAPIErr: &APIError{
				Method: "POST", Path: "/api/v1/clusters", StatusCode: 400,
				Message: `create cluster: name "other" is already taken`, TraceID: "Zr7wq2VXSeW1hQxT3n0Fvg",
			},
		},
		{
			name:      "unreachable agents are a server error",
			exchanges: []string{"create-agents-unreachable"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateCluster(ctx, &Cluster{Name: "down", Host: "10.0.0.9", AuthToken: "t"})
			},
			wantAPIErr: &APIError{
				Method: "POST", Path: "/api/v1/clusters", StatusCode: 500,
				Message: "create cluster: couldn't connect to 10.0.0.9:10001: dial tcp 10.0.0.9:10001: connect: connection refused: " +
					"make sure the IP is correct and access to port 10001 is unblocked",
				TraceID: "b0cS2oQKQ2yN9m2d9d3l2A",
			},
		},
		{
			name:      "get by ID",
			exchanges: []string{"get-by-id"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetCluster(ctx, testClusterID)
			},
			want: &Cluster{
				ID: testClusterID, Name: "ns/ScyllaDBCluster/basic", Labels: ownerLabels, Host: "basic-client.ns.svc",
				AuthToken: "token-1", ForceTLSDisabled: true, ForceNonSSLSessionPort: true,
			},
		},
		{
			name:      "get by a name with slashes escapes them",
			exchanges: []string{"get-by-name"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetCluster(ctx, "ns/ScyllaDBCluster/basic")
			},
			want: &Cluster{
				ID: testClusterID, Name: "ns/ScyllaDBCluster/basic", Host: "basic-client.ns.svc",
				AuthToken: "token-1", ForceTLSDisabled: true, ForceNonSSLSessionPort: true,
			},
		},
		{
			name:      "get of a missing cluster is not found",
			exchanges: []string{"get-not-found"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetCluster(ctx, "5b6f6a1e-0000-4000-8000-000000000000")
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: "/api/v1/cluster/5b6f6a1e-0000-4000-8000-000000000000", StatusCode: 404,
				Message: `get resource: load cluster "5b6f6a1e-0000-4000-8000-000000000000": not found`,
				TraceID: "9a7fxkI2QmWq8jJ1cXcUwQ",
			},
		},
		{
			name:      "update puts the whole cluster and returns the stored one",
			exchanges: []string{"update"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateCluster(ctx, &Cluster{
					ID: testClusterID, Name: "ns/ScyllaDBCluster/basic", Host: "basic-client.ns.svc",
					AuthToken: "token-2", Username: "cassandra", Password: "cassandra",
				})
			},
			want: &Cluster{ID: testClusterID, Name: "ns/ScyllaDBCluster/basic", Host: "basic-client.ns.svc", AuthToken: "token-2"},
		},
		{
			name:      "update with half of the credentials is a bad request",
			exchanges: []string{"update-missing-password"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateCluster(ctx, &Cluster{ID: testClusterID, Host: "basic-client.ns.svc", AuthToken: "token-2", Username: "cassandra"})
			},
			wantAPIErr: &APIError{
				Method: "PUT", Path: "/api/v1/cluster/" + testClusterID, StatusCode: 400,
				Message: `update cluster "` + testClusterID + `": invalid cluster: missing password`,
				TraceID: "Hq3r0B1yQ0qk4m3J7xZ2bQ",
			},
		},
		{
			name:      "delete removes the cluster",
			exchanges: []string{"delete"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteCluster(ctx, testClusterID)
			},
		},
		{
			name:      "delete secrets sends only the selected flags",
			exchanges: []string{"delete-secrets"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteClusterSecrets(ctx, testClusterID, DeleteSecretsOptions{CQLCredentials: true, SSLUserCert: true})
			},
		},
		{
			name:      "status lists hosts",
			exchanges: []string{"status"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ClusterStatus(ctx, testClusterID)
			},
			want: []HostStatus{
				{
					DC: "us-east-1", HostID: "a1f0c1de-1b8e-4b7a-9d0e-6a2f2c6e1b01", Host: "10.0.0.1", Status: "UN",
					CQLStatus: "UP", CQLRttMs: 1.5, RESTStatus: "UP", RESTRttMs: 2.25, TotalRAM: 8589934592, Uptime: 3600,
					CPUCount: 4, ScyllaVersion: "6.2.0", AgentVersion: "3.12.0",
				},
				{
					DC: "us-east-1", HostID: "a1f0c1de-1b8e-4b7a-9d0e-6a2f2c6e1b02", Host: "10.0.0.2", Status: "DN",
					CQLStatus: "DOWN", CQLCause: "dial tcp 10.0.0.2:9042: i/o timeout", RESTStatus: "DOWN", RESTCause: "timeout",
				},
			},
		},
	})
}

func TestClientTasks(t *testing.T) {
	t.Parallel()
	taskURL := "/api/v1/cluster/" + testClusterID + "/task/backup/" + testBackupID
	repairURL := "/api/v1/cluster/" + testClusterID + "/task/repair/" + testRepairID

	runCallCases(t, "tasks.json", []callCase{
		{
			name:      "a null list is an empty, non-nil slice",
			exchanges: []string{"list-null"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListTasks(ctx, testClusterID, ListTasksOptions{Type: TaskTypeBackup})
			},
			want: []TaskListItem{},
		},
		{
			name:      "list sends every filter and decodes the cron quirk, next activation and unknown properties",
			exchanges: []string{"list-filtered"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListTasks(ctx, testClusterID, ListTasksOptions{
					All: true, Type: TaskTypeRepair, Status: TaskStatusNew, TaskID: testRepairID, Short: true,
				})
			},
			want: []TaskListItem{{
				Task: Task{
					ClusterID: testClusterID, ID: testRepairID, Type: TaskTypeRepair, Name: "weekly",
					Labels: map[string]string{"scylla-operator.scylladb.com/managed-hash": "h1"},
					Schedule: Schedule{
						Cron: "0 2 * * SUN", StartDate: timePtr("2025-01-01T00:00:00Z"), NumRetries: 3, RetryWait: "10m",
					},
					Properties: json.RawMessage(`{"keyspace":["*","!system_traces"],"intensity":1,"incremental_mode":"incremental"}`),
					Status:     TaskStatusNew,
				},
				NextActivation: timePtr("2025-01-05T02:00:00Z"),
			}},
		},
		{
			name:      "list without filters sends no query and decodes enabled, suspended and retry",
			exchanges: []string{"list-enabled"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.ListTasks(ctx, testClusterID, ListTasksOptions{})
			},
			want: []TaskListItem{
				{
					Task: Task{
						ClusterID: testClusterID, ID: "11111111-2222-4333-8444-555555555555", Type: TaskTypeHealthcheck,
						Name: "cql", Enabled: true,
						Schedule:   Schedule{Cron: "@every 15s", StartDate: timePtr("2025-01-01T10:00:00Z"), RetryWait: "0"},
						Properties: json.RawMessage(`{"mode":"cql"}`),
						Status:     TaskStatusDone, SuccessCount: 40, LastSuccess: timePtr("2025-01-01T10:10:00Z"),
					},
					NextActivation: timePtr("2025-01-01T10:10:15Z"),
				},
				{
					Task: Task{
						ClusterID: testClusterID, ID: testBackupID, Type: TaskTypeBackup, Name: "daily", Enabled: true,
						Schedule: Schedule{
							StartDate: timePtr("2025-01-02T00:00:00Z"), Interval: "1d", NumRetries: 3, RetryWait: "10m",
						},
						Properties: json.RawMessage(`{"location":["s3:backups"],"retention":7}`),
						Status:     TaskStatusError, SuccessCount: 1, ErrorCount: 1,
						LastSuccess: timePtr("2025-01-01T00:05:00Z"), LastError: timePtr("2025-01-02T00:05:00Z"),
					},
					Suspended: true, Retry: 2,
				},
			},
		},
		{
			name:      "get decodes the task",
			exchanges: []string{"get"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetTask(ctx, testClusterID, TaskTypeBackup, testBackupID)
			},
			want: &Task{
				ClusterID: testClusterID, ID: testBackupID, Type: TaskTypeBackup, Name: "daily",
				Schedule: Schedule{
					Cron: "0 3 * * *", StartDate: timePtr("2025-01-02T00:00:00Z"), Window: []string{"Sat-22:00", "Sun-06:00"},
					Timezone: "Europe/Warsaw", NumRetries: 3, RetryWait: "10m",
				},
				Properties: json.RawMessage(`{"location":["dc1:s3:backups","gcs:other"],"keyspace":["ks1","!ks1.tmp"],` +
					`"retention":0,"continue":false,"upload_parallel":["2"],"future_field":{"nested":[1,2]}}`),
				Status: TaskStatusNew,
			},
		},
		{
			name:      "get by name accepts a plain cron and an empty interval",
			exchanges: []string{"get-by-name"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetTask(ctx, testClusterID, TaskTypeRepair, "weekly")
			},
			want: &Task{
				ClusterID: testClusterID, ID: testRepairID, Type: TaskTypeRepair, Name: "weekly", Enabled: true,
				Schedule:   Schedule{Cron: "0 2 * * SUN"},
				Properties: json.RawMessage(`{}`),
				Status:     TaskStatusNew,
			},
		},
		{
			name:      "get of a deleted task is a server error, not a 404",
			exchanges: []string{"get-deleted"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetTask(ctx, testClusterID, TaskTypeBackup, testBackupID)
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: taskURL, StatusCode: 500,
				Message: `load task "` + testBackupID + `": task "` + testBackupID + `" is deleted`,
				TraceID: "c3Zk0R0BQ4mZf2aGd3yL1w",
			},
		},
		{
			name:      "get of a task that never existed is not found",
			exchanges: []string{"get-not-found"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetTask(ctx, testClusterID, TaskTypeBackup, testBackupID)
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: taskURL, StatusCode: 404,
				Message: `get resource: load task "` + testBackupID + `": not found`,
				TraceID: "Vt0a4r0aTfS0b6Y8x2H1Vw",
			},
		},
		{
			name:      "an unknown task type is a bad request",
			exchanges: []string{"get-bad-type"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.GetTask(ctx, testClusterID, TaskType("snapshot"), testBackupID)
			},
			wantAPIErr: &APIError{
				Method: "GET", Path: "/api/v1/cluster/" + testClusterID + "/task/snapshot/" + testBackupID, StatusCode: 400,
				Message: `malformed request: unrecognized TaskType "snapshot"`, TraceID: "XW3mT0o8S7m4pTq0e8l2dA",
			},
		},
		{
			name:      "create sends a plain cron and typed properties with extras, and returns the ID from Location",
			exchanges: []string{"create-backup"},
			call: func(ctx context.Context, c *Client) (any, error) {
				props, err := BackupProperties{
					Location: []string{"s3:backups"}, Retention: ptr[int64](7), RateLimit: []string{"dc1:100"},
					SkipSchema: ptr(true), Extra: map[string]json.RawMessage{"future_field": json.RawMessage(`"kept"`)},
				}.Raw()
				if err != nil {
					return nil, err
				}
				return c.CreateTask(ctx, testClusterID, &TaskUpdate{
					Type: TaskTypeBackup, Name: "daily", Enabled: true,
					Labels:     map[string]string{"scylla-operator.scylladb.com/managed-hash": "h2"},
					Schedule:   &Schedule{Cron: "0 3 * * *", StartDate: timePtr("2025-01-02T00:00:00Z"), NumRetries: 3},
					Properties: props,
				})
			},
			want: testBackupID,
		},
		{
			name:      "a duplicate task name is a server error",
			exchanges: []string{"create-duplicate-name"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateTask(ctx, testClusterID, &TaskUpdate{Type: TaskTypeRepair, Name: "weekly", Properties: json.RawMessage(`{}`)})
			},
			wantAPIErr: &APIError{
				Method: "POST", Path: "/api/v1/cluster/" + testClusterID + "/tasks", StatusCode: 500,
				Message: "create task: task name weekly is already used", TraceID: "p0Y7hQ2mR2K5rW2s8q3xJw",
			},
		},
		{
			name:      "a down node carries details",
			exchanges: []string{"create-node-down"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateTask(ctx, testClusterID, &TaskUpdate{Type: TaskTypeRepair, Name: "weekly", Properties: json.RawMessage(`{}`)})
			},
			wantAPIErr: &APIError{
				Method: "POST", Path: "/api/v1/cluster/" + testClusterID + "/tasks", StatusCode: 500,
				Message: "create repair target: host 10.0.0.2 is down",
				Details: "One of the nodes is down. Task cannot be created. Check --ignore-down-hosts to repair the live nodes only.",
				TraceID: "m1B0sLr1Rk2P4d7A1b2c3w",
			},
		},
		{
			name:      "an invalid cron is a bad request",
			exchanges: []string{"create-invalid-cron"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.CreateTask(ctx, testClusterID, &TaskUpdate{Type: TaskTypeRepair, Schedule: &Schedule{Cron: "61 * * * *"}, Properties: json.RawMessage(`{}`)})
			},
			wantAPIErr: &APIError{
				Method: "POST", Path: "/api/v1/cluster/" + testClusterID + "/tasks", StatusCode: 400,
				Message: "malformed request: cron: end of range (61) above maximum (59): 61", TraceID: "Qm2aT5s2R1y9V5m3N1o8Pg",
			},
		},
		{
			name:      "update fills the type from the arguments and returns the stored task",
			exchanges: []string{"update"},
			call: func(ctx context.Context, c *Client) (any, error) {
				props, err := RepairProperties{Keyspace: []string{"ks1"}, Intensity: ptr(2.0), Host: "10.0.0.1"}.Raw()
				if err != nil {
					return nil, err
				}
				return c.UpdateTask(ctx, testClusterID, TaskTypeRepair, testRepairID, &TaskUpdate{
					Name: "weekly", Enabled: true, Schedule: &Schedule{Cron: "0 2 * * SUN", Timezone: "UTC"}, Properties: props,
				})
			},
			want: &Task{
				ClusterID: testClusterID, ID: testRepairID, Type: TaskTypeRepair, Name: "weekly", Enabled: true,
				Schedule:   Schedule{Cron: "0 2 * * SUN", Timezone: "UTC", RetryWait: "0"},
				Properties: json.RawMessage(`{"keyspace":["ks1"],"intensity":2,"host":"10.0.0.1"}`),
				Status:     TaskStatusNew,
			},
		},
		{
			name:      "an invalid repair host is a bad request",
			exchanges: []string{"update-bad-host"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.UpdateTask(ctx, testClusterID, TaskTypeRepair, testRepairID, &TaskUpdate{
					Type: TaskTypeRepair, Properties: json.RawMessage(`{"host":"node-1"}`),
				})
			},
			wantAPIErr: &APIError{
				Method: "PUT", Path: repairURL, StatusCode: 400,
				Message: `update task "` + testRepairID + `": parse host IP address: "node-1" is not an IP address`,
				TraceID: "L1a2B3c4D5e6F7g8H9i0Jw",
			},
		},
		{
			name:      "delete",
			exchanges: []string{"delete"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return nil, c.DeleteTask(ctx, testClusterID, TaskTypeBackup, testBackupID)
			},
		},
		{
			name:      "start and start without continue",
			exchanges: []string{"start", "start-no-continue"},
			call: func(ctx context.Context, c *Client) (any, error) {
				if err := c.StartTask(ctx, testClusterID, TaskTypeBackup, testBackupID, StartTaskOptions{}); err != nil {
					return nil, err
				}
				return nil, c.StartTask(ctx, testClusterID, TaskTypeBackup, testBackupID, StartTaskOptions{NoContinue: true})
			},
		},
		{
			name:      "stop and stop with disable",
			exchanges: []string{"stop", "stop-disable"},
			call: func(ctx context.Context, c *Client) (any, error) {
				if err := c.StopTask(ctx, testClusterID, TaskTypeBackup, testBackupID, StopTaskOptions{}); err != nil {
					return nil, err
				}
				return nil, c.StopTask(ctx, testClusterID, TaskTypeBackup, testBackupID, StopTaskOptions{Disable: true})
			},
		},
		{
			name:      "history with a limit returns runs newest first",
			exchanges: []string{"history"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.TaskHistory(ctx, testClusterID, TaskTypeBackup, testBackupID, 2)
			},
			want: []TaskRun{
				{
					ClusterID: testClusterID, Type: TaskTypeBackup, TaskID: testBackupID, ID: "a0000000-0000-1000-8000-000000000002",
					Status: TaskStatusError, Cause: "location is not accessible",
					StartTime: *timePtr("2025-01-02T00:00:00Z"), EndTime: timePtr("2025-01-02T00:05:00Z"),
				},
				{
					ClusterID: testClusterID, Type: TaskTypeBackup, TaskID: testBackupID, ID: "a0000000-0000-1000-8000-000000000001",
					Status: TaskStatusDone, StartTime: *timePtr("2025-01-01T00:00:00Z"), EndTime: timePtr("2025-01-01T00:05:00Z"),
				},
			},
		},
		{
			name:      "empty history without a limit",
			exchanges: []string{"history-empty"},
			call: func(ctx context.Context, c *Client) (any, error) {
				return c.TaskHistory(ctx, testClusterID, TaskTypeBackup, testBackupID, 0)
			},
			want: []TaskRun{},
		},
		{
			name:      "latest progress of a task that never ran is NEW with empty progress",
			exchanges: []string{"progress-latest-never-ran"},
			call: func(ctx context.Context, c *Client) (any, error) {
				p, err := c.TaskRunProgress(ctx, testClusterID, TaskTypeRepair, testRepairID, RunLatest)
				if err != nil {
					return nil, err
				}
				rp, err := p.RepairProgress()
				return []any{p.Run, rp}, err
			},
			want: []any{
				TaskRun{
					ClusterID: testClusterID, Type: TaskTypeRepair, TaskID: testRepairID,
					ID: "00000000-0000-0000-0000-000000000000", Status: TaskStatusNew,
				},
				&RepairProgress{},
			},
		},
		{
			name:      "progress of a previous run decodes the backup progress",
			exchanges: []string{"progress-previous"},
			call: func(ctx context.Context, c *Client) (any, error) {
				p, err := c.TaskRunProgress(ctx, testClusterID, TaskTypeBackup, testBackupID, PreviousRun(1))
				if err != nil {
					return nil, err
				}
				return p.BackupProgress()
			},
			want: &BackupProgress{
				SnapshotTag: "sm_20250101000000UTC", DCs: []string{"dc1"},
				Hosts: []HostProgress{{
					Host: "10.0.0.1", Size: 100, Uploaded: 90, Skipped: 10,
					StartedAt: timePtr("2025-01-01T00:00:01Z"), CompletedAt: timePtr("2025-01-01T00:04:00Z"),
				}},
				Stage: "DONE", Size: 100, Uploaded: 90, Skipped: 10,
				StartedAt: timePtr("2025-01-01T00:00:00Z"), CompletedAt: timePtr("2025-01-01T00:05:00Z"),
			},
		},
		{
			name:      "progress by run ID without recorded progress",
			exchanges: []string{"progress-by-id-no-progress"},
			call: func(ctx context.Context, c *Client) (any, error) {
				p, err := c.TaskRunProgress(ctx, testClusterID, TaskTypeBackup, testBackupID, "a0000000-0000-1000-8000-000000000002")
				if err != nil {
					return nil, err
				}
				bp, err := p.BackupProgress()
				return []any{p.HasProgress(), bp == nil}, err
			},
			want: []any{false, true},
		},
	})
}
