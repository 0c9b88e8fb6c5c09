package scylladbdatacenter

import (
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// cqlIngressOptions returns spec.exposeOptions.cql.ingress, nil when CQL Ingresses are off.
func cqlIngressOptions(sdc *scyllav1alpha1.ScyllaDBDatacenter) *scyllav1alpha1.IngressOptions {
	if eo := sdc.Spec.ExposeOptions; eo != nil && eo.CQL != nil {
		return eo.CQL.Ingress
	}
	return nil
}

// cqlIngresses are the CQL Ingresses a datacenter wants (required), and the names of the existing ones to leave as
// they are (keep): those of nodes whose recorded host ID can't be read, which clients may still be using.
type cqlIngresses struct {
	required []*networkingv1.Ingress
	keep     map[string]bool
}

// makeCQLIngresses returns, when spec.exposeOptions.cql.ingress is set, the Ingresses through which an SNI-routing
// ingress controller brings CQL over TLS to the datacenter: an AnyNode Ingress to the client Service with host
// "cql.<domain>", and a Node Ingress to every member Service of services that has a host ID
// (naming.HostIDAnnotation), with host "<hostID>.cql.<domain>", each with one rule per domain of spec.dnsDomains.
// Without DNS domains nothing is built and the error says so. A host ID that is not one is reported in the error
// and the Ingress of its node is kept as it is, while the other Ingresses are still built.
func makeCQLIngresses(sdc *scyllav1alpha1.ScyllaDBDatacenter, services map[string]*corev1.Service) (cqlIngresses, error) {
	options := cqlIngressOptions(sdc)
	if options == nil {
		return cqlIngresses{}, nil
	}
	domains := make([]string, 0, len(sdc.Spec.DNSDomains))
	for _, d := range sdc.Spec.DNSDomains {
		// "example.com." and "example.com" give the same hosts.
		if host := naming.AnyNodeCQLHost(d); !slices.ContainsFunc(domains, func(seen string) bool { return naming.AnyNodeCQLHost(seen) == host }) {
			domains = append(domains, d)
		}
	}
	if len(domains) == 0 {
		return cqlIngresses{}, newSpecError("spec.exposeOptions.cql.ingress needs at least one DNS domain in spec.dnsDomains: the Ingresses' hosts are below them; no CQL Ingress is created or removed until then")
	}

	hosts := make([]string, 0, len(domains))
	for _, d := range domains {
		hosts = append(hosts, naming.AnyNodeCQLHost(d))
	}
	clientService := naming.ClientServiceName(sdc.Name)
	result := cqlIngresses{
		required: []*networkingv1.Ingress{makeCQLIngress(sdc, options, naming.AnyNodeCQLIngressName(sdc.Name), naming.ScyllaIngressTypeAnyNode, clientService, hosts)},
		keep:     map[string]bool{},
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(services)) {
		svc := services[name]
		if svc.Labels[naming.ScyllaServiceTypeLabel] != naming.ScyllaServiceTypeMember {
			continue
		}
		recorded := svc.Annotations[naming.HostIDAnnotation]
		if len(recorded) == 0 {
			// The node's sidecar has not recorded it yet: its Ingress comes with it.
			continue
		}
		hostID, err := sidecar.ParseHostID(recorded)
		if err != nil {
			result.keep[naming.NodeCQLIngressName(name)] = true
			errs = append(errs, newSpecError("can't make the CQL Ingress of node %s: annotation %s of its member Service: %v", name, naming.HostIDAnnotation, err))
			continue
		}
		nodeHosts := make([]string, 0, len(domains))
		for _, d := range domains {
			nodeHosts = append(nodeHosts, naming.NodeCQLHost(hostID, d))
		}
		result.required = append(result.required, makeCQLIngress(sdc, options, naming.NodeCQLIngressName(name), naming.ScyllaIngressTypeNode, name, nodeHosts))
	}
	return result, utilerrors.NewAggregate(errs)
}

// makeCQLIngress returns the Ingress name of type ingressType (naming.ScyllaIngressTypeLabel) that routes every host
// of hosts to the CQL TLS port of the Service serviceName, with the user's labels, annotations and class.
func makeCQLIngress(sdc *scyllav1alpha1.ScyllaDBDatacenter, options *scyllav1alpha1.IngressOptions, name, ingressType, serviceName string, hosts []string) *networkingv1.Ingress {
	labels := naming.ClusterLabels(sdc.Name)
	labels[naming.ScyllaIngressTypeLabel] = ingressType
	meta := objectMeta(sdc, name, nil)
	// The operator's labels win over the user's.
	meta.Labels = merge.Maps(options.Labels, labels)
	meta.Annotations = merge.Maps(options.Annotations, nil)

	pathType := networkingv1.PathTypePrefix
	rules := make([]networkingv1.IngressRule, 0, len(hosts))
	for _, host := range hosts {
		rules = append(rules, networkingv1.IngressRule{
			Host: host,
			IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{
					Path:     "/",
					PathType: &pathType,
					Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
						Name: serviceName,
						Port: networkingv1.ServiceBackendPort{Name: naming.CQLIngressServicePortName},
					}},
				}},
			}},
		})
	}
	ingress := &networkingv1.Ingress{
		ObjectMeta: meta,
		Spec:       networkingv1.IngressSpec{Rules: rules},
	}
	if len(options.IngressClassName) != 0 {
		ingress.Spec.IngressClassName = new(options.IngressClassName)
	}
	return ingress
}
