package naming

import (
	"fmt"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Labels the ScyllaDBCluster controller puts on what it creates in the remote Kubernetes clusters
// (api-reference.md, "multi-DC").
const (
	// ParentScyllaDBClusterNameLabel, ParentScyllaDBClusterNamespaceLabel and
	// ParentScyllaDBClusterDatacenterNameLabel name the ScyllaDBCluster, its namespace in the meta cluster, and the
	// datacenter of it that an object in a remote cluster belongs to.
	ParentScyllaDBClusterNameLabel           = "scylla-operator.scylladb.com/parent-scylladbcluster-name"
	ParentScyllaDBClusterNamespaceLabel      = "scylla-operator.scylladb.com/parent-scylladbcluster-namespace"
	ParentScyllaDBClusterDatacenterNameLabel = "scylla-operator.scylladb.com/parent-scylladbcluster-datacenter-name"

	// ScyllaDBClusterNameLabel names the ScyllaDBCluster an object in the meta cluster (its client Service, its
	// auth-token Secret) belongs to.
	ScyllaDBClusterNameLabel = "scylla-operator.scylladb.com/scylladbcluster-name"

	// ScyllaDBClusterDatacenterNameLabel names the datacenter of a ScyllaDBCluster that an object in the meta cluster
	// belongs to: the client Service's EndpointSlices, one set per datacenter.
	ScyllaDBClusterDatacenterNameLabel = "scylla-operator.scylladb.com/scylladbcluster-datacenter-name"

	// ManagedByClusterLabel names the meta Kubernetes cluster whose operator manages an object in a remote cluster,
	// so that two meta clusters sharing a remote cluster can tell their objects apart.
	ManagedByClusterLabel = "scylla-operator.scylladb.com/managed-by-cluster"

	// RemoteManagedByLabelValue is the value of ManagedByLabel on what the ScyllaDBCluster controller creates in
	// remote clusters: the remote cluster's own operator does not manage those objects, the meta cluster's does.
	RemoteManagedByLabelValue = "remote.scylla-operator.scylladb.com"
)

// ScyllaDBClusterRemoteLabels returns the labels of every object the ScyllaDBCluster controller creates in a remote
// cluster for datacenter dcName of the ScyllaDBCluster namespace/name.
func ScyllaDBClusterRemoteLabels(namespace, name, dcName string) map[string]string {
	return map[string]string{
		ParentScyllaDBClusterNameLabel:           name,
		ParentScyllaDBClusterNamespaceLabel:      namespace,
		ParentScyllaDBClusterDatacenterNameLabel: dcName,
		ManagedByLabel:                           RemoteManagedByLabelValue,
	}
}

// ScyllaDBClusterDatacenterName returns the name of the ScyllaDBDatacenter that runs datacenter dcName of a
// ScyllaDBCluster in its remote cluster: "<cluster>-<dc>", bounded to a DNS label because the ScyllaDBDatacenter's
// name becomes a label value (scylla/cluster) and the prefix of its Service names.
func ScyllaDBClusterDatacenterName(clusterName, dcName string) string {
	return boundedName(fmt.Sprintf("%s-%s", clusterName, dcName), dns1123LabelMaxLength)
}

// ScyllaDBClusterRemoteNamespaceName returns the namespace, in its remote cluster, of datacenter dcName of a
// ScyllaDBCluster in namespace: "<namespace>-<hash5(namespace, dc)>", the namespace truncated so that the result
// stays a DNS label. The hash covers both parts, so datacenters of clusters in namespaces sharing a long prefix, and
// the datacenters of one namespace, never share a remote namespace.
func ScyllaDBClusterRemoteNamespaceName(namespace, dcName string) string {
	return hashedName(namespace, dns1123LabelMaxLength, namespace, dcName)
}

// ScyllaDBClusterSeedServiceName returns the name of the Service, in the remote namespace of another datacenter,
// whose endpoints are the seed addresses of datacenter dcName: "<cluster>-<dc>-seed", bounded to a DNS label.
func ScyllaDBClusterSeedServiceName(clusterName, dcName string) string {
	return boundedName(fmt.Sprintf("%s-%s-seed", clusterName, dcName), dns1123LabelMaxLength)
}

// ScyllaDBClusterClientEndpointSliceName returns the name of the EndpointSlice of a ScyllaDBCluster's client Service
// (ScyllaDBClusterClientServiceName) that lists the addresses of family addressType of datacenter dcName's nodes:
// "<client Service>-<dc>-<ipv4|ipv6>", bounded to a DNS subdomain. The Service's name is fixed and the family suffix
// is one of two, so two datacenters never share a name, nor one with the un-attributed "<client Service>-<family>"
// of earlier versions.
func ScyllaDBClusterClientEndpointSliceName(clusterName, dcName string, addressType discoveryv1.AddressType) string {
	return boundedName(fmt.Sprintf("%s-%s-%s", ScyllaDBClusterClientServiceName(clusterName), dcName, strings.ToLower(string(addressType))), dns1123SubdomainMaxLength)
}

// hashedName returns "<base>-<Hash5(hashParts...)>", base truncated (and stripped of the separators the cut leaves
// at its end) so that the whole fits maxLength.
func hashedName(base string, maxLength int, hashParts ...string) string {
	if maxBase := maxLength - hashSuffixLength - 1; len(base) > maxBase {
		base = trimNameEnd(base[:maxBase])
	}
	return fmt.Sprintf("%s-%s", base, Hash5(hashParts...))
}

// ScyllaDBClusterSeedServiceHost returns the DNS name nodes in remoteNamespace resolve to the seed addresses of
// datacenter seedDCName: its seed Service (ScyllaDBClusterSeedServiceName) in that namespace. The name leaves out the
// cluster domain, which the pods' DNS search path supplies.
func ScyllaDBClusterSeedServiceHost(clusterName, seedDCName, remoteNamespace string) string {
	return ScyllaDBClusterSeedServiceName(clusterName, seedDCName) + "." + remoteNamespace + ".svc"
}

// ScyllaDBClusterProtectionFinalizer on a ScyllaDBCluster keeps it until the ScyllaDBCluster controller removed what
// it created in the remote Kubernetes clusters: each datacenter's remote namespace and everything in it.
const ScyllaDBClusterProtectionFinalizer = "scylla-operator.scylladb.com/scylladbcluster-protection"

// RemoteObjectsSelector selects what the operator reads in remote Kubernetes clusters: the objects the
// ScyllaDBCluster controller creates there (RemoteManagedByLabelValue) and those the remote cluster's own operator
// creates for the ScyllaDBDatacenters (ManagedByLabelValue), among them the ScyllaDB pods and member Services whose
// addresses other datacenters seed from.
func RemoteObjectsSelector() labels.Selector {
	requirement, err := labels.NewRequirement(ManagedByLabel, selection.In, []string{ManagedByLabelValue, RemoteManagedByLabelValue})
	if err != nil {
		// The label key and values are constants.
		panic(err)
	}
	return labels.NewSelector().Add(*requirement)
}

// ScyllaDBClusterSelector selects what the ScyllaDBCluster namespace/name created in a remote cluster, in every
// datacenter.
func ScyllaDBClusterSelector(namespace, name string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{
		ParentScyllaDBClusterNameLabel:      name,
		ParentScyllaDBClusterNamespaceLabel: namespace,
		ManagedByLabel:                      RemoteManagedByLabelValue,
	})
}

// EndpointSliceManagedByValue is the value of label endpointslice.kubernetes.io/managed-by on the EndpointSlices the
// operator writes for its selector-less Services (a ScyllaDBCluster's seed and client Services), so that
// Kubernetes' own EndpointSlice controllers leave them alone.
const EndpointSliceManagedByValue = "scylla-operator.scylladb.com"

// OperatorEndpointSlicesSelector selects, of the EndpointSlices the operator manages (ManagedObjectsSelector), those
// it writes itself (EndpointSliceManagedByValue): the EndpointSlices Kubernetes makes for member and client Services
// inherit the Services' labels, and nothing reads them.
func OperatorEndpointSlicesSelector() labels.Selector {
	return writtenEndpointSlices(ManagedObjectsSelector())
}

// RemoteOperatorEndpointSlicesSelector is OperatorEndpointSlicesSelector in a remote Kubernetes cluster: of the
// EndpointSlices RemoteObjectsSelector selects, those the operator writes itself (a ScyllaDBCluster's seed Services').
func RemoteOperatorEndpointSlicesSelector() labels.Selector {
	return writtenEndpointSlices(RemoteObjectsSelector())
}

// writtenEndpointSlices narrows selector to the EndpointSlices the operator writes (EndpointSliceManagedByValue).
func writtenEndpointSlices(selector labels.Selector) labels.Selector {
	requirement, err := labels.NewRequirement(discoveryv1.LabelManagedBy, selection.Equals, []string{EndpointSliceManagedByValue})
	if err != nil {
		// The label key and value are constants.
		panic(err)
	}
	return selector.Add(*requirement)
}
