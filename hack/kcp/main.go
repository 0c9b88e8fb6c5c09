// Command kcp is a multi-call binary holding a whole Kubernetes control plane: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler, plus kubectl, all built from the Go module proxy.
//
// The component is chosen by the basename of argv[0] (so a symlink named "etcd" pointing at kcp runs
// etcd) or, failing that, by argv[1] ("kcp kube-apiserver --secure-port=6443 ...").
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	_ "time/tzdata" // For CronJob time zone support, as in the upstream kube-apiserver and kcm mains.

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // For the JSON log format.
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // For client-go metrics.
	_ "k8s.io/component-base/metrics/prometheus/version"  // For the version metric.
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// components maps a component name to a function that runs it and returns the process exit code. Before it
// is called, os.Args is rewritten to look like the component's own argv: the component name followed by its
// arguments.
var components = map[string]func() int{
	"etcd": func() int {
		// etcdmain.Main exits the process itself on most paths.
		etcdmain.Main(os.Args)
		return 0
	},
	"kube-apiserver": func() int {
		return runCobra(apiserverapp.NewAPIServerCommand())
	},
	"kube-controller-manager": func() int {
		return runCobra(kcmapp.NewControllerManagerCommand())
	},
	"kube-scheduler": func() int {
		return runCobra(schedulerapp.NewSchedulerCommand())
	},
	"kubectl": func() int {
		// As upstream's kubectl main: set the verbosity early so that command construction can log.
		_, _ = logs.GlogSetter(kubectlcmd.GetLogVerbosity(os.Args))
		if err := cli.RunNoErrOutput(kubectlcmd.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
			return 1
		}
		return 0
	},
}

func runCobra(cmd *cobra.Command) int {
	cmd.SetArgs(os.Args[1:])
	return cli.Run(cmd)
}

func componentNames() string {
	names := make([]string, 0, len(components))
	for name := range components {
		names = append(names, name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func main() {
	if run, ok := components[filepath.Base(os.Args[0])]; ok {
		os.Exit(run())
	}
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s <component> [flags...]\ncomponents: %s\n", filepath.Base(os.Args[0]), componentNames())
		os.Exit(2)
	}
	run, ok := components[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "unknown component %q; components: %s\n", os.Args[1], componentNames())
		os.Exit(2)
	}
	os.Args = os.Args[1:]
	os.Exit(run())
}
