package crdvalidation

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Widget is a test kind whose CRD exercises every stage of the harness.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec             `json:"spec"`
	Status            map[string]interface{} `json:"status,omitempty"`
}

type WidgetSpec struct {
	Size  *int64       `json:"size,omitempty"`
	Color string       `json:"color,omitempty"`
	Label string       `json:"label,omitempty"`
	Parts []WidgetPart `json:"parts,omitempty"`
}

type WidgetPart struct {
	Name string `json:"name"`
}

// DeepCopyObject round-trips through JSON; good enough for a test type.
func (w *Widget) DeepCopyObject() runtime.Object {
	data, err := json.Marshal(w)
	if err != nil {
		panic(err)
	}
	out := &Widget{}
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	return out
}

var widgetGVK = schema.GroupVersionKind{Group: "test.example.com", Version: "v1", Kind: "Widget"}

// The CRD declares a "legacy" field the Go type lacks, to show that both the schema and the Go type must accept a
// manifest.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.example.com
spec:
  group: test.example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.color) || self.color != 'red' || self.size <= 5"
              fieldPath: .size
              message: red widgets are at most 5 big
            properties:
              size:
                type: integer
                minimum: 1
                default: 3
                x-kubernetes-validations:
                - rule: self != 7
                  message: 7 is unlucky
              color:
                type: string
                enum: [red, blue]
              label:
                type: string
                maxLength: 16
                x-kubernetes-validations:
                - rule: self == oldSelf
                  message: label is immutable
              legacy:
                type: string
              parts:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name:
                      type: string
          status:
            type: object
            x-kubernetes-preserve-unknown-fields: true
`

func newWidgetValidator(t *testing.T) *Validator {
	t.Helper()

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := decodeStrict([]byte(widgetCRD), crd); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	scheme.AddKnownTypeWithName(widgetGVK, &Widget{})
	v, err := NewValidator(context.Background(), scheme, []*apiextensionsv1.CustomResourceDefinition{crd})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func widget(spec string) string {
	return "apiVersion: test.example.com/v1\nkind: Widget\nmetadata:\n  name: w\nspec:\n" + spec
}

func TestValidateCreate(t *testing.T) {
	t.Parallel()

	v := newWidgetValidator(t)
	tt := []struct {
		name     string
		manifest string
		wantErrs []string
		wantSpec string
	}{
		{
			name:     "valid manifest gets its defaults and the default namespace",
			manifest: widget("  color: blue\n"),
			wantSpec: "{color: blue, size: 3}",
		},
		{
			name:     "null in a defaulted field is replaced by the default",
			manifest: widget("  size: null\n"),
			wantSpec: "{size: 3}",
		},
		{
			name:     "field unknown to the schema and the Go type",
			manifest: widget("  colour: blue\n"),
			wantErrs: []string{"spec.colour: Forbidden: unknown field"},
			wantSpec: "{size: 3}",
		},
		{
			name:     "field in the schema but not in the Go type",
			manifest: widget("  legacy: x\n"),
			wantErrs: []string{"spec.legacy: Forbidden: unknown field"},
			wantSpec: "{legacy: x, size: 3}",
		},
		{
			name:     "unknown metadata field",
			manifest: "apiVersion: test.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  labelz: {}\nspec: {}\n",
			wantErrs: []string{"metadata.labelz: Forbidden: unknown field"},
			wantSpec: "{size: 3}",
		},
		{
			name:     "value of the wrong type breaks the Go type and the schema",
			manifest: widget("  size: big\n"),
			wantErrs: []string{
				`<nil>: Invalid value: null: doesn't decode into the Go type of Widget: json: cannot unmarshal string into Go struct field WidgetSpec.spec.size of type int64`,
				`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			},
			wantSpec: "{size: big}",
		},
		{
			name:     "CEL rule with a field path",
			manifest: widget("  color: red\n  size: 6\n"),
			wantErrs: []string{"spec.size: Invalid value: red widgets are at most 5 big"},
			wantSpec: "{color: red, size: 6}",
		},
		{
			name:     "blocking schema errors skip the CEL rules",
			manifest: widget("  color: red\n  size: 6\n  label: this-label-is-far-too-long\n"),
			wantErrs: []string{
				`spec.label: Too long: may not be more than 16 bytes`,
				`<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation`,
			},
			wantSpec: "{color: red, label: this-label-is-far-too-long, size: 6}",
		},
		{
			name:     "schema minimum",
			manifest: widget("  size: 0\n"),
			wantErrs: []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"},
			wantSpec: "{size: 0}",
		},
		{
			name:     "duplicate list-map keys",
			manifest: widget("  parts:\n  - name: a\n  - name: a\n"),
			wantErrs: []string{`spec.parts[1]: Duplicate value: {"name":"a"}`},
			wantSpec: "{parts: [{name: a}, {name: a}], size: 3}",
		},
		{
			name:     "status is dropped on create",
			manifest: widget("  size: 2\n") + "status:\n  anything: goes\n",
			wantSpec: "{size: 2}",
		},
		{
			name:     "metadata is validated",
			manifest: "apiVersion: test.example.com/v1\nkind: Widget\nmetadata:\n  name: Not_A_Name\nspec: {}\n",
			wantErrs: []string{`metadata.name: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
			wantSpec: "{size: 3}",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			obj, errs := v.ValidateCreate(context.Background(), []byte(tc.manifest))
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
			if obj == nil {
				t.Fatal("no object returned")
			}
			if obj.GetNamespace() != DefaultNamespace {
				t.Errorf("want namespace %q, got %q", DefaultNamespace, obj.GetNamespace())
			}
			if _, hasStatus := obj.Object["status"]; hasStatus {
				t.Errorf("status wasn't dropped")
			}
			var wantSpec map[string]interface{}
			if err := yaml.Unmarshal([]byte(tc.wantSpec), &wantSpec); err != nil {
				t.Fatal(err)
			}
			gotSpec := normalize(t, obj.Object["spec"])
			if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
				t.Errorf("spec differs (-want +got):\n%s", diff)
			}
		})
	}
}

// normalize round-trips a value through JSON so numbers compare equal to the ones parsed from YAML.
func normalize(t *testing.T, v interface{}) map[string]interface{} {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]interface{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestValidateCreateOfManifestsThatCannotBeDecoded(t *testing.T) {
	t.Parallel()

	v := newWidgetValidator(t)
	tt := []struct {
		name     string
		manifest string
		wantErrs []string
	}{
		{
			name:     "duplicate YAML keys",
			manifest: widget("  size: 1\n  size: 2\n"),
			wantErrs: []string{`<nil>: Invalid value: null: can't parse the manifest as YAML: yaml: unmarshal errors:` + "\n" + `  line 7: key "size" already set in map`},
		},
		{
			name:     "not an object",
			manifest: "- a\n- b\n",
			wantErrs: []string{`<nil>: Invalid value: null: can't parse the manifest as a JSON object: json: cannot unmarshal array into Go value of type map[string]interface {}`},
		},
		{
			name:     "kind without a CRD or a Go type",
			manifest: "apiVersion: test.example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n",
			wantErrs: []string{`kind: Unsupported value: "test.example.com/v1, Kind=Gadget": supported values: "test.example.com/v1, Kind=Widget"`},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			obj, errs := v.ValidateCreate(context.Background(), []byte(tc.manifest))
			if obj != nil {
				t.Errorf("want no object, got %v", obj)
			}
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuiltInKindsAreDecodedStrictly(t *testing.T) {
	t.Parallel()

	v := newWidgetValidator(t)
	tt := []struct {
		name     string
		manifest string
		wantErrs []string
	}{
		{
			name:     "valid Namespace",
			manifest: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scylla\n",
		},
		{
			name:     "Namespace with an unknown field",
			manifest: "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scylla\nspec:\n  finalizer: [kubernetes]\n",
			wantErrs: []string{"spec.finalizer: Forbidden: unknown field"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			obj, errs := v.ValidateCreate(context.Background(), []byte(tc.manifest))
			if obj == nil {
				t.Fatal("no object returned")
			}
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateUpdate(t *testing.T) {
	t.Parallel()

	v := newWidgetValidator(t)
	tt := []struct {
		name     string
		old      string
		new      string
		wantErrs []string
	}{
		{
			name: "changing a mutable field",
			old:  widget("  size: 1\n  label: a\n"),
			new:  widget("  size: 2\n  label: a\n"),
		},
		{
			name:     "transition rule",
			old:      widget("  label: a\n"),
			new:      widget("  label: b\n"),
			wantErrs: []string{`spec.label: Invalid value: "b": label is immutable`},
		},
		{
			name: "an invalid value that doesn't change is ratcheted",
			old:  widget("  size: 7\n"),
			new:  widget("  size: 7\n  parts:\n  - name: a\n"),
		},
		{
			name:     "a value that becomes invalid is rejected",
			old:      widget("  size: 6\n"),
			new:      widget("  size: 7\n"),
			wantErrs: []string{"spec.size: Invalid value: 7: 7 is unlucky"},
		},
		{
			name:     "a rule on a changed parent is evaluated even if the invalid field is unchanged",
			old:      widget("  color: red\n  size: 8\n"),
			new:      widget("  color: red\n  size: 8\n  parts:\n  - name: a\n"),
			wantErrs: []string{"spec.size: Invalid value: red widgets are at most 5 big"},
		},
		{
			name:     "an invalid value that changes is rejected",
			old:      widget("  color: red\n  size: 8\n"),
			new:      widget("  color: red\n  size: 9\n"),
			wantErrs: []string{"spec.size: Invalid value: red widgets are at most 5 big"},
		},
		{
			name:     "name can't change",
			old:      widget("  size: 1\n"),
			new:      strings.Replace(widget("  size: 1\n"), "name: w", "name: w2", 1),
			wantErrs: []string{`metadata.name: Invalid value: "w2": field is immutable`},
		},
		{
			name:     "old object that doesn't decode",
			old:      widget("  colour: red\n"),
			new:      widget("  color: red\n"),
			wantErrs: []string{"spec.colour: Forbidden: old: unknown field"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			_, errs := v.ValidateUpdate(context.Background(), []byte(tc.old), []byte(tc.new))
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateCRD(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name       string
		mutate     func(*apiextensionsv1.CustomResourceDefinition)
		wantSubstr string
	}{
		{
			name:   "valid CRD",
			mutate: func(*apiextensionsv1.CustomResourceDefinition) {},
		},
		{
			name: "rule that doesn't compile",
			mutate: func(crd *apiextensionsv1.CustomResourceDefinition) {
				spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
				spec.XValidations[0].Rule = "self.colour == 'red'"
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			},
			wantSubstr: "compilation failed",
		},
		{
			name: "rule over an unbounded list that exceeds the cost budget",
			mutate: func(crd *apiextensionsv1.CustomResourceDefinition) {
				spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
				spec.XValidations[0].Rule = "!has(self.parts) || self.parts.all(a, self.parts.all(b, a.name.matches(b.name)))"
				crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
			},
			wantSubstr: "estimated rule cost exceeds budget",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := decodeStrict([]byte(widgetCRD), crd); err != nil {
				t.Fatal(err)
			}
			tc.mutate(crd)
			errs := ValidateCRD(context.Background(), crd)
			if tc.wantSubstr == "" {
				if len(errs) != 0 {
					t.Errorf("want no errors, got %v", errs.ToAggregate())
				}
				return
			}
			if errs.ToAggregate() == nil || !strings.Contains(errs.ToAggregate().Error(), tc.wantSubstr) {
				t.Errorf("want an error containing %q, got %v", tc.wantSubstr, errs.ToAggregate())
			}
		})
	}
}

func TestSplitDocuments(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		data    string
		want    []string
		wantErr bool
	}{
		{
			name: "one document",
			data: "a: 1\n",
			want: []string{"a: 1\n"},
		},
		{
			name: "separators, leading separator and comment-only documents",
			data: "---\n# only a comment\n---\na: 1\n--- \nb: 2\n",
			want: []string{"a: 1\n", "b: 2\n"},
		},
		{
			name: "comments stay with their document",
			data: "# expect: x: y\na: 1\n",
			want: []string{"# expect: x: y\na: 1\n"},
		},
		{
			name:    "nothing but comments",
			data:    "# nothing\n",
			wantErr: true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			docs, err := SplitDocuments([]byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("want error %v, got %v", tc.wantErr, err)
			}
			var got []string
			for _, d := range docs {
				got = append(got, string(d))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("documents differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseExpectations(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		data    string
		want    []Expectation
		wantErr bool
	}{
		{
			name: "one expectation",
			data: "# expect: spec.a[0].b: must be: positive\nkind: X\n",
			want: []Expectation{{Path: "spec.a[0].b", Message: "must be: positive"}},
		},
		{
			name: "several expectations among other comments",
			data: "# expect: spec.a: one\n# a description\n# expect: spec.b: two\n---\nkind: X\n",
			want: []Expectation{{Path: "spec.a", Message: "one"}, {Path: "spec.b", Message: "two"}},
		},
		{
			name: "lines after the first non-comment line are ignored",
			data: "kind: X\n# expect: spec.a: one\n",
		},
		{
			name:    "missing message",
			data:    "# expect: spec.a\n",
			wantErr: true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := ParseExpectations([]byte(tc.data))
			if (err != nil) != tc.wantErr {
				t.Fatalf("want error %v, got %v", tc.wantErr, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("expectations differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpectationMatches(t *testing.T) {
	t.Parallel()

	errs := field.ErrorList{
		field.Invalid(field.NewPath("spec", "datacenter", "name"), "dc2", "datacenter name is immutable"),
		field.Duplicate(field.NewPath("spec", "racks").Index(1), map[string]interface{}{"name": "a"}),
	}
	tt := []struct {
		name        string
		expectation Expectation
		want        bool
	}{
		{
			name:        "path and message substring",
			expectation: Expectation{Path: "spec.datacenter.name", Message: "is immutable"},
			want:        true,
		},
		{
			name:        "message includes the error type and value",
			expectation: Expectation{Path: "spec.racks[1]", Message: `Duplicate value: {"name":"a"}`},
			want:        true,
		},
		{
			name:        "path must be exact",
			expectation: Expectation{Path: "spec.datacenter", Message: "is immutable"},
		},
		{
			name:        "message must match",
			expectation: Expectation{Path: "spec.datacenter.name", Message: "is required"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			if got := tc.expectation.Matches(errs); got != tc.want {
				t.Errorf("want %v, got %v", tc.want, got)
			}
		})
	}
}

func TestPathFromString(t *testing.T) {
	t.Parallel()

	tt := []struct {
		path string
		want *field.Path
	}{
		{path: "spec", want: field.NewPath("spec")},
		{path: "spec.racks[2].name", want: field.NewPath("spec", "racks").Index(2).Child("name")},
		{path: "spec.limits[cpu]", want: field.NewPath("spec", "limits").Key("cpu")},
		{path: "spec.a[0][1]", want: field.NewPath("spec", "a").Index(0).Index(1)},
	}
	for _, tc := range tt {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()

			if got := pathFromString(tc.path); got.String() != tc.want.String() {
				t.Errorf("want %s, got %s", tc.want, got)
			}
		})
	}
}
