package operator

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/serving"
)

// ControllerProgramOptions are the options every controller program (operator, manager-controller) shares: how it
// reaches the API server, leader election, serving, and how many syncs run at once and how often every object is
// synced again.
type ControllerProgramOptions struct {
	genericclioptions.ClientConfig
	LeaderElection genericclioptions.LeaderElection
	Serving        serving.Options

	ConcurrentSyncs int
	ResyncPeriod    time.Duration

	// Set by Complete.
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface
}

// NewControllerProgramOptions returns the shared options with their defaults for the program named program, which
// holds the Lease leaseName while it leads.
func NewControllerProgramOptions(program, leaseName string) ControllerProgramOptions {
	return ControllerProgramOptions{
		ClientConfig:    genericclioptions.NewClientConfig(program),
		LeaderElection:  genericclioptions.NewLeaderElection(leaseName),
		Serving:         serving.NewOptions(":8080"),
		ConcurrentSyncs: 10,
		ResyncPeriod:    12 * time.Hour,
	}
}

// AddFlags registers the shared flags; resyncHelp says what a resync does in this program.
func (o *ControllerProgramOptions) AddFlags(cmd *cobra.Command, resyncHelp string) {
	o.ClientConfig.AddFlags(cmd)
	o.LeaderElection.AddFlags(cmd)
	o.Serving.AddFlags(cmd)
	cmd.Flags().IntVar(&o.ConcurrentSyncs, "concurrent-syncs", o.ConcurrentSyncs, "How many objects of each kind are synced at once.")
	cmd.Flags().DurationVar(&o.ResyncPeriod, "resync-period", o.ResyncPeriod, resyncHelp)
}

// Validate returns every problem with the shared options.
func (o *ControllerProgramOptions) Validate() []error {
	errs := []error{o.ClientConfig.Validate(), o.LeaderElection.Validate(), o.Serving.Validate()}
	if o.ConcurrentSyncs < 1 {
		errs = append(errs, fmt.Errorf("--concurrent-syncs must be at least 1, got %d", o.ConcurrentSyncs))
	}
	if o.ResyncPeriod < time.Minute {
		errs = append(errs, fmt.Errorf("--resync-period must be at least 1m, got %v", o.ResyncPeriod))
	}
	return errs
}

// Complete loads the client configuration and builds the clients.
func (o *ControllerProgramOptions) Complete() error {
	if err := o.ClientConfig.Complete(); err != nil {
		return err
	}
	if err := o.LeaderElection.Complete(); err != nil {
		return err
	}
	var err error
	o.kubeClient, o.scyllaClient, err = newClients(o.RestConfig)
	return err
}

// newClients builds the Kubernetes and scylla.scylladb.com clients of a program.
func newClients(config *rest.Config) (kubernetes.Interface, scyllaclientset.Interface, error) {
	kubeClient, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("can't build the Kubernetes client: %w", err)
	}
	scyllaClient, err := scyllaclientset.NewForConfig(config)
	if err != nil {
		return nil, nil, fmt.Errorf("can't build the scylla.scylladb.com client: %w", err)
	}
	return kubeClient, scyllaClient, nil
}

// controllerProgramOptions are what newControllerProgramCommand runs: a program's options in the kubectl shape.
type controllerProgramOptions interface {
	AddFlags(cmd *cobra.Command)
	Validate() error
	Complete() error
	Run(ctx context.Context) error
}

// newControllerProgramCommand returns the subcommand of a controller program: it validates the flags first (their
// errors need no file and no cluster), completes the options, and runs until SIGINT or SIGTERM.
func newControllerProgramCommand(o controllerProgramOptions, use, short, long string) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return o.Run(ctx)
		},
	}
	o.AddFlags(cmd)
	return cmd
}
