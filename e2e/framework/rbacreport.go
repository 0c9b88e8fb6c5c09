package framework

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/apiserver/pkg/authentication/serviceaccount"
)

// rbacReportFile is the file in the suite's directory that lists what the programs' credentials asked the API
// servers for, to compare with the install manifests' rules.
const rbacReportFile = "rbac-requests.txt"

// The audit annotation with the authorizer's decision on a request, and its value for a refusal.
const (
	authorizationDecisionKey = "authorization.k8s.io/decision"
	authorizationForbid      = "forbid"
)

// programUserAgentPrefix starts the user agent of every program of ./cmd/scylla-operator
// ("scylla-operator-<subcommand>/<version>").
const programUserAgentPrefix = "scylla-operator-"

// permissionKey is one permission a request needed, as RBAC rules name it.
type permissionKey struct {
	// Who is the ServiceAccount ("namespace/name") of a program's credential, or, for a program that got its token
	// elsewhere (the node simulator's sidecars, with their Pods' ServiceAccounts), "<program> (any ServiceAccount)".
	Who  string
	Verb string
	// Resource is "<resource>[/<subresource>].<group>", or the non-resource URL.
	Resource string
	// Scope is "cluster" for cluster-scoped or all-namespace requests, else "namespaced".
	Scope string
}

// permissionUse counts the requests that needed one permission, and how many of them the authorizer refused.
type permissionUse struct {
	requests, forbidden int
	// unbound counts the refusals that came after a RoleBinding of the requester's own namespace was deleted: a
	// sidecar still running in a Pod the garbage collector deletes with its datacenter, whose RoleBinding went first.
	// They show in the report but are no missing rule.
	unbound int
	// example is a refused request's URI, for the failure message.
	example string
}

// rbacUsage sums, per permission, the requests made with credentials, and those a program of the project made with
// any other ServiceAccount token (the sidecars'). Requests of other users (tests, admins) are left out, so are the
// 429s the API server answers while a new CRD starts being served.
func rbacUsage(events []auditv1.Event, credentials []*ServiceAccountCredential) map[permissionKey]*permissionUse {
	byID := map[string]ServiceAccount{}
	for _, c := range credentials {
		byID["JTI="+c.CredentialID] = c.ServiceAccount
	}
	unbound := roleBindingDeletions(events)
	usage := map[permissionKey]*permissionUse{}
	for i := range events {
		e := &events[i]
		if e.ResponseStatus != nil && e.ResponseStatus.Code == http.StatusTooManyRequests {
			continue
		}
		who := programServiceAccount(e, byID)
		if who == "" {
			continue
		}
		key := permissionKey{Who: who, Verb: e.Verb, Resource: e.RequestURI, Scope: "cluster"}
		if ref := e.ObjectRef; ref != nil {
			key.Resource = ref.Resource
			if ref.Subresource != "" {
				key.Resource += "/" + ref.Subresource
			}
			if ref.APIGroup != "" {
				key.Resource += "." + ref.APIGroup
			}
			// A Namespace's own reference names it as its namespace.
			if ref.Namespace != "" && !(ref.Resource == "namespaces" && ref.APIGroup == "") {
				key.Scope = "namespaced"
			}
		}
		use := usage[key]
		if use == nil {
			use = &permissionUse{}
			usage[key] = use
		}
		use.requests++
		// A 403 may also come from admission (a terminating namespace refuses new objects); only the authorizer's
		// decision says RBAC refused.
		if e.Annotations[authorizationDecisionKey] == authorizationForbid {
			if namespace, _, err := serviceaccount.SplitUsername(e.User.Username); err == nil {
				if deleted, ok := unbound[namespace]; ok && !e.StageTimestamp.Time.Before(deleted) {
					use.unbound++
					continue
				}
			}
			use.forbidden++
			use.example = e.RequestURI
		}
	}
	return usage
}

// roleBindingDeletions returns, by namespace, when a RoleBinding was first deleted there.
func roleBindingDeletions(events []auditv1.Event) map[string]time.Time {
	deletions := map[string]time.Time{}
	for i := range events {
		e := &events[i]
		ref := e.ObjectRef
		if e.Verb != "delete" || ref == nil || ref.Resource != "rolebindings" || ref.APIGroup != rbacv1.GroupName ||
			e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		if t, ok := deletions[ref.Namespace]; !ok || e.StageTimestamp.Time.Before(t) {
			deletions[ref.Namespace] = e.StageTimestamp.Time
		}
	}
	return deletions
}

// programServiceAccount returns permissionKey.Who for a request of a program, or "" for anyone else's.
func programServiceAccount(e *auditv1.Event, byID map[string]ServiceAccount) string {
	for _, id := range e.User.Extra[credentialIDKey] {
		if sa, ok := byID[id]; ok && e.User.Username == sa.Username() {
			return sa.String()
		}
	}
	if !strings.HasPrefix(e.User.Username, serviceaccount.ServiceAccountUsernamePrefix) || !strings.HasPrefix(e.UserAgent, programUserAgentPrefix) {
		return ""
	}
	program, _, _ := strings.Cut(e.UserAgent, "/")
	return program + " (any ServiceAccount)"
}

// describeRBACUsage lists the permissions one per line, sorted, with their counts.
func describeRBACUsage(usage map[permissionKey]*permissionUse) string {
	lines := make([]string, 0, len(usage))
	for k, u := range usage {
		line := fmt.Sprintf("%s\t%s\t%s\t%s\trequests=%d", k.Who, k.Verb, k.Resource, k.Scope, u.requests)
		if u.forbidden != 0 {
			line += fmt.Sprintf("\tFORBIDDEN=%d (e.g. %s)", u.forbidden, u.example)
		}
		if u.unbound != 0 {
			line += fmt.Sprintf("\trefused after a RoleBinding of its namespace was deleted=%d", u.unbound)
		}
		lines = append(lines, line)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// forbiddenRequests returns the lines of describeRBACUsage for permissions RBAC refused at least once.
func forbiddenRequests(usage map[permissionKey]*permissionUse) string {
	refused := map[permissionKey]*permissionUse{}
	for k, u := range usage {
		if u.forbidden != 0 {
			refused[k] = u
		}
	}
	return describeRBACUsage(refused)
}

// checkProgramPermissions reads every control plane's audit log, writes what the programs asked for with their
// ServiceAccounts' tokens (ProgramKubeconfig, RemoteKubeconfig, and the sidecars' Pods') to rbacReportFile, and
// returns an error listing the requests RBAC refused them: the install manifests lack a rule the programs need.
func (s *Suite) checkProgramPermissions() error {
	s.mu.Lock()
	credentials := append([]*ServiceAccountCredential(nil), s.credentials...)
	s.mu.Unlock()
	var report strings.Builder
	var refused []string
	for _, cp := range s.ControlPlanes {
		events, err := cp.Audit.EventsSince(AuditMark{})
		if err != nil {
			return fmt.Errorf("can't read the audit log of %s: %w", cp.Name, err)
		}
		usage := rbacUsage(events, credentials)
		fmt.Fprintf(&report, "# %s: ServiceAccount, verb, resource, scope, requests\n%s\n", cp.Name, describeRBACUsage(usage))
		if f := forbiddenRequests(usage); f != "" {
			refused = append(refused, fmt.Sprintf("%s:\n%s", cp.Name, f))
		}
	}
	path := filepath.Join(s.Dir, rbacReportFile)
	if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
		return fmt.Errorf("can't write %s: %w", path, err)
	}
	if len(refused) != 0 {
		return fmt.Errorf("RBAC refused requests of the programs, so the install manifests lack rules they need (all their requests: %s):\n%s", path, strings.Join(refused, "\n"))
	}
	return nil
}
