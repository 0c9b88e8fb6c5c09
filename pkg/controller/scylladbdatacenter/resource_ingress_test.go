package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	testHostID0 = "8d5ed9f4-7764-4dbd-bad8-43fddce94b7c"
	testHostID1 = "0b5c4f0e-6a51-4d55-9a8e-2f9f3f0d1c22"
)

// withCQLIngress sets spec.exposeOptions.cql.ingress to options and spec.dnsDomains to domains.
func withCQLIngress(sdc *scyllav1alpha1.ScyllaDBDatacenter, options scyllav1alpha1.IngressOptions, domains ...string) {
	if sdc.Spec.ExposeOptions == nil {
		sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{}
	}
	sdc.Spec.ExposeOptions.CQL = &scyllav1alpha1.CQLExposeOptions{Ingress: &options}
	sdc.Spec.DNSDomains = domains
}

// ingressMemberService returns a member Service named name with the host ID annotation hostID, none when nil.
func ingressMemberService(name string, hostID *string) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Namespace: testNamespace,
		Name:      name,
		Labels:    with(clusterLabels(), naming.ScyllaServiceTypeLabel, naming.ScyllaServiceTypeMember),
	}}
	if hostID != nil {
		svc.Annotations = map[string]string{naming.HostIDAnnotation: *hostID}
	}
	return svc
}

// wantIngress is the Ingress named name of newBasicSDC of type ingressType, to serviceName, with one rule per host.
func wantIngress(name, ingressType, serviceName string, labels, annotations map[string]string, class *string, hosts ...string) *networkingv1.Ingress {
	prefix := networkingv1.PathTypePrefix
	var rules []networkingv1.IngressRule
	for _, host := range hosts {
		rules = append(rules, networkingv1.IngressRule{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
				Path:     "/",
				PathType: &prefix,
				Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
					Name: serviceName,
					Port: networkingv1.ServiceBackendPort{Name: "cql-ssl"},
				}},
			}}}},
		})
	}
	return &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            name,
			Labels:          with(labels, "scylla-operator.scylladb.com/scylla-ingress-type", ingressType),
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: networkingv1.IngressSpec{IngressClassName: class, Rules: rules},
	}
}

func TestMakeCQLIngresses(t *testing.T) {
	t.Parallel()

	services := map[string]*corev1.Service{
		"basic-client":  {ObjectMeta: metav1.ObjectMeta{Name: "basic-client", Labels: with(clusterLabels(), naming.ScyllaServiceTypeLabel, naming.ScyllaServiceTypeClient)}},
		"basic-dc1-a-0": ingressMemberService("basic-dc1-a-0", new(testHostID0)),
		// Upper case, as a sidecar never writes it: ScyllaDB's hosts are lower case.
		"basic-dc1-b-0": ingressMemberService("basic-dc1-b-0", new("0B5C4F0E-6A51-4D55-9A8E-2F9F3F0D1C22")),
		// Not started yet, or its sidecar has not recorded it.
		"basic-dc1-a-1": ingressMemberService("basic-dc1-a-1", nil),
		"basic-dc1-a-2": ingressMemberService("basic-dc1-a-2", new("")),
	}
	userLabels := map[string]string{"team": "db", "app": "mine"}
	userAnnotations := map[string]string{"haproxy.org/ssl-passthrough": "true"}
	ingressLabels := with(clusterLabels(), "team", "db")

	tt := []struct {
		name     string
		modify   func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		services map[string]*corev1.Service
		want     []*networkingv1.Ingress
		wantKeep map[string]bool
		wantErr  string
	}{
		{
			name:     "no CQL ingress: none",
			services: services,
		},
		{
			name: "CQL expose options without ingress: none",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{CQL: &scyllav1alpha1.CQLExposeOptions{}}
				sdc.Spec.DNSDomains = []string{"db.example.com"}
			},
			services: services,
		},
		{
			name: "AnyNode and a Node Ingress per node with a host ID, a rule per domain, with the user's class, labels and annotations",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				withCQLIngress(sdc, scyllav1alpha1.IngressOptions{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: userLabels, Annotations: userAnnotations},
					IngressClassName:       "haproxy",
				}, "db.example.com", "db.example.org.", "db.example.com.")
			},
			services: services,
			want: []*networkingv1.Ingress{
				wantIngress("basic-client-cql", "AnyNode", "basic-client", ingressLabels, userAnnotations, new("haproxy"),
					"cql.db.example.com", "cql.db.example.org"),
				wantIngress("basic-dc1-a-0-cql", "Node", "basic-dc1-a-0", ingressLabels, userAnnotations, new("haproxy"),
					testHostID0+".cql.db.example.com", testHostID0+".cql.db.example.org"),
				wantIngress("basic-dc1-b-0-cql", "Node", "basic-dc1-b-0", ingressLabels, userAnnotations, new("haproxy"),
					testHostID1+".cql.db.example.com", testHostID1+".cql.db.example.org"),
			},
			wantKeep: map[string]bool{},
		},
		{
			name: "no class, labels or annotations: the ingress controller's default class",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				withCQLIngress(sdc, scyllav1alpha1.IngressOptions{}, "db.example.com")
			},
			services: map[string]*corev1.Service{"basic-dc1-a-1": services["basic-dc1-a-1"]},
			want: []*networkingv1.Ingress{
				wantIngress("basic-client-cql", "AnyNode", "basic-client", clusterLabels(), nil, nil, "cql.db.example.com"),
			},
			wantKeep: map[string]bool{},
		},
		{
			name: "a host ID that is not one: the node's Ingress is kept as it is, the others are built",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				withCQLIngress(sdc, scyllav1alpha1.IngressOptions{}, "db.example.com")
			},
			services: map[string]*corev1.Service{
				"basic-dc1-a-0": services["basic-dc1-a-0"],
				"basic-dc1-a-1": ingressMemberService("basic-dc1-a-1", new("node-1")),
			},
			want: []*networkingv1.Ingress{
				wantIngress("basic-client-cql", "AnyNode", "basic-client", clusterLabels(), nil, nil, "cql.db.example.com"),
				wantIngress("basic-dc1-a-0-cql", "Node", "basic-dc1-a-0", clusterLabels(), nil, nil, testHostID0+".cql.db.example.com"),
			},
			wantKeep: map[string]bool{"basic-dc1-a-1-cql": true},
			wantErr:  `can't make the CQL Ingress of node basic-dc1-a-1: annotation internal.scylla-operator.scylladb.com/host-id of its member Service: "node-1" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`,
		},
		{
			name:     "no DNS domains: nothing",
			modify:   func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { withCQLIngress(sdc, scyllav1alpha1.IngressOptions{}) },
			services: services,
			wantErr:  "spec.exposeOptions.cql.ingress needs at least one DNS domain in spec.dnsDomains: the Ingresses' hosts are below them; no CQL Ingress is created or removed until then",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc, _ := newModifiedSDC(tc.modify)
			got, err := makeCQLIngresses(sdc, tc.services)
			switch {
			case len(tc.wantErr) == 0 && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case len(tc.wantErr) != 0 && (err == nil || err.Error() != tc.wantErr):
				t.Fatalf("expected error %q, got %v", tc.wantErr, err)
			case err != nil && !isSpecOnly(err):
				t.Errorf("expected a spec error, got %v", err)
			}
			if diff := cmp.Diff(tc.want, got.required, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("unexpected Ingresses (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantKeep, got.keep); diff != "" {
				t.Errorf("unexpected Ingresses to keep (-want +got):\n%s", diff)
			}
		})
	}
}

// The Ingresses route to a port of that name that serves CQL over TLS on both Services.
func TestCQLIngressesRouteToTheServicesCQLTLSPort(t *testing.T) {
	t.Parallel()

	sdc, rack := newModifiedSDC(nil)
	client, err := makeClientService(sdc, true)
	if err != nil {
		t.Fatal(err)
	}
	member, err := makeMemberService(sdc, rack, "basic-dc1-a-0", "", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, svc := range []*corev1.Service{client, member} {
		found := false
		for _, p := range svc.Spec.Ports {
			if p.Name == naming.CQLIngressServicePortName {
				found = true
				if p.Port != cqlSSLPort || p.TargetPort.IntVal != cqlSSLPort {
					t.Errorf("Service %s: port %s is %d to %s, want %d", svc.Name, p.Name, p.Port, p.TargetPort.String(), cqlSSLPort)
				}
			}
		}
		if !found {
			t.Errorf("Service %s has no port %s", svc.Name, naming.CQLIngressServicePortName)
		}
	}
}
