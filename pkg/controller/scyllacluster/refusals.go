package scyllacluster

import (
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/record"

	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
)

// isRefusal tells whether err, possibly wrapped, is the API server refusing a write for what the object holds, a
// verdict that retrying the same write gets again: the CRD's schema or CEL rules or a validating webhook found it
// invalid (422 Invalid), or an admission webhook or ValidatingAdmissionPolicy denied it with 400 or 403. A webhook that
// can't be called ("failed calling webhook", a 500), a 422 whose causes include an internal error (a webhook's lookup
// of another object failed) and every other status (409, 429, 5xx, timeouts, NotFound, a 403 from authorization) are
// transient.
func isRefusal(err error) bool {
	var apiStatus apierrors.APIStatus
	if !errors.As(err, &apiStatus) {
		return false
	}
	status := apiStatus.Status()
	if status.Details != nil {
		for _, cause := range status.Details.Causes {
			if cause.Type == metav1.CauseType(field.ErrorTypeInternal) {
				return false
			}
		}
	}
	switch {
	case apierrors.IsInvalid(err):
		return true
	case apierrors.IsBadRequest(err) || apierrors.IsForbidden(err):
		return isAdmissionDenial(status.Message)
	default:
		return false
	}
}

// isAdmissionDenial tells whether message is the API server's message for a request an admission webhook or a
// ValidatingAdmissionPolicy denied.
func isAdmissionDenial(message string) bool {
	// k8s.io/apiserver/pkg/admission/plugin/webhook/errors.ToStatusErr starts the message so.
	if strings.HasPrefix(message, "admission webhook ") && strings.Contains(message, " denied the request") {
		return true
	}
	// k8s.io/apiserver/pkg/admission/plugin/policy/validating, behind the "<kind> is forbidden: " of a Forbidden error.
	return strings.Contains(message, "ValidatingAdmissionPolicy '") && strings.Contains(message, " denied request: ")
}

// refusedError is a write the API server refused (isRefusal). It is not retried until the ScyllaCluster, the refused
// object or what the verdict depends on changes.
type refusedError struct {
	// kind is the kind of the refused object.
	kind string
	err  error
}

func (e *refusedError) Error() string {
	return fmt.Sprintf("%v; the API server refuses it, so it is not tried again until the ScyllaCluster or the %s changes", e.err, e.kind)
}

func (e *refusedError) Unwrap() error { return e.err }

// isRefused tells whether err, possibly wrapped, is a refusedError.
func isRefused(err error) bool {
	var refused *refusedError
	return errors.As(err, &refused)
}

// refusal is a remembered refusedError.
type refusal struct {
	// verdictKey identifies what the API server judged: the write and everything its verdict depends on.
	verdictKey string
	err        error
}

// refusals remember, per ScyllaCluster key and then per object ("<Kind>/<name>"), the writes the API server refused
// (isRefusal), so that the same write is not sent again on every sync of the ScyllaCluster: each of the ScyllaCluster's
// own status writes, for one, syncs it again. A sync replaces what it met (a write that was not refused again, or not
// attempted, is forgotten). A refused write is sent again once its verdict key changes: the ScyllaCluster's
// generation, the object required, the existing object (its resourceVersion, status included, as a webhook may judge
// an update by the old object's status) or the ScyllaDBDatacenter a task names. They live in memory only: after a
// restart each refused write is sent once more.
type refusals = controllerhelpers.KeyedMemory[refusal]

// applyUnlessRefused runs apply, which writes the object named object ("<Kind>/<name>") of kind and records its
// events on the recorder it gets, unless the API server refused the write of the same verdict key (verdictKey) in the
// previous sync: the remembered refusedError is returned then. A refusal is returned as a refusedError, and apply's
// events are dropped (the error is reported in the ScyllaCluster's status and once as an event, see
// recordPermanentErrors); otherwise apply's events are recorded and its error returned. verdictKey is only computed
// when it is needed; an error computing it makes the refusal unremembered.
func (c *Controller) applyUnlessRefused(state *syncState, kind, object string, verdictKey func() (string, error), apply func(record.EventRecorder) error) error {
	if previous, ok := state.previousRefusals[object]; ok {
		if key, err := verdictKey(); err == nil && key == previous.verdictKey {
			state.refusals[object] = previous
			return previous.err
		}
	}

	recorder := &deferredRecorder{}
	err := apply(recorder)
	if err != nil && isRefusal(err) {
		refused := &refusedError{kind: kind, err: err}
		if key, keyErr := verdictKey(); keyErr == nil {
			state.refusals[object] = refusal{verdictKey: key, err: refused}
		}
		return refused
	}
	recorder.replay(c.eventRecorder)
	return err
}

// deferredRecorder holds events until they are replayed into another recorder.
type deferredRecorder struct {
	events []func(record.EventRecorder)
}

var _ record.EventRecorder = &deferredRecorder{}

func (r *deferredRecorder) Event(object runtime.Object, eventtype, reason, message string) {
	r.events = append(r.events, func(to record.EventRecorder) { to.Event(object, eventtype, reason, message) })
}

func (r *deferredRecorder) Eventf(object runtime.Object, eventtype, reason, messageFmt string, args ...any) {
	r.events = append(r.events, func(to record.EventRecorder) { to.Eventf(object, eventtype, reason, messageFmt, args...) })
}

func (r *deferredRecorder) AnnotatedEventf(object runtime.Object, annotations map[string]string, eventtype, reason, messageFmt string, args ...any) {
	r.events = append(r.events, func(to record.EventRecorder) {
		to.AnnotatedEventf(object, annotations, eventtype, reason, messageFmt, args...)
	})
}

// replay records the held events into to, in order, and forgets them.
func (r *deferredRecorder) replay(to record.EventRecorder) {
	for _, event := range r.events {
		event(to)
	}
	r.events = nil
}
