package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

// AuditLog reads the API server's audit log (JSON lines, Metadata level, one event per finished request).
type AuditLog struct {
	// Path of the log file.
	Path string
}

// AuditMark is a position in the audit log; events after it belong to requests that finished later.
type AuditMark struct {
	offset int64
}

// Mark returns the current end of the log, to count the requests of a window that starts now.
func (a *AuditLog) Mark() (AuditMark, error) {
	info, err := os.Stat(a.Path)
	if os.IsNotExist(err) {
		return AuditMark{}, nil
	}
	if err != nil {
		return AuditMark{}, fmt.Errorf("can't stat audit log: %w", err)
	}
	return AuditMark{offset: info.Size()}, nil
}

// EventsSince returns the events written after mark (AuditMark{} for all of them).
func (a *AuditLog) EventsSince(mark AuditMark) ([]auditv1.Event, error) {
	f, err := os.Open(a.Path)
	if err != nil {
		return nil, fmt.Errorf("can't open audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(mark.offset, io.SeekStart); err != nil {
		return nil, fmt.Errorf("can't seek in audit log: %w", err)
	}
	return parseAuditEvents(f)
}

// parseAuditEvents decodes JSON lines. A last line without its newline is being written and is skipped. Events
// that share an audit ID (a watch logs ResponseStarted and ResponseComplete) are kept once.
func parseAuditEvents(r io.Reader) ([]auditv1.Event, error) {
	var events []auditv1.Event
	seen := map[string]bool{}
	reader := bufio.NewReaderSize(r, 64<<10)
	for lineNo := 1; ; lineNo++ {
		line, err := reader.ReadBytes('\n')
		if err == io.EOF {
			return events, nil
		}
		if err != nil {
			return nil, fmt.Errorf("can't read audit log: %w", err)
		}
		var e auditv1.Event
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("can't decode audit event on line %d: %w", lineNo, err)
		}
		if seen[string(e.AuditID)] {
			continue
		}
		seen[string(e.AuditID)] = true
		events = append(events, e)
	}
}

// RequestKey groups audit events.
type RequestKey struct {
	// UserAgent is the request's User-Agent header.
	UserAgent string
	// Verb is the Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection.
	Verb string
}

// RequestCounts counts requests by user agent and verb.
type RequestCounts map[RequestKey]int

// CountRequests counts the events that every filter accepts.
func CountRequests(events []auditv1.Event, filters ...AuditFilter) RequestCounts {
	counts := RequestCounts{}
	for i := range events {
		if acceptAll(&events[i], filters) {
			counts[RequestKey{UserAgent: events[i].UserAgent, Verb: events[i].Verb}]++
		}
	}
	return counts
}

func acceptAll(e *auditv1.Event, filters []AuditFilter) bool {
	for _, f := range filters {
		if !f(e) {
			return false
		}
	}
	return true
}

// Total returns the number of requests counted.
func (c RequestCounts) Total() int {
	total := 0
	for _, n := range c {
		total += n
	}
	return total
}

// String lists the counts, one "user-agent verb=N" per line, sorted, for failure messages.
func (c RequestCounts) String() string {
	lines := make([]string, 0, len(c))
	for k, n := range c {
		lines = append(lines, fmt.Sprintf("%q %s=%d", k.UserAgent, k.Verb, n))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// AuditFilter selects audit events.
type AuditFilter func(*auditv1.Event) bool

// writeVerbs are the verbs that change state.
var writeVerbs = map[string]bool{"create": true, "update": true, "patch": true, "delete": true, "deletecollection": true}

// IsWriteVerb reports whether verb changes state.
func IsWriteVerb(verb string) bool {
	return writeVerbs[verb]
}

// Writes selects requests that change state.
func Writes() AuditFilter {
	return func(e *auditv1.Event) bool { return IsWriteVerb(e.Verb) }
}

// UserAgent selects requests whose user agent is exactly userAgent.
func UserAgent(userAgent string) AuditFilter {
	return func(e *auditv1.Event) bool { return e.UserAgent == userAgent }
}

// UserAgentPrefix selects requests whose user agent starts with prefix. Programs that identify themselves as
// "<name>/<version> ..." are selected with "<name>/".
func UserAgentPrefix(prefix string) AuditFilter {
	return func(e *auditv1.Event) bool { return strings.HasPrefix(e.UserAgent, prefix) }
}

// InNamespace selects requests for objects in a namespace.
func InNamespace(namespace string) AuditFilter {
	return func(e *auditv1.Event) bool { return e.ObjectRef != nil && e.ObjectRef.Namespace == namespace }
}

// OnResource selects requests for a resource (plural, such as "statefulsets"), optionally a subresource too
// ("status"); an empty subresource matches the main resource only.
func OnResource(resource, subresource string) AuditFilter {
	return func(e *auditv1.Event) bool {
		return e.ObjectRef != nil && e.ObjectRef.Resource == resource && e.ObjectRef.Subresource == subresource
	}
}

// Succeeded selects requests that got a 2xx response.
func Succeeded() AuditFilter {
	return func(e *auditv1.Event) bool {
		return e.ResponseStatus != nil && e.ResponseStatus.Code >= 200 && e.ResponseStatus.Code < 300
	}
}
