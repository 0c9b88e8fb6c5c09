package validation

import (
	"fmt"
	"net/netip"
	"regexp"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/sysctl"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateScyllaCluster returns every error of sc that the CRD schema can't catch.
func ValidateScyllaCluster(sc *scyllav1.ScyllaCluster) field.ErrorList {
	var allErrs field.ErrorList
	spec := &sc.Spec
	specPath := field.NewPath("spec")

	allErrs = append(allErrs, validateNameIsDNSLabel(sc.Name)...)
	// The translator opts out only at "true", as the established operator did; anything else but "false" would
	// register the cluster with ScyllaDB Manager although its author likely meant to opt out.
	if v, ok := sc.Annotations[naming.DisableGlobalScyllaDBManagerIntegrationAnnotation]; ok && v != "true" && v != "false" {
		allErrs = append(allErrs, field.Invalid(field.NewPath("metadata", "annotations").Key(naming.DisableGlobalScyllaDBManagerIntegrationAnnotation), v, `must be "true" or "false"`))
	}
	if spec.PodMetadata != nil {
		allErrs = append(allErrs, validateMetadata(spec.PodMetadata.Labels, spec.PodMetadata.Annotations, specPath.Child("podMetadata"))...)
	}
	if len(spec.Version) == 0 {
		allErrs = append(allErrs, field.Required(specPath.Child("version"), "the ScyllaDB image tag is required, e.g. 2025.1.2"))
	}
	for _, r := range []struct{ field, value, example string }{
		{"repository", spec.Repository, "docker.io/scylladb/scylla"},
		{"agentRepository", spec.AgentRepository, "docker.io/scylladb/scylla-manager-agent"},
	} {
		// The image is <repository>:<version>; a tag or digest here, or upper case in the path, makes a reference
		// the translated ScyllaDBDatacenter's schema refuses.
		if len(r.value) != 0 && !imageRepositoryPattern.MatchString(r.value) {
			allErrs = append(allErrs, field.Invalid(specPath.Child(r.field), r.value, fmt.Sprintf("must be an image repository without a tag or digest, e.g. %s: the image is <%s>:<tag>", r.example, r.field)))
		}
	}
	allErrs = append(allErrs, validateParallelNodeOperations(spec.EnableParallelNodeOperations, spec.Version, specPath.Child("enableParallelNodeOperations"), "spec.version")...)
	allErrs = append(allErrs, validateDNSDomains(spec.DNSDomains, specPath.Child("dnsDomains"))...)
	allErrs = append(allErrs, validateExternalSeeds(spec.ExternalSeeds, specPath.Child("externalSeeds"))...)
	allErrs = append(allErrs, validateReadinessGates(spec.ReadinessGates, specPath.Child("readinessGates"))...)
	allErrs = append(allErrs, validateScyllaClusterExposeOptions(sc)...)
	allErrs = append(allErrs, validateSysctls(spec.Sysctls, specPath.Child("sysctls"))...)
	if a := spec.Alternator; a != nil && (a.Port < 0 || a.Port > 65535) {
		allErrs = append(allErrs, field.Invalid(specPath.Child("alternator", "port"), a.Port, "must be a port number between 1 and 65535, or 0 for the default"))
	}
	if args, err := SplitArguments(spec.ScyllaArgs); err != nil {
		allErrs = append(allErrs, field.Invalid(specPath.Child("scyllaArgs"), spec.ScyllaArgs, fmt.Sprintf("must split into arguments as a POSIX shell would: %v", err)))
	} else {
		allErrs = append(allErrs, validateAddressArgs(args, primaryFamily(spec.Network.IPFamilies), func(int) *field.Path { return specPath.Child("scyllaArgs") })...)
	}

	racksPath := specPath.Child("datacenter", "racks")
	names := make([]string, 0, len(spec.Datacenter.Racks))
	for i := range spec.Datacenter.Racks {
		rack := &spec.Datacenter.Racks[i]
		names = append(names, rack.Name)
		p := racksPath.Index(i)
		allErrs = append(allErrs, validateResources(&rack.Resources, p.Child("resources"))...)
		allErrs = append(allErrs, validateResources(&rack.AgentResources, p.Child("agentResources"))...)
		allErrs = append(allErrs, validateCapacity(rack.Storage.Capacity, rack.Name, p.Child("storage", "capacity"))...)
		if m := rack.Storage.Metadata; m != nil {
			allErrs = append(allErrs, validateMetadata(m.Labels, m.Annotations, p.Child("storage", "metadata"))...)
		}
		if rack.ExposeOptions != nil && rack.ExposeOptions.NodeService != nil {
			ns := rack.ExposeOptions.NodeService
			allErrs = append(allErrs, validateMetadata(ns.Labels, ns.Annotations, p.Child("exposeOptions", "nodeService"))...)
		}
	}
	allErrs = append(allErrs, validateRackNames(names, racksPath)...)

	allErrs = append(allErrs, validateScyllaClusterTasks(sc)...)
	return allErrs
}

// imageRepositoryPattern matches an image reference's name: an optional registry host (and port), then lower-case
// path components, with no tag or digest.
var imageRepositoryPattern = regexp.MustCompile(`^(?:(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:[.](?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)

// validateSysctls checks that every sysctl is key=value with a kernel parameter's name as key (sysctl.Parse): what
// the pods' sysctl init container can set.
func validateSysctls(sysctls []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, s := range sysctls {
		if _, err := sysctl.Parse(s); err != nil {
			allErrs = append(allErrs, field.Invalid(path.Index(i), s, "must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000"))
		}
	}
	return allErrs
}

// primaryFamily returns the first of families, IPv4 when there is none.
func primaryFamily(families []corev1.IPFamily) corev1.IPFamily {
	if len(families) == 0 {
		return corev1.IPv4Protocol
	}
	return families[0]
}

func validateScyllaClusterExposeOptions(sc *scyllav1.ScyllaCluster) field.ErrorList {
	eo := sc.Spec.ExposeOptions
	if eo == nil {
		return nil
	}
	var allErrs field.ErrorList
	path := field.NewPath("spec", "exposeOptions")
	if ns := eo.NodeService; ns != nil {
		allErrs = append(allErrs, validateMetadata(ns.Labels, ns.Annotations, path.Child("nodeService"))...)
		allErrs = append(allErrs, validateNodeServiceVersion(string(ns.Type), sc.Spec.Version, path.Child("nodeService", "type"), "spec.version")...)
	}
	if eo.CQL != nil && eo.CQL.Ingress != nil {
		in := eo.CQL.Ingress
		allErrs = append(allErrs, validateMetadata(in.Labels, in.Annotations, path.Child("cql", "ingress"))...)
		if (in.Disabled == nil || !*in.Disabled) && len(sc.Spec.DNSDomains) == 0 {
			allErrs = append(allErrs, field.Required(field.NewPath("spec", "dnsDomains"), "CQL ingress (spec.exposeOptions.cql.ingress) needs at least one DNS domain"))
		}
	}
	return allErrs
}

func validateScyllaClusterTasks(sc *scyllav1.ScyllaCluster) field.ErrorList {
	var allErrs field.ErrorList
	specPath := field.NewPath("spec")
	repairNames := taskNames{path: specPath.Child("repairs")}
	backupNames := taskNames{path: specPath.Child("backups")}
	for i := range sc.Spec.Repairs {
		r := &sc.Spec.Repairs[i]
		p := specPath.Child("repairs").Index(i)
		repairNames.names = append(repairNames.names, r.Name)
		allErrs = append(allErrs, validateScheduler(&r.SchedulerTaskSpec, p)...)
		allErrs = append(allErrs, validateCommaSeparatedFilters(r.DC, p.Child("dc"), checkDCFilter)...)
		allErrs = append(allErrs, validateCommaSeparatedFilters(r.Keyspace, p.Child("keyspace"), checkKeyspaceFilter)...)
		if r.Host != nil {
			allErrs = append(allErrs, validateRepairHost(*r.Host, p.Child("host"))...)
		}
		if len(r.SmallTableThreshold) != 0 {
			if _, err := ParseSize(r.SmallTableThreshold); err != nil {
				allErrs = append(allErrs, field.Invalid(p.Child("smallTableThreshold"), r.SmallTableThreshold, "must be a size such as 1GiB or 512MiB"))
			}
		}
	}
	for i := range sc.Spec.Backups {
		b := &sc.Spec.Backups[i]
		p := specPath.Child("backups").Index(i)
		backupNames.names = append(backupNames.names, b.Name)
		allErrs = append(allErrs, validateScheduler(&b.SchedulerTaskSpec, p)...)
		allErrs = append(allErrs, validateCommaSeparatedFilters(b.DC, p.Child("dc"), checkDCFilter)...)
		allErrs = append(allErrs, validateCommaSeparatedFilters(b.Keyspace, p.Child("keyspace"), checkKeyspaceFilter)...)
		allErrs = append(allErrs, validateBackupFields(nil, nil, b.Location, b.RateLimit, b.SnapshotParallel, b.UploadParallel, p)...)
		if len(b.Location) == 0 {
			allErrs = append(allErrs, field.Required(p.Child("location"), "a backup needs at least one location, e.g. s3:backups"))
		}
	}
	allErrs = append(allErrs, validateTaskNames([]taskNames{repairNames, backupNames})...)
	return allErrs
}

// validateRepairHost checks a repair's host the way the ScyllaDBManagerTask schema (CEL isIP) and ScyllaDB Manager
// do: an IP address, without a zone and not IPv4-mapped. ScyllaDB Manager refuses a name, and the task translated
// from the ScyllaCluster would be refused before it got there.
func validateRepairHost(host string, path *field.Path) field.ErrorList {
	if addr, err := netip.ParseAddr(host); err != nil || len(addr.Zone()) != 0 || addr.Is4In6() {
		return field.ErrorList{field.Invalid(path, host, "must be the IPv4 or IPv6 address of a node, e.g. 10.0.0.5: ScyllaDB Manager takes no host names")}
	}
	return nil
}

// validateBackupFields checks what backups of both APIs share.
func validateBackupFields(dc, keyspace, location, rateLimit, snapshotParallel, uploadParallel []string, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	allErrs = append(allErrs, validateDCFilters(dc, path.Child("dc"))...)
	allErrs = append(allErrs, validateKeyspaceFilters(keyspace, path.Child("keyspace"))...)
	allErrs = append(allErrs, validateLocations(location, path.Child("location"))...)
	allErrs = append(allErrs, validateDCLimits(rateLimit, path.Child("rateLimit"), "100 or dc1:50")...)
	allErrs = append(allErrs, validateDCLimits(snapshotParallel, path.Child("snapshotParallel"), "2 or dc1:1")...)
	allErrs = append(allErrs, validateDCLimits(uploadParallel, path.Child("uploadParallel"), "2 or dc1:1")...)
	return allErrs
}

func validateScheduler(s *scyllav1.SchedulerTaskSpec, path *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if s.Cron != nil {
		allErrs = append(allErrs, validateCron(*s.Cron, path.Child("cron"))...)
	}
	if s.Timezone != nil {
		if s.Cron == nil {
			allErrs = append(allErrs, field.Forbidden(path.Child("timezone"), "may be set only together with cron"))
		} else {
			allErrs = append(allErrs, validateTimezone(*s.Timezone, path.Child("timezone"))...)
		}
	}
	if s.StartDate != nil {
		allErrs = append(allErrs, validateStartDate(*s.StartDate, path.Child("startDate"))...)
	}
	if s.Interval != nil {
		allErrs = append(allErrs, validateManagerDuration(*s.Interval, path.Child("interval"))...)
	}
	// The ScyllaDBManagerTask the task is translated into refuses a count ScyllaDB Manager can't hold.
	allErrs = append(allErrs, validateNumRetries(s.NumRetries, path.Child("numRetries"))...)
	allErrs = append(allErrs, validateRetryWait(s.RetryWait, path.Child("retryWait"))...)
	return allErrs
}

// ValidateScyllaClusterUpdate returns the errors of ValidateScyllaCluster(sc) and those of changes from old that
// aren't allowed: a rack may only be removed once it runs no nodes, as its status (which must be current) shows.
func ValidateScyllaClusterUpdate(sc, old *scyllav1.ScyllaCluster) field.ErrorList {
	allErrs := ValidateScyllaCluster(sc)
	kept := map[string]bool{}
	for _, r := range sc.Spec.Datacenter.Racks {
		kept[r.Name] = true
	}
	racksPath := field.NewPath("spec", "datacenter", "racks")
	fresh := old.Status.ObservedGeneration != nil && *old.Status.ObservedGeneration >= old.Generation
	for _, r := range old.Spec.Datacenter.Racks {
		if kept[r.Name] {
			continue
		}
		status := old.Status.Racks[r.Name]
		stale := status.Stale != nil && *status.Stale
		allErrs = append(allErrs, validateRemoval(fmt.Sprintf("rack %q", r.Name), &r.Members, &status.Members, fresh && !stale, racksPath)...)
	}
	return allErrs
}

// WarningsForScyllaCluster returns admission warnings for the deprecated fields sc uses.
func WarningsForScyllaCluster(sc *scyllav1.ScyllaCluster) []string {
	var warnings []string
	spec := &sc.Spec
	if len(spec.Sysctls) != 0 {
		warnings = append(warnings, "spec.sysctls is deprecated: every ScyllaDB pod sets them with a privileged init container; prefer tuning the nodes' kernel parameters where the nodes are provisioned")
	}
	if spec.ExposeOptions != nil && spec.ExposeOptions.CQL != nil {
		warnings = append(warnings, "spec.exposeOptions.cql is deprecated: expose nodes with spec.exposeOptions.nodeService and broadcastOptions instead")
	}
	if spec.Network.HostNetworking {
		warnings = append(warnings, "spec.network.hostNetworking is deprecated: use spec.exposeOptions with broadcast type PodIP instead")
	}
	if spec.GenericUpgrade != nil && spec.GenericUpgrade.PollInterval.Duration != 0 {
		warnings = append(warnings, "spec.genericUpgrade.pollInterval is deprecated and has no effect")
	}
	if spec.CpuSet {
		warnings = append(warnings, "spec.cpuset is deprecated and has no effect: CPU pinning is always on")
	}
	if spec.Alternator != nil && spec.Alternator.Port != 0 {
		warnings = append(warnings, "spec.alternator.port is deprecated")
	}
	for i, r := range spec.Repairs {
		if r.Interval != nil {
			warnings = append(warnings, fmt.Sprintf("spec.repairs[%d].interval is deprecated: use cron instead", i))
		}
	}
	for i, b := range spec.Backups {
		if b.Interval != nil {
			warnings = append(warnings, fmt.Sprintf("spec.backups[%d].interval is deprecated: use cron instead", i))
		}
	}
	return warnings
}
