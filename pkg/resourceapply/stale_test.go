package resourceapply

import (
	"errors"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

func TestIsStaleCacheError(t *testing.T) {
	t.Parallel()
	exists := apierrors.NewAlreadyExists(corev1.Resource("secrets"), "a")
	conflict := apierrors.NewConflict(corev1.Resource("services"), "b", errors.New("changed"))
	gone := apierrors.NewNotFound(corev1.Resource("configmaps"), "c")
	internal := apierrors.NewInternalError(errors.New("etcd is down"))
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{name: "AlreadyExists", err: exists, want: true},
		{name: "Conflict, wrapped", err: fmt.Errorf("can't update: %w", conflict), want: true},
		{name: "NotFound", err: gone, want: true},
		{name: "another API error", err: internal, want: false},
		{name: "not an API error", err: errors.New("bad spec"), want: false},
		{name: "an empty aggregate", err: utilerrors.NewAggregate([]error{nil}), want: false},
		{name: "aggregated stale cache errors, wrapped", err: fmt.Errorf("sub-sync: %w", utilerrors.NewAggregate([]error{exists, conflict})), want: true},
		{name: "a stale cache error with another", err: utilerrors.NewAggregate([]error{exists, internal}), want: false},
		{name: "nested aggregates", err: utilerrors.NewAggregate([]error{fmt.Errorf("x: %w", utilerrors.NewAggregate([]error{exists})), gone}), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := IsStaleCacheError(tc.err); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
