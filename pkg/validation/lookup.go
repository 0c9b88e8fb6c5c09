package validation

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
)

// Lookup answers the questions about other objects that some rules need. The webhook implements it with listers
// or clients; tests implement it with fakes.
type Lookup interface {
	// ScyllaDBManagerTaskTargetExists reports whether the object ref names exists in namespace.
	ScyllaDBManagerTaskTargetExists(ctx context.Context, namespace string, ref scyllav1alpha1.LocalScyllaDBReference) (bool, error)
}
