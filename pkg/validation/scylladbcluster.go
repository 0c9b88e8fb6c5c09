package validation

import (
	"encoding/json"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBCluster returns every error of sc that the CRD schema can't catch, including what keeps any of
// its datacenters from being built.
func ValidateScyllaDBCluster(sc *scyllav1alpha1.ScyllaDBCluster) field.ErrorList {
	var allErrs field.ErrorList
	spec := &sc.Spec
	specPath := field.NewPath("spec")

	// The name and namespace become label values in the remote clusters (naming.ScyllaDBClusterRemoteLabels).
	for _, f := range []struct {
		path  *field.Path
		value string
	}{
		{field.NewPath("metadata", "name"), sc.Name},
		{field.NewPath("metadata", "namespace"), sc.Namespace},
	} {
		if len(f.value) == 0 {
			allErrs = append(allErrs, field.Required(f.path, "it becomes a label value of the objects in the remote clusters"))
			continue
		}
		for _, msg := range validation.IsValidLabelValue(f.value) {
			allErrs = append(allErrs, field.Invalid(f.path, f.value, msg))
		}
	}
	if len(validation.IsValidLabelValue(sc.Name)) == 0 {
		// Its datacenters' ScyllaDBDatacenters are named <name>-<datacenter>; a name too long is reported above.
		allErrs = append(allErrs, validateNameIsDNSLabel(sc.Name)...)
	}
	allErrs = append(allErrs, validateManagerClusterIDAnnotation(sc.Annotations, naming.ScyllaDBManagerClusterIDAnnotation)...)
	if spec.Metadata != nil {
		allErrs = append(allErrs, validateMetadata(spec.Metadata.Labels, spec.Metadata.Annotations, specPath.Child("metadata"))...)
	}
	allErrs = append(allErrs, validateImages(&spec.ScyllaDB, spec.ScyllaDBManagerAgent, specPath)...)
	allErrs = append(allErrs, validateScyllaDB(&spec.ScyllaDB, corev1.IPv4Protocol, specPath.Child("scyllaDB"))...)
	allErrs = append(allErrs, validateReadinessGates(spec.ReadinessGates, specPath.Child("readinessGates"))...)
	if eo := spec.ExposeOptions; eo != nil && eo.NodeService != nil {
		p := specPath.Child("exposeOptions", "nodeService")
		allErrs = append(allErrs, validateMetadata(eo.NodeService.Labels, eo.NodeService.Annotations, p)...)
		allErrs = append(allErrs, validateNodeServiceVersion(string(eo.NodeService.Type), imageTag(spec.ScyllaDB.Image), p.Child("type"), "the tag of spec.scyllaDB.image")...)
	} else {
		// A ScyllaDBCluster's nodes default to Headless Services.
		allErrs = append(allErrs, validateNodeServiceVersion(string(scyllav1alpha1.NodeServiceTypeHeadless), imageTag(spec.ScyllaDB.Image), specPath.Child("exposeOptions", "nodeService", "type"), "the tag of spec.scyllaDB.image")...)
	}

	if t := spec.DatacenterTemplate; t != nil {
		allErrs = append(allErrs, validateDatacenterTemplate(t, specPath.Child("datacenterTemplate"))...)
	}
	dcNames := map[string]bool{}
	for i := range spec.Datacenters {
		dc := &spec.Datacenters[i]
		p := specPath.Child("datacenters").Index(i)
		switch {
		case len(dc.Name) == 0:
			allErrs = append(allErrs, field.Required(p.Child("name"), "every datacenter needs a name"))
		case dcNames[dc.Name]:
			allErrs = append(allErrs, field.Duplicate(p.Child("name"), dc.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(dc.Name) {
				allErrs = append(allErrs, field.Invalid(p.Child("name"), dc.Name, msg))
			}
		}
		dcNames[dc.Name] = true

		rkcPath := p.Child("remoteKubernetesClusterName")
		if len(dc.RemoteKubernetesClusterName) == 0 {
			allErrs = append(allErrs, field.Required(rkcPath, "the RemoteKubernetesCluster the datacenter runs in is required"))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(dc.RemoteKubernetesClusterName) {
				allErrs = append(allErrs, field.Invalid(rkcPath, dc.RemoteKubernetesClusterName, msg))
			}
		}
		allErrs = append(allErrs, validateDatacenterTemplate(&dc.ScyllaDBClusterDatacenterTemplate, p)...)

		racks := merge.ScyllaDBClusterDatacenterRacks(sc, dc)
		if len(racks) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("racks"), "the datacenter has no racks: neither spec.datacenterTemplate.racks nor its own racks list one"))
		}
		rackTemplate := merge.ScyllaDBClusterDatacenterRackTemplate(sc, dc)
		for _, rack := range racks {
			allErrs = append(allErrs, validateMergedStorage(merge.RackTemplates(rackTemplate, &rack.RackTemplate), rack.Name, p.Child("racks").Key(rack.Name))...)
		}
	}
	return allErrs
}

// validateDatacenterTemplate checks one level of datacenter settings on its own.
func validateDatacenterTemplate(t *scyllav1alpha1.ScyllaDBClusterDatacenterTemplate, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if t.Metadata != nil {
		allErrs = append(allErrs, validateMetadata(t.Metadata.Labels, t.Metadata.Annotations, path.Child("metadata"))...)
	}
	// The datacenter-wide scyllaDB and scyllaDBManagerAgent have a rack template's shape.
	allErrs = append(allErrs, validateRackTemplate(&scyllav1alpha1.RackTemplate{ScyllaDB: t.ScyllaDB, ScyllaDBManagerAgent: t.ScyllaDBManagerAgent}, path)...)
	allErrs = append(allErrs, validateRackTemplate(t.RackTemplate, path.Child("rackTemplate"))...)
	names := make([]string, 0, len(t.Racks))
	for i := range t.Racks {
		names = append(names, t.Racks[i].Name)
		allErrs = append(allErrs, validateRackTemplate(&t.Racks[i].RackTemplate, path.Child("racks").Index(i))...)
	}
	allErrs = append(allErrs, validateRackNames(names, path.Child("racks"))...)
	return allErrs
}

// ValidateScyllaDBClusterUpdate returns the errors of ValidateScyllaDBCluster(sc) and those of changes from old that
// aren't allowed: a datacenter, or a rack of one, may only be removed (a datacenter also moved to another
// RemoteKubernetesCluster) once it runs no nodes, as its status (which must be current) shows, and a kept rack's
// merged storage may not change.
func ValidateScyllaDBClusterUpdate(sc, old *scyllav1alpha1.ScyllaDBCluster) field.ErrorList {
	allErrs := ValidateScyllaDBCluster(sc)
	fresh := old.Status.ObservedGeneration != nil && *old.Status.ObservedGeneration >= old.Generation
	statuses := map[string]*scyllav1alpha1.ScyllaDBClusterDatacenterStatus{}
	for i := range old.Status.Datacenters {
		statuses[old.Status.Datacenters[i].Name] = &old.Status.Datacenters[i]
	}
	current := map[string]int{}
	for i := range sc.Spec.Datacenters {
		current[sc.Spec.Datacenters[i].Name] = i
	}
	path := field.NewPath("spec", "datacenters")
	for i := range old.Spec.Datacenters {
		oldDC := &old.Spec.Datacenters[i]
		status := statuses[oldDC.Name]
		var dcStatusNodes *int32
		dcFresh := fresh
		if status != nil {
			dcStatusNodes = status.Nodes
			dcFresh = dcFresh && (status.Stale == nil || !*status.Stale)
		}
		oldTemplate := merge.ScyllaDBClusterDatacenterRackTemplate(old, oldDC)
		oldRacks := merge.ScyllaDBClusterDatacenterRacks(old, oldDC)
		newIndex, kept := current[oldDC.Name]
		if !kept {
			allErrs = append(allErrs, validateRemoval(fmt.Sprintf("datacenter %q", oldDC.Name), specNodes(oldTemplate, oldRacks), dcStatusNodes, dcFresh, path)...)
			continue
		}
		newDC := &sc.Spec.Datacenters[newIndex]
		if from, to := oldDC.RemoteKubernetesClusterName, newDC.RemoteKubernetesClusterName; from != to {
			// The datacenter is created anew in the other cluster: its nodes in the first must be gone, or two
			// datacenters of one name would run.
			what := fmt.Sprintf("datacenter %q (moving it from RemoteKubernetesCluster %q to %q removes it from %q)", oldDC.Name, from, to, from)
			allErrs = append(allErrs, validateRemoval(what, specNodes(oldTemplate, oldRacks), dcStatusNodes, dcFresh, path.Index(newIndex).Child("remoteKubernetesClusterName"))...)
		}
		newTemplate := merge.ScyllaDBClusterDatacenterRackTemplate(sc, newDC)
		keptRacks := map[string]*scyllav1alpha1.RackSpec{}
		newRacks := merge.ScyllaDBClusterDatacenterRacks(sc, newDC)
		for i := range newRacks {
			keptRacks[newRacks[i].Name] = &newRacks[i]
		}
		for _, r := range oldRacks {
			if newRack, ok := keptRacks[r.Name]; ok {
				allErrs = append(allErrs, validateStorageUnchanged(mergedStorage(oldTemplate, &r), mergedStorage(newTemplate, newRack), r.Name, oldDC.Name, path.Index(newIndex).Child("racks").Key(r.Name).Child("scyllaDB", "storage"))...)
				continue
			}
			var rackStatusNodes *int32
			rackFresh := dcFresh
			if status != nil {
				for _, rs := range status.Racks {
					if rs.Name == r.Name {
						rackStatusNodes = rs.Nodes
						rackFresh = rackFresh && (rs.Stale == nil || !*rs.Stale)
					}
				}
			}
			allErrs = append(allErrs, validateRemoval(fmt.Sprintf("rack %q of datacenter %q", r.Name, oldDC.Name), specNodes(oldTemplate, []scyllav1alpha1.RackSpec{r}), rackStatusNodes, rackFresh, path)...)
		}
	}
	return allErrs
}

// mergedStorage returns the storage of rack merged over template, or nil when neither sets one.
func mergedStorage(template *scyllav1alpha1.RackTemplate, rack *scyllav1alpha1.RackSpec) *scyllav1alpha1.StorageOptions {
	if merged := merge.RackTemplates(template, &rack.RackTemplate); merged != nil && merged.ScyllaDB != nil {
		return merged.ScyllaDB.Storage
	}
	return nil
}

// validateStorageUnchanged refuses a change of a kept rack's storage. The schema keeps each level's storage as it
// was, but a rack added to, or removed from, spec.datacenterTemplate.racks or a datacenter's racks changes which
// level a rack of the same name takes its storage from: the rack's volumes can't follow, and the datacenter's
// ScyllaDBDatacenter would refuse the change. A rack that had no storage had no volumes and may get one.
func validateStorageUnchanged(old, updated *scyllav1alpha1.StorageOptions, rackName, dcName string, path *field.Path) field.ErrorList {
	if old == nil || equality.Semantic.DeepEqual(old, updated) {
		return nil
	}
	return field.ErrorList{field.Forbidden(path, fmt.Sprintf("rack %q of datacenter %q can't change its storage from %s to %s: a rack's storage, merged from spec.datacenterTemplate, the datacenter and the rack, is immutable; keep the rack's storage as it was at every level", rackName, dcName, describeStorage(old), describeStorage(updated)))}
}

// describeStorage renders storage for a message, "none" when it is nil.
func describeStorage(storage *scyllav1alpha1.StorageOptions) string {
	if storage == nil {
		return "none"
	}
	b, err := json.Marshal(storage)
	if err != nil {
		return fmt.Sprintf("%+v", *storage)
	}
	return string(b)
}

// specNodes returns the nodes racks ask for, each merged over template.
func specNodes(template *scyllav1alpha1.RackTemplate, racks []scyllav1alpha1.RackSpec) *int32 {
	var total int32
	for i := range racks {
		if merged := merge.RackTemplates(template, &racks[i].RackTemplate); merged != nil && merged.Nodes != nil {
			total += *merged.Nodes
		}
	}
	return &total
}

// WarningsForScyllaDBCluster returns admission warnings for the deprecated fields sc uses; it has none.
func WarningsForScyllaDBCluster(sc *scyllav1alpha1.ScyllaDBCluster) []string {
	return nil
}
