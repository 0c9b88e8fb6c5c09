// Package resourceapply writes the objects the operator owns. Every owned kind goes through one generic Apply: it
// creates what is missing, updates only what drifted from what the controller asks for, and never touches objects
// that belong to someone else. A second Apply of the same object makes no API call.
package resourceapply

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// ErrObjectBeingDeleted is wrapped by the error Apply returns when the existing object has a deletionTimestamp.
// The object is recreated by the first Apply after it is gone; callers may treat this error as progress rather than
// a failure (errors.Is).
var ErrObjectBeingDeleted = errors.New("object is being deleted")

// ErrOwnershipConflict is wrapped by the error Apply returns when the existing object may not be written on behalf of
// the required object's controller: it belongs to another controller, or it is an orphan Apply may not adopt.
// Retrying does not help until someone changes or removes that object (errors.Is).
var ErrOwnershipConflict = errors.New("the object is owned by someone else")

// ownershipConflictError is an ownership conflict; its message is the one of its cause alone.
type ownershipConflictError struct {
	err error
}

func (e *ownershipConflictError) Error() string        { return e.err.Error() }
func (e *ownershipConflictError) Unwrap() error        { return e.err }
func (e *ownershipConflictError) Is(target error) bool { return target == ErrOwnershipConflict }

// ApplyOptions tune Apply. The zero value is the safe default.
type ApplyOptions struct {
	// AdoptOrphans lets Apply take over an existing object that has no controller while the required object has one.
	// By default such an object is left alone and Apply fails, because the name may be used by something the
	// operator never created.
	AdoptOrphans bool

	// Precondition, when set, is called with the existing object Apply is about to update, as Apply read it: an
	// error stops Apply before it writes anything (no event) and is returned wrapped. The update carries that
	// object's resourceVersion, so a caller can refuse to overwrite what another actor wrote after the caller's own
	// snapshot, such as a label both the operator and a node's sidecar write.
	Precondition func(existing metav1.Object) error

	// AnnotationsIfAbsent are annotations another program owns that the caller hands over to it, such as a value
	// carried over from an older API: Apply sets each one when it creates the object or the existing object lacks
	// it, and otherwise leaves the existing value alone. They are neither hashed nor recorded as managed keys, so
	// Apply never overwrites or removes them and the owner's later changes cause no write. Their keys must not be
	// among required's annotations.
	AnnotationsIfAbsent map[string]string
}

// Apply makes the object named like required match required and returns the object as the API server (or, when
// nothing had to change, the informer cache) has it. The returned object must not be mutated. changed reports
// whether Apply wrote anything.
//
// The required object is what the controller built: a name, no resourceVersion or UID, and not the bookkeeping
// annotations Apply adds itself. Apply stores a hash of it in naming.ManagedHashAnnotation and:
//   - creates the object when lister does not have it;
//   - refuses to touch an object whose controller differs from required's (or, unless options.AdoptOrphans, that has
//     no controller while required has one): it returns an error wrapping ErrOwnershipConflict and records a Warning
//     event;
//   - writes nothing when the hash matches, the labels, annotations, owner references and finalizers required asks
//     for are all present, every annotation of options.AnnotationsIfAbsent is there (with any value), and no field
//     others change behind the hash's back drifted (a StatefulSet's replicas);
//   - otherwise updates it: labels and annotations other actors added survive, the ones the operator set before but
//     no longer wants are removed, and fields the API server allocated (a Service's cluster IPs and node ports) are
//     kept when required leaves them unset;
//   - deletes it instead, when a field the API server refuses to update must change (a StatefulSet's selector,
//     serviceName, podManagementPolicy or volumeClaimTemplates; a Service's clusterIP; a RoleBinding's roleRef; an
//     immutable Secret's or ConfigMap's data). A StatefulSet is deleted with orphan
//     propagation so its pods keep running. Apply then returns a nil object with changed set, and a later Apply
//     creates the object once it is gone; until then Apply returns an error wrapping ErrObjectBeingDeleted.
//
// Every update and delete records a Normal event, every failure a Warning event, both on the required object's
// controller (or on the object itself when it has none); a create is only logged (reportWrite says why). Conflict,
// AlreadyExists and NotFound errors only mean that the cache is behind, and a create refused because its namespace
// is being deleted goes away with the namespace: they are returned without an event and the next sync retries.
func Apply[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	client kubeinterfaces.CreateUpdateDeleterInterface[T],
	lister kubeinterfaces.GetterInterface[T],
	recorder record.EventRecorder,
	required T,
	options ApplyOptions,
) (T, bool, error) {
	var zero T
	kind := kindOf[T]()
	if err := validateRequired(required); err != nil {
		return zero, false, fmt.Errorf("can't apply %s: %w", kind, err)
	}
	if err := validateOptions(required, options); err != nil {
		return zero, false, fmt.Errorf("can't apply %s %q: %w", kind, klog.KObj(required), err)
	}
	// The no-op path below is taken for every owned object on every sync, so it allocates no more than hashing needs:
	// the object reference is formatted and the logger built only when there is something to report.
	key := klog.KObj(required)

	hash, err := Hash(required)
	if err != nil {
		return zero, false, fmt.Errorf("can't apply %s %q: %w", kind, key, err)
	}

	existing, err := lister.Get(required.GetName())
	if err != nil {
		if apierrors.IsNotFound(err) {
			return create(ctx, client, recorder, required, hash, options.AnnotationsIfAbsent, kind, key)
		}
		return zero, false, fmt.Errorf("can't get %s %q: %w", kind, key, err)
	}

	if existing.GetDeletionTimestamp() != nil {
		return zero, false, fmt.Errorf("can't apply %s %q: %w", kind, key, ErrObjectBeingDeleted)
	}

	if err := checkControllerRef(existing, required, options); err != nil {
		err = &ownershipConflictError{err: fmt.Errorf("can't apply %s %q: %w", kind, key, err)}
		recorder.Event(eventTarget(required, existing), corev1.EventTypeWarning, kind+"OwnershipConflict", err.Error())
		return zero, false, err
	}

	if isUpToDate(existing, required, hash, options.AnnotationsIfAbsent) && !specDrifted(existing, required) {
		if logger := klog.FromContext(ctx).V(5); logger.Enabled() {
			logger.Info("Object is up to date", "kind", kind, "object", key)
		}
		return existing, false, nil
	}

	if options.Precondition != nil {
		if err := options.Precondition(existing); err != nil {
			return zero, false, fmt.Errorf("can't apply %s %q: %w", kind, key, err)
		}
	}

	obj := required.DeepCopyObject().(T)
	mergeMetadata(obj, existing, hash, options.AnnotationsIfAbsent)
	preserveAllocatedFields(existing, obj)

	if field, propagation, ok := immutableFieldChange(existing, obj); ok {
		if err := deleteToRecreate(ctx, client, recorder, existing, required, field, propagation, kind, key); err != nil {
			return zero, false, err
		}
		return zero, true, nil
	}

	updated, err := client.Update(ctx, obj, metav1.UpdateOptions{})
	if err := reportWrite(ctx, recorder, eventTarget(required, existing), updateVerb, kind, key, "", err); err != nil {
		return zero, false, err
	}
	return updated, true, nil
}

func create[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	client kubeinterfaces.CreatorInterface[T],
	recorder record.EventRecorder,
	required T,
	hash string,
	annotationsIfAbsent map[string]string,
	kind string,
	key klog.ObjectRef,
) (T, bool, error) {
	var zero T

	obj := required.DeepCopyObject().(T)
	setBookkeepingAnnotations(obj, hash)
	// After the bookkeeping: they are not the operator's to manage.
	setAnnotationsIfAbsent(obj, nil, annotationsIfAbsent)

	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	target := runtime.Object(required)
	if err == nil {
		// The created object has the UID an event on an object without controller should refer to.
		target = created
	}
	if err := reportWrite(ctx, recorder, eventTarget(required, target), createVerb, kind, key, "", err); err != nil {
		return zero, false, err
	}
	return created, true, nil
}

func deleteToRecreate[T kubeinterfaces.ObjectInterface](
	ctx context.Context,
	client kubeinterfaces.DeleterInterface,
	recorder record.EventRecorder,
	existing, required T,
	field string,
	propagation metav1.DeletionPropagation,
	kind string,
	key klog.ObjectRef,
) error {
	uid := existing.GetUID()
	resourceVersion := existing.GetResourceVersion()
	err := client.Delete(ctx, existing.GetName(), metav1.DeleteOptions{
		Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &resourceVersion},
		PropagationPolicy: &propagation,
	})
	why := fmt.Sprintf(" to recreate it because immutable field %s changed (propagation %s)", field, propagation)
	return reportWrite(ctx, recorder, eventTarget(required, existing), deleteVerb, kind, key, why, err)
}

// validateRequired rejects required objects that were not built from scratch: applying them would either fail late
// or silently drop what the caller set.
func validateRequired(required kubeinterfaces.ObjectInterface) error {
	if v := reflect.ValueOf(required); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return errors.New("required object is nil")
	}
	var errs []error
	if len(required.GetName()) == 0 {
		errs = append(errs, errors.New("required object has no name"))
	}
	if len(required.GetResourceVersion()) != 0 {
		errs = append(errs, fmt.Errorf("required object has resourceVersion %q", required.GetResourceVersion()))
	}
	if len(required.GetUID()) != 0 {
		errs = append(errs, fmt.Errorf("required object has UID %q", required.GetUID()))
	}
	if required.GetDeletionTimestamp() != nil {
		errs = append(errs, errors.New("required object has a deletionTimestamp"))
	}
	for _, annotation := range bookkeepingAnnotations {
		if _, ok := required.GetAnnotations()[annotation]; ok {
			errs = append(errs, fmt.Errorf("required object sets annotation %q that Apply manages", annotation))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// validateOptions rejects options that contradict required: an annotation both required and handed over would be
// managed and left alone at once.
func validateOptions(required kubeinterfaces.ObjectInterface, options ApplyOptions) error {
	var errs []error
	for key := range options.AnnotationsIfAbsent {
		if _, ok := required.GetAnnotations()[key]; ok {
			errs = append(errs, fmt.Errorf("annotation %q is both required and to be set only if absent", key))
		}
		if slices.Contains(bookkeepingAnnotations, key) {
			errs = append(errs, fmt.Errorf("annotation %q that Apply manages can't be set only if absent", key))
		}
	}
	return utilerrors.NewAggregate(errs)
}

// bookkeepingAnnotations are the annotations Apply adds to every object it writes.
var bookkeepingAnnotations = []string{
	naming.ManagedHashAnnotation,
	naming.ManagedLabelKeysAnnotation,
	naming.ManagedAnnotationKeysAnnotation,
}

// kindOf names the kind of T (a pointer to an API struct) for errors and events.
func kindOf[T any]() string {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// eventTarget is where events about applying required go: its controller, which is what users look at, or the
// object itself (as last seen) when it has none. Only a reference is needed, so the controller is not looked up.
func eventTarget(required kubeinterfaces.ObjectInterface, object runtime.Object) runtime.Object {
	ref := metav1.GetControllerOfNoCopy(required)
	if ref == nil {
		return object
	}
	return controllerReference(ref, required.GetNamespace())
}

// controllerReference refers to the controller of an object in namespace. A cluster-scoped controller of a
// namespaced object gets its events in that namespace, next to the objects they are about.
func controllerReference(ref *metav1.OwnerReference, namespace string) *corev1.ObjectReference {
	return &corev1.ObjectReference{
		APIVersion: ref.APIVersion,
		Kind:       ref.Kind,
		Namespace:  namespace,
		Name:       ref.Name,
		UID:        ref.UID,
	}
}

// IsStaleCacheError tells whether err, possibly wrapped or aggregated, is made only of errors that mean the
// informer cache is behind the API server: AlreadyExists from a create of an object the cache does not show yet,
// Conflict from an update built on an older copy, NotFound from a write to an object already gone. The next sync, with
// a fresher cache, sorts them out: Apply returns them without a Warning event, and a controller need not report them
// in its status.
func IsStaleCacheError(err error) bool {
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		errs := agg.Errors()
		return len(errs) != 0 && !slices.ContainsFunc(errs, func(err error) bool { return !IsStaleCacheError(err) })
	}
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || apierrors.IsNotFound(err)
}

// isNamespaceTerminatingError tells whether err refuses a create because its namespace is being deleted: the owner
// goes away with the namespace, and a Warning event could not even be written there.
func isNamespaceTerminatingError(err error) bool {
	return apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause)
}
