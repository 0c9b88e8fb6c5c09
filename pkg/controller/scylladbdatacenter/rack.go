package scylladbdatacenter

import (
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// effectiveRacks returns the racks of sdc with the rack template merged into each, in spec order. Builders only ever
// look at the result: a rack's own value wins over the template's for scalars and pointers, maps are merged key by
// key with the rack winning, tolerations are appended, and volumes (by name) and volume mounts (by mount path) are
// merged with the rack's replacing the template's.
func effectiveRacks(sdc *scyllav1alpha1.ScyllaDBDatacenter) []scyllav1alpha1.RackSpec {
	racks := make([]scyllav1alpha1.RackSpec, 0, len(sdc.Spec.Racks))
	for _, rack := range sdc.Spec.Racks {
		racks = append(racks, mergeRack(sdc.Spec.RackTemplate, rack))
	}
	return racks
}

// mergeRack merges template into a copy of rack; see effectiveRacks for the rules. Neither argument is modified.
func mergeRack(template *scyllav1alpha1.RackTemplate, rack scyllav1alpha1.RackSpec) scyllav1alpha1.RackSpec {
	merged := *rack.DeepCopy()
	if template == nil {
		return merged
	}
	t := template.DeepCopy()
	r := &merged.RackTemplate

	r.Nodes = pick(r.Nodes, t.Nodes)
	r.Placement = mergePlacement(t.Placement, r.Placement)
	r.TopologyLabelSelector = mergeMaps(t.TopologyLabelSelector, r.TopologyLabelSelector)

	switch {
	case t.ScyllaDB == nil:
	case r.ScyllaDB == nil:
		r.ScyllaDB = t.ScyllaDB
	default:
		r.ScyllaDB.Resources = pick(r.ScyllaDB.Resources, t.ScyllaDB.Resources)
		r.ScyllaDB.Storage = pick(r.ScyllaDB.Storage, t.ScyllaDB.Storage)
		r.ScyllaDB.CustomConfigMapRef = pick(r.ScyllaDB.CustomConfigMapRef, t.ScyllaDB.CustomConfigMapRef)
		r.ScyllaDB.Volumes = mergeVolumes(t.ScyllaDB.Volumes, r.ScyllaDB.Volumes)
		r.ScyllaDB.VolumeMounts = mergeVolumeMounts(t.ScyllaDB.VolumeMounts, r.ScyllaDB.VolumeMounts)
	}

	switch {
	case t.ScyllaDBManagerAgent == nil:
	case r.ScyllaDBManagerAgent == nil:
		r.ScyllaDBManagerAgent = t.ScyllaDBManagerAgent
	default:
		r.ScyllaDBManagerAgent.Resources = pick(r.ScyllaDBManagerAgent.Resources, t.ScyllaDBManagerAgent.Resources)
		r.ScyllaDBManagerAgent.CustomConfigSecretRef = pick(r.ScyllaDBManagerAgent.CustomConfigSecretRef, t.ScyllaDBManagerAgent.CustomConfigSecretRef)
		r.ScyllaDBManagerAgent.Volumes = mergeVolumes(t.ScyllaDBManagerAgent.Volumes, r.ScyllaDBManagerAgent.Volumes)
		r.ScyllaDBManagerAgent.VolumeMounts = mergeVolumeMounts(t.ScyllaDBManagerAgent.VolumeMounts, r.ScyllaDBManagerAgent.VolumeMounts)
	}

	templateNodeService := nodeServiceMetadataOf(t.ExposeOptions)
	rackNodeService := nodeServiceMetadataOf(r.ExposeOptions)
	if templateNodeService != nil || rackNodeService != nil {
		var tm, rm scyllav1alpha1.ObjectTemplateMetadata
		if templateNodeService != nil {
			tm = *templateNodeService
		}
		if rackNodeService != nil {
			rm = *rackNodeService
		}
		r.ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
			ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{
				Labels:      mergeMaps(tm.Labels, rm.Labels),
				Annotations: mergeMaps(tm.Annotations, rm.Annotations),
			},
		}}
	}

	return merged
}

func nodeServiceMetadataOf(options *scyllav1alpha1.RackExposeOptions) *scyllav1alpha1.ObjectTemplateMetadata {
	if options == nil || options.NodeService == nil {
		return nil
	}
	return &options.NodeService.ObjectTemplateMetadata
}

// pick returns override unless it is nil, else fallback.
func pick[T any](override, fallback *T) *T {
	if override != nil {
		return override
	}
	return fallback
}

func mergePlacement(template, rack *scyllav1alpha1.Placement) *scyllav1alpha1.Placement {
	switch {
	case template == nil:
		return rack
	case rack == nil:
		return template
	}
	return &scyllav1alpha1.Placement{
		NodeAffinity:    pick(rack.NodeAffinity, template.NodeAffinity),
		PodAffinity:     pick(rack.PodAffinity, template.PodAffinity),
		PodAntiAffinity: pick(rack.PodAntiAffinity, template.PodAntiAffinity),
		Tolerations:     append(slices.Clone(template.Tolerations), rack.Tolerations...),
	}
}

// mergeMaps returns base with override's entries on top, or nil when both are empty.
func mergeMaps(base, override map[string]string) map[string]string {
	if len(base) == 0 && len(override) == 0 {
		return nil
	}
	merged := make(map[string]string, len(base)+len(override))
	maps.Copy(merged, base)
	maps.Copy(merged, override)
	return merged
}

func mergeVolumes(template, rack []corev1.Volume) []corev1.Volume {
	return mergeByKey(template, rack, func(v corev1.Volume) string { return v.Name })
}

func mergeVolumeMounts(template, rack []corev1.VolumeMount) []corev1.VolumeMount {
	return mergeByKey(template, rack, func(m corev1.VolumeMount) string { return m.MountPath })
}

// mergeByKey returns template's items, each replaced by rack's item of the same key if there is one, followed by
// rack's other items.
func mergeByKey[T any](template, rack []T, key func(T) string) []T {
	if len(template) == 0 && len(rack) == 0 {
		return nil
	}
	merged := make([]T, 0, len(template)+len(rack))
	for _, item := range template {
		if i := slices.IndexFunc(rack, func(r T) bool { return key(r) == key(item) }); i >= 0 {
			item = rack[i]
		}
		merged = append(merged, item)
	}
	for _, item := range rack {
		if !slices.ContainsFunc(template, func(t T) bool { return key(t) == key(item) }) {
			merged = append(merged, item)
		}
	}
	return merged
}

// rackNodes is the number of nodes a merged rack asks for.
func rackNodes(rack *scyllav1alpha1.RackSpec) int32 {
	if rack.Nodes == nil {
		return 0
	}
	return *rack.Nodes
}
