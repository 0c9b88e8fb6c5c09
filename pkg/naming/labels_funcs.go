package naming

import "k8s.io/apimachinery/pkg/labels"

// ClusterLabels returns the labels that select every ScyllaDB node pod of a datacenter, and that every object the
// operator creates for it carries.
func ClusterLabels(sdcName string) map[string]string {
	return map[string]string{
		AppLabel:         AppLabelValue,
		AppNameLabel:     AppNameLabelValue,
		ManagedByLabel:   ManagedByLabelValue,
		ClusterNameLabel: sdcName,
	}
}

// ClusterSelector returns the selector of ClusterLabels.
func ClusterSelector(sdcName string) labels.Selector {
	return labels.SelectorFromSet(ClusterLabels(sdcName))
}

// NodePodLabels returns the labels that select the ScyllaDB node pods of a datacenter.
func NodePodLabels(sdcName string) map[string]string {
	l := ClusterLabels(sdcName)
	l[PodTypeLabel] = PodTypeScyllaDBNode
	return l
}

// RackLabels returns the labels that select the ScyllaDB node pods of one rack.
func RackLabels(sdcName, dcName, rackName string) map[string]string {
	l := NodePodLabels(sdcName)
	l[DatacenterNameLabel] = dcName
	l[RackNameLabel] = rackName
	return l
}
