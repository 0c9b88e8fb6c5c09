package operator

import (
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/sidecar"
)

// forwardedSignals are passed on to ScyllaDB once it runs.
var forwardedSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// NewSidecarCommand returns the sidecar subcommand, the entrypoint of the ScyllaDB container. When ScyllaDB exits
// unsuccessfully the process exits with ScyllaDB's code.
func NewSidecarCommand() *cobra.Command {
	o := sidecar.NewOptions()
	cmd := &cobra.Command{
		Use:   "sidecar",
		Short: "Configure and run ScyllaDB in its Pod, serve its probes and decommission it on request.",
		Long: "The sidecar is the ScyllaDB container's entrypoint. It computes the node's addresses and seeds from its Pod " +
			"and member Service, writes ScyllaDB's configuration, runs ScyllaDB as its child, serves /healthz and /readyz, " +
			"records the node's host ID on the member Service and decommissions the node when asked. Every flag can also " +
			"be set through SCYLLA_OPERATOR_<FLAG_NAME>.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Flag errors come first: they need no cluster to report.
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			signals := make(chan os.Signal, 8)
			signal.Notify(signals, forwardedSignals...)
			defer signal.Stop(signals)
			o.SetSignals(signals)

			err := o.Run(cmd.Context())
			var exitErr *sidecar.ExitError
			if errors.As(err, &exitErr) {
				klog.Flush()
				os.Exit(exitErr.Code)
			}
			return err
		},
	}
	o.AddFlags(cmd)
	return cmd
}
