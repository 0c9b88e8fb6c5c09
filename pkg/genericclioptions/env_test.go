package genericclioptions

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestEnvVarName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ flag, want string }{
		{flag: "concurrent-syncs", want: "SCYLLA_OPERATOR_CONCURRENT_SYNCS"},
		{flag: "kubeconfig", want: "SCYLLA_OPERATOR_KUBECONFIG"},
		{flag: "leader-election.namespace", want: "SCYLLA_OPERATOR_LEADER_ELECTION_NAMESPACE"},
	} {
		if got := EnvVarName(tc.flag); got != tc.want {
			t.Errorf("EnvVarName(%q) = %q, want %q", tc.flag, got, tc.want)
		}
	}
}

func newTestCommand(workers *int, name *string) *cobra.Command {
	cmd := &cobra.Command{Use: "test"}
	cmd.Flags().IntVar(workers, "concurrent-syncs", 5, "")
	cmd.Flags().StringVar(name, "image", "", "")
	return cmd
}

func TestReadFlagsFromEnv(t *testing.T) {
	t.Run("environment sets flags that were not given", func(t *testing.T) {
		t.Setenv("SCYLLA_OPERATOR_CONCURRENT_SYNCS", "7")
		t.Setenv("SCYLLA_OPERATOR_IMAGE", "from-env")
		var workers int
		var image string
		cmd := newTestCommand(&workers, &image)
		if err := cmd.Flags().Parse([]string{"--image=from-flag"}); err != nil {
			t.Fatal(err)
		}
		if err := ReadFlagsFromEnv(cmd); err != nil {
			t.Fatal(err)
		}
		if workers != 7 {
			t.Errorf("concurrent-syncs = %d, want 7 from the environment", workers)
		}
		if image != "from-flag" {
			t.Errorf("image = %q, want the command-line value to win", image)
		}
	})

	t.Run("a value the flag rejects is an error naming the variable", func(t *testing.T) {
		t.Setenv("SCYLLA_OPERATOR_CONCURRENT_SYNCS", "many")
		var workers int
		var image string
		cmd := newTestCommand(&workers, &image)
		err := ReadFlagsFromEnv(cmd)
		if err == nil || !strings.Contains(err.Error(), "SCYLLA_OPERATOR_CONCURRENT_SYNCS") {
			t.Fatalf("want an error naming SCYLLA_OPERATOR_CONCURRENT_SYNCS, got %v", err)
		}
	})
}
