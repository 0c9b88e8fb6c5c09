package scylladbdatacenter

import "github.com/scyllakube/scylla-operator/pkg/controllerhelpers"

// Names of the sub-syncs; each gives its conditions their prefix (<Name>Progressing, <Name>Degraded).
const (
	serviceAccountControllerName  = "ServiceAccountController"
	roleBindingControllerName     = "RoleBindingController"
	configMapControllerName       = "ConfigMapController"
	secretControllerName          = "SecretController"
	serviceControllerName         = "ServiceController"
	ingressControllerName         = "IngressController"
	statefulSetControllerName     = "StatefulSetController"
	pdbControllerName             = "PodDisruptionBudgetController"
	nodeReplacementControllerName = "NodeReplacementController"
)

// statefulSetControllerAvailableCondition is the only child of the aggregated Available condition: True when every
// node the spec asks for is available.
const statefulSetControllerAvailableCondition = statefulSetControllerName + "Available"

// Reasons of conditions this controller sets.
const (
	nodesAvailableReason             = "AllNodesAvailable"
	nodesUnavailableReason           = "NodesUnavailable"
	waitingForPodConfigurationReason = "WaitingForPodConfiguration"
	waitingForStatefulSetReason      = "WaitingForStatefulSetRollout"
	waitingForPodRemovalReason       = "WaitingForPodRemoval"
	objectBeingRecreatedReason       = "ObjectBeingRecreated"
	waitingForAdoptedReason          = "WaitingForAdoptedObject"
)

// specValidationName names the conditions of an invalid spec (validation.ValidateScyllaDBDatacenter).
const specValidationName = "SpecValidation"

// invalidSpecReason: the spec is one the admission webhook refuses; nothing is built from it.
const invalidSpecReason = controllerhelpers.InvalidSpecReason
