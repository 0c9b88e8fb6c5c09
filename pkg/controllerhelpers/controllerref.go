package controllerhelpers

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SameController reports whether two controller references point to the same object: same UID, kind and API group.
// The version is ignored: it is only the version the reference happened to be written in.
func SameController(a, b *metav1.OwnerReference) bool {
	return a != nil && b != nil && a.UID == b.UID && a.Kind == b.Kind && apiGroup(a.APIVersion) == apiGroup(b.APIVersion)
}

// refersToKind reports whether ref points to an object of gvk's kind and group.
func refersToKind(ref *metav1.OwnerReference, gvk schema.GroupVersionKind) bool {
	return ref != nil && ref.Kind == gvk.Kind && apiGroup(ref.APIVersion) == gvk.Group
}

// apiGroup returns the group of apiVersion. An unparsable apiVersion is returned whole, so that it only ever equals
// itself and never a real group.
func apiGroup(apiVersion string) string {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return apiVersion
	}
	return gv.Group
}
