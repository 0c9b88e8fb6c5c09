package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestCQLIngressNamesAreValidAndDistinct(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("c", 70)
	for _, tc := range []struct {
		name, got, want string
	}{
		{name: "AnyNode", got: AnyNodeCQLIngressName("basic"), want: "basic-client-cql"},
		{name: "Node", got: NodeCQLIngressName("basic-dc1-a-0"), want: "basic-dc1-a-0-cql"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	for _, name := range []string{
		AnyNodeCQLIngressName(long),
		NodeCQLIngressName(MemberServiceName(StatefulSetName(long, long, long), 99999)),
	} {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) != 0 {
			t.Errorf("Ingress name %q is invalid: %v", name, errs)
		}
	}
	// A member Service name ends with an ordinal, the client Service's with "client".
	if AnyNodeCQLIngressName("basic") == NodeCQLIngressName(ClientServiceName("basic")+"-0") {
		t.Error("the AnyNode and a Node Ingress share a name")
	}
}

func TestCQLHostsAreBelowTheDomainWithoutItsRootDot(t *testing.T) {
	t.Parallel()
	const hostID = "8d5ed9f4-7764-4dbd-bad8-43fddce94b7c"
	for _, domain := range []string{"db.example.com", "db.example.com."} {
		for _, tc := range []struct {
			got, want string
		}{
			{got: AnyNodeCQLHost(domain), want: "cql.db.example.com"},
			{got: NodeCQLHost(hostID, domain), want: hostID + ".cql.db.example.com"},
			{got: NodeCQLHostWildcard(domain), want: "*.cql.db.example.com"},
		} {
			if tc.got != tc.want {
				t.Errorf("domain %q: got %q, want %q", domain, tc.got, tc.want)
			}
		}
		for _, host := range []string{AnyNodeCQLHost(domain), NodeCQLHost(hostID, domain)} {
			if errs := validation.IsDNS1123Subdomain(host); len(errs) != 0 {
				t.Errorf("host %q is invalid: %v", host, errs)
			}
		}
	}
}
