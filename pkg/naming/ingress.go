package naming

import "strings"

// CQL Ingresses (spec.exposeOptions.cql.ingress): an SNI-routing ingress controller sends a TLS connection to the
// Service whose Ingress names the host the client asked for.
const (
	// ScyllaIngressTypeLabel tells what a CQL Ingress routes to: any node (the client Service) or one node (its member
	// Service).
	ScyllaIngressTypeLabel   = "scylla-operator.scylladb.com/scylla-ingress-type"
	ScyllaIngressTypeAnyNode = "AnyNode"
	ScyllaIngressTypeNode    = "Node"

	// CQLIngressServicePortName is the Service port CQL Ingresses route to: CQL over TLS.
	CQLIngressServicePortName = "cql-ssl"

	// cqlIngressSubdomain is the label below each DNS domain under which CQL is reached.
	cqlIngressSubdomain = "cql"
)

// AnyNodeCQLIngressName returns the name of the datacenter's Ingress to its client Service.
func AnyNodeCQLIngressName(sdcName string) string {
	// The client Service's name is at most 63 characters: this one fits an object name (253).
	return ClientServiceName(sdcName) + "-" + cqlIngressSubdomain
}

// NodeCQLIngressName returns the name of the Ingress to a node's member Service.
func NodeCQLIngressName(memberServiceName string) string {
	// Member Service names are at most 63 characters: this one fits an object name (253).
	return memberServiceName + "-" + cqlIngressSubdomain
}

// AnyNodeCQLHost returns the host clients connect to for any node of the datacenter, below a DNS domain of
// spec.dnsDomains: "cql.<domain>".
func AnyNodeCQLHost(domain string) string {
	return cqlIngressSubdomain + "." + trimRootDot(domain)
}

// NodeCQLHost returns the host clients connect to for the node with host ID hostID, below a DNS domain of
// spec.dnsDomains: "<hostID>.cql.<domain>".
func NodeCQLHost(hostID, domain string) string {
	return hostID + "." + AnyNodeCQLHost(domain)
}

// NodeCQLHostWildcard returns the certificate name that covers NodeCQLHost of every host ID below domain:
// "*.cql.<domain>".
func NodeCQLHostWildcard(domain string) string {
	return "*." + AnyNodeCQLHost(domain)
}

// trimRootDot drops the dot of a fully qualified domain name ("example.com." is "example.com"): neither Ingress
// hosts nor certificate names carry it.
func trimRootDot(domain string) string {
	return strings.TrimSuffix(domain, ".")
}
