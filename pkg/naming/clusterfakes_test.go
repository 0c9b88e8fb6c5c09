package naming

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestClusterFakesNames(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		got  string
		want string
	}{
		{
			name: "fake volume name is pvc- and the claim UID",
			got:  FakeVolumeName(types.UID("0b4f9a52-7a0e-4c8e-9a57-1f2d3c4b5a69")),
			want: "pvc-0b4f9a52-7a0e-4c8e-9a57-1f2d3c4b5a69",
		},
		{
			name: "kwok node name holds the zone and the index",
			got:  KwokNodeName("us-east-1a", 2),
			want: "kwok-us-east-1a-2",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, tc.got)
			}
		})
	}
}
