package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
)

var (
	taskGVR = scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks")
	taskGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBManagerTask")
)

// testTaskResource admits ScyllaDBManagerTasks with rules that make each response shape easy to provoke: a task
// named "bad" has two errors, its target may not change, a "deprecated" label warns, and one named "panic" panics.
func testTaskResource() Resource {
	return NewResource(taskGVR, taskGVK, func() *scyllav1alpha1.ScyllaDBManagerTask { return &scyllav1alpha1.ScyllaDBManagerTask{} },
		Validator[*scyllav1alpha1.ScyllaDBManagerTask]{
			Validate: func(_ context.Context, task *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
				switch task.Name {
				case "bad":
					return field.ErrorList{
						field.Invalid(field.NewPath("spec", "repair", "cron"), "* *", "must have five fields"),
						field.Required(field.NewPath("spec", "scyllaDBClusterRef", "name"), ""),
					}
				case "panic":
					panic("rule bug")
				}
				return nil
			},
			ValidateUpdate: func(_ context.Context, task, old *scyllav1alpha1.ScyllaDBManagerTask) field.ErrorList {
				if task.Spec.ScyllaDBClusterRef != old.Spec.ScyllaDBClusterRef {
					return field.ErrorList{field.Forbidden(field.NewPath("spec", "scyllaDBClusterRef"), "may not change")}
				}
				return nil
			},
			Warnings: func(task *scyllav1alpha1.ScyllaDBManagerTask) []string {
				if _, ok := task.Labels["deprecated"]; ok {
					return []string{"metadata.labels[deprecated]: deprecated, use something else"}
				}
				return nil
			},
		})
}

func newTestAdmission(t *testing.T, resources ...Resource) *Admission {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAdmission(scheme, resources...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func taskJSON(name, target string, labels map[string]string, deleting bool) []byte {
	task := &scyllav1alpha1.ScyllaDBManagerTask{
		TypeMeta:   metav1.TypeMeta{APIVersion: taskGVK.GroupVersion().String(), Kind: taskGVK.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "scylla", Labels: labels},
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBCluster", Name: target},
		},
	}
	if deleting {
		now := metav1.Now()
		task.DeletionTimestamp = &now
		task.Finalizers = []string{"example.com/cleanup"}
	}
	data, err := json.Marshal(task)
	if err != nil {
		panic(err)
	}
	return data
}

func reviewJSON(t *testing.T, req *admissionv1.AdmissionRequest) []byte {
	t.Helper()
	data, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func post(handler http.HandlerFunc, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	handler(rec, req)
	return rec
}

func decodeResponse(t *testing.T, rec *httptest.ResponseRecorder) *admissionv1.AdmissionResponse {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body.String())
	}
	review := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), review); err != nil {
		t.Fatal(err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" || review.Response == nil {
		t.Fatalf("response is %s %s with response %v, want an admission.k8s.io/v1 AdmissionReview", review.APIVersion, review.Kind, review.Response)
	}
	return review.Response
}

func TestValidateAnswersAdmissionReviews(t *testing.T) {
	t.Parallel()
	a := newTestAdmission(t, testTaskResource())
	create := func(name string, object []byte) *admissionv1.AdmissionRequest {
		return &admissionv1.AdmissionRequest{
			UID: types.UID("uid-" + name), Resource: metav1.GroupVersionResource(taskGVR), Operation: admissionv1.Create,
			Name: name, Namespace: "scylla", Object: runtime.RawExtension{Raw: object},
		}
	}
	update := func(name string, object, old []byte) *admissionv1.AdmissionRequest {
		r := create(name, object)
		r.Operation = admissionv1.Update
		r.OldObject = runtime.RawExtension{Raw: old}
		return r
	}

	for _, tc := range []struct {
		desc string
		req  *admissionv1.AdmissionRequest
		want *admissionv1.AdmissionResponse
	}{
		{
			desc: "a valid object is allowed",
			req:  create("good", taskJSON("good", "dev", nil, false)),
			want: &admissionv1.AdmissionResponse{UID: "uid-good", Allowed: true},
		},
		{
			desc: "an invalid object is refused with every error, as the API server words it",
			req:  create("bad", taskJSON("bad", "dev", nil, false)),
			want: &admissionv1.AdmissionResponse{UID: "uid-bad", Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
				Message: `ScyllaDBManagerTask.scylla.scylladb.com "bad" is invalid: [spec.repair.cron: Invalid value: "* *": must have five fields, spec.scyllaDBClusterRef.name: Required value]`,
				Details: &metav1.StatusDetails{Name: "bad", Group: "scylla.scylladb.com", Kind: "ScyllaDBManagerTask", Causes: []metav1.StatusCause{
					{Type: metav1.CauseTypeFieldValueInvalid, Message: `Invalid value: "* *": must have five fields`, Field: "spec.repair.cron"},
					{Type: metav1.CauseTypeFieldValueRequired, Message: "Required value", Field: "spec.scyllaDBClusterRef.name"},
				}},
			}},
		},
		{
			desc: "an update that breaks an update rule is refused",
			req:  update("good", taskJSON("good", "other", nil, false), taskJSON("good", "dev", nil, false)),
			want: &admissionv1.AdmissionResponse{UID: "uid-good", Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
				Message: `ScyllaDBManagerTask.scylla.scylladb.com "good" is invalid: spec.scyllaDBClusterRef: Forbidden: may not change`,
				Details: &metav1.StatusDetails{Name: "good", Group: "scylla.scylladb.com", Kind: "ScyllaDBManagerTask", Causes: []metav1.StatusCause{
					{Type: metav1.CauseTypeForbidden, Message: "Forbidden: may not change", Field: "spec.scyllaDBClusterRef"},
				}},
			}},
		},
		{
			desc: "an update that keeps the update rules is allowed, though its create rules would refuse it",
			req:  update("bad", taskJSON("bad", "dev", map[string]string{"a": "b"}, false), taskJSON("bad", "dev", nil, false)),
			want: &admissionv1.AdmissionResponse{UID: "uid-bad", Allowed: true},
		},
		{
			desc: "deprecated fields are warnings, not errors",
			req:  create("good", taskJSON("good", "dev", map[string]string{"deprecated": ""}, false)),
			want: &admissionv1.AdmissionResponse{UID: "uid-good", Allowed: true, Warnings: []string{"metadata.labels[deprecated]: deprecated, use something else"}},
		},
		{
			desc: "a resource the webhook doesn't admit is refused naming it",
			req: func() *admissionv1.AdmissionRequest {
				r := create("good", taskJSON("good", "dev", nil, false))
				r.Resource = metav1.GroupVersionResource{Group: "scylla.scylladb.com", Version: "v1alpha1", Resource: "scylladbwidgets"}
				return r
			}(),
			want: &admissionv1.AdmissionResponse{UID: "uid-good", Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest,
				Message: `the scylla-operator webhook does not admit resource "scylladbwidgets.v1alpha1.scylla.scylladb.com"; it admits "scylladbmanagertasks.v1alpha1.scylla.scylladb.com"`,
			}},
		},
		{
			desc: "an object of another kind than its resource's is refused naming the kind",
			req:  create("x", []byte(`{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBWidget","metadata":{"name":"x"}}`)),
			want: &admissionv1.AdmissionResponse{UID: "uid-x", Result: &metav1.Status{
				Status: metav1.StatusFailure, Code: 400, Reason: metav1.StatusReasonBadRequest,
				Message: `the request's object is of kind "ScyllaDBWidget" (apiVersion "scylla.scylladb.com/v1alpha1"); resource "scylladbmanagertasks.v1alpha1.scylla.scylladb.com" holds only kind "ScyllaDBManagerTask" (apiVersion "scylla.scylladb.com/v1alpha1")`,
			}},
		},
		{
			desc: "deletions are not validated",
			req: &admissionv1.AdmissionRequest{UID: "uid-del", Resource: metav1.GroupVersionResource(taskGVR), Operation: admissionv1.Delete,
				Name: "bad", OldObject: runtime.RawExtension{Raw: taskJSON("bad", "dev", nil, false)}},
			want: &admissionv1.AdmissionResponse{UID: "uid-del", Allowed: true},
		},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, tc.req)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a finalizer removal of an object being deleted is allowed, a spec change is not", func(t *testing.T) {
		old := taskJSON("bad", "dev", nil, true)
		var obj map[string]any
		if err := json.Unmarshal(old, &obj); err != nil {
			t.Fatal(err)
		}
		delete(obj["metadata"].(map[string]any), "finalizers")
		removed, _ := json.Marshal(obj)
		if got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, update("bad", removed, old)))); !got.Allowed {
			t.Errorf("finalizer removal refused: %v", got.Result)
		}
		if got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, update("bad", taskJSON("bad", "other", nil, true), old)))); got.Allowed {
			t.Error("a spec change of an object being deleted was allowed past its update rules")
		}
	})

	t.Run("the name of an object created with generateName comes from the object", func(t *testing.T) {
		r := create("bad", taskJSON("bad", "dev", nil, false))
		r.Name = ""
		got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, r)))
		if got.Allowed || !strings.HasPrefix(got.Result.Message, `ScyllaDBManagerTask.scylla.scylladb.com "bad" is invalid`) {
			t.Errorf("message = %q, want it to name the object", got.Result.Message)
		}
	})

	t.Run("a field the type doesn't have is refused naming it", func(t *testing.T) {
		got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, create("x",
			[]byte(`{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBManagerTask","metadata":{"name":"x"},"spec":{"surprise":1}}`)))))
		if got.Allowed || got.Result.Code != 400 || !strings.Contains(got.Result.Message, `unknown field "spec.surprise"`) {
			t.Errorf("allowed=%v result=%v, want a 400 naming spec.surprise", got.Allowed, got.Result)
		}
	})

	t.Run("an update without its old object is refused", func(t *testing.T) {
		got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, update("good", taskJSON("good", "dev", nil, false), nil))))
		if got.Allowed || !strings.Contains(got.Result.Message, "has no oldObject") {
			t.Errorf("allowed=%v result=%v, want the missing oldObject named", got.Allowed, got.Result)
		}
	})
}

func TestValidateRefusesWhatIsNotAnAdmissionReview(t *testing.T) {
	t.Parallel()
	a := newTestAdmission(t, testTaskResource())
	for _, tc := range []struct {
		desc        string
		method      string
		contentType string
		body        string
		wantCode    int
		wantMessage string
	}{
		{desc: "not JSON", method: http.MethodPost, contentType: "application/json", body: "{", wantCode: 400, wantMessage: "admission review is not a JSON object"},
		{desc: "admission.k8s.io/v1beta1", method: http.MethodPost, contentType: "application/json",
			body:     `{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"x"}}`,
			wantCode: 400, wantMessage: `request is "AdmissionReview" of apiVersion "admission.k8s.io/v1beta1"; this webhook answers only kind AdmissionReview of apiVersion "admission.k8s.io/v1" (set admissionReviewVersions to [v1])`},
		{desc: "another kind", method: http.MethodPost, contentType: "application/json", body: `{"apiVersion":"admission.k8s.io/v1","kind":"Pod"}`, wantCode: 400, wantMessage: `request is "Pod"`},
		{desc: "no request", method: http.MethodPost, contentType: "application/json", body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, wantCode: 400, wantMessage: "the AdmissionReview has no request"},
		{desc: "GET", method: http.MethodGet, contentType: "application/json", wantCode: 405, wantMessage: "method GET is not allowed"},
		{desc: "YAML", method: http.MethodPost, contentType: "application/yaml", body: "a: b", wantCode: 415, wantMessage: `content type "application/yaml" is not supported`},
		{desc: "too large", method: http.MethodPost, contentType: "application/json", body: `{"a":"` + strings.Repeat("x", maxRequestBytes) + `"}`, wantCode: 413, wantMessage: "larger than"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "/validate", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", tc.contentType)
			rec := httptest.NewRecorder()
			a.ServeValidate(rec, req)
			if rec.Code != tc.wantCode || !strings.Contains(rec.Body.String(), tc.wantMessage) {
				t.Errorf("HTTP %d %q, want %d with %q", rec.Code, rec.Body.String(), tc.wantCode, tc.wantMessage)
			}
		})
	}
}

func TestValidateTurnsAPanicIntoAnInternalError(t *testing.T) {
	t.Parallel()
	a := newTestAdmission(t, testTaskResource())
	rec := post(a.ServeValidate, reviewJSON(t, &admissionv1.AdmissionRequest{
		UID: "uid", Resource: metav1.GroupVersionResource(taskGVR), Operation: admissionv1.Create, Name: "panic",
		Object: runtime.RawExtension{Raw: taskJSON("panic", "dev", nil, false)},
	}))
	if rec.Code != http.StatusInternalServerError || !strings.Contains(rec.Body.String(), "internal error of the scylla-operator webhook while admitting CREATE scylladbmanagertasks: rule bug") {
		t.Errorf("HTTP %d %q, want 500 naming the request and the panic", rec.Code, rec.Body.String())
	}
	// The server keeps answering.
	if got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, &admissionv1.AdmissionRequest{
		UID: "uid", Resource: metav1.GroupVersionResource(taskGVR), Operation: admissionv1.Create, Name: "good",
		Object: runtime.RawExtension{Raw: taskJSON("good", "dev", nil, false)},
	}))); !got.Allowed {
		t.Errorf("after a panic a valid object was refused: %v", got.Result)
	}
}

func TestNewAdmissionRefusesAmbiguousResources(t *testing.T) {
	t.Parallel()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewAdmission(scheme, testTaskResource(), testTaskResource()); err == nil || !strings.Contains(err.Error(), "is given twice") {
		t.Errorf("err = %v, want a resource given twice refused", err)
	}
	unknown := testTaskResource()
	unknown.GroupVersionKind.Kind = "ScyllaDBWidget"
	if _, err := NewAdmission(scheme, unknown); err == nil || !strings.Contains(err.Error(), "is not in the scheme") {
		t.Errorf("err = %v, want a kind outside the scheme refused", err)
	}
}
