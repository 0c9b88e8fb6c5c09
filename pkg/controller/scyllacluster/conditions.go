package scyllacluster

// Names of the sub-syncs; each gives the ScyllaCluster a <name>Progressing and a <name>Degraded condition.
const (
	scyllaDBDatacenterControllerName  = "ScyllaDBDatacenterController"
	scyllaDBManagerTaskControllerName = "ScyllaDBManagerTaskController"
	// specValidationName replaces the ScyllaDBDatacenter sub-sync of a ScyllaCluster whose spec
	// validation.ValidateScyllaCluster refuses outside its tasks.
	specValidationName = "SpecValidation"
)

// scyllaDBDatacenterConditionPrefix prefixes the Available, Progressing and Degraded conditions of the
// ScyllaDBDatacenter mirrored on the ScyllaCluster, e.g. ScyllaDBDatacenterAvailable.
const scyllaDBDatacenterConditionPrefix = "ScyllaDBDatacenter"

// Condition and event reasons.
const (
	// scyllaDBDatacenterNotObservedReason: the ScyllaDBDatacenter's status does not describe the ScyllaCluster's
	// current spec yet.
	scyllaDBDatacenterNotObservedReason = "ScyllaDBDatacenterNotObserved"

	// conditionNotReportedReason: the ScyllaDBDatacenter has not reported the mirrored condition yet.
	conditionNotReportedReason = "NotReported"

	// waitingForDeletionReason: an owned object being deleted must be gone before it is created again.
	waitingForDeletionReason = "WaitingForDeletion"

	// awaitingScyllaDBDatacenterReason: the ScyllaDBManagerTasks wait until the ScyllaDBDatacenter they are scheduled
	// in is the ScyllaCluster's.
	awaitingScyllaDBDatacenterReason = "AwaitingScyllaDBDatacenter"

	// invalidSpecReason: the ScyllaCluster's spec can't be translated.
	invalidSpecReason = "InvalidSpec"

	// refusedReason: the API server refuses the ScyllaDBDatacenter or a ScyllaDBManagerTask translated from the
	// ScyllaCluster, for what it holds (isRefusal).
	refusedReason = "Refused"

	// ownershipConflictReason: an object the ScyllaCluster needs exists but is not the ScyllaCluster's.
	ownershipConflictReason = "OwnershipConflict"

	// invalidManagerIDReason: the ScyllaCluster's status.managerId can't be handed over to ScyllaDB Manager
	// integration.
	invalidManagerIDReason = "InvalidManagerID"
)
