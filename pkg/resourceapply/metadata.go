package resourceapply

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkControllerRef returns an error unless existing may be written on behalf of required's controller: both have
// the same controller (same UID, kind and API group), neither has one, or existing has none and adoption is allowed.
func checkControllerRef(existing, required metav1.Object, options ApplyOptions) error {
	existingRef := metav1.GetControllerOfNoCopy(existing)
	requiredRef := metav1.GetControllerOfNoCopy(required)

	switch {
	case existingRef == nil && requiredRef == nil:
		return nil

	case existingRef == nil:
		if options.AdoptOrphans {
			return nil
		}
		return fmt.Errorf("the existing object has no controller and adopting orphans is not allowed, so it can't be claimed for %s", describeControllerRef(requiredRef))

	case requiredRef == nil:
		return fmt.Errorf("the existing object is controlled by %s but the required object has no controller", describeControllerRef(existingRef))

	case !controllerhelpers.SameController(existingRef, requiredRef):
		return fmt.Errorf("the existing object is controlled by %s, not by %s", describeControllerRef(existingRef), describeControllerRef(requiredRef))

	default:
		return nil
	}
}

func describeControllerRef(ref *metav1.OwnerReference) string {
	return fmt.Sprintf("%s %q (%s, UID %s)", ref.Kind, ref.Name, ref.APIVersion, ref.UID)
}

// isUpToDate tells whether existing already carries everything required asks for. The hash covers the whole
// required object as last written; the metadata checks catch other actors changing or removing what the operator
// set, which is cheap to compare because the API server never defaults metadata.
func isUpToDate(existing, required metav1.Object, hash string, annotationsIfAbsent map[string]string) bool {
	existingAnnotations := existing.GetAnnotations()
	if existingAnnotations[naming.ManagedHashAnnotation] != hash {
		return false
	}
	for key := range annotationsIfAbsent {
		if _, ok := existingAnnotations[key]; !ok {
			return false
		}
	}
	if !containsAll(existing.GetLabels(), required.GetLabels()) || !containsAll(existingAnnotations, required.GetAnnotations()) {
		return false
	}
	for _, ref := range required.GetOwnerReferences() {
		if !slices.ContainsFunc(existing.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return ownerReferencesEqual(r, ref) }) {
			return false
		}
	}
	for _, finalizer := range required.GetFinalizers() {
		if !slices.Contains(existing.GetFinalizers(), finalizer) {
			return false
		}
	}
	return true
}

func containsAll(superset, subset map[string]string) bool {
	for k, v := range subset {
		if got, ok := superset[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func ownerReferencesEqual(a, b metav1.OwnerReference) bool {
	return a.UID == b.UID && a.APIVersion == b.APIVersion && a.Kind == b.Kind && a.Name == b.Name &&
		isTrue(a.Controller) == isTrue(b.Controller) &&
		isTrue(a.BlockOwnerDeletion) == isTrue(b.BlockOwnerDeletion)
}

// setBookkeepingAnnotations records on obj, a copy of the required object, its hash and the label and annotation
// keys it manages.
func setBookkeepingAnnotations(obj metav1.Object, hash string) {
	annotations := make(map[string]string, len(obj.GetAnnotations())+len(bookkeepingAnnotations))
	maps.Copy(annotations, obj.GetAnnotations())
	setBookkeeping(annotations, hash, obj.GetLabels(), obj.GetAnnotations())
	obj.SetAnnotations(annotations)
}

// setBookkeeping sets in annotations the hash of the required object and the keys of its labels and annotations.
func setBookkeeping(annotations map[string]string, hash string, requiredLabels, requiredAnnotations map[string]string) {
	annotations[naming.ManagedHashAnnotation] = hash
	setOrDelete(annotations, naming.ManagedLabelKeysAnnotation, joinKeys(requiredLabels))
	setOrDelete(annotations, naming.ManagedAnnotationKeysAnnotation, joinKeys(requiredAnnotations))
}

// mergeMetadata turns obj, a copy of the required object, into the object to send as an update of existing:
//   - labels and annotations: existing's, minus the keys the operator set last time (recorded in existing's
//     bookkeeping annotations) that required no longer has, plus required's, plus the bookkeeping annotations;
//   - owner references: existing's, with required's replacing those of the same UID;
//   - finalizers: existing's plus required's;
//   - annotationsIfAbsent: existing's value where existing has one, else the given one;
//   - resourceVersion (for optimistic concurrency), UID and creationTimestamp: existing's.
func mergeMetadata(obj, existing metav1.Object, hash string, annotationsIfAbsent map[string]string) {
	existingAnnotations := existing.GetAnnotations()
	requiredLabels := obj.GetLabels()
	requiredAnnotations := obj.GetAnnotations()

	obj.SetLabels(mergeManagedMap(existing.GetLabels(), requiredLabels, existingAnnotations[naming.ManagedLabelKeysAnnotation]))

	annotations := mergeManagedMap(existingAnnotations, requiredAnnotations, existingAnnotations[naming.ManagedAnnotationKeysAnnotation])
	setBookkeeping(annotations, hash, requiredLabels, requiredAnnotations)
	obj.SetAnnotations(annotations)
	setAnnotationsIfAbsent(obj, existingAnnotations, annotationsIfAbsent)

	ownerReferences := slices.Clone(existing.GetOwnerReferences())
	for _, ref := range obj.GetOwnerReferences() {
		i := slices.IndexFunc(ownerReferences, func(r metav1.OwnerReference) bool { return r.UID == ref.UID })
		if i >= 0 {
			ownerReferences[i] = ref
		} else {
			ownerReferences = append(ownerReferences, ref)
		}
	}
	obj.SetOwnerReferences(ownerReferences)

	finalizers := slices.Clone(existing.GetFinalizers())
	for _, finalizer := range obj.GetFinalizers() {
		if !slices.Contains(finalizers, finalizer) {
			finalizers = append(finalizers, finalizer)
		}
	}
	obj.SetFinalizers(finalizers)

	obj.SetResourceVersion(existing.GetResourceVersion())
	obj.SetUID(existing.GetUID())
	obj.SetCreationTimestamp(existing.GetCreationTimestamp())
}

// setAnnotationsIfAbsent sets on obj every annotation of annotationsIfAbsent: to its value in existing when there is
// one (even if an older operator recorded the key as managed and merging dropped it), else to the given value.
func setAnnotationsIfAbsent(obj metav1.Object, existing, annotationsIfAbsent map[string]string) {
	if len(annotationsIfAbsent) == 0 {
		return
	}
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = make(map[string]string, len(annotationsIfAbsent))
	}
	for key, value := range annotationsIfAbsent {
		if existingValue, ok := existing[key]; ok {
			value = existingValue
		}
		annotations[key] = value
	}
	obj.SetAnnotations(annotations)
}

// mergeManagedMap returns existing without the previously managed keys that required no longer has, with required's
// entries set on top.
func mergeManagedMap(existing, required map[string]string, previouslyManaged string) map[string]string {
	merged := make(map[string]string, len(existing)+len(required))
	maps.Copy(merged, existing)
	for _, key := range splitKeys(previouslyManaged) {
		if _, ok := required[key]; !ok {
			delete(merged, key)
		}
	}
	maps.Copy(merged, required)
	return merged
}

func joinKeys(m map[string]string) string {
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

func splitKeys(s string) []string {
	if len(s) == 0 {
		return nil
	}
	return strings.Split(s, ",")
}

func setOrDelete(m map[string]string, key, value string) {
	if len(value) == 0 {
		delete(m, key)
		return
	}
	m[key] = value
}
