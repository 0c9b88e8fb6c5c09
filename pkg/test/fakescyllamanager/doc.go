// Package fakescyllamanager is an in-memory fake of the ScyllaDB Manager REST API (v3, /api/v1), faithful to the
// behaviours listed in the fidelity checklist of scylla-manager-api.md: status codes, the Location header, the cron
// JSON-in-a-string echo, disabled and soft-deleted tasks, auto-created healthcheck and repair tasks, credential
// masking, name rules, location and cron validation, and next activation computed from cron, interval and start date.
//
// A Server is an http.Handler: use it with httptest.NewServer in tests, or run it with cmd fake-scylladb-manager.
// Tests steer it with knobs (latency, injected failures and dropped connections, unreachable agents, down nodes,
// suspended clusters, inaccessible or missing buckets, per-host topologies) and inspect it, without going through
// the client under test, with State and Requests, or over HTTP at /fake/state, /fake/knobs and /fake/requests.
//
// The fake never runs tasks on their schedule. A run is recorded when a task is started, when a new task without
// cron and start date runs immediately, and when a test calls RecordRun.
//
// A backup run started by the first two uploads a small backup, laid out as ScyllaDB Manager lays backups out
// (manifests, sstables and a schema under backup/{meta,sst,schema}/cluster/<cluster ID>/), through pkg/objectstore
// to each of its locations that Knobs.S3Endpoints can reach; other locations get nothing. The run is RUNNING while it
// uploads and ERROR, with the store's error as cause, if an upload fails; State lists the uploaded keys per run
// (RunState.Uploads, State.UploadedKeys).
package fakescyllamanager
