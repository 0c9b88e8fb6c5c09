package operator

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// volumeNodes returns the host names a PersistentVolume's node affinity requires.
func volumeNodes(pv *corev1.PersistentVolume) []string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil
	}
	var nodes []string
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		for _, req := range term.MatchExpressions {
			if req.Key == corev1.LabelHostname && req.Operator == corev1.NodeSelectorOpIn {
				nodes = append(nodes, req.Values...)
			}
		}
	}
	return nodes
}

// replaceOption returns the value of ScyllaDB's replace_node_first_boot option on a command line (dashes or
// underscores, "--name=value" or "--name value"), the last one if given several times.
func replaceOption(args []string) string {
	value := ""
	for i, arg := range args {
		name, v, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(arg, "--") || strings.ReplaceAll(name, "-", "_") != "replace_node_first_boot" {
			continue
		}
		if !hasValue && i+1 < len(args) {
			v = args[i+1]
		}
		value = v
	}
	return value
}
