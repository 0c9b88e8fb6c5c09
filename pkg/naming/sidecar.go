package naming

// Annotations the sidecar writes on its node's member Service. The operator must keep them (it merges only the keys
// it manages) and never set them.
const (
	// BroadcastAddressAnnotation records the broadcast_address the node's sidecar computed at its last start. Other
	// nodes of the datacenter seed from it: it is the only place that address is known when it comes from a network
	// interface inside the Pod.
	BroadcastAddressAnnotation = "internal.scylla-operator.scylladb.com/broadcast-address"
	// BroadcastAddressPodUIDAnnotation records the UID of the Pod whose sidecar wrote BroadcastAddressAnnotation.
	// The address is trusted only while that Pod exists: a new Pod of the node may get a new address.
	BroadcastAddressPodUIDAnnotation = "internal.scylla-operator.scylladb.com/broadcast-address-pod-uid"
)
