// Package kubeinterfaces holds the small generic interfaces through which the operator's libraries talk to the typed
// clients and listers of any kind, built-in or generated for our own API groups. Generated clients and listers satisfy
// them as they are, so adding a kind needs no adapter.
package kubeinterfaces

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// ObjectInterface is a Kubernetes API object: a pointer to a typed struct such as *corev1.Service.
type ObjectInterface interface {
	metav1.Object
	runtime.Object
}

// GetterInterface reads one object by name, usually from an informer cache (a namespaced lister or the lister of a
// cluster-scoped kind).
type GetterInterface[T ObjectInterface] interface {
	Get(name string) (T, error)
}

// CreatorInterface creates objects (a typed client).
type CreatorInterface[T ObjectInterface] interface {
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
}

// UpdaterInterface updates objects (a typed client).
type UpdaterInterface[T ObjectInterface] interface {
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// DeleterInterface deletes objects by name (a typed client).
type DeleterInterface interface {
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// PatcherInterface patches objects by name (a typed client).
type PatcherInterface[T ObjectInterface] interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (T, error)
}

// CreateUpdateDeleterInterface is the part of a typed client that applying an object needs.
type CreateUpdateDeleterInterface[T ObjectInterface] interface {
	CreatorInterface[T]
	UpdaterInterface[T]
	DeleterInterface
}
