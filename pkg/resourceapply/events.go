package resourceapply

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
)

// writeVerb is a write Apply or Prune makes: "create", "update" or "delete".
type writeVerb string

const (
	createVerb writeVerb = "create"
	updateVerb writeVerb = "update"
	deleteVerb writeVerb = "delete"
)

// reportWrite logs the outcome of writing the object key of kind and records it as an event on target: Normal
// "<Kind>Updated" (Deleted) on a successful update (delete), Warning "<Kind>CreateFailed" (UpdateFailed,
// DeleteFailed) on failure, except for failures that only mean the cache is stale (IsStaleCacheError) or that the
// namespace is being deleted (isNamespaceTerminatingError). A successful create is only logged: creating what the
// owner's spec asks for is the expected course, the new object shows it, and an event per object would bury the
// steps that matter (a scale-up, a rollout, a node removed) under a dozen routine ones for every new cluster. why,
// when set, ends every message. It returns err wrapped as "can't <verb> <Kind> <key><why>: <err>", or nil.
func reportWrite(ctx context.Context, recorder record.EventRecorder, target runtime.Object, verb writeVerb, kind string, key klog.ObjectRef, why string, err error) error {
	var reasonVerb, past string
	switch verb {
	case createVerb:
		reasonVerb, past = "Create", "created"
	case updateVerb:
		reasonVerb, past = "Update", "updated"
	case deleteVerb:
		reasonVerb, past = "Delete", "deleted"
	}

	if err != nil {
		if !IsStaleCacheError(err) && !isNamespaceTerminatingError(err) {
			recorder.Eventf(target, corev1.EventTypeWarning, kind+reasonVerb+"Failed", "Failed to %s %s %s%s: %v", verb, kind, key, why, err)
		}
		return fmt.Errorf("can't %s %s %q%s: %w", verb, kind, key, why, err)
	}

	klog.FromContext(ctx).V(2).Info("Wrote object", "operation", verb, "kind", kind, "object", key, "why", why)
	if verb == createVerb {
		return nil
	}
	recorder.Eventf(target, corev1.EventTypeNormal, kind+reasonVerb[:1]+past[1:], "%s %s %s%s", kind, key, past, why)
	return nil
}
