package naming

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScyllaDBClusterNames(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 63)
	longSubdomain := strings.Repeat("b", 100) + "." + strings.Repeat("c", 100)

	for _, tc := range []struct {
		name string
		got  string
		want string
	}{
		{name: "datacenter is <cluster>-<dc>", got: ScyllaDBClusterDatacenterName("basic", "us-east-1"), want: "basic-us-east-1"},
		{name: "seed Service is <cluster>-<dc>-seed", got: ScyllaDBClusterSeedServiceName("basic", "us-east-1"), want: "basic-us-east-1-seed"},
		{name: "remote namespace is <ns>-<hash5(ns,dc)>", got: ScyllaDBClusterRemoteNamespaceName("scylla", "us-east-1"), want: "scylla-" + Hash5("scylla", "us-east-1")},
		{name: "client Service is <cluster>-client-<hash5>", got: ScyllaDBClusterClientServiceName("basic"), want: "basic-client-" + Hash5("basic")},
		{name: "auth-token Secret is <cluster>-auth-token-<hash5>", got: ScyllaDBClusterAuthTokenSecretName("basic"), want: "basic-auth-token-" + Hash5("basic")},
		{name: "client EndpointSlice is <client Service>-<dc>-<family>", got: ScyllaDBClusterClientEndpointSliceName("basic", "us-east-1", discoveryv1.AddressTypeIPv6), want: "basic-client-" + Hash5("basic") + "-us-east-1-ipv6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}

	for _, tc := range []struct {
		name     string
		make     func(a, b string) string
		a, b     string
		validate func(string) []string
	}{
		{name: "datacenter name of a long cluster is a DNS label", make: ScyllaDBClusterDatacenterName, a: longSubdomain, b: long, validate: validation.IsDNS1123Label},
		{name: "seed Service of a long cluster is a Service name", make: ScyllaDBClusterSeedServiceName, a: long, b: long, validate: validation.IsDNS1035Label},
		{name: "remote namespace of a long namespace is a DNS label", make: ScyllaDBClusterRemoteNamespaceName, a: long, b: long, validate: validation.IsDNS1123Label},
		{name: "client Service of a long cluster is a Service name", make: func(a, _ string) string { return ScyllaDBClusterClientServiceName(a) }, a: long, validate: validation.IsDNS1035Label},
		{name: "client Service of a long subdomain cluster is a DNS label", make: func(a, _ string) string { return ScyllaDBClusterClientServiceName(a) }, a: longSubdomain, validate: validation.IsDNS1123Label},
		{name: "client EndpointSlice of a long cluster and datacenter is a DNS subdomain", make: func(a, b string) string {
			return ScyllaDBClusterClientEndpointSliceName(a, b, discoveryv1.AddressTypeIPv4)
		}, a: longSubdomain, b: long, validate: validation.IsDNS1123Subdomain},
		{name: "auth-token Secret of a long cluster is a DNS subdomain", make: func(a, _ string) string { return ScyllaDBClusterAuthTokenSecretName(a) }, a: longSubdomain + "." + long, validate: validation.IsDNS1123Subdomain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.make(tc.a, tc.b)
			if errs := tc.validate(got); len(errs) != 0 {
				t.Errorf("%q is invalid: %v", got, errs)
			}
			if again := tc.make(tc.a, tc.b); again != got {
				t.Errorf("the same inputs gave %q, then %q", got, again)
			}
		})
	}
}

func TestScyllaDBClusterNamesAreCollisionFree(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 70)

	for _, tc := range []struct {
		name string
		a, b string
	}{
		{name: "datacenters of long clusters sharing a prefix", a: ScyllaDBClusterDatacenterName(long+"1", "dc"), b: ScyllaDBClusterDatacenterName(long+"2", "dc")},
		{name: "long datacenters of one cluster sharing a prefix", a: ScyllaDBClusterDatacenterName("basic", long+"1"), b: ScyllaDBClusterDatacenterName("basic", long+"2")},
		{name: "seed Services of long datacenters sharing a prefix", a: ScyllaDBClusterSeedServiceName("basic", long+"1"), b: ScyllaDBClusterSeedServiceName("basic", long+"2")},
		{name: "remote namespaces of two datacenters of one namespace", a: ScyllaDBClusterRemoteNamespaceName("scylla", "dc1"), b: ScyllaDBClusterRemoteNamespaceName("scylla", "dc2")},
		{name: "remote namespaces of long namespaces sharing a prefix", a: ScyllaDBClusterRemoteNamespaceName(long[:62]+"1", "dc"), b: ScyllaDBClusterRemoteNamespaceName(long[:62]+"2", "dc")},
		{name: "remote namespaces of namespace/datacenter splits of the same text", a: ScyllaDBClusterRemoteNamespaceName("a-b", "c"), b: ScyllaDBClusterRemoteNamespaceName("a", "b-c")},
		{name: "client Services of long clusters sharing a prefix", a: ScyllaDBClusterClientServiceName(long + "1"), b: ScyllaDBClusterClientServiceName(long + "2")},
		{name: "client EndpointSlices of two datacenters", a: ScyllaDBClusterClientEndpointSliceName("basic", "dc1", discoveryv1.AddressTypeIPv4), b: ScyllaDBClusterClientEndpointSliceName("basic", "dc2", discoveryv1.AddressTypeIPv4)},
		{name: "client EndpointSlices of two families", a: ScyllaDBClusterClientEndpointSliceName("basic", "dc1", discoveryv1.AddressTypeIPv4), b: ScyllaDBClusterClientEndpointSliceName("basic", "dc1", discoveryv1.AddressTypeIPv6)},
		{name: "client EndpointSlice of a datacenter named like a family and an older version's", a: ScyllaDBClusterClientEndpointSliceName("basic", "ipv4", discoveryv1.AddressTypeIPv4), b: ScyllaDBClusterClientServiceName("basic") + "-ipv4"},
		{name: "auth-token Secrets of long clusters sharing a prefix", a: ScyllaDBClusterAuthTokenSecretName(strings.Repeat("y", 250) + "1"), b: ScyllaDBClusterAuthTokenSecretName(strings.Repeat("y", 250) + "2")},
		{name: "the copied auth-token Secret and the datacenter's own", a: ScyllaDBClusterAuthTokenSecretName("basic"), b: AgentAuthTokenSecretName(ScyllaDBClusterDatacenterName("basic", "auth"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.a == tc.b {
				t.Errorf("both got %q", tc.a)
			}
		})
	}
}

func TestScyllaDBClusterRemoteLabels(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"scylla-operator.scylladb.com/parent-scylladbcluster-name":            "basic",
		"scylla-operator.scylladb.com/parent-scylladbcluster-namespace":       "scylla",
		"scylla-operator.scylladb.com/parent-scylladbcluster-datacenter-name": "us-east-1",
		"app.kubernetes.io/managed-by":                                        "remote.scylla-operator.scylladb.com",
	}
	if diff := cmp.Diff(want, ScyllaDBClusterRemoteLabels("scylla", "basic", "us-east-1")); diff != "" {
		t.Errorf("labels differ (-want +got):\n%s", diff)
	}
}
