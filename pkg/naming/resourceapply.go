package naming

// Annotations pkg/resourceapply keeps on every object it applies, next to ManagedHashAnnotation. They list, comma
// separated and sorted, the label and annotation keys the operator set on the object, so that a later apply can remove
// the keys the operator no longer wants while keeping the keys other actors added.
const (
	ManagedLabelKeysAnnotation      = "internal.scylla-operator.scylladb.com/managed-label-keys"
	ManagedAnnotationKeysAnnotation = "internal.scylla-operator.scylladb.com/managed-annotation-keys"
)
