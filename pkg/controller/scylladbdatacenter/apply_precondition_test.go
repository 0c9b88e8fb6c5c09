package scylladbdatacenter

import (
	"errors"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// The operator asks for a decommission with "false" and the sidecar reports it done with "true": a sync whose
// snapshot predates the sidecar's write must not set "false" again (seen in e2e: false → true → false, and the
// scale-down never finished).
func TestKeepsDecommissionProgress(t *testing.T) {
	t.Parallel()

	service := func(label string) *corev1.Service {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "basic-dc1-a-2", Labels: map[string]string{}}}
		if len(label) != 0 {
			svc.Labels[naming.DecommissionedLabel] = label
		}
		return svc
	}

	for _, tc := range []struct {
		name      string
		required  string
		existing  string
		wantCheck bool
		wantErr   bool
	}{
		{name: "no decommission asked: no precondition", required: ""},
		{name: "asking on a Service without the label", required: "false", existing: "", wantCheck: true},
		{name: "asking again on a Service still leaving", required: "false", existing: "false", wantCheck: true},
		{name: "asking again after the sidecar finished is refused", required: "false", existing: "true", wantCheck: true, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			check := keepsDecommissionProgress(service(tc.required))
			if (check != nil) != tc.wantCheck {
				t.Fatalf("precondition present = %v, want %v", check != nil, tc.wantCheck)
			}
			if check == nil {
				return
			}
			err := check(service(tc.existing))
			if tc.wantErr != (err != nil) || (err != nil && !errors.Is(err, errDecommissionMovedOn)) {
				t.Errorf("precondition = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}
