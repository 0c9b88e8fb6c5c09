package scylladbdatacenter

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
)

// effectiveRacks returns the racks of sdc with the rack template merged into each, in spec order. Builders only ever
// look at the result: a rack's own value wins over the template's for scalars and pointers, maps are merged key by
// key with the rack winning, tolerations are appended, and volumes (by name) and volume mounts (by mount path) are
// merged with the rack's replacing the template's. A sync merges them once and hands the result to every builder.
func effectiveRacks(sdc *scyllav1alpha1.ScyllaDBDatacenter) []scyllav1alpha1.RackSpec {
	racks := make([]scyllav1alpha1.RackSpec, 0, len(sdc.Spec.Racks))
	for _, rack := range sdc.Spec.Racks {
		racks = append(racks, mergeRack(sdc.Spec.RackTemplate, rack))
	}
	return racks
}

// mergeRack merges template into a copy of rack (merge.RackTemplates, the rack winning). Neither argument is
// modified, and the result shares no memory with them.
func mergeRack(template *scyllav1alpha1.RackTemplate, rack scyllav1alpha1.RackSpec) scyllav1alpha1.RackSpec {
	merged := *rack.DeepCopy()
	if template == nil {
		return merged
	}
	merged.RackTemplate = *merge.RackTemplates(template.DeepCopy(), &merged.RackTemplate)
	return merged
}

// rackReferences returns rack merged with template as far as customConfigMapRef and agentCustomConfigSecretRef read
// it (the ScyllaDB and agent templates, merged as effectiveRacks does), sharing memory with both: the Secret and
// ConfigMap event handlers ask which user objects a datacenter reads at every event, and must not copy every rack for
// it. The result must not be modified.
func rackReferences(template *scyllav1alpha1.RackTemplate, rack *scyllav1alpha1.RackSpec) *scyllav1alpha1.RackSpec {
	if template == nil {
		return rack
	}
	merged := merge.RackTemplates(
		&scyllav1alpha1.RackTemplate{ScyllaDB: template.ScyllaDB, ScyllaDBManagerAgent: template.ScyllaDBManagerAgent},
		&scyllav1alpha1.RackTemplate{ScyllaDB: rack.ScyllaDB, ScyllaDBManagerAgent: rack.ScyllaDBManagerAgent},
	)
	return &scyllav1alpha1.RackSpec{Name: rack.Name, RackTemplate: *merged}
}

// nodeServiceMetadataOf returns the labels and annotations of the rack's node Service template, nil when it has none.
func nodeServiceMetadataOf(options *scyllav1alpha1.RackExposeOptions) *scyllav1alpha1.ObjectTemplateMetadata {
	if options == nil || options.NodeService == nil {
		return nil
	}
	return &options.NodeService.ObjectTemplateMetadata
}

// rackNodes is the number of nodes a merged rack asks for.
func rackNodes(rack *scyllav1alpha1.RackSpec) int32 {
	if rack.Nodes == nil {
		return 0
	}
	return *rack.Nodes
}
