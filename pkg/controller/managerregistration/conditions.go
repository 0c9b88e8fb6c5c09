package managerregistration

// Condition types this controller owns on the status of the objects it registers. Each program writing one status
// owns its own condition types (STYLE rule 11): the operator's Available, Progressing and Degraded are never written
// here.
const (
	// ScyllaDBManagerRegistrationProgressingCondition is True while the object waits for something before it can be
	// registered with ScyllaDB Manager (its rollout, its agent auth token) or while it is being deregistered.
	ScyllaDBManagerRegistrationProgressingCondition = "ScyllaDBManagerRegistrationProgressing"
	// ScyllaDBManagerRegistrationDegradedCondition is True while ScyllaDB Manager does not hold the cluster the object
	// asks for because registering, updating or deregistering it failed.
	ScyllaDBManagerRegistrationDegradedCondition = "ScyllaDBManagerRegistrationDegraded"
)

// Condition reasons.
const (
	// waitingForRolloutReason: the object's current generation is not rolled out yet.
	waitingForRolloutReason = "WaitingForRollout"
	// waitingForAuthTokenReason: the agent auth token is not in its Secret yet.
	waitingForAuthTokenReason = "WaitingForAuthToken"
	// deregisteringReason: the cluster is being removed from ScyllaDB Manager.
	deregisteringReason = "Deregistering"

	// scyllaDBManagerRejectedReason: ScyllaDB Manager refused the request as invalid (400); retrying it unchanged
	// fails again.
	scyllaDBManagerRejectedReason = "ScyllaDBManagerRejected"
	// scyllaDBManagerErrorReason: the request failed in a way a retry may fix (5xx, connection failure).
	scyllaDBManagerErrorReason = "ScyllaDBManagerError"
	// invalidClusterIDReason: naming.ScyllaDBManagerClusterIDAnnotation does not hold a cluster ID.
	invalidClusterIDReason = "InvalidClusterID"
	// ownershipConflictReason: the cluster in ScyllaDB Manager belongs to another object.
	ownershipConflictReason = "OwnershipConflict"
	// partOfScyllaDBClusterReason: the object is a datacenter of a ScyllaDBCluster, which is registered as a whole.
	partOfScyllaDBClusterReason = "PartOfScyllaDBCluster"
)

// Event reasons. Events never carry the auth token.
const (
	clusterRegisteredReason   = "ScyllaDBManagerClusterRegistered"
	clusterUpdatedReason      = "ScyllaDBManagerClusterUpdated"
	clusterAdoptedReason      = "ScyllaDBManagerClusterAdopted"
	clusterDeregisteredReason = "ScyllaDBManagerClusterDeregistered"
	// clusterNotOwnedReason: deregistration left a cluster alone because it belongs to another object.
	clusterNotOwnedReason    = "ScyllaDBManagerClusterNotOwned"
	registrationFailedReason = "ScyllaDBManagerRegistrationFailed"
	// clusterIDNotOwnedReason: the cluster ID annotation names another object's cluster (it was copied with a
	// manifest), which is left alone.
	clusterIDNotOwnedReason = "ScyllaDBManagerClusterIDNotOwned"
)
