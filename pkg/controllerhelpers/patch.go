package controllerhelpers

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newMetadataMergePatch returns a JSON merge patch (RFC 7386) that sets one list field of obj's metadata.
//
// A merge patch replaces lists whole, so it must not apply to an object that changed since obj was read: it carries
// obj's resourceVersion, which the API server checks like an update's, and obj's UID, which it never lets change. A
// stale read therefore fails with a Conflict and the next sync retries with fresh data, rather than dropping what
// others added. Merge patches work for every kind, custom resources included, unlike strategic merge patches; an
// Update would send the whole object, silently dropping any field this client's types do not know.
func newMetadataMergePatch(obj metav1.Object, field string, value any) ([]byte, error) {
	if len(obj.GetResourceVersion()) == 0 {
		return nil, errors.New("the object has no resourceVersion to patch against")
	}
	if len(obj.GetUID()) == 0 {
		return nil, errors.New("the object has no UID to patch against")
	}

	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{
			"resourceVersion": obj.GetResourceVersion(),
			"uid":             obj.GetUID(),
			field:             value,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("can't marshal the patch of %s: %w", field, err)
	}
	return patch, nil
}
