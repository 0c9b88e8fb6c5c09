package controllerhelpers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
)

// HasFinalizer reports whether obj carries finalizer.
func HasFinalizer(obj metav1.Object, finalizer string) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}

// AddFinalizerPatch returns the JSON patch that adds finalizer to obj's finalizers, or nil when obj has it already;
// see finalizersPatch for how it guards against a stale obj.
func AddFinalizerPatch(obj metav1.Object, finalizer string) ([]byte, error) {
	if len(finalizer) == 0 {
		return nil, errors.New("can't add an empty finalizer")
	}
	if HasFinalizer(obj, finalizer) {
		return nil, nil
	}
	patch, err := finalizersPatch(obj, append(slices.Clone(obj.GetFinalizers()), finalizer))
	if err != nil {
		return nil, fmt.Errorf("can't add finalizer %q to %q: %w", finalizer, klog.KObj(obj), err)
	}
	return patch, nil
}

// RemoveFinalizerPatch returns the JSON patch that removes finalizer from obj's finalizers, or nil when obj does not
// have it; see finalizersPatch for how it guards against a stale obj.
func RemoveFinalizerPatch(obj metav1.Object, finalizer string) ([]byte, error) {
	if len(finalizer) == 0 {
		return nil, errors.New("can't remove an empty finalizer")
	}
	if !HasFinalizer(obj, finalizer) {
		return nil, nil
	}
	// Never nil: an empty list, not null, states that the finalizers are now none.
	finalizers := slices.DeleteFunc(append([]string{}, obj.GetFinalizers()...), func(f string) bool { return f == finalizer })
	patch, err := finalizersPatch(obj, finalizers)
	if err != nil {
		return nil, fmt.Errorf("can't remove finalizer %q from %q: %w", finalizer, klog.KObj(obj), err)
	}
	return patch, nil
}

// AddFinalizer adds finalizer to obj through client unless obj has it already. It returns the patched object, or
// obj itself when nothing had to change, and whether it wrote. An error wrapping an Invalid (422) API error whose
// message names a failed test means obj's finalizers were stale.
func AddFinalizer[T kubeinterfaces.ObjectInterface](ctx context.Context, client kubeinterfaces.PatcherInterface[T], obj T, finalizer string) (T, bool, error) {
	return patchFinalizers(ctx, client, obj, finalizer, AddFinalizerPatch, "add")
}

// RemoveFinalizer removes finalizer from obj through client if obj has it. It returns the patched object, or obj
// itself when nothing had to change, and whether it wrote. Stale finalizers fail as AddFinalizer's do.
func RemoveFinalizer[T kubeinterfaces.ObjectInterface](ctx context.Context, client kubeinterfaces.PatcherInterface[T], obj T, finalizer string) (T, bool, error) {
	return patchFinalizers(ctx, client, obj, finalizer, RemoveFinalizerPatch, "remove")
}

func patchFinalizers[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	client kubeinterfaces.PatcherInterface[T],
	obj T,
	finalizer string,
	makePatch func(metav1.Object, string) ([]byte, error),
	verb string,
) (T, bool, error) {
	var zero T
	patch, err := makePatch(obj, finalizer)
	if err != nil {
		return zero, false, err
	}
	if patch == nil {
		return obj, false, nil
	}

	patched, err := client.Patch(ctx, obj.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return zero, false, fmt.Errorf("can't %s finalizer %q of %q: %w", verb, finalizer, klog.KObj(obj), err)
	}
	klog.FromContext(ctx).V(2).Info("Patched finalizers", "object", klog.KObj(obj), "finalizer", finalizer, "operation", verb)
	return patched, true, nil
}

// finalizersPatch returns the JSON patch (RFC 6902) that sets obj's finalizers to finalizers, after testing that the
// object still has obj's UID and the finalizers obj has (none: the field is absent or null). A patch that only replaced
// the list could drop a finalizer someone added since obj was read; the test makes such a patch fail instead (the API
// server answers 422), and the next sync reads fresh data. Unlike a resourceVersion precondition, it does not fail
// when anything else of the object changed meanwhile, such as its status, which other programs write all the time.
func finalizersPatch(obj metav1.Object, finalizers []string) ([]byte, error) {
	if len(obj.GetUID()) == 0 {
		return nil, errors.New("the object has no UID to patch against")
	}
	var read any
	if len(obj.GetFinalizers()) != 0 {
		read = obj.GetFinalizers()
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": obj.GetUID()},
		{"op": "test", "path": "/metadata/finalizers", "value": read},
		{"op": "add", "path": "/metadata/finalizers", "value": finalizers},
	})
	if err != nil {
		return nil, fmt.Errorf("can't marshal the patch of finalizers: %w", err)
	}
	return patch, nil
}
