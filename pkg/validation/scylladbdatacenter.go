package validation

import (
	"encoding/json"
	"fmt"
	"strconv"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaDBDatacenter returns every error of sdc that the CRD schema can't catch.
func ValidateScyllaDBDatacenter(sdc *scyllav1alpha1.ScyllaDBDatacenter) field.ErrorList {
	var allErrs field.ErrorList
	spec := &sdc.Spec
	specPath := field.NewPath("spec")

	allErrs = append(allErrs, validateNameIsDNSLabel(sdc.Name)...)
	allErrs = append(allErrs, validateTranslatedAnnotations(sdc.Annotations)...)
	if spec.Metadata != nil {
		allErrs = append(allErrs, validateMetadata(spec.Metadata.Labels, spec.Metadata.Annotations, specPath.Child("metadata"))...)
	}
	allErrs = append(allErrs, validateImages(&spec.ScyllaDB, spec.ScyllaDBManagerAgent, specPath)...)
	version := imageTag(spec.ScyllaDB.Image)
	allErrs = append(allErrs, validateParallelNodeOperations(spec.EnableParallelNodeOperations, version, specPath.Child("enableParallelNodeOperations"), "the tag of spec.scyllaDB.image")...)
	allErrs = append(allErrs, validateScyllaDB(&spec.ScyllaDB, primaryFamily(spec.IPFamilies), specPath.Child("scyllaDB"))...)
	if p := spec.DNSPolicy; p != nil && *p == corev1.DNSNone {
		// Kubernetes refuses a Pod with dnsPolicy None and no dnsConfig.
		allErrs = append(allErrs, field.Invalid(specPath.Child("dnsPolicy"), string(*p), "must be ClusterFirstWithHostNet, ClusterFirst or Default: None needs a dnsConfig, which a ScyllaDBDatacenter can't set, and Kubernetes refuses such Pods"))
	}
	allErrs = append(allErrs, validateDNSDomains(spec.DNSDomains, specPath.Child("dnsDomains"))...)
	allErrs = append(allErrs, validateReadinessGates(spec.ReadinessGates, specPath.Child("readinessGates"))...)

	if eo := spec.ExposeOptions; eo != nil {
		path := specPath.Child("exposeOptions")
		if ns := eo.NodeService; ns != nil {
			allErrs = append(allErrs, validateMetadata(ns.Labels, ns.Annotations, path.Child("nodeService"))...)
			allErrs = append(allErrs, validateNodeServiceVersion(string(ns.Type), version, path.Child("nodeService", "type"), "the tag of spec.scyllaDB.image")...)
		}
		if eo.CQL != nil && eo.CQL.Ingress != nil {
			allErrs = append(allErrs, validateMetadata(eo.CQL.Ingress.Labels, eo.CQL.Ingress.Annotations, path.Child("cql", "ingress"))...)
			// The Ingresses' hosts are names under the DNS domains; a ScyllaDBDatacenter has no switch to disable them.
			if len(spec.DNSDomains) == 0 {
				allErrs = append(allErrs, field.Required(specPath.Child("dnsDomains"), "CQL ingress (spec.exposeOptions.cql.ingress) needs at least one DNS domain"))
			}
		}
	}

	allErrs = append(allErrs, validateRackTemplate(spec.RackTemplate, specPath.Child("rackTemplate"))...)
	names := make([]string, 0, len(spec.Racks))
	for i := range spec.Racks {
		rack := &spec.Racks[i]
		names = append(names, rack.Name)
		p := specPath.Child("racks").Index(i)
		allErrs = append(allErrs, validateRackTemplate(&rack.RackTemplate, p)...)
		allErrs = append(allErrs, validateMergedStorage(merge.RackTemplates(spec.RackTemplate, &rack.RackTemplate), rack.Name, p)...)
	}
	allErrs = append(allErrs, validateRackNames(names, specPath.Child("racks"))...)
	return allErrs
}

// validateTranslatedAnnotations checks the annotations the ScyllaCluster translator sets and the ScyllaDBDatacenter
// controller parses.
func validateTranslatedAnnotations(annotations map[string]string) field.ErrorList {
	var allErrs field.ErrorList
	path := field.NewPath("metadata", "annotations")
	for _, key := range []string{naming.HostNetworkingAnnotation, naming.AlternatorInsecureEnableHTTPAnnotation, naming.AlternatorInsecureDisableAuthorizationAnnotation} {
		allErrs = append(allErrs, validateBoolAnnotation(annotations, key, path)...)
	}
	if v, ok := annotations[naming.AlternatorPortAnnotation]; ok {
		if port, err := strconv.ParseInt(v, 10, 32); err != nil || port < 1 || port > 65535 {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.AlternatorPortAnnotation), v, "must be a port number between 1 and 65535"))
		}
	}
	if v, ok := annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot]; ok {
		for _, msg := range validation.IsDNS1123Subdomain(v) {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot), v, "must name a Secret: "+msg))
		}
	}
	allErrs = append(allErrs, validateManagerClusterIDAnnotation(annotations, naming.ScyllaDBManagerClusterIDAnnotation)...)
	if v, ok := annotations[naming.SysctlsAnnotation]; ok {
		var sysctls []string
		if err := json.Unmarshal([]byte(v), &sysctls); err != nil {
			allErrs = append(allErrs, field.Invalid(path.Key(naming.SysctlsAnnotation), v, `must be a JSON list of key=value strings, e.g. ["fs.aio-max-nr=30000000"]`))
		} else {
			allErrs = append(allErrs, validateSysctls(sysctls, path.Key(naming.SysctlsAnnotation))...)
		}
	}
	return allErrs
}

// validateManagerClusterIDAnnotation checks that annotation key, when set, holds a ScyllaDB Manager cluster ID:
// ScyllaDB Manager would take anything else for a cluster name.
func validateManagerClusterIDAnnotation(annotations map[string]string, key string) field.ErrorList {
	if v := annotations[key]; len(v) != 0 && !managerclient.IsUUID(v) {
		return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(key), v, "must be a ScyllaDB Manager cluster ID (a UUID)")}
	}
	return nil
}

// validateImages checks that both images are set: nothing can run without them.
func validateImages(scyllaDB *scyllav1alpha1.ScyllaDB, agent *scyllav1alpha1.ScyllaDBManagerAgent, specPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if len(scyllaDB.Image) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("scyllaDB", "image"), "the ScyllaDB image is required, e.g. docker.io/scylladb/scylla:2025.1.2"))
	}
	if agent == nil || agent.Image == nil || len(*agent.Image) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("scyllaDBManagerAgent", "image"), "the ScyllaDB Manager Agent image is required, e.g. docker.io/scylladb/scylla-manager-agent:3.5.0"))
	}
	return allErrs
}

// validateScyllaDB checks the ScyllaDB settings both v1alpha1 cluster kinds share.
func validateScyllaDB(s *scyllav1alpha1.ScyllaDB, family corev1.IPFamily, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateExternalSeeds(s.ExternalSeeds, path.Child("externalSeeds"))...)
	allErrs = append(allErrs, validateAddressArgs(s.AdditionalScyllaDBArguments, family, path.Child("additionalScyllaDBArguments").Index)...)
	return allErrs
}

// validateRackTemplate checks one level of rack settings on its own.
func validateRackTemplate(t *scyllav1alpha1.RackTemplate, path *field.Path) field.ErrorList {
	if t == nil {
		return nil
	}
	var allErrs field.ErrorList
	if s := t.ScyllaDB; s != nil {
		allErrs = append(allErrs, validateResources(s.Resources, path.Child("scyllaDB", "resources"))...)
		if s.Storage != nil && s.Storage.Metadata != nil {
			allErrs = append(allErrs, validateMetadata(s.Storage.Metadata.Labels, s.Storage.Metadata.Annotations, path.Child("scyllaDB", "storage", "metadata"))...)
		}
	}
	if a := t.ScyllaDBManagerAgent; a != nil {
		allErrs = append(allErrs, validateResources(a.Resources, path.Child("scyllaDBManagerAgent", "resources"))...)
	}
	if t.ExposeOptions != nil && t.ExposeOptions.NodeService != nil {
		ns := t.ExposeOptions.NodeService
		allErrs = append(allErrs, validateMetadata(ns.Labels, ns.Annotations, path.Child("exposeOptions", "nodeService"))...)
	}
	return allErrs
}

// validateMergedStorage checks that a rack, with every template it inherits from merged in, has storage of a
// positive capacity.
func validateMergedStorage(merged *scyllav1alpha1.RackTemplate, rackName string, path *field.Path) field.ErrorList {
	var capacity string
	if merged != nil && merged.ScyllaDB != nil && merged.ScyllaDB.Storage != nil {
		capacity = merged.ScyllaDB.Storage.Capacity
	}
	return validateCapacity(capacity, rackName, path.Child("scyllaDB", "storage", "capacity"))
}

// validateCapacity checks that a rack's storage capacity is set and a positive quantity.
func validateCapacity(capacity, rackName string, path *field.Path) field.ErrorList {
	if len(capacity) == 0 {
		return field.ErrorList{field.Required(path, fmt.Sprintf("rack %q has no storage capacity: set scyllaDB.storage.capacity on the rack or in a template it inherits from", rackName))}
	}
	q, err := resource.ParseQuantity(capacity)
	if err != nil || q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(path, capacity, "must be a positive quantity, e.g. 10Gi")}
	}
	return nil
}

// ValidateScyllaDBDatacenterUpdate returns the errors of ValidateScyllaDBDatacenter(sdc) and those of changes from
// old that aren't allowed: a rack may only be removed once it runs no nodes, as its status (which must be current)
// shows.
func ValidateScyllaDBDatacenterUpdate(sdc, old *scyllav1alpha1.ScyllaDBDatacenter) field.ErrorList {
	allErrs := ValidateScyllaDBDatacenter(sdc)
	kept := map[string]bool{}
	for _, r := range sdc.Spec.Racks {
		kept[r.Name] = true
	}
	fresh := old.Status.ObservedGeneration != nil && *old.Status.ObservedGeneration >= old.Generation
	for _, r := range old.Spec.Racks {
		if kept[r.Name] {
			continue
		}
		merged := merge.RackTemplates(old.Spec.RackTemplate, &r.RackTemplate)
		var status *scyllav1alpha1.RackStatus
		for i := range old.Status.Racks {
			if old.Status.Racks[i].Name == r.Name {
				status = &old.Status.Racks[i]
			}
		}
		var statusNodes *int32
		var stale *bool
		if status != nil {
			statusNodes, stale = status.Nodes, status.Stale
		}
		allErrs = append(allErrs, validateRemoval(fmt.Sprintf("rack %q", r.Name), merged.Nodes, statusNodes, fresh && (stale == nil || !*stale), field.NewPath("spec", "racks"))...)
	}
	return allErrs
}

// validateRemoval refuses removing what still has nodes: specNodes (nil is 0) and statusNodes (nil is 0) must both
// be 0, and the status must be fresh.
func validateRemoval(what string, specNodes, statusNodes *int32, fresh bool, path *field.Path) field.ErrorList {
	switch {
	case specNodes != nil && *specNodes != 0:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s can't be removed while its nodes are %d: scale it to 0 first", what, *specNodes))}
	case statusNodes != nil && *statusNodes != 0:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s can't be removed while it still runs %d nodes: wait for the scale-down to 0 to finish", what, *statusNodes))}
	case !fresh:
		return field.ErrorList{field.Forbidden(path, fmt.Sprintf("%s can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0", what))}
	}
	return nil
}

// WarningsForScyllaDBDatacenter returns admission warnings for the deprecated fields sdc uses.
func WarningsForScyllaDBDatacenter(sdc *scyllav1alpha1.ScyllaDBDatacenter) []string {
	if sdc.Spec.ExposeOptions != nil && sdc.Spec.ExposeOptions.CQL != nil {
		return []string{"spec.exposeOptions.cql is deprecated: expose nodes with spec.exposeOptions.nodeService and broadcastOptions instead"}
	}
	return nil
}
