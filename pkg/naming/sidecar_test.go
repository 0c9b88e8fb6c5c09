package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestSidecarAnnotationsAreValidInternalKeys(t *testing.T) {
	t.Parallel()

	keys := []string{BroadcastAddressAnnotation, BroadcastAddressPodUIDAnnotation}
	seen := map[string]bool{}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()

			if errs := validation.IsQualifiedName(key); len(errs) != 0 {
				t.Errorf("annotation key %q is not a qualified name: %v", key, errs)
			}
			// The internal prefix tells users not to set it, and keeps it apart from the keys they may set.
			if !strings.HasPrefix(key, "internal.scylla-operator.scylladb.com/") {
				t.Errorf("annotation key %q is not in the internal prefix", key)
			}
		})
		if seen[key] || key == HostIDAnnotation {
			t.Errorf("annotation key %q is used twice", key)
		}
		seen[key] = true
	}
}
