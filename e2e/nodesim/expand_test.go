package nodesim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestExpandFollowsKubeletRules(t *testing.T) {
	t.Parallel()
	env := map[string]string{"POD_NAME": "basic-0", "NS": "scylla", "EMPTY": "", "DOLLAR": "$(NS)"}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "no reference", in: "--rack=a", want: "--rack=a"},
		{name: "defined reference", in: "--pod-name=$(POD_NAME)", want: "--pod-name=basic-0"},
		{name: "two references", in: "$(NS)/$(POD_NAME)", want: "scylla/basic-0"},
		{name: "empty value", in: "x$(EMPTY)y", want: "xy"},
		{name: "undefined reference kept", in: "--x=$(MISSING)", want: "--x=$(MISSING)"},
		{name: "escaped reference", in: "$$(POD_NAME)", want: "$(POD_NAME)"},
		{name: "escaped dollar", in: "a$$b", want: "a$b"},
		{name: "lone dollar", in: "a$b", want: "a$b"},
		{name: "trailing dollar", in: "cost$", want: "cost$"},
		{name: "unterminated reference", in: "$(POD_NAME", want: "$(POD_NAME"},
		{name: "unterminated then escape", in: "$(x $$", want: "$(x $"},
		{name: "empty name kept", in: "$()", want: "$()"},
		{name: "value not expanded again", in: "$(DOLLAR)", want: "$(NS)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := expandAll([]string{tc.in}, env)
			if diff := cmp.Diff([]string{tc.want}, got); diff != "" {
				t.Errorf("expansion of %q differs (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
