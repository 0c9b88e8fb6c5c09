// Package operator holds the cobra commands of the scylla-operator binary: one subcommand per program.
package operator

import (
	"flag"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

// NewScyllaOperatorCommand returns the root command of the scylla-operator binary.
func NewScyllaOperatorCommand(streams genericclioptions.IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "scylla-operator",
		Short: "Run ScyllaDB on Kubernetes.",
		Long: "scylla-operator runs the programs that manage ScyllaDB clusters on Kubernetes: " +
			"the operator, the manager-controller and the sidecar inside every ScyllaDB pod.",
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every subcommand reads its unset flags from SCYLLA_OPERATOR_* environment variables.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return genericclioptions.ReadFlagsFromEnv(cmd)
		},
	}
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)

	klogFlags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(klogFlags)
	cmd.PersistentFlags().AddGoFlagSet(klogFlags)

	cmd.AddCommand(NewVersionCommand(streams))
	cmd.AddCommand(NewOperatorCommand())
	cmd.AddCommand(NewManagerControllerCommand())
	cmd.AddCommand(NewSidecarCommand())
	cmd.AddCommand(NewWebhookCommand())
	cmd.AddCommand(NewSysctlCommand(streams))

	return cmd
}
