package naming

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestResourceApplyAnnotationsAreValidKeys(t *testing.T) {
	t.Parallel()

	for _, key := range []string{
		ManagedHashAnnotation,
		ManagedLabelKeysAnnotation,
		ManagedAnnotationKeysAnnotation,
	} {
		t.Run(key, func(t *testing.T) {
			t.Parallel()

			if errs := validation.IsQualifiedName(key); len(errs) != 0 {
				t.Errorf("annotation key %q is not a qualified name: %v", key, errs)
			}
		})
	}
}
