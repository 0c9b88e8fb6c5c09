// Package genericclioptions holds what every subcommand of scylla-operator shares: IO streams and reading flags
// from the environment.
package genericclioptions

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// EnvPrefix is the prefix of the environment variables that set flags: --concurrent-syncs is read from
// SCYLLA_OPERATOR_CONCURRENT_SYNCS.
const EnvPrefix = "SCYLLA_OPERATOR"

// EnvVarName returns the environment variable that sets the flag with the given name.
func EnvVarName(flagName string) string {
	return EnvPrefix + "_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flagName))
}

// ReadFlagsFromEnv sets every flag of cmd that was not given on the command line from its environment variable,
// if that is set. A value the flag does not accept is an error naming both the variable and the flag.
func ReadFlagsFromEnv(cmd *cobra.Command) error {
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed {
			return
		}
		name := EnvVarName(f.Name)
		v, ok := os.LookupEnv(name)
		if !ok {
			return
		}
		if err := cmd.Flags().Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("can't set flag --%s from environment variable %s: %w", f.Name, name, err))
		}
	})
	return utilerrors.NewAggregate(errs)
}
