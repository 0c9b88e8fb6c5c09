package genericclioptions

import (
	"fmt"
	"math"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/scyllakube/scylla-operator/pkg/version"
)

// ClientConfig holds the flags that say how a program reaches the Kubernetes API server.
type ClientConfig struct {
	Kubeconfig string
	QPS        float32
	Burst      int

	// ProgramName makes the user agent distinct per program, so the API server's audit log tells them apart.
	ProgramName string

	// RestConfig is set by Complete.
	RestConfig *rest.Config
}

// NewClientConfig returns a ClientConfig with defaults for the named program.
func NewClientConfig(programName string) ClientConfig {
	return ClientConfig{
		QPS:         50,
		Burst:       75,
		ProgramName: programName,
	}
}

// AddFlags registers the client flags.
func (c *ClientConfig) AddFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "Path to a kubeconfig file. Empty means the in-cluster configuration.")
	cmd.Flags().Float32Var(&c.QPS, "qps", c.QPS, "Maximum queries per second to the API server.")
	cmd.Flags().IntVar(&c.Burst, "burst", c.Burst, "Maximum burst of queries to the API server.")
}

// Validate rejects client flags that can't work.
func (c *ClientConfig) Validate() error {
	if !(c.QPS > 0) || math.IsInf(float64(c.QPS), 0) {
		// NaN compares false with everything, so "not greater than 0" also refuses it.
		return fmt.Errorf("--qps must be greater than 0 and finite, got %v", c.QPS)
	}
	if c.Burst < 1 {
		return fmt.Errorf("--burst must be at least 1, got %d", c.Burst)
	}
	return nil
}

// Complete loads the REST configuration from the kubeconfig, or from the pod's service account when none is given.
func (c *ClientConfig) Complete() error {
	var err error
	if len(c.Kubeconfig) != 0 {
		c.RestConfig, err = clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig},
			&clientcmd.ConfigOverrides{},
		).ClientConfig()
		if err != nil {
			return fmt.Errorf("can't load kubeconfig %q: %w", c.Kubeconfig, err)
		}
	} else {
		c.RestConfig, err = rest.InClusterConfig()
		if err != nil {
			return fmt.Errorf("can't load the in-cluster configuration (use --kubeconfig outside a cluster): %w", err)
		}
	}
	c.RestConfig.QPS = c.QPS
	c.RestConfig.Burst = c.Burst
	c.RestConfig.UserAgent = UserAgent(c.ProgramName)
	return nil
}

// UserAgent returns the user agent of a program: "scylla-operator-<program>/<version>".
func UserAgent(programName string) string {
	return fmt.Sprintf("scylla-operator-%s/%s", programName, version.Get().GitVersion)
}
