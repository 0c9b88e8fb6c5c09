// Package webhook is the admission webhook server: it answers admission.k8s.io/v1 AdmissionReviews for the
// scylla.scylladb.com resources with the rules of pkg/validation, and manages its own serving certificate and the
// caBundle of its webhook configurations.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"
)

// maxRequestBytes bounds an AdmissionReview: it carries an object and, on update, its old version, each at most
// etcd's 1.5 MiB, plus the request's metadata.
const maxRequestBytes = 7 << 20

// Resource says how the webhook admits one resource. NewResource builds one from typed functions.
type Resource struct {
	// GroupVersionResource is what the AdmissionRequest's resource must be.
	GroupVersionResource schema.GroupVersionResource
	// GroupVersionKind is what the objects in the request must be.
	GroupVersionKind schema.GroupVersionKind
	// newObject returns an empty typed object to decode into.
	newObject func() runtime.Object
	// validate returns the errors and warnings of obj; old is nil on CREATE.
	validate func(ctx context.Context, obj, old runtime.Object) (field.ErrorList, []string)
	// mutate returns the JSON patch operations that default obj on CREATE; nil means the resource isn't mutated.
	mutate func(obj runtime.Object) []PatchOperation
}

// Validator holds the typed validation functions of one kind. ValidateUpdate runs on UPDATE, Validate on CREATE,
// and Warnings on both.
type Validator[T runtime.Object] struct {
	Validate       func(ctx context.Context, obj T) field.ErrorList
	ValidateUpdate func(ctx context.Context, obj, old T) field.ErrorList
	Warnings       func(obj T) []string
	// Mutate, when set, returns the JSON patch operations that default obj on CREATE (served on /mutate).
	Mutate func(obj T) []PatchOperation
}

// NewResource returns the Resource admitting gvr, whose objects are of kind gvk and decode into what newObject
// returns, with v's functions.
func NewResource[T runtime.Object](gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, newObject func() T, v Validator[T]) Resource {
	r := Resource{
		GroupVersionResource: gvr,
		GroupVersionKind:     gvk,
		newObject:            func() runtime.Object { return newObject() },
		validate: func(ctx context.Context, obj, old runtime.Object) (field.ErrorList, []string) {
			var errs field.ErrorList
			if old == nil {
				errs = v.Validate(ctx, obj.(T))
			} else {
				errs = v.ValidateUpdate(ctx, obj.(T), old.(T))
			}
			var warnings []string
			if v.Warnings != nil {
				warnings = v.Warnings(obj.(T))
			}
			return errs, warnings
		},
	}
	if v.Mutate != nil {
		r.mutate = func(obj runtime.Object) []PatchOperation { return v.Mutate(obj.(T)) }
	}
	return r
}

// Admission serves the AdmissionReviews of a set of resources: ServeValidate on /validate, ServeMutate on /mutate.
type Admission struct {
	resources map[schema.GroupVersionResource]Resource
	decoder   runtime.Decoder
}

// NewAdmission returns the Admission of resources, whose types scheme must know. It fails on a resource given
// twice or whose kind the scheme doesn't know.
func NewAdmission(scheme *runtime.Scheme, resources ...Resource) (*Admission, error) {
	registerMetrics()
	a := &Admission{
		resources: make(map[schema.GroupVersionResource]Resource, len(resources)),
		// Strict: a field the webhook's types don't have is refused rather than silently ignored.
		decoder: serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer(),
	}
	for _, r := range resources {
		if _, ok := a.resources[r.GroupVersionResource]; ok {
			return nil, fmt.Errorf("resource %v is given twice", r.GroupVersionResource)
		}
		if !scheme.Recognizes(r.GroupVersionKind) {
			return nil, fmt.Errorf("kind %v of resource %v is not in the scheme", r.GroupVersionKind, r.GroupVersionResource)
		}
		a.resources[r.GroupVersionResource] = r
	}
	return a, nil
}

// ServeValidate answers a validating AdmissionReview.
func (a *Admission) ServeValidate(w http.ResponseWriter, req *http.Request) {
	a.serve(w, req, a.validate)
}

// ServeMutate answers a mutating AdmissionReview.
func (a *Admission) ServeMutate(w http.ResponseWriter, req *http.Request) {
	a.serve(w, req, a.mutate)
}

// httpError is a request the webhook can't answer with an AdmissionReview; the API server then applies the
// webhook's failure policy.
type httpError struct {
	code    int
	message string
}

func (e *httpError) Error() string { return e.message }

func (a *Admission) serve(w http.ResponseWriter, req *http.Request, admit func(context.Context, *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse) {
	start := time.Now()
	resource, operation := "unknown", "unknown"
	defer func() {
		if r := recover(); r != nil {
			klog.ErrorS(fmt.Errorf("%v", r), "Admission handler panicked", "resource", resource, "operation", operation, "stack", string(debug.Stack()))
			http.Error(w, fmt.Sprintf("internal error of the scylla-operator webhook while admitting %s %s: %v", operation, resource, r), http.StatusInternalServerError)
			observeAdmission(resource, operation, "error", start)
		}
	}()

	review, err := readAdmissionReview(req)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = &httpError{code: http.StatusBadRequest, message: err.Error()}
		}
		klog.V(2).InfoS("Refusing a malformed admission request", "remote", req.RemoteAddr, "code", he.code, "err", he.message)
		http.Error(w, he.message, he.code)
		observeAdmission(resource, operation, "error", start)
		return
	}
	resource, operation = review.Request.Resource.Resource, string(review.Request.Operation)

	response := admit(req.Context(), review.Request)
	response.UID = review.Request.UID
	out := admissionv1.AdmissionReview{
		TypeMeta: review.TypeMeta,
		Response: response,
	}
	body, err := json.Marshal(&out)
	if err != nil {
		http.Error(w, fmt.Sprintf("can't encode the AdmissionReview response: %v", err), http.StatusInternalServerError)
		observeAdmission(resource, operation, "error", start)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
	observeAdmission(resource, operation, fmt.Sprint(response.Allowed), start)
	if !response.Allowed {
		klog.V(2).InfoS("Denied an admission request", "resource", resource, "operation", operation,
			"namespace", review.Request.Namespace, "name", review.Request.Name, "message", response.Result.Message)
	}
}

// readAdmissionReview reads and decodes an admission.k8s.io/v1 AdmissionReview request.
func readAdmissionReview(req *http.Request) (*admissionv1.AdmissionReview, error) {
	if req.Method != http.MethodPost {
		return nil, &httpError{code: http.StatusMethodNotAllowed, message: fmt.Sprintf("method %s is not allowed, admission reviews are POSTed", req.Method)}
	}
	if mt, _, err := mime.ParseMediaType(req.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return nil, &httpError{code: http.StatusUnsupportedMediaType, message: fmt.Sprintf("content type %q is not supported, want application/json", req.Header.Get("Content-Type"))}
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, req.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &httpError{code: http.StatusRequestEntityTooLarge, message: fmt.Sprintf("admission review is larger than %d bytes", maxRequestBytes)}
		}
		return nil, fmt.Errorf("can't read the admission review: %w", err)
	}
	var typeMeta metav1.TypeMeta
	if err := json.Unmarshal(body, &typeMeta); err != nil {
		return nil, fmt.Errorf("admission review is not a JSON object: %w", err)
	}
	if want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview"); typeMeta.GroupVersionKind() != want {
		return nil, fmt.Errorf("request is %q of apiVersion %q; this webhook answers only kind AdmissionReview of apiVersion %q (set admissionReviewVersions to [v1])",
			typeMeta.Kind, typeMeta.APIVersion, want.GroupVersion().String())
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(body, review); err != nil {
		return nil, fmt.Errorf("can't decode the AdmissionReview: %w", err)
	}
	if review.Request == nil {
		return nil, errors.New("the AdmissionReview has no request")
	}
	return review, nil
}

// resourceFor returns the Resource of req and decodes its object and, on UPDATE, old object. A response is
// returned instead when the request can't be admitted that way.
func (a *Admission) resourceFor(req *admissionv1.AdmissionRequest) (Resource, runtime.Object, runtime.Object, *admissionv1.AdmissionResponse) {
	gvr := schema.GroupVersionResource(req.Resource)
	r, ok := a.resources[gvr]
	if !ok {
		return Resource{}, nil, nil, deny(http.StatusBadRequest, metav1.StatusReasonBadRequest,
			fmt.Sprintf("the scylla-operator webhook does not admit resource %q; it admits %s", resourceString(gvr), a.knownResources()))
	}
	obj, err := a.decode(r, req.Object.Raw, "object")
	if err != nil {
		return r, nil, nil, deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
	}
	var old runtime.Object
	if req.Operation == admissionv1.Update {
		old, err = a.decode(r, req.OldObject.Raw, "oldObject")
		if err != nil {
			return r, nil, nil, deny(http.StatusBadRequest, metav1.StatusReasonBadRequest, err.Error())
		}
	}
	return r, obj, old, nil
}

func (a *Admission) validate(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		// Only the content of created and updated objects is validated.
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	r, obj, old, denied := a.resourceFor(req)
	if denied != nil {
		return denied
	}
	if old != nil && isBeingDeleted(obj) && onlyMetadataChanged(req.Object.Raw, req.OldObject.Raw) {
		// Removing a finalizer of an object that rules added since it was created refuse must still work, or the
		// object could never go away.
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	errs, warnings := r.validate(ctx, obj, old)
	response := &admissionv1.AdmissionResponse{Allowed: len(errs) == 0, Warnings: warnings}
	if len(errs) != 0 {
		name := req.Name
		if len(name) == 0 {
			name = objectName(obj)
		}
		status := apierrors.NewInvalid(r.GroupVersionKind.GroupKind(), name, errs).Status()
		response.Result = &status
	}
	return response
}

func (a *Admission) mutate(_ context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	if req.Operation != admissionv1.Create {
		// Defaults are set when an object is created only.
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	r, obj, _, denied := a.resourceFor(req)
	if denied != nil {
		return denied
	}
	if r.mutate == nil {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	ops := r.mutate(obj)
	if len(ops) == 0 {
		return &admissionv1.AdmissionResponse{Allowed: true}
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return deny(http.StatusInternalServerError, metav1.StatusReasonInternalError, fmt.Sprintf("can't encode the JSON patch: %v", err))
	}
	patchType := admissionv1.PatchTypeJSONPatch
	return &admissionv1.AdmissionResponse{Allowed: true, Patch: patch, PatchType: &patchType}
}

// decode decodes raw strictly into r's type and checks that it is r's kind; what names the part of the request.
func (a *Admission) decode(r Resource, raw []byte, what string) (runtime.Object, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("the admission request has no %s", what)
	}
	var typeMeta metav1.TypeMeta
	if err := json.Unmarshal(raw, &typeMeta); err != nil {
		return nil, fmt.Errorf("the request's %s is not a JSON object: %w", what, err)
	}
	if gvk := typeMeta.GroupVersionKind(); gvk != r.GroupVersionKind {
		return nil, fmt.Errorf("the request's %s is of kind %q (apiVersion %q); resource %q holds only kind %q (apiVersion %q)",
			what, gvk.Kind, typeMeta.APIVersion, resourceString(r.GroupVersionResource), r.GroupVersionKind.Kind, r.GroupVersionKind.GroupVersion().String())
	}
	obj, _, err := a.decoder.Decode(raw, nil, r.newObject())
	if err != nil {
		return nil, fmt.Errorf("can't decode the request's %s as %s: %w", what, r.GroupVersionKind.Kind, err)
	}
	return obj, nil
}

func (a *Admission) knownResources() string {
	names := make([]string, 0, len(a.resources))
	for gvr := range a.resources {
		names = append(names, fmt.Sprintf("%q", resourceString(gvr)))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// resourceString formats a resource as kubectl names it: "scyllaclusters.v1.scylla.scylladb.com".
func resourceString(gvr schema.GroupVersionResource) string {
	if len(gvr.Group) == 0 {
		return gvr.Resource + "." + gvr.Version
	}
	return gvr.Resource + "." + gvr.Version + "." + gvr.Group
}

func objectName(obj runtime.Object) string {
	if m, ok := obj.(metav1.Object); ok {
		if len(m.GetName()) != 0 {
			return m.GetName()
		}
		return m.GetGenerateName()
	}
	return ""
}

func isBeingDeleted(obj runtime.Object) bool {
	m, ok := obj.(metav1.Object)
	return ok && m.GetDeletionTimestamp() != nil
}

// onlyMetadataChanged reports whether two JSON objects differ in their metadata and status only.
func onlyMetadataChanged(obj, old []byte) bool {
	var a, b map[string]any
	if json.Unmarshal(obj, &a) != nil || json.Unmarshal(old, &b) != nil {
		return false
	}
	for _, m := range []map[string]any{a, b} {
		delete(m, "metadata")
		delete(m, "status")
	}
	return reflect.DeepEqual(a, b)
}

func deny(code int32, reason metav1.StatusReason, message string) *admissionv1.AdmissionResponse {
	return &admissionv1.AdmissionResponse{
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    code,
			Reason:  reason,
			Message: message,
		},
	}
}

// PatchOperation is one operation of an RFC 6902 JSON patch.
type PatchOperation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}
