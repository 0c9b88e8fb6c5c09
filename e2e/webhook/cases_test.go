package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	webhookserver "github.com/scyllakube/scylla-operator/pkg/webhook"
	admissionv1 "k8s.io/api/admission/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// nothingExists is a lookup of an empty namespace.
type nothingExists struct{}

func (nothingExists) ScyllaDBManagerTaskTargetExists(context.Context, string, scyllav1alpha1.LocalScyllaDBReference) (bool, error) {
	return false, nil
}

// TestInvalidCasesNeedTheWebhook checks every case of InvalidCasesDir without a control plane: the CRD schemas of
// deploy/crds/ accept it (so only the webhook can refuse it), and the webhook's admission handler refuses it with
// exactly the expected causes.
func TestInvalidCasesNeedTheWebhook(t *testing.T) {
	t.Parallel()
	cases, err := LoadInvalidCases(InvalidCasesDir)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, scyllav1.AddToScheme, scyllav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	schemas, err := crdvalidation.NewValidatorFromDir(t.Context(), scheme, filepath.Join("..", "..", "deploy", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	webhookScheme, err := webhookserver.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	admission, err := webhookserver.NewAdmission(webhookScheme, webhookserver.ScyllaResources(nothingExists{})...)
	if err != nil {
		t.Fatal(err)
	}

	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(InvalidCasesDir, c.Name+".yaml")
			if _, errs := schemas.ValidateCreate(t.Context(), c.Documents[0]); len(errs) != 0 {
				t.Errorf("%s: the CRD schemas refuse it already, so it doesn't test the webhook: %v", path, errs.ToAggregate())
			}
			response := admit(t, admission, c.Documents[0])
			if response.Allowed {
				t.Fatalf("%s: the webhook allowed it", path)
			}
			if response.Result == nil {
				t.Fatalf("%s: the webhook denied it without a status", path)
			}
			if err := CheckWebhookRejection(&apierrors.StatusError{ErrStatus: *response.Result}, c.Expectations, false); err != nil {
				t.Errorf("%s: %v", path, err)
			}
		})
	}
}

// admit sends a CREATE of the manifest to the admission handler as the API server would and returns its response.
func admit(t *testing.T, admission *webhookserver.Admission, manifest []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	data, err := yaml.YAMLToJSONStrict(manifest)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	obj.SetNamespace("test")
	raw, err := obj.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	gvk := obj.GroupVersionKind()
	gvr, _ := meta.UnsafeGuessKindToResource(gvk)
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:       types.UID("case"),
			Kind:      metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
			Resource:  metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
			Name:      obj.GetName(),
			Namespace: obj.GetNamespace(),
			Operation: admissionv1.Create,
			Object:    runtime.RawExtension{Raw: raw},
		},
	}
	body, err := json.Marshal(&review)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/validate", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	admission.ServeValidate(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("the admission handler answered %d: %s", rec.Code, rec.Body.String())
	}
	out := &admissionv1.AdmissionReview{}
	if err := json.Unmarshal(rec.Body.Bytes(), out); err != nil {
		t.Fatalf("can't decode the admission response: %v", err)
	}
	if out.Response == nil || out.Response.UID != review.Request.UID {
		t.Fatalf("the admission response doesn't answer the request: %s", rec.Body.String())
	}
	return out.Response
}
