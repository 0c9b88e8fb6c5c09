package resourceapply

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestHashIsDeterministicAndSensitive(t *testing.T) {
	t.Parallel()

	base, err := Hash(newTestStatefulSet())
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	tt := []struct {
		name     string
		obj      any
		wantSame bool
	}{
		{
			name:     "the same object built again",
			obj:      newTestStatefulSet(),
			wantSame: true,
		},
		{
			name: "maps filled in another order",
			obj: func() any {
				sts := newTestStatefulSet()
				sts.Labels = map[string]string{}
				sts.Labels["scylla/cluster"] = "basic"
				sts.Labels["app.kubernetes.io/name"] = "scylla"
				return sts
			}(),
			wantSame: true,
		},
		{
			name: "another image",
			obj: func() any {
				sts := newTestStatefulSet()
				sts.Spec.Template.Spec.Containers[0].Image = "other"
				return sts
			}(),
		},
		{
			name: "another label value",
			obj: func() any {
				sts := newTestStatefulSet()
				sts.Labels["scylla/cluster"] = "other"
				return sts
			}(),
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := Hash(tc.obj)
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if (got == base) != tc.wantSame {
				t.Errorf("expected same hash: %v; got %q for base %q", tc.wantSame, got, base)
			}
		})
	}
}

func TestHashRejectsWhatJSONCannotEncode(t *testing.T) {
	t.Parallel()

	_, err := Hash(map[string]any{"f": func() {}})
	if want := "can't hash map[string]interface {}: json: unsupported type: func()"; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if _, err := Hash(&corev1.Service{}); err != nil {
		t.Errorf("unexpected error for an empty Service: %v", err)
	}
}
