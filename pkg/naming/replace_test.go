package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestRackMemberReplacingConditionType(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rack string
		want string
	}{
		{name: "a plain rack name is kept", rack: "us-east-1a", want: "Rack-us-east-1a-MemberReplacing"},
		{name: "a rack name with a space is hashed", rack: "rack a", want: "Rack-h" + Hash5("rack a") + "-MemberReplacing"},
		{name: "a rack name ending with a dash is hashed", rack: "a-", want: "Rack-h" + Hash5("a-") + "-MemberReplacing"},
		{name: "a long rack name is hashed", rack: strings.Repeat("r", 43), want: "Rack-h" + Hash5(strings.Repeat("r", 43)) + "-MemberReplacing"},
		{name: "the longest rack name kept", rack: strings.Repeat("r", 42), want: "Rack-" + strings.Repeat("r", 42) + "-MemberReplacing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := RackMemberReplacingConditionType(tc.rack)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if errs := validation.IsQualifiedName(got); len(errs) != 0 {
				t.Errorf("%q is not a valid condition type: %v", got, errs)
			}
		})
	}
}

func TestRackMemberReplacingConditionTypeTellsRacksApart(t *testing.T) {
	t.Parallel()
	if a, b := RackMemberReplacingConditionType("rack a"), RackMemberReplacingConditionType("rack b"); a == b {
		t.Errorf("racks %q and %q share condition type %q", "rack a", "rack b", a)
	}
}
