package framework

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
)

func TestRBACUsageCountsTheRequestsOfProgramCredentials(t *testing.T) {
	t.Parallel()
	operator := ServiceAccount{Namespace: "op", Name: "operator"}
	mc := ServiceAccount{Namespace: "mgr", Name: "mc"}
	credentials := []*ServiceAccountCredential{
		{ServiceAccount: operator, CredentialID: "a"},
		{ServiceAccount: operator, CredentialID: "b"},
		{ServiceAccount: mc, CredentialID: "c"},
	}
	event := func(sa ServiceAccount, id, verb string, ref *auditv1.ObjectReference, code int32) auditv1.Event {
		decision := "allow"
		if code == 403 {
			decision = "forbid"
		}
		return auditv1.Event{
			Annotations:    map[string]string{authorizationDecisionKey: decision},
			User:           authenticationv1.UserInfo{Username: sa.Username(), Extra: map[string]authenticationv1.ExtraValue{credentialIDKey: {"JTI=" + id}}},
			Verb:           verb,
			RequestURI:     "/uri/" + verb,
			ObjectRef:      ref,
			ResponseStatus: &metav1.Status{Code: code},
		}
	}
	sts := &auditv1.ObjectReference{Resource: "statefulsets", APIGroup: "apps", Namespace: "ns"}
	status := &auditv1.ObjectReference{Resource: "scylladbdatacenters", Subresource: "status", APIGroup: "scylla.scylladb.com", Namespace: "ns"}
	nodes := &auditv1.ObjectReference{Resource: "nodes"}
	kubeSystem := &auditv1.ObjectReference{Resource: "namespaces", Name: "kube-system", Namespace: "kube-system"}
	events := []auditv1.Event{
		event(operator, "a", "create", sts, 201),
		event(operator, "b", "create", sts, 201),
		// Admission refused it: the namespace is terminating.
		{
			User:           authenticationv1.UserInfo{Username: operator.Username(), Extra: map[string]authenticationv1.ExtraValue{credentialIDKey: {"JTI=a"}}},
			Verb:           "create",
			ObjectRef:      sts,
			ResponseStatus: &metav1.Status{Code: 403},
			Annotations:    map[string]string{authorizationDecisionKey: "allow"},
		},
		event(operator, "a", "list", nodes, 403),
		event(operator, "a", "list", nodes, 429),
		event(operator, "a", "get", nil, 200),
		event(operator, "a", "get", kubeSystem, 200),
		event(mc, "c", "patch", status, 200),
		// Another token of a program's ServiceAccount (a test's own), and an ID presented by another user.
		event(mc, "d", "list", nodes, 403),
		event(ServiceAccount{Namespace: "x", Name: "y"}, "c", "list", nodes, 403),
	}
	// Sidecars use their Pods' ServiceAccounts; a test's request with such a token is not a program's.
	member := event(ServiceAccount{Namespace: "dc1", Name: "basic-member"}, "e", "patch", &auditv1.ObjectReference{Resource: "services", Namespace: "dc1"}, 403)
	member.UserAgent = "scylla-operator-sidecar/v1.2.3"
	otherMember := event(ServiceAccount{Namespace: "dc2", Name: "basic-member"}, "f", "patch", &auditv1.ObjectReference{Resource: "services", Namespace: "dc2"}, 200)
	otherMember.UserAgent = "scylla-operator-sidecar/v1.2.3"
	test := event(ServiceAccount{Namespace: "dc1", Name: "basic-member"}, "g", "list", nodes, 403)
	test.UserAgent = "e2e-test/TestX"
	// The garbage collector deletes dc2's RoleBinding while its sidecar still runs: a refusal after that is no
	// missing rule, one before it is.
	at := func(e auditv1.Event, second int) auditv1.Event {
		e.StageTimestamp = metav1.NewMicroTime(time.Date(2026, 11, 25, 0, 0, second, 0, time.UTC))
		return e
	}
	gc := ServiceAccount{Namespace: "kube-system", Name: "generic-garbage-collector"}
	unbinding := at(event(gc, "h", "delete", &auditv1.ObjectReference{Resource: "rolebindings", APIGroup: "rbac.authorization.k8s.io", Namespace: "dc2", Name: "basic-member"}, 200), 10)
	pods := &auditv1.ObjectReference{Resource: "pods", Namespace: "dc2"}
	beforeUnbinding := at(event(ServiceAccount{Namespace: "dc2", Name: "basic-member"}, "f", "get", pods, 403), 9)
	beforeUnbinding.UserAgent = "scylla-operator-sidecar/v1.2.3"
	afterUnbinding := at(event(ServiceAccount{Namespace: "dc2", Name: "basic-member"}, "f", "get", pods, 403), 11)
	afterUnbinding.UserAgent = "scylla-operator-sidecar/v1.2.3"
	events = append(events, member, otherMember, test, unbinding, afterUnbinding, beforeUnbinding)
	usage := rbacUsage(events, credentials)
	got := map[permissionKey]permissionUse{}
	for k, u := range usage {
		got[k] = *u
	}
	want := map[permissionKey]permissionUse{
		{"op/operator", "create", "statefulsets.apps", "namespaced"}:                        {requests: 3},
		{"op/operator", "list", "nodes", "cluster"}:                                         {requests: 1, forbidden: 1, example: "/uri/list"},
		{"op/operator", "get", "namespaces", "cluster"}:                                     {requests: 1},
		{"op/operator", "get", "/uri/get", "cluster"}:                                       {requests: 1},
		{"mgr/mc", "patch", "scylladbdatacenters/status.scylla.scylladb.com", "namespaced"}: {requests: 1},
		{"scylla-operator-sidecar (any ServiceAccount)", "patch", "services", "namespaced"}: {requests: 2, forbidden: 1, example: "/uri/patch"},
		{"scylla-operator-sidecar (any ServiceAccount)", "get", "pods", "namespaced"}:       {requests: 2, forbidden: 1, unbound: 1, example: "/uri/get"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(permissionUse{})); diff != "" {
		t.Errorf("usage differs (-want +got):\n%s", diff)
	}
	wantRefused := "op/operator\tlist\tnodes\tcluster\trequests=1\tFORBIDDEN=1 (e.g. /uri/list)\n" +
		"scylla-operator-sidecar (any ServiceAccount)\tget\tpods\tnamespaced\trequests=2\tFORBIDDEN=1 (e.g. /uri/get)\trefused after a RoleBinding of its namespace was deleted=1\n" +
		"scylla-operator-sidecar (any ServiceAccount)\tpatch\tservices\tnamespaced\trequests=2\tFORBIDDEN=1 (e.g. /uri/patch)"
	if got := forbiddenRequests(usage); got != wantRefused {
		t.Errorf("forbiddenRequests() = %q, want %q", got, wantRefused)
	}
}
