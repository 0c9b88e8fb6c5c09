package resourceapply

import (
	"context"
	"fmt"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// PruneOptions tune Prune. The zero value deletes in the background.
type PruneOptions struct {
	// PropagationPolicy is how the dependents of pruned objects are deleted; empty means Background.
	PropagationPolicy metav1.DeletionPropagation
}

// Prune deletes the objects of existing (typically a lister's list, all in the namespace client works in) that are
// controlled by controllerRef (same UID, kind and API group) and whose name is not among required's. Objects of
// other controllers, orphans and objects already being deleted are left alone. Each delete carries a UID
// precondition, so an object recreated under the same name since the cache saw it is never deleted. Every delete
// records a Normal event and every failure a Warning event on the controller; failures do not stop the other deletes
// and come back aggregated. deleted reports whether anything was deleted.
func Prune[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	client kubeinterfaces.DeleterInterface,
	recorder record.EventRecorder,
	controllerRef *metav1.OwnerReference,
	existing []T,
	required []T,
	options PruneOptions,
) (bool, error) {
	kind := kindOf[T]()
	if controllerRef == nil {
		return false, fmt.Errorf("can't prune %s objects: controllerRef is nil", kind)
	}

	propagation := options.PropagationPolicy
	if len(propagation) == 0 {
		propagation = metav1.DeletePropagationBackground
	}

	wanted := sets.New[string]()
	for _, obj := range required {
		wanted.Insert(obj.GetName())
	}

	deleted := false
	var errs []error
	for _, obj := range existing {
		ref := metav1.GetControllerOfNoCopy(obj)
		if ref == nil || !controllerhelpers.SameController(ref, controllerRef) || obj.GetDeletionTimestamp() != nil || wanted.Has(obj.GetName()) {
			continue
		}

		key := klog.KObj(obj)
		target := controllerReference(controllerRef, obj.GetNamespace())
		uid := obj.GetUID()
		err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{
			Preconditions:     &metav1.Preconditions{UID: &uid},
			PropagationPolicy: &propagation,
		})
		if apierrors.IsNotFound(err) {
			// Gone already: nothing to prune. A UID conflict (a stale-cache error, without a warning) means the
			// name now belongs to a new object, which the next sync judges afresh.
			continue
		}
		if err := reportWrite(ctx, recorder, target, deleteVerb, kind, key, " because it is no longer wanted", err); err != nil {
			errs = append(errs, err)
			continue
		}
		deleted = true
	}

	return deleted, utilerrors.NewAggregate(errs)
}
