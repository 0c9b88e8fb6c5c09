package resourceapply

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
)

// preserveServiceFields keeps the cluster IPs, IP families, node ports and health check node port the API server
// allocated, wherever required leaves them to the server. Without this every update would ask for new ones, which
// the API server rejects for cluster IPs and honours for node ports.
func preserveServiceFields(existing, required *corev1.Service) {
	if required.Spec.Type == corev1.ServiceTypeExternalName || existing.Spec.Type == corev1.ServiceTypeExternalName {
		return
	}

	// An empty clusterIP asks for an allocated one; "None" (headless) is not allocated and so is not kept.
	if len(required.Spec.ClusterIP) == 0 && existing.Spec.ClusterIP != corev1.ClusterIPNone {
		required.Spec.ClusterIP = existing.Spec.ClusterIP
	}
	if required.Spec.ClusterIP == existing.Spec.ClusterIP {
		if len(required.Spec.ClusterIPs) == 0 {
			required.Spec.ClusterIPs = slices.Clone(existing.Spec.ClusterIPs)
		}
		if len(required.Spec.IPFamilies) == 0 {
			required.Spec.IPFamilies = slices.Clone(existing.Spec.IPFamilies)
		}
		if required.Spec.IPFamilyPolicy == nil && existing.Spec.IPFamilyPolicy != nil {
			policy := *existing.Spec.IPFamilyPolicy
			required.Spec.IPFamilyPolicy = &policy
		}
	}

	if serviceAllocatesNodePorts(required) {
		for i := range required.Spec.Ports {
			port := &required.Spec.Ports[i]
			if port.NodePort != 0 {
				continue
			}
			j := slices.IndexFunc(existing.Spec.Ports, func(p corev1.ServicePort) bool {
				return p.Port == port.Port && protocolOrDefault(p.Protocol) == protocolOrDefault(port.Protocol)
			})
			if j >= 0 {
				port.NodePort = existing.Spec.Ports[j].NodePort
			}
		}
	}

	if required.Spec.Type == corev1.ServiceTypeLoadBalancer &&
		required.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal &&
		required.Spec.HealthCheckNodePort == 0 {
		required.Spec.HealthCheckNodePort = existing.Spec.HealthCheckNodePort
	}
}

func serviceAllocatesNodePorts(svc *corev1.Service) bool {
	switch svc.Spec.Type {
	case corev1.ServiceTypeNodePort:
		return true
	case corev1.ServiceTypeLoadBalancer:
		return svc.Spec.AllocateLoadBalancerNodePorts == nil || *svc.Spec.AllocateLoadBalancerNodePorts
	default:
		return false
	}
}

func protocolOrDefault(protocol corev1.Protocol) corev1.Protocol {
	if len(protocol) == 0 {
		return corev1.ProtocolTCP
	}
	return protocol
}

// serviceImmutableFieldChange reports a change of spec.clusterIP, which the API server never updates (for example
// between headless and ClusterIP). Call it after preserveServiceFields.
func serviceImmutableFieldChange(existing, required *corev1.Service) (string, bool) {
	if required.Spec.Type == corev1.ServiceTypeExternalName || existing.Spec.Type == corev1.ServiceTypeExternalName {
		return "", false
	}
	if required.Spec.ClusterIP != existing.Spec.ClusterIP {
		return "spec.clusterIP", true
	}
	return "", false
}

// secretImmutableFieldChange reports a change of the type, or of the data of a Secret marked immutable.
func secretImmutableFieldChange(existing, required *corev1.Secret) (string, bool) {
	if secretTypeOrDefault(existing.Type) != secretTypeOrDefault(required.Type) {
		return "type", true
	}
	if !isTrue(existing.Immutable) {
		return "", false
	}
	// stringData is write-only: the API server merges it into data.
	requiredData := maps.Clone(required.Data)
	for k, v := range required.StringData {
		if requiredData == nil {
			requiredData = make(map[string][]byte, len(required.StringData))
		}
		requiredData[k] = []byte(v)
	}
	if !apiequality.Semantic.DeepEqual(existing.Data, requiredData) {
		return "data", true
	}
	if !isTrue(required.Immutable) {
		return "immutable", true
	}
	return "", false
}

func secretTypeOrDefault(t corev1.SecretType) corev1.SecretType {
	if len(t) == 0 {
		return corev1.SecretTypeOpaque
	}
	return t
}

// configMapImmutableFieldChange reports a change of the data of a ConfigMap marked immutable.
func configMapImmutableFieldChange(existing, required *corev1.ConfigMap) (string, bool) {
	if !isTrue(existing.Immutable) {
		return "", false
	}
	if !apiequality.Semantic.DeepEqual(existing.Data, required.Data) {
		return "data", true
	}
	if !apiequality.Semantic.DeepEqual(existing.BinaryData, required.BinaryData) {
		return "binaryData", true
	}
	if !isTrue(required.Immutable) {
		return "immutable", true
	}
	return "", false
}

func isTrue(b *bool) bool {
	return b != nil && *b
}
