package operator

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/sysctl"
)

// SysctlOptions are the options of the sysctl subcommand, which sets kernel parameters before ScyllaDB starts: it
// runs as a privileged init container of the ScyllaDB pods of a ScyllaCluster with spec.sysctls.
type SysctlOptions struct {
	genericclioptions.IOStreams

	// ProcSysDir is where the kernel parameters are; tests point it elsewhere.
	ProcSysDir string

	settings []sysctl.Setting
}

// NewSysctlOptions returns SysctlOptions with their defaults.
func NewSysctlOptions(streams genericclioptions.IOStreams) *SysctlOptions {
	return &SysctlOptions{IOStreams: streams, ProcSysDir: sysctl.ProcSysDir}
}

// AddFlags registers the options' flags.
func (o *SysctlOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ProcSysDir, "proc-sys-dir", o.ProcSysDir, "Directory of the kernel parameters.")
}

// Complete parses the settings, given as arguments.
func (o *SysctlOptions) Complete(args []string) error {
	settings, err := sysctl.ParseAll(args)
	if err != nil {
		return err
	}
	o.settings = settings
	return nil
}

// Validate rejects options the command can't run with.
func (o *SysctlOptions) Validate() error {
	if len(o.ProcSysDir) == 0 {
		return errors.New("--proc-sys-dir must not be empty")
	}
	if len(o.settings) == 0 {
		return errors.New("at least one key=value setting is required")
	}
	return nil
}

// Run sets the parameters in order and prints what each had and has.
func (o *SysctlOptions) Run() error {
	results, err := sysctl.Set(o.ProcSysDir, o.settings)
	for _, r := range results {
		switch {
		case r.Missing:
			fmt.Fprintf(o.Out, "%s: no such kernel parameter, skipped\n", r.Parameter)
		case r.Written:
			fmt.Fprintf(o.Out, "%s = %s (was %s)\n", r.Parameter, r.Setting.Value, r.Previous)
		default:
			fmt.Fprintf(o.Out, "%s = %s (already)\n", r.Parameter, r.Previous)
		}
	}
	return err
}

// NewSysctlCommand returns the sysctl subcommand.
func NewSysctlCommand(streams genericclioptions.IOStreams) *cobra.Command {
	o := NewSysctlOptions(streams)
	cmd := &cobra.Command{
		Use:   "sysctl KEY=VALUE...",
		Short: "Set kernel parameters, as sysctl -w does, before ScyllaDB starts.",
		Long: "sysctl sets each kernel parameter to its value, in order, through /proc/sys, and stops at the first it " +
			"can't set. A '*' in a key matches any name (net.ipv4.conf.*.rp_filter). A parameter that already has its " +
			"value is not written; one the kernel does not have is skipped, as sysctl -e does. It runs as a privileged " +
			"init container of the ScyllaDB pods of a ScyllaCluster with spec.sysctls.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run()
		},
	}
	o.AddFlags(cmd)
	return cmd
}
