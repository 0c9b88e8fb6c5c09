package crds

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var scyllaClusterKind = schema.GroupKind{Group: "scylla.scylladb.com", Kind: "ScyllaCluster"}

func TestRejectionOf(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		err     error
		want    *Rejection
		wantErr string
	}{
		{
			name: "invalid with causes",
			err: apierrors.NewInvalid(scyllaClusterKind, "basic", field.ErrorList{
				field.Required(field.NewPath("spec", "version"), ""),
				field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid"),
			}),
			want: &Rejection{Causes: []Cause{
				{Field: "spec.version", Message: "Required value"},
				{Field: "<nil>", Message: "Invalid value: null: some validation rules were not checked because the object was invalid"},
			}},
		},
		{
			name: "strict decoding with unknown and duplicate fields",
			err:  apierrors.NewBadRequest(`ScyllaCluster in version "v1" cannot be handled as a ScyllaCluster: strict decoding error: unknown field "spec.datacenter.racks[0].replicas", unknown field "metadata.labelz", duplicate field "spec.version"`),
			want: &Rejection{StrictDecoding: true, Causes: []Cause{
				{Field: "spec.datacenter.racks[0].replicas", Message: `unknown field "spec.datacenter.racks[0].replicas"`},
				{Field: "metadata.labelz", Message: `unknown field "metadata.labelz"`},
				{Field: "spec.version", Message: `duplicate field "spec.version"`},
			}},
		},
		{
			name:    "strict decoding with an error that isn't a field",
			err:     apierrors.NewBadRequest(`strict decoding error: unknown field "spec.a", something else`),
			wantErr: `can't parse strict decoding errors "unknown field \"spec.a\", something else"`,
		},
		{
			name:    "accepted",
			err:     nil,
			wantErr: "the API server accepted the request",
		},
		{
			name:    "invalid without causes",
			err:     apierrors.NewInvalid(scyllaClusterKind, "basic", nil),
			wantErr: "rejected the request as invalid without causes",
		},
		{
			name:    "another API error",
			err:     apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "scylla"),
			wantErr: `not with a validation error (reason "NotFound", code 404)`,
		},
		{
			name:    "another bad request",
			err:     apierrors.NewBadRequest("the body of the request was in an unknown format"),
			wantErr: `not with a validation error (reason "BadRequest", code 400)`,
		},
		{
			name:    "not an API error",
			err:     fmt.Errorf("can't map kind: %w", errors.New("no matches")),
			wantErr: "the request failed without an API status",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := RejectionOf(tc.err)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rejection differs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHarnessCauses(t *testing.T) {
	t.Parallel()

	errs := field.ErrorList{
		field.Forbidden(field.NewPath("spec", "racks").Index(0).Child("replicas"), "unknown field"),
		field.Forbidden(field.NewPath("spec", "backup"), "backup options may only be set when type is Backup"),
		field.Invalid(field.NewPath("spec", "datacenter", "name"), "DC_1", "datacenter name must be a lowercase RFC 1123 label"),
	}
	tt := []struct {
		name           string
		strictDecoding bool
		want           []Cause
	}{
		{
			name: "every error, unknown fields in the server's words",
			want: []Cause{
				{Field: "spec.racks[0].replicas", Message: `unknown field "spec.racks[0].replicas"`},
				{Field: "spec.backup", Message: "Forbidden: backup options may only be set when type is Backup"},
				{Field: "spec.datacenter.name", Message: `Invalid value: "DC_1": datacenter name must be a lowercase RFC 1123 label`},
			},
		},
		{
			name:           "only unknown fields when the server stopped at decoding",
			strictDecoding: true,
			want: []Cause{
				{Field: "spec.racks[0].replicas", Message: `unknown field "spec.racks[0].replicas"`},
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, HarnessCauses(errs, tc.strictDecoding)); diff != "" {
				t.Errorf("causes differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRejectionUnmet(t *testing.T) {
	t.Parallel()

	rejection := &Rejection{Causes: []Cause{
		{Field: "spec.version", Message: "Required value"},
		{Field: "<nil>", Message: "Invalid value: null: some validation rules were not checked because the object was invalid"},
		{Field: "spec.racks[0].replicas", Message: `unknown field "spec.racks[0].replicas"`},
	}}
	tt := []struct {
		name         string
		expectations []crdvalidation.Expectation
		want         []string
	}{
		{
			name: "every cause expected; rules not checked need no expectation; unknown fields match the harness wording",
			expectations: []crdvalidation.Expectation{
				{Path: "spec.version", Message: "Required value"},
				{Path: "spec.racks[0].replicas", Message: "unknown field"},
			},
		},
		{
			name: "an expectation no cause meets and a cause no expectation explains",
			expectations: []crdvalidation.Expectation{
				{Path: "spec.version", Message: "Required value"},
				{Path: "spec.version", Message: "version must be a container image tag"},
			},
			want: []string{
				`no cause matches "# expect: spec.version: version must be a container image tag"`,
				`unexpected cause "spec.racks[0].replicas: unknown field \"spec.racks[0].replicas\""`,
			},
		},
		{
			name: "the path must match exactly",
			expectations: []crdvalidation.Expectation{
				{Path: "spec", Message: "Required value"},
				{Path: "spec.racks[0].replicas", Message: "unknown field"},
			},
			want: []string{
				`no cause matches "# expect: spec: Required value"`,
				`unexpected cause "spec.version: Required value"`,
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, rejection.Unmet(tc.expectations)); diff != "" {
				t.Errorf("problems differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRejectionDiffWithHarness(t *testing.T) {
	t.Parallel()

	unknown := field.Forbidden(field.NewPath("spec", "colour"), "unknown field")
	required := field.Required(field.NewPath("spec", "version"), "")
	tt := []struct {
		name      string
		rejection *Rejection
		harness   field.ErrorList
		wantDiff  bool
	}{
		{
			name:      "same causes in another order",
			rejection: &Rejection{Causes: []Cause{{Field: "spec.version", Message: "Required value"}, {Field: "spec.colour", Message: `unknown field "spec.colour"`}}},
			harness:   field.ErrorList{unknown, required},
		},
		{
			name:      "strict decoding hides the harness's other errors",
			rejection: &Rejection{StrictDecoding: true, Causes: []Cause{{Field: "spec.colour", Message: `unknown field "spec.colour"`}}},
			harness:   field.ErrorList{required, unknown},
		},
		{
			name:      "the harness misses a cause",
			rejection: &Rejection{Causes: []Cause{{Field: "spec.version", Message: "Required value"}, {Field: "spec.size", Message: "Invalid value: 7: 7 is unlucky"}}},
			harness:   field.ErrorList{required},
			wantDiff:  true,
		},
		{
			name:      "the server misses an unknown field",
			rejection: &Rejection{Causes: []Cause{{Field: "spec.version", Message: "Required value"}}},
			harness:   field.ErrorList{required, unknown},
			wantDiff:  true,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			diff := tc.rejection.DiffWithHarness(tc.harness)
			if (diff != "") != tc.wantDiff {
				t.Errorf("want a diff: %v, got %q", tc.wantDiff, diff)
			}
		})
	}
}
