package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RackConditionType is the type of a rack condition.
type RackConditionType string

const (
	// RackConditionTypeMemberLeaving says a member of the rack is being decommissioned.
	RackConditionTypeMemberLeaving RackConditionType = "MemberLeaving"

	// RackConditionTypeUpgrading says the rack is being upgraded.
	RackConditionTypeUpgrading RackConditionType = "RackUpgrading"

	// RackConditionTypeMemberReplacing says a member of the rack is being replaced.
	RackConditionTypeMemberReplacing RackConditionType = "MemberReplacing"

	// RackConditionTypeMemberDecommissioning says a member of the rack is decommissioning.
	RackConditionTypeMemberDecommissioning RackConditionType = "MemberDecommissioning"
)

// RackCondition is one condition of a rack.
type RackCondition struct {
	// type of the condition.
	// +required
	Type RackConditionType `json:"type"`

	// status of the condition: True, False or Unknown.
	// +required
	Status corev1.ConditionStatus `json:"status"`
}

// RackStatus is the observed state of one rack.
type RackStatus struct {
	// version is the ScyllaDB version the rack runs.
	// +optional
	Version string `json:"version"`

	// members is how many ScyllaDB nodes the rack has.
	// +optional
	Members int32 `json:"members"`

	// readyMembers is how many nodes of the rack are ready.
	// +optional
	ReadyMembers int32 `json:"readyMembers"`

	// availableMembers is how many nodes of the rack have been ready for at least minReadySeconds.
	// +optional
	AvailableMembers *int32 `json:"availableMembers,omitempty"`

	// updatedMembers is how many nodes of the rack run the current spec.
	// +optional
	UpdatedMembers *int32 `json:"updatedMembers,omitempty"`

	// stale is true when this status was computed for an older generation of the ScyllaCluster.
	// +optional
	Stale *bool `json:"stale,omitempty"`

	// conditions of the rack.
	// +optional
	// +listType=atomic
	Conditions []RackCondition `json:"conditions,omitempty"`

	// replaceAddressFirstBoot maps member Service names to the addresses they replace.
	//
	// Deprecated: it belongs to the legacy IP-based replace procedure.
	// +optional
	ReplaceAddressFirstBoot map[string]string `json:"replace_address_first_boot,omitempty"`
}

// UpgradeStatus is the state of an upgrade in progress.
type UpgradeStatus struct {
	// state is the step the upgrade is at.
	// +optional
	State string `json:"state"`

	// fromVersion is the ScyllaDB version being upgraded from.
	// +optional
	FromVersion string `json:"fromVersion"`

	// toVersion is the ScyllaDB version being upgraded to.
	// +optional
	ToVersion string `json:"toVersion"`

	// currentNode is the node being upgraded.
	//
	// Deprecated: nodes are upgraded by the rolling update of their StatefulSet.
	// +optional
	CurrentNode string `json:"currentNode,omitempty"`

	// currentRack is the rack being upgraded.
	//
	// Deprecated: racks are upgraded by the rolling update of their StatefulSet.
	// +optional
	CurrentRack string `json:"currentRack,omitempty"`

	// systemSnapshotTag is the tag of the snapshot of the system keyspaces taken before the upgrade.
	// +optional
	SystemSnapshotTag string `json:"systemSnapshotTag,omitempty"`

	// dataSnapshotTag is the tag of the snapshot of the data keyspaces taken before the upgrade.
	// +optional
	DataSnapshotTag string `json:"dataSnapshotTag,omitempty"`
}

// ScyllaClusterStatus is the observed state of a ScyllaCluster.
type ScyllaClusterStatus struct {
	// observedGeneration is the generation of the ScyllaCluster this status was computed for.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`

	// racks maps rack names to their observed state.
	// +optional
	Racks map[string]RackStatus `json:"racks,omitempty"`

	// members is how many ScyllaDB nodes the cluster has, over all racks.
	// +optional
	Members *int32 `json:"members,omitempty"`

	// readyMembers is how many nodes are ready, over all racks.
	// +optional
	ReadyMembers *int32 `json:"readyMembers,omitempty"`

	// availableMembers is how many nodes have been ready for at least minReadySeconds, over all racks.
	// +optional
	AvailableMembers *int32 `json:"availableMembers,omitempty"`

	// rackCount is how many racks the cluster has.
	// +optional
	RackCount *int32 `json:"rackCount,omitempty"`

	// managerId is the ID of the cluster in ScyllaDB Manager.
	// +optional
	ManagerID *string `json:"managerId,omitempty"`

	// repairs is the state of the repair tasks in ScyllaDB Manager.
	// +optional
	// +listType=atomic
	Repairs []RepairTaskStatus `json:"repairs,omitempty"`

	// backups is the state of the backup tasks in ScyllaDB Manager.
	// +optional
	// +listType=atomic
	Backups []BackupTaskStatus `json:"backups,omitempty"`

	// upgrade is the state of an upgrade in progress.
	// +optional
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`

	// conditions hold the aggregated Available, Progressing and Degraded conditions and the conditions of the
	// individual controllers. A rollout is complete when Available is True and Progressing and Degraded are
	// False.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}
