package naming

// ScyllaDBManagerClusterHost returns the host a ScyllaDBDatacenter is registered with in ScyllaDB Manager: the DNS
// name of its client Service, which resolves to every node's agent wherever the nodes are rescheduled, unlike a pod
// IP.
func ScyllaDBManagerClusterHost(namespace, sdcName string) string {
	return ClientServiceName(sdcName) + "." + namespace + ".svc"
}
