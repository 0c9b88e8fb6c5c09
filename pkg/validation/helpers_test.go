package validation

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ignoreOrigin leaves out the bookkeeping apimachinery's own validators add to their errors.
var ignoreOrigin = cmpopts.IgnoreFields(field.Error{}, "Origin", "CoveredByDeclarative", "FromImperative")

// validationCase changes a valid object so that validation must return exactly want.
type validationCase[T any] struct {
	name   string
	modify func(T)
	want   field.ErrorList
}

// runValidationCases runs each case on a fresh copy of the object base returns.
func runValidationCases[T any](t *testing.T, base func(t testing.TB) T, validate func(T) field.ErrorList, cases []validationCase[T]) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := base(t)
			tc.modify(obj)
			if diff := cmp.Diff(tc.want, validate(obj), ignoreOrigin); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}
