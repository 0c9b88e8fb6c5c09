package nodesim

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

func service(namespace, name string, spec corev1.ServiceSpec) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: spec}
}

func headless(namespace, name string) *corev1.Service {
	return service(namespace, name, corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, ClusterIPs: []string{corev1.ClusterIPNone}})
}

func externalName(namespace, name, target string) *corev1.Service {
	return service(namespace, name, corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: target})
}

type endpoint struct {
	address string
	ready   *bool
}

func endpointSlice(namespace, name, serviceName string, addressType discoveryv1.AddressType, endpoints ...endpoint) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{discoveryv1.LabelServiceName: serviceName}},
		AddressType: addressType,
	}
	for _, e := range endpoints {
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{Addresses: []string{e.address}, Conditions: discoveryv1.EndpointConditions{Ready: e.ready}})
	}
	return es
}

func TestClusterDNSResolvesServiceNamesLikeAPodsResolver(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset(
		// The seed Service of another datacenter: selector-less, headless, with hand-written EndpointSlices.
		headless("db", "seed"),
		endpointSlice("db", "seed-a", "seed", discoveryv1.AddressTypeIPv4,
			endpoint{"10.1.0.3", nil}, endpoint{"10.1.0.1", ptr.To(true)}, endpoint{"10.1.0.2", ptr.To(false)}),
		endpointSlice("db", "seed-b", "seed", discoveryv1.AddressTypeIPv4, endpoint{"10.1.0.4", ptr.To(true)}, endpoint{"10.1.0.1", nil}),
		endpointSlice("db", "seed-fqdn", "seed", discoveryv1.AddressTypeFQDN, endpoint{"node.example.com", nil}),
		endpointSlice("db", "member-slice", "member", discoveryv1.AddressTypeIPv4, endpoint{"10.244.0.9", nil}),
		endpointSlice("other", "seed-elsewhere", "seed", discoveryv1.AddressTypeIPv4, endpoint{"10.9.9.9", nil}),
		headless("db", "unready"),
		endpointSlice("db", "unready-a", "unready", discoveryv1.AddressTypeIPv4, endpoint{"10.1.0.5", ptr.To(false)}),
		headless("db", "no-slices"),
		service("db", "member", corev1.ServiceSpec{ClusterIP: "10.96.0.5", ClusterIPs: []string{"10.96.0.5", "fd00::5"}}),
		externalName("db", "to-ip", "192.0.2.10"),
		externalName("db", "to-member", "member.db.svc.cluster.local."),
		externalName("db", "to-alias", "to-member.db.svc.cluster.local"),
		externalName("db", "to-short-name", "member.db"),
		externalName("db", "to-outside", "scylladb.example.com"),
		externalName("db", "loop", "loop.db.svc.cluster.local"),
		headless("app", "seed"),
		endpointSlice("app", "seed-a", "seed", discoveryv1.AddressTypeIPv4, endpoint{"10.2.0.1", nil}),
	)
	dns := &clusterDNS{client: client}
	seed := []string{"10.1.0.1", "10.1.0.3", "10.1.0.4"}
	tests := []struct {
		name         string
		podNamespace string
		resolve      string
		want         []string
	}{
		{name: "a headless Service resolves to its ready endpoints, unset readiness counting as ready", podNamespace: "db", resolve: "seed.db.svc", want: seed},
		{name: "the full name", podNamespace: "app", resolve: "seed.db.svc.cluster.local", want: seed},
		{name: "the full name with a trailing dot", podNamespace: "app", resolve: "seed.db.svc.cluster.local.", want: seed},
		{name: "service.namespace", podNamespace: "app", resolve: "seed.db", want: seed},
		{name: "a bare name is in the Pod's namespace", podNamespace: "db", resolve: "seed", want: seed},
		{name: "a bare name in another Pod namespace", podNamespace: "app", resolve: "seed", want: []string{"10.2.0.1"}},
		{name: "names are case-insensitive", podNamespace: "app", resolve: "Seed.DB.svc", want: seed},
		{name: "a ClusterIP Service resolves to its cluster IPs, not its endpoints", podNamespace: "db", resolve: "member", want: []string{"10.96.0.5", "fd00::5"}},
		{name: "an ExternalName Service to an IP address", podNamespace: "db", resolve: "to-ip.db.svc", want: []string{"192.0.2.10"}},
		{name: "an ExternalName Service to another Service", podNamespace: "app", resolve: "to-member.db", want: []string{"10.96.0.5", "fd00::5"}},
		{name: "a chain of ExternalName Services", podNamespace: "db", resolve: "to-alias", want: []string{"10.96.0.5", "fd00::5"}},
		{name: "an ExternalName target is absolute: a short name doesn't resolve", podNamespace: "db", resolve: "to-short-name"},
		{name: "an ExternalName target outside the cluster doesn't resolve", podNamespace: "db", resolve: "to-outside"},
		{name: "a loop of ExternalName Services doesn't resolve", podNamespace: "db", resolve: "loop"},
		{name: "a headless Service without ready endpoints doesn't resolve", podNamespace: "db", resolve: "unready"},
		{name: "a headless Service without EndpointSlices doesn't resolve", podNamespace: "db", resolve: "no-slices"},
		{name: "a bare name of another namespace's Service doesn't resolve", podNamespace: "app", resolve: "member"},
		{name: "an unknown Service", podNamespace: "db", resolve: "nope.db.svc"},
		{name: "an unknown namespace", podNamespace: "db", resolve: "seed.nope"},
		{name: "a relative name with a trailing dot is absolute", podNamespace: "db", resolve: "seed.db.svc."},
		{name: "too many labels for a Service", podNamespace: "db", resolve: "a.seed.db.svc"},
		{name: "three labels not ending in svc", podNamespace: "db", resolve: "seed.db.cluster"},
		{name: "a name outside the cluster domain", podNamespace: "db", resolve: "seed.db.svc.example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := dns.resolve(t.Context(), tc.podNamespace, tc.resolve)
			if tc.want == nil {
				if !errors.Is(err, fakescylladb.ErrNotFound) {
					t.Errorf("want a not found error, got %v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("addresses differ (-want +got):\n%s", diff)
			}
		})
	}
}
