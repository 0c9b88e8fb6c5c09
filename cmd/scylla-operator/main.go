// Command scylla-operator runs ScyllaDB on Kubernetes; each program is a subcommand.
package main

import (
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/cmd/operator"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

func main() {
	defer klog.Flush()

	cmd := operator.NewScyllaOperatorCommand(genericclioptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		os.Exit(1)
	}
}
