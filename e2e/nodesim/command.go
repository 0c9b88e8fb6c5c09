package nodesim

import (
	"fmt"
	"io"
	"path"

	"github.com/spf13/cobra"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
)

// sidecarSubcommand is the scylla-operator subcommand a ScyllaDB container runs.
const sidecarSubcommand = "sidecar"

// Sidecar flags the simulator sets because a shared host differs from a Pod.
const (
	flagKubeconfig         = "kubeconfig"
	flagProbesAddress      = "probes-address"
	flagScyllaDBAPIAddress = "scylladb-api-address"
	flagScyllaDBEntrypoint = "scylladb-entrypoint"
)

// pathFlags are the sidecar flags that name files or directories inside the container; the simulator maps them onto
// the host through the container's volumes.
var pathFlags = []string{
	"scylladb-config-dir",
	"scylladb-base-config-path",
	"scylladb-custom-config-path",
	"scylladb-data-dir",
}

// commandInput is what the sidecar's command line is made from.
type commandInput struct {
	// Command and Args are the container's, with $(VAR) references still in them.
	Command, Args []string
	// Env is the container's resolved environment.
	Env []envVar
	// FS maps container paths to host paths.
	FS *containerFS
	// SidecarBinary replaces the container's scylla-operator binary; FakeScyllaDBBinary replaces ScyllaDB.
	SidecarBinary, FakeScyllaDBBinary string
	// Kubeconfig is the sidecar's kubeconfig; empty leaves the flag as the Pod has it.
	Kubeconfig string
	// ProbesAddress and APIAddress are this node's loopback host:port for the probes and ScyllaDB's REST API.
	ProbesAddress, APIAddress string
}

// sidecarCommand is a sidecar process to run.
type sidecarCommand struct {
	// Path is the binary.
	Path string
	// Args are the arguments after the program name: the Pod's, expanded, then the simulator's overrides.
	Args []string
	// Overrides are the flags the simulator appended, by name.
	Overrides map[string]string
	// MemberServiceName is the sidecar's --member-service-name.
	MemberServiceName string
}

// buildSidecarCommand turns the scylla container's command into a local sidecar process: the Pod's arguments with
// $(VAR) references expanded from its environment, followed by the flags that must differ on a shared host. A later
// flag wins over an earlier one, so the Pod's own arguments stay as they are.
func buildSidecarCommand(in commandInput) (sidecarCommand, error) {
	env := map[string]string{}
	for _, e := range in.Env {
		env[e.Name] = e.Value
	}
	argv := append(expandAll(in.Command, env), expandAll(in.Args, env)...)
	if len(argv) < 2 || path.Base(argv[0]) != "scylla-operator" || argv[1] != sidecarSubcommand {
		return sidecarCommand{}, fmt.Errorf("the container runs %q, not \"scylla-operator sidecar ...\"", argv)
	}
	args := argv[2:]

	// The sidecar's own flag set tells the flags, their defaults, and how the arguments parse.
	cmd := &cobra.Command{Use: sidecarSubcommand}
	sidecar.NewOptions().AddFlags(cmd)
	fs := cmd.Flags()
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	if err := fs.Parse(args); err != nil {
		return sidecarCommand{}, fmt.Errorf("can't parse the sidecar's arguments %q: %w", args, err)
	}

	overrides := map[string]string{
		flagProbesAddress:      in.ProbesAddress,
		flagScyllaDBAPIAddress: in.APIAddress,
		flagScyllaDBEntrypoint: in.FakeScyllaDBBinary,
	}
	if in.Kubeconfig != "" {
		overrides[flagKubeconfig] = in.Kubeconfig
	}
	// As the sidecar reads a flag: the command line, else its environment variable, else the default.
	flagValue := func(name string) (string, error) {
		f := fs.Lookup(name)
		if f == nil {
			return "", fmt.Errorf("the sidecar has no flag --%s", name)
		}
		if f.Changed {
			return f.Value.String(), nil
		}
		if v, ok := env[genericclioptions.EnvVarName(name)]; ok {
			return v, nil
		}
		return f.DefValue, nil
	}
	memberService, err := flagValue("member-service-name")
	if err != nil {
		return sidecarCommand{}, err
	}
	for _, name := range pathFlags {
		value, err := flagValue(name)
		if err != nil {
			return sidecarCommand{}, err
		}
		if value == "" {
			continue
		}
		host, err := in.FS.hostPath(value)
		if err != nil {
			return sidecarCommand{}, fmt.Errorf("--%s: %w", name, err)
		}
		overrides[name] = host
	}

	out := sidecarCommand{
		Path:              in.SidecarBinary,
		Args:              append([]string{sidecarSubcommand}, args...),
		Overrides:         overrides,
		MemberServiceName: memberService,
	}
	for _, name := range append([]string{flagKubeconfig, flagProbesAddress, flagScyllaDBAPIAddress, flagScyllaDBEntrypoint}, pathFlags...) {
		if v, ok := overrides[name]; ok {
			out.Args = append(out.Args, "--"+name+"="+v)
		}
	}
	return out, nil
}
