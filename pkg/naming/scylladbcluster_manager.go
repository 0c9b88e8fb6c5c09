package naming

import "fmt"

// Names of the objects a ScyllaDBCluster's controller keeps in the meta cluster for its ScyllaDB Manager
// registration (api-reference.md, "ScyllaDBCluster children"). They always carry a hash of the cluster's name, so
// that a truncated name still tells clusters apart.

// ScyllaDBClusterClientServiceName returns the name of a ScyllaDBCluster's local client Service in the meta cluster:
// "<cluster>-client-<hash5>", with the cluster's name truncated so that the whole is a valid Service name.
func ScyllaDBClusterClientServiceName(clusterName string) string {
	return hashedTruncatedName(clusterName, "-client", dns1123LabelMaxLength)
}

// ScyllaDBClusterAuthTokenSecretName returns the name of a ScyllaDBCluster's agent auth-token Secret in the meta
// cluster: "<cluster>-auth-token-<hash5>", with the cluster's name truncated so that the whole is a valid Secret
// name.
func ScyllaDBClusterAuthTokenSecretName(clusterName string) string {
	return hashedTruncatedName(clusterName, "-auth-token", dns1123SubdomainMaxLength)
}

// ScyllaDBManagerClusterHostForScyllaDBCluster returns the host ScyllaDB Manager reaches a ScyllaDBCluster's agents
// through: the DNS name of its local client Service in the meta cluster.
func ScyllaDBManagerClusterHostForScyllaDBCluster(namespace, clusterName string) string {
	return ScyllaDBClusterClientServiceName(clusterName) + "." + namespace + ".svc"
}

// hashedTruncatedName returns "<name><suffix>-<hash5(name)>", name truncated (and stripped of trailing dashes and
// dots) so that the result fits maxLength.
func hashedTruncatedName(name, suffix string, maxLength int) string {
	hash := Hash5(name)
	prefixLength := maxLength - len(suffix) - 1 - len(hash)
	prefix := name
	if len(prefix) > prefixLength {
		prefix = trimNameEnd(prefix[:prefixLength])
	}
	return fmt.Sprintf("%s%s-%s", prefix, suffix, hash)
}

func trimNameEnd(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '-' || s[len(s)-1] == '.') {
		s = s[:len(s)-1]
	}
	return s
}
