package controllerhelpers

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// StatusApplier writes the part of an object's status one controller owns with server-side apply, and only when the
// object does not have it already. A controller owns every field of the status it computes, and the conditions of
// its types only: conditions of other types belong to other writers (rule 11 of the style guide) and are neither
// compared nor sent. An owned field the computed status leaves unset is not sent, and so released and removed.
//
// T is the API type's pointer (*X), S its status type (XStatus) and AC the status's apply configuration
// (XStatusApplyConfiguration).
type StatusApplier[T metav1.Object, S any, AC any] struct {
	// Kind is the object's kind, for errors and logs.
	Kind string
	// FieldManager is the field manager of the apply.
	FieldManager string
	// ConditionTypes are the condition types the controller owns. Nil: the types of the conditions of the status it
	// applies, so that a type it stops computing is no longer compared (the controller then writes a status without
	// it only along with another change).
	ConditionTypes []string
	// Status returns obj's status, which the applier only reads.
	Status func(obj T) *S
	// Conditions returns the address of status's conditions.
	Conditions func(status *S) *[]metav1.Condition
	// Apply sends status for obj, with opts, to the status subresource and returns the object the API server
	// returned. It should name obj's UID in the apply configuration, so that the apply fails rather than land on
	// another object recreated under the same name.
	Apply func(ctx context.Context, obj T, status *AC, opts metav1.ApplyOptions) (T, error)
	// Written, when set, is told every object an apply returned (MutationCache.Written), so that the next sync
	// compares with it rather than with a cache that has not caught up yet.
	Written func(obj T)

	// Batcher, when set, spaces out the writes of each object (StatusBatcher); Queue and Urgent must then be set too.
	Batcher *StatusBatcher
	// Queue enqueues an object's key again when its write has to wait for Batcher.
	Queue interface {
		AddAfter(key string, duration time.Duration)
	}
	// Urgent tells whether the change from existing to status is written at once, whatever Batcher says
	// (UrgentStatusChange).
	Urgent func(existing, status *S) bool
}

// ApplyStatus applies status, the status the controller computed for obj, unless obj has every owned field of it
// already, or, with a Batcher, the change is not urgent and has to wait (obj is then enqueued again for when it may
// be written). It returns the object the apply returned, or obj when nothing was written.
func (a *StatusApplier[T, S, AC]) ApplyStatus(ctx context.Context, obj T, status *S) (T, error) {
	if err := a.validate(); err != nil {
		return obj, fmt.Errorf("can't apply the status of %s %q: %w", a.Kind, klog.KObj(obj), err)
	}
	existing := a.Status(obj)
	owned := a.ownedConditionTypes(status)
	desired := a.OwnedStatus(status, owned)
	if apiequality.Semantic.DeepEqual(a.sortedConditions(a.OwnedStatus(existing, owned)), a.sortedConditions(desired)) {
		return obj, nil
	}

	logger := klog.FromContext(ctx)
	key := cache.MetaObjectToName(obj).String()
	if a.Batcher != nil && !a.Urgent(existing, status) {
		if wait := a.Batcher.Wait(key); wait > 0 {
			logger.V(4).Info("Batching status change", "kind", a.Kind, "object", klog.KObj(obj), "wait", wait)
			a.Queue.AddAfter(key, wait)
			return obj, nil
		}
	}

	statusConfiguration, err := ApplyConfigurationFrom[AC](desired)
	if err != nil {
		return obj, fmt.Errorf("can't apply the status of %s %q: %w", a.Kind, klog.KObj(obj), err)
	}
	applied, err := a.Apply(ctx, obj, statusConfiguration, metav1.ApplyOptions{FieldManager: a.FieldManager, Force: true})
	if err != nil {
		return obj, fmt.Errorf("can't apply the status of %s %q: %w", a.Kind, klog.KObj(obj), err)
	}
	if a.Written != nil {
		a.Written(applied)
	}
	if a.Batcher != nil {
		a.Batcher.Wrote(key)
	}
	logger.V(2).Info("Applied status", "kind", a.Kind, "object", klog.KObj(obj), "resourceVersion", applied.GetResourceVersion())
	return applied, nil
}

// OwnedStatus returns a shallow copy of status with only the conditions of the types in owned (nil: the applier's
// ConditionTypes), in status's order. The copy shares everything but its conditions with status: neither may be
// changed after.
func (a *StatusApplier[T, S, AC]) OwnedStatus(status *S, owned sets.Set[string]) *S {
	if owned == nil {
		owned = sets.New(a.ConditionTypes...)
	}
	out := *status
	var conditions []metav1.Condition
	for _, c := range *a.Conditions(status) {
		if owned.Has(c.Type) {
			conditions = append(conditions, c)
		}
	}
	*a.Conditions(&out) = conditions
	return &out
}

// ownedConditionTypes returns the condition types the controller owns when it applies status.
func (a *StatusApplier[T, S, AC]) ownedConditionTypes(status *S) sets.Set[string] {
	if a.ConditionTypes != nil {
		return sets.New(a.ConditionTypes...)
	}
	owned := sets.New[string]()
	for _, c := range *a.Conditions(status) {
		owned.Insert(c.Type)
	}
	return owned
}

// sortedConditions returns a shallow copy of status with its conditions ordered by type: the API server keeps an
// applied list's order, and interleaves other writers' conditions, which is not what decides whether two statuses
// say the same.
func (a *StatusApplier[T, S, AC]) sortedConditions(status *S) *S {
	out := *status
	conditions := slices.Clone(*a.Conditions(status))
	slices.SortStableFunc(conditions, func(x, y metav1.Condition) int { return strings.Compare(x.Type, y.Type) })
	*a.Conditions(&out) = conditions
	return &out
}

// validate reports what the applier lacks, a programming error that would otherwise panic mid-sync.
func (a *StatusApplier[T, S, AC]) validate() error {
	var missing []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"Kind", len(a.Kind) != 0},
		{"FieldManager", len(a.FieldManager) != 0},
		{"Status", a.Status != nil},
		{"Conditions", a.Conditions != nil},
		{"Apply", a.Apply != nil},
		{"Queue (with a Batcher)", a.Batcher == nil || a.Queue != nil},
		{"Urgent (with a Batcher)", a.Batcher == nil || a.Urgent != nil},
	} {
		if !f.set {
			missing = append(missing, f.name)
		}
	}
	if len(missing) != 0 {
		return fmt.Errorf("the status applier lacks %s", strings.Join(missing, ", "))
	}
	return nil
}
