// Package merge merges API objects the way the operator's templates are specified: a more specific level over a less
// specific one (a rack over the rack template, a datacenter over a ScyllaDBCluster's datacenter template).
package merge

import (
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// RackTemplates returns override merged over base, or nil when both are nil: a field set in override wins over base's
// for scalars and pointers, maps are merged key by key with override winning, tolerations are appended, volumes (by
// name) and volume mounts (by mount path) are merged with override's replacing base's, and a node Service's labels
// and annotations are merged. The result may share memory with the arguments.
func RackTemplates(base, override *scyllav1alpha1.RackTemplate) *scyllav1alpha1.RackTemplate {
	switch {
	case base == nil:
		return override
	case override == nil:
		return base
	}
	return &scyllav1alpha1.RackTemplate{
		Nodes:                 Pick(override.Nodes, base.Nodes),
		Placement:             placements(base.Placement, override.Placement),
		TopologyLabelSelector: Maps(base.TopologyLabelSelector, override.TopologyLabelSelector),
		ScyllaDB:              scyllaDBTemplates(base.ScyllaDB, override.ScyllaDB),
		ScyllaDBManagerAgent:  agentTemplates(base.ScyllaDBManagerAgent, override.ScyllaDBManagerAgent),
		ExposeOptions:         rackExposeOptions(base.ExposeOptions, override.ExposeOptions),
	}
}

func placements(base, override *scyllav1alpha1.Placement) *scyllav1alpha1.Placement {
	switch {
	case base == nil:
		return override
	case override == nil:
		return base
	}
	return &scyllav1alpha1.Placement{
		NodeAffinity:    Pick(override.NodeAffinity, base.NodeAffinity),
		PodAffinity:     Pick(override.PodAffinity, base.PodAffinity),
		PodAntiAffinity: Pick(override.PodAntiAffinity, base.PodAntiAffinity),
		Tolerations:     slices.Concat(base.Tolerations, override.Tolerations),
	}
}

func scyllaDBTemplates(base, override *scyllav1alpha1.ScyllaDBTemplate) *scyllav1alpha1.ScyllaDBTemplate {
	switch {
	case base == nil:
		return override
	case override == nil:
		return base
	}
	return &scyllav1alpha1.ScyllaDBTemplate{
		Resources:          Pick(override.Resources, base.Resources),
		Storage:            Pick(override.Storage, base.Storage),
		CustomConfigMapRef: Pick(override.CustomConfigMapRef, base.CustomConfigMapRef),
		Volumes:            volumes(base.Volumes, override.Volumes),
		VolumeMounts:       volumeMounts(base.VolumeMounts, override.VolumeMounts),
	}
}

func agentTemplates(base, override *scyllav1alpha1.ScyllaDBManagerAgentTemplate) *scyllav1alpha1.ScyllaDBManagerAgentTemplate {
	switch {
	case base == nil:
		return override
	case override == nil:
		return base
	}
	return &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
		Resources:             Pick(override.Resources, base.Resources),
		CustomConfigSecretRef: Pick(override.CustomConfigSecretRef, base.CustomConfigSecretRef),
		Volumes:               volumes(base.Volumes, override.Volumes),
		VolumeMounts:          volumeMounts(base.VolumeMounts, override.VolumeMounts),
	}
}

func rackExposeOptions(base, override *scyllav1alpha1.RackExposeOptions) *scyllav1alpha1.RackExposeOptions {
	var metadata []scyllav1alpha1.ObjectTemplateMetadata
	for _, o := range []*scyllav1alpha1.RackExposeOptions{base, override} {
		if o != nil && o.NodeService != nil {
			metadata = append(metadata, o.NodeService.ObjectTemplateMetadata)
		}
	}
	switch len(metadata) {
	case 0:
		return Pick(override, base)
	case 1:
		return &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{ObjectTemplateMetadata: metadata[0]}}
	}
	return &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
		ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{
			Labels:      Maps(metadata[0].Labels, metadata[1].Labels),
			Annotations: Maps(metadata[0].Annotations, metadata[1].Annotations),
		},
	}}
}

func volumes(base, override []corev1.Volume) []corev1.Volume {
	return ByKey(base, override, func(v corev1.Volume) string { return v.Name }, Replace)
}

func volumeMounts(base, override []corev1.VolumeMount) []corev1.VolumeMount {
	return ByKey(base, override, func(m corev1.VolumeMount) string { return m.MountPath }, Replace)
}

// Replace is the merge of ByKey that takes override's item whole.
func Replace[T any](_, override T) T {
	return override
}

// ByKey returns base's items, each merged with override's item of the same key if there is one, followed by
// override's other items; nil when both are empty.
func ByKey[T any](base, override []T, key func(T) string, merge func(base, override T) T) []T {
	if len(base) == 0 && len(override) == 0 {
		return nil
	}
	overrides := make(map[string]T, len(override))
	for _, o := range override {
		overrides[key(o)] = o
	}
	merged := make([]T, 0, len(base)+len(override))
	for _, b := range base {
		if o, ok := overrides[key(b)]; ok {
			b = merge(b, o)
			delete(overrides, key(b))
		}
		merged = append(merged, b)
	}
	for _, o := range override {
		if _, ok := overrides[key(o)]; ok {
			merged = append(merged, o)
		}
	}
	return merged
}

// Pick returns override unless it is nil, else base.
func Pick[T any](override, base *T) *T {
	if override != nil {
		return override
	}
	return base
}

// Maps returns a new map with base's entries and override's on top, or nil when both are empty.
func Maps(base, override map[string]string) map[string]string {
	if len(base) == 0 && len(override) == 0 {
		return nil
	}
	merged := make(map[string]string, len(base)+len(override))
	maps.Copy(merged, base)
	maps.Copy(merged, override)
	return merged
}
