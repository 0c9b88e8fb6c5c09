package controllerhelpers

import (
	"bytes"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// TrimForInformerCache is the cache.TransformFunc of the programs' informer factories. It drops from each object, as
// the informer receives it and before it is cached, what no controller reads, so that the caches, which hold every
// object the operator manages, cost less memory. Like kube-scheduler's transform, it changes the object in place:
// the informer hands it over freshly decoded, before anyone else sees it. Dropping is idempotent, as a
// cache.TransformFunc must be.
//
// It drops:
//   - metadata.managedFields of every kind but ScyllaDBDatacenter: they are about half of a Pod's or StatefulSet's
//     metadata. Updates of trimmed objects are safe: the API server keeps the live managedFields when an update
//     sends none.
//   - of a ScyllaDBDatacenter's managedFields, what its status write does not read (trimScyllaDBDatacenterManagedFields).
//   - of a Pod's spec, everything but the node name and its containers' names and images (trimPodSpec); of its
//     status, the statuses of its containers and resource claims (trimPodStatus), the biggest part of it. Its
//     metadata is kept whole.
//   - of a StatefulSet's pod template, the same (trimPodSpec): a ScyllaDB template is the biggest part of the
//     object, and the controllers tell a template change by the hash the operator stores in an annotation, writing
//     a StatefulSet from what they require, never from the cached one. The template's metadata (kubectl's
//     restartedAt annotation), the claim templates, the rest of the spec and the status are kept whole.
//
// A controller that starts reading another field of a trimmed kind, or the managedFields of another kind, must keep
// it here first; TestTrimForInformerCache lists what is kept.
func TrimForInformerCache(obj any) (any, error) {
	switch o := obj.(type) {
	case *scyllav1alpha1.ScyllaDBDatacenter:
		o.ManagedFields = trimScyllaDBDatacenterManagedFields(o.ManagedFields)
	case *corev1.Pod:
		o.ManagedFields = nil
		trimPodSpec(&o.Spec)
		trimPodStatus(&o.Status)
	case *appsv1.StatefulSet:
		o.ManagedFields = nil
		trimPodSpec(&o.Spec.Template.Spec)
	case metav1.Object:
		o.SetManagedFields(nil)
	}
	return obj, nil
}

// trimScyllaDBDatacenterManagedFields keeps of a ScyllaDBDatacenter's managedFields what the operator's status write
// reads: of its status apply entry, the conditions it owns (AppliedStatusConditionTypes), by their keys alone
// (narrowToStatusConditionKeys). While an Update entry of an earlier operator version on the status is there, every
// entry is kept whole: handing its fields over (UpgradeStatusManagedFields) replaces the whole list, which must hold
// the other writers' entries. The other entries (the spec's writers', the manager-controller's status entry) and the
// rest of the operator's (every field of every condition and rack status) are most of the list.
func trimScyllaDBDatacenterManagedFields(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	legacy := naming.LegacyOperatorStatusUpdateManagers()
	if slices.ContainsFunc(entries, func(e metav1.ManagedFieldsEntry) bool {
		return e.Operation == metav1.ManagedFieldsOperationUpdate && e.Subresource == statusSubresource && slices.Contains(legacy, e.Manager)
	}) {
		return entries
	}
	var kept []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == statusSubresource && e.Manager == naming.OperatorFieldManager {
			kept = append(kept, narrowToStatusConditionKeys(e))
		}
	}
	return kept
}

// narrowToStatusConditionKeys returns entry owning, of its fields, only the keys of the status conditions it owns:
// what AppliedStatusConditionTypes reads. An entry whose fields can't be decoded is returned as it is, as is one that
// holds nothing else.
func narrowToStatusConditionKeys(entry metav1.ManagedFieldsEntry) metav1.ManagedFieldsEntry {
	if entry.FieldsV1 == nil {
		return entry
	}
	fields := &fieldpath.Set{}
	if err := fields.FromJSON(bytes.NewReader(entry.FieldsV1.Raw)); err != nil {
		return entry
	}
	keys := &fieldpath.Set{}
	fields.Iterate(func(p fieldpath.Path) {
		if len(p) >= 3 && isField(p[0], "status") && isField(p[1], "conditions") && p[2].Key != nil {
			keys.Insert(p[:3].Copy())
		}
	})
	raw, err := keys.ToJSON()
	if err != nil || bytes.Equal(raw, entry.FieldsV1.Raw) {
		return entry
	}
	entry.FieldsV1 = &metav1.FieldsV1{Raw: raw}
	return entry
}

// trimPodSpec keeps what the controllers read of a Pod's spec or a StatefulSet's pod template: which node runs it and
// which image each of its containers runs (a ScyllaDB node's version is its scylla container's image). The rest is
// the operator's own template (volumes, commands, environment, probes), which it builds again on every sync.
func trimPodSpec(spec *corev1.PodSpec) {
	*spec = corev1.PodSpec{
		NodeName:       spec.NodeName,
		InitContainers: trimContainers(spec.InitContainers),
		Containers:     trimContainers(spec.Containers),
	}
}

// trimPodStatus drops the per-container and per-claim statuses of a Pod: the controllers read whether it is Ready from
// its conditions and its addresses, never how each container runs. The phase, conditions, addresses and the other
// scalars are kept.
func trimPodStatus(status *corev1.PodStatus) {
	status.InitContainerStatuses = nil
	status.ContainerStatuses = nil
	status.EphemeralContainerStatuses = nil
	status.ResourceClaimStatuses = nil
}

func trimContainers(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	trimmed := make([]corev1.Container, 0, len(containers))
	for _, c := range containers {
		trimmed = append(trimmed, corev1.Container{Name: c.Name, Image: c.Image})
	}
	return trimmed
}
