package operator

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/version"
)

// VersionOptions are the options of the version subcommand.
type VersionOptions struct {
	genericclioptions.IOStreams

	Output string
}

// NewVersionOptions returns VersionOptions with their defaults.
func NewVersionOptions(streams genericclioptions.IOStreams) *VersionOptions {
	return &VersionOptions{IOStreams: streams}
}

// AddFlags registers the options' flags.
func (o *VersionOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "Output format: empty for text, or 'json'.")
}

// Complete fills in values derived from flags. The version command has none.
func (o *VersionOptions) Complete() error {
	return nil
}

// Validate rejects options the command can't run with.
func (o *VersionOptions) Validate() error {
	switch o.Output {
	case "", "json":
		return nil
	default:
		return fmt.Errorf("--output must be empty or %q, got %q", "json", o.Output)
	}
}

// Run prints the version.
func (o *VersionOptions) Run() error {
	info := version.Get()
	if o.Output == "json" {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	_, err := fmt.Fprintf(o.Out, "scylla-operator %s\n", info)
	return err
}

// NewVersionCommand returns the version subcommand.
func NewVersionCommand(streams genericclioptions.IOStreams) *cobra.Command {
	o := NewVersionOptions(streams)
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, git commit, Go version and build date.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
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
