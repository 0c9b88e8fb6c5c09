package merge

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
)

// DatacenterTemplateRackTemplate returns the rack settings a ScyllaDBCluster datacenter template holds: its
// datacenter-wide placement, topologyLabelSelector, scyllaDB and scyllaDBManagerAgent, with its rackTemplate merged
// over them.
func DatacenterTemplateRackTemplate(t *scyllav1alpha1.ScyllaDBClusterDatacenterTemplate) *scyllav1alpha1.RackTemplate {
	if t == nil {
		return nil
	}
	var wide *scyllav1alpha1.RackTemplate
	if t.Placement != nil || len(t.TopologyLabelSelector) != 0 || t.ScyllaDB != nil || t.ScyllaDBManagerAgent != nil {
		wide = &scyllav1alpha1.RackTemplate{
			Placement:             t.Placement,
			TopologyLabelSelector: t.TopologyLabelSelector,
			ScyllaDB:              t.ScyllaDB,
			ScyllaDBManagerAgent:  t.ScyllaDBManagerAgent,
		}
	}
	return RackTemplates(wide, t.RackTemplate)
}

// ScyllaDBClusterDatacenterRackTemplate returns the rackTemplate of the ScyllaDBDatacenter that runs dc of sc: the
// cluster's datacenter template's rack settings with dc's merged over them.
func ScyllaDBClusterDatacenterRackTemplate(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter) *scyllav1alpha1.RackTemplate {
	return RackTemplates(DatacenterTemplateRackTemplate(sc.Spec.DatacenterTemplate), DatacenterTemplateRackTemplate(&dc.ScyllaDBClusterDatacenterTemplate))
}

// ScyllaDBClusterDatacenterRacks returns the racks of the ScyllaDBDatacenter that runs dc of sc: the datacenter
// template's racks, each merged with dc's rack of the same name, followed by dc's other racks. The result shares no
// memory with the arguments.
func ScyllaDBClusterDatacenterRacks(sc *scyllav1alpha1.ScyllaDBCluster, dc *scyllav1alpha1.ScyllaDBClusterDatacenter) []scyllav1alpha1.RackSpec {
	var base []scyllav1alpha1.RackSpec
	if sc.Spec.DatacenterTemplate != nil {
		base = sc.Spec.DatacenterTemplate.Racks
	}
	merged := ByKey(base, dc.Racks, func(r scyllav1alpha1.RackSpec) string { return r.Name }, func(b, o scyllav1alpha1.RackSpec) scyllav1alpha1.RackSpec {
		return scyllav1alpha1.RackSpec{Name: o.Name, RackTemplate: *RackTemplates(&b.RackTemplate, &o.RackTemplate)}
	})
	for i := range merged {
		merged[i] = *merged[i].DeepCopy()
	}
	return merged
}
