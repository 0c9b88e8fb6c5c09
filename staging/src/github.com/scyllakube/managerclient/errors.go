package managerclient

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// APIError is an error response of ScyllaDB Manager: any status outside 2xx. ScyllaDB Manager answers 400 for
// malformed requests and validation failures, 404 when the object does not exist, and 500 for everything else,
// including many semantic failures (duplicate task name, deleted task, unreachable agents, missing bucket).
type APIError struct {
	// Method and Path identify the request.
	Method string
	Path   string
	// StatusCode is the HTTP status of the response.
	StatusCode int
	// Message is ScyllaDB Manager's error message, or the raw body when it was not an error document.
	Message string
	// Details carries hints for some errors; it is usually empty.
	Details string
	// TraceID identifies the request in ScyllaDB Manager's logs.
	TraceID string
}

// errorBody is ScyllaDB Manager's ErrorResponse document.
type errorBody struct {
	Message string `json:"message"`
	Details string `json:"details"`
	TraceID string `json:"trace_id"`
}

// Error renders the request, the status, the message and, when present, the details and trace ID.
func (e *APIError) Error() string {
	msg := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Details != "" {
		msg += " (" + e.Details + ")"
	}
	if e.TraceID != "" {
		msg += " [trace_id " + e.TraceID + "]"
	}
	return msg
}

// StatusCode returns the HTTP status of an APIError anywhere in err's chain, or 0 when there is none (for example
// a connection failure or a timeout).
func StatusCode(err error) int {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.StatusCode
	}
	return 0
}

// notFoundPrefix begins the message of ScyllaDB Manager's 404 for an object it does not hold, e.g.
// `get resource: load cluster "X": not found`.
const notFoundPrefix = "get resource:"

// IsNotFound reports whether err is ScyllaDB Manager answering that the object a request names does not exist: a 404
// with its "get resource: …" message. Other 404s say nothing about the object and are not: ScyllaDB Manager's answer
// to a path it has no endpoint for ("find endpoint for path …", a URL that misses its API), or a proxy's in front of
// it. A caller that takes "not found" for "nothing left to delete" would otherwise let go of what it still holds.
func IsNotFound(err error) bool {
	var apiErr *APIError
	return errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound && strings.HasPrefix(apiErr.Message, notFoundPrefix)
}

// IsBadRequest reports whether err is a 400 from ScyllaDB Manager: the request is malformed or invalid and
// retrying it unchanged will fail again.
func IsBadRequest(err error) bool {
	return StatusCode(err) == http.StatusBadRequest
}

// IsServerError reports whether err is a 5xx from ScyllaDB Manager. Note that ScyllaDB Manager reports some
// permanent failures, such as a duplicate task name, as 500.
func IsServerError(err error) bool {
	code := StatusCode(err)
	return code >= 500 && code <= 599
}

// ErrorMessage returns the message of an APIError in err's chain, or err.Error() for any other error.
func ErrorMessage(err error) string {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		return apiErr.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}
