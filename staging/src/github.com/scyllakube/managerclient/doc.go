// Package managerclient is a hand-written client for the ScyllaDB Manager REST API (v3, base path /api/v1).
//
// It covers what the operator needs: clusters (list, get, create with an optional caller-chosen ID, update,
// delete and secret deletion), tasks (list with filters, get, create, update, delete, start, stop), task run
// history and progress, cluster status, ping and version.
//
// The wire quirks of ScyllaDB Manager are handled here so callers never see them:
//   - IDs of created objects come from the last segment of the Location header; create responses have no body.
//   - The server echoes schedule.cron as a JSON document inside a string; Schedule decodes either form and always
//     sends the plain spec.
//   - A list may come back as JSON null; every list method returns a non-nil, possibly empty, slice.
//   - Errors carry the HTTP status, message, details and trace ID of ScyllaDB Manager's error body (APIError).
//
// The package depends on the standard library only.
package managerclient
