package naming

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

const (
	// dns1123LabelMaxLength bounds names used as host names and Service names.
	dns1123LabelMaxLength = 63
	// dns1123SubdomainMaxLength bounds most other object names.
	dns1123SubdomainMaxLength = 253
	// statefulSetNameMaxLength leaves room for "-<ordinal>" in pod names (5 digits) and for the
	// "-<10-character hash>" the StatefulSet controller appends in the controller-revision-hash label.
	statefulSetNameMaxLength = dns1123LabelMaxLength - 11
	hashSuffixLength         = 5
)

// Hash5 returns the first five characters of the base-36 form of the 64-bit FNV-1a hash of the parts, each
// followed by a NUL byte so that ("ab", "c") and ("a", "bc") differ.
func Hash5(parts ...string) string {
	h := fnv.New64a()
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	s := strconv.FormatUint(h.Sum64(), 36)
	for len(s) < hashSuffixLength {
		s = "0" + s
	}
	return s[:hashSuffixLength]
}

// boundedName returns name when it fits maxLength, otherwise name truncated with a hash of the whole name appended,
// so that two long names that share a prefix still differ.
func boundedName(name string, maxLength int) string {
	if len(name) <= maxLength {
		return name
	}
	prefix := strings.TrimRight(name[:maxLength-hashSuffixLength-1], "-.")
	return fmt.Sprintf("%s-%s", prefix, Hash5(name))
}

// StatefulSetName returns the name of a rack's StatefulSet: "<sdc>-<dc>-<rack>", bounded so that its pods' names
// and revision labels stay valid.
func StatefulSetName(sdcName, dcName, rackName string) string {
	return boundedName(fmt.Sprintf("%s-%s-%s", sdcName, dcName, rackName), statefulSetNameMaxLength)
}

// PodName returns the name of the ordinal-th pod of a StatefulSet.
func PodName(statefulSetName string, ordinal int32) string {
	return fmt.Sprintf("%s-%d", statefulSetName, ordinal)
}

// MemberServiceName returns the name of a node's member Service, the same as its pod's.
func MemberServiceName(statefulSetName string, ordinal int32) string {
	return PodName(statefulSetName, ordinal)
}

// PodOrdinal returns the ordinal of a StatefulSet's pod from its name.
func PodOrdinal(podName string) (int32, error) {
	i := strings.LastIndex(podName, "-")
	if i < 0 {
		return 0, fmt.Errorf("pod name %q has no ordinal suffix", podName)
	}
	n, err := strconv.ParseInt(podName[i+1:], 10, 32)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("pod name %q has no ordinal suffix", podName)
	}
	return int32(n), nil
}

// DataVolumeName is the name of the data volume claim template; PVCs are named "data-<pod>".
const DataVolumeName = "data"

// PVCName returns the name of a pod's data PersistentVolumeClaim.
func PVCName(podName string) string {
	return fmt.Sprintf("%s-%s", DataVolumeName, podName)
}

// ClientServiceName returns the name of a datacenter's client (identity) Service.
func ClientServiceName(sdcName string) string {
	return boundedName(sdcName+"-client", dns1123LabelMaxLength)
}

// AgentAuthTokenSecretName returns the name of the Secret with the ScyllaDB Manager agent's auth token.
func AgentAuthTokenSecretName(sdcName string) string {
	return boundedName(sdcName+"-auth-token", dns1123SubdomainMaxLength)
}

// PodDisruptionBudgetName returns the name of a datacenter's PodDisruptionBudget.
func PodDisruptionBudgetName(sdcName string) string {
	return sdcName
}

// MemberServiceAccountName returns the name of the ServiceAccount (and its RoleBinding) ScyllaDB pods run as.
func MemberServiceAccountName(sdcName string) string {
	return boundedName(sdcName+"-member", dns1123SubdomainMaxLength)
}

// ManagedConfigName returns the name of the ConfigMap with the scylla.yaml settings the operator manages.
func ManagedConfigName(sdcName string) string {
	return boundedName(sdcName+"-managed-config", dns1123SubdomainMaxLength)
}

// ScyllaDBManagerTaskName returns the name of the ScyllaDBManagerTask translated from a ScyllaCluster's backup or
// repair task: lowercase "<cluster>-<type>-<task>" truncated, then "-" and a hash of the three, so that names stay
// unique and valid however long the inputs are.
func ScyllaDBManagerTaskName(scyllaClusterName, taskType, taskName string) string {
	base := strings.ToLower(fmt.Sprintf("%s-%s-%s", scyllaClusterName, taskType, taskName))
	if len(base) > dns1123SubdomainMaxLength-hashSuffixLength-1 {
		base = strings.TrimRight(base[:dns1123SubdomainMaxLength-hashSuffixLength-1], "-.")
	}
	return fmt.Sprintf("%s-%s", base, Hash5(scyllaClusterName, taskType, taskName))
}

// ScyllaDBManagerClusterName returns the name a ScyllaCluster's cluster is registered under in ScyllaDB Manager.
func ScyllaDBManagerClusterName(namespace, name string) string {
	return namespace + "/" + name
}
