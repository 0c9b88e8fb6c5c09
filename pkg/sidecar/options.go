package sidecar

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/kubernetes"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

// Defaults of the flags; doc.go describes each flag.
const (
	DefaultScyllaDBEntrypoint       = "/docker-entrypoint.py"
	DefaultScyllaDBConfigDir        = "/etc/scylla"
	DefaultScyllaDBBaseConfigPath   = "/etc/scylla/scylla.yaml"
	DefaultScyllaDBDataDir          = "/var/lib/scylla"
	DefaultScyllaDBAPIAddress       = "localhost:10000"
	DefaultProbesAddress            = ":8080"
	DefaultStartupTimeout           = 10 * time.Minute
	defaultPollInterval             = 2 * time.Second
	maxInterfaceNameLength          = 15
	scyllaDBConfigFileName          = "scylla.yaml"
	scyllaDBRackDCPropertiesName    = "cassandra-rackdc.properties"
	scyllaDBConfigDirEnv            = "SCYLLA_CONF"
	decommissionedMarkerFileName    = "scylla-operator-decommissioned"
	decommissioningMarkerFileName   = "scylla-operator-decommissioning"
	joinedMarkerFileName            = "scylla-operator-joined"
	defaultDecommissionPollInterval = 5 * time.Second
	defaultDecommissionRetryCap     = 5 * time.Minute
	// childOutputWaitDelay bounds how long the sidecar reads ScyllaDB's output after ScyllaDB exited, while processes
	// it started still hold it open.
	childOutputWaitDelay = 5 * time.Second
)

// PodIPFlags are the flags of one address's Pod IP options.
type PodIPFlags struct {
	Source        string
	InterfaceName string
}

// Options are the sidecar's flags and what is derived from them.
type Options struct {
	ClientConfig genericclioptions.ClientConfig

	PodNamespace      string
	PodName           string
	MemberServiceName string

	ClusterName   string
	Datacenter    string
	Rack          string
	ExternalSeeds []string

	BroadcastNodesType    string
	BroadcastNodesPodIP   PodIPFlags
	BroadcastClientsType  string
	BroadcastClientsPodIP PodIPFlags
	ListenNodesType       string
	ListenNodesPodIP      PodIPFlags
	ListenClientsType     string
	ListenClientsPodIP    PodIPFlags
	IPFamily              string
	HostNetworking        bool

	CPUCount                 int
	DeveloperMode            bool
	ScyllaDBExtraArgs        string
	ScyllaDBEntrypoint       string
	ScyllaDBConfigDir        string
	ScyllaDBBaseConfigPath   string
	ScyllaDBCustomConfigPath string
	ScyllaDBDataDir          string
	ScyllaDBAPIAddress       string

	ProbesAddress string
	// Profiling also serves net/http/pprof's profiles on ProbesAddress. Off by default: that address is reachable
	// on the Pod IP from the whole Pod network, and the profiles expose the sidecar's memory and command line.
	Profiling      bool
	StartupTimeout time.Duration
	TLS            TLSFlags

	// Set by Validate.
	addressOptions AddressOptions
	tlsSettings    TLSSettings
	extraArgs      []string
	apiHost        string
	apiPort        int

	// Set by Complete, or by tests before it.
	kubeClient kubernetes.Interface

	// Seams for tests; NewOptions sets the real ones.
	interfaces               InterfaceAddressLister
	pollInterval             time.Duration
	decommissionPollInterval time.Duration
	decommissionRetryCap     time.Duration
	probesListener           net.Listener
	signals                  <-chan os.Signal
	childStdout, childStderr *os.File
	childEnv                 []string
	// reapOrphans reaps the zombies of processes re-parented to the sidecar: set when it is PID 1 or a subreaper.
	reapOrphans bool
}

// NewOptions returns Options with the defaults.
func NewOptions() *Options {
	status := PodIPFlags{Source: string(PodIPSourceStatus)}
	return &Options{
		ClientConfig:             genericclioptions.NewClientConfig("sidecar"),
		BroadcastNodesType:       string(BroadcastServiceClusterIP),
		BroadcastNodesPodIP:      status,
		BroadcastClientsType:     string(BroadcastServiceClusterIP),
		BroadcastClientsPodIP:    status,
		ListenNodesType:          string(ListenAny),
		ListenNodesPodIP:         status,
		ListenClientsType:        string(ListenAny),
		ListenClientsPodIP:       status,
		IPFamily:                 string(IPv4),
		ScyllaDBEntrypoint:       DefaultScyllaDBEntrypoint,
		ScyllaDBConfigDir:        DefaultScyllaDBConfigDir,
		ScyllaDBBaseConfigPath:   DefaultScyllaDBBaseConfigPath,
		ScyllaDBDataDir:          DefaultScyllaDBDataDir,
		ScyllaDBAPIAddress:       DefaultScyllaDBAPIAddress,
		ProbesAddress:            DefaultProbesAddress,
		StartupTimeout:           DefaultStartupTimeout,
		interfaces:               LocalInterfaces{},
		pollInterval:             defaultPollInterval,
		decommissionPollInterval: defaultDecommissionPollInterval,
		decommissionRetryCap:     defaultDecommissionRetryCap,
		childStdout:              os.Stdout,
		childStderr:              os.Stderr,
		childEnv:                 os.Environ(),
		reapOrphans:              adoptsOrphans(),
	}
}

func addPodIPFlags(cmd *cobra.Command, prefix, what string, f *PodIPFlags) {
	cmd.Flags().StringVar(&f.Source, prefix+"-pod-ip-source", f.Source,
		fmt.Sprintf("Where the Pod IP for %s comes from when its type is PodIP: Status (status.podIPs) or Interface.", what))
	cmd.Flags().StringVar(&f.InterfaceName, prefix+"-pod-ip-interface-name", f.InterfaceName,
		fmt.Sprintf("The network interface whose address is the Pod IP for %s; required with source Interface.", what))
}

// AddFlags registers the sidecar's flags. Each is also read from SCYLLA_OPERATOR_<FLAG_NAME> (see doc.go).
func (o *Options) AddFlags(cmd *cobra.Command) {
	o.ClientConfig.AddFlags(cmd)
	fs := cmd.Flags()
	fs.StringVar(&o.PodNamespace, "pod-namespace", o.PodNamespace, "Namespace of this Pod and its member Service (downward API metadata.namespace).")
	fs.StringVar(&o.PodName, "pod-name", o.PodName, "Name of this Pod (downward API metadata.name).")
	fs.StringVar(&o.MemberServiceName, "member-service-name", o.MemberServiceName, "Name of this node's member Service.")

	fs.StringVar(&o.ClusterName, "cluster-name", o.ClusterName, "ScyllaDB cluster name (cluster_name); equal in every datacenter of the cluster.")
	fs.StringVar(&o.Datacenter, "datacenter", o.Datacenter, "ScyllaDB datacenter name of this node.")
	fs.StringVar(&o.Rack, "rack", o.Rack, "ScyllaDB rack name of this node.")
	fs.StringSliceVar(&o.ExternalSeeds, "external-seeds", o.ExternalSeeds, "Seeds outside this datacenter (IPs or DNS names), comma-separated or repeated (spec.externalSeeds).")

	fs.StringVar(&o.BroadcastNodesType, "broadcast-nodes-type", o.BroadcastNodesType, "Source of broadcast_address: PodIP, ServiceClusterIP or ServiceLoadBalancerIngressIP (alias ServiceLoadBalancerIngress).")
	addPodIPFlags(cmd, "broadcast-nodes", "broadcast_address", &o.BroadcastNodesPodIP)
	fs.StringVar(&o.BroadcastClientsType, "broadcast-clients-type", o.BroadcastClientsType, "Source of broadcast_rpc_address: PodIP, ServiceClusterIP or ServiceLoadBalancerIngressIP (alias ServiceLoadBalancerIngress).")
	addPodIPFlags(cmd, "broadcast-clients", "broadcast_rpc_address", &o.BroadcastClientsPodIP)
	fs.StringVar(&o.ListenNodesType, "listen-nodes-type", o.ListenNodesType, "Source of listen_address: Any (the family's wildcard) or PodIP.")
	addPodIPFlags(cmd, "listen-nodes", "listen_address", &o.ListenNodesPodIP)
	fs.StringVar(&o.ListenClientsType, "listen-clients-type", o.ListenClientsType, "Source of rpc_address: Any (the family's wildcard) or PodIP.")
	addPodIPFlags(cmd, "listen-clients", "rpc_address", &o.ListenClientsPodIP)
	fs.StringVar(&o.IPFamily, "ip-family", o.IPFamily, "IP family of every address: IPv4 or IPv6.")
	fs.BoolVar(&o.HostNetworking, "host-networking", o.HostNetworking, "The Pod uses the host's network; the node-to-node address must then be the Pod IP.")

	fs.IntVar(&o.CPUCount, "cpu-count", o.CPUCount, "CPUs ScyllaDB uses (--smp); 0 leaves it to ScyllaDB.")
	fs.BoolVar(&o.DeveloperMode, "developer-mode", o.DeveloperMode, "Run ScyllaDB in developer mode.")
	fs.StringVar(&o.ScyllaDBExtraArgs, "scylladb-extra-args", o.ScyllaDBExtraArgs, "Extra ScyllaDB arguments, split like a shell would (spec.scyllaArgs); those overriding sidecar-owned settings are dropped and logged.")
	fs.StringVar(&o.ScyllaDBEntrypoint, "scylladb-entrypoint", o.ScyllaDBEntrypoint, "The program that starts ScyllaDB, run as the sidecar's child.")
	fs.StringVar(&o.ScyllaDBConfigDir, "scylladb-config-dir", o.ScyllaDBConfigDir, "Directory the sidecar writes scylla.yaml and cassandra-rackdc.properties to; passed to ScyllaDB as SCYLLA_CONF.")
	fs.StringVar(&o.ScyllaDBBaseConfigPath, "scylladb-base-config-path", o.ScyllaDBBaseConfigPath, "The image's scylla.yaml, read before it is overwritten; empty for none.")
	fs.StringVar(&o.ScyllaDBCustomConfigPath, "scylladb-custom-config-path", o.ScyllaDBCustomConfigPath, "The user's scylla.yaml, merged over the base; empty for none.")
	fs.StringVar(&o.ScyllaDBDataDir, "scylladb-data-dir", o.ScyllaDBDataDir, "ScyllaDB's workdir, on the node's persistent volume.")
	fs.StringVar(&o.ScyllaDBAPIAddress, "scylladb-api-address", o.ScyllaDBAPIAddress, "host:port of ScyllaDB's REST API, set as api_address and api_port.")

	fs.StringVar(&o.ProbesAddress, "probes-address", o.ProbesAddress, "host:port serving /healthz and /readyz.")
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling, "Also serve net/http/pprof's profiles under /debug/pprof/ on --probes-address; they expose the sidecar's memory to whoever reaches that address.")
	fs.DurationVar(&o.StartupTimeout, "startup-timeout", o.StartupTimeout, "How long to wait at start for what the configuration needs (a Pod IP, a load balancer ingress, another node's address).")
	o.TLS.addFlags(cmd)
}

// SetSignals sets the channel of signals the sidecar receives. Before ScyllaDB starts SIGTERM and SIGINT stop the
// sidecar; afterwards every signal is forwarded to ScyllaDB.
func (o *Options) SetSignals(signals <-chan os.Signal) {
	o.signals = signals
}

// Complete builds the Kubernetes client unless one was set.
func (o *Options) Complete() error {
	if o.kubeClient != nil {
		return nil
	}
	if err := o.ClientConfig.Complete(); err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(o.ClientConfig.RestConfig)
	if err != nil {
		return fmt.Errorf("can't create the Kubernetes client: %w", err)
	}
	o.kubeClient = client
	return nil
}

func required(errs *[]error, flag, value string) {
	if strings.TrimSpace(value) == "" {
		*errs = append(*errs, fmt.Errorf("--%s is required", flag))
	}
}

// validatePodIP checks one address's Pod IP flags and returns them parsed.
func validatePodIP(errs *[]error, prefix string, isPodIP bool, f PodIPFlags) PodIPOptions {
	src, err := ParsePodIPSource(f.Source)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("--%s-pod-ip-source %w", prefix, err))
		return PodIPOptions{}
	}
	switch {
	case !isPodIP && (src != PodIPSourceStatus || f.InterfaceName != ""):
		*errs = append(*errs, fmt.Errorf("--%s-pod-ip-source and --%s-pod-ip-interface-name apply only to --%s-type=PodIP", prefix, prefix, prefix))
	case src == PodIPSourceInterface && f.InterfaceName == "":
		*errs = append(*errs, fmt.Errorf("--%s-pod-ip-interface-name is required with --%s-pod-ip-source=Interface", prefix, prefix))
	case src == PodIPSourceStatus && f.InterfaceName != "":
		*errs = append(*errs, fmt.Errorf("--%s-pod-ip-interface-name applies only to --%s-pod-ip-source=Interface", prefix, prefix))
	case len(f.InterfaceName) > maxInterfaceNameLength || strings.ContainsAny(f.InterfaceName, "/ \t\n"):
		*errs = append(*errs, fmt.Errorf("--%s-pod-ip-interface-name %q is not a valid interface name", prefix, f.InterfaceName))
	}
	return PodIPOptions{Source: src, InterfaceName: f.InterfaceName}
}

func validateBroadcast(errs *[]error, prefix, typ string, f PodIPFlags) BroadcastOptions {
	t, err := ParseBroadcastAddressType(typ)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("--%s-type %w", prefix, err))
	}
	return BroadcastOptions{Type: t, PodIP: validatePodIP(errs, prefix, t == BroadcastPodIP, f)}
}

func validateListen(errs *[]error, prefix, typ string, f PodIPFlags) ListenOptions {
	t, err := ParseListenAddressType(typ)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("--%s-type %w", prefix, err))
	}
	return ListenOptions{Type: t, PodIP: validatePodIP(errs, prefix, t == ListenPodIP, f)}
}

func validateHostPort(errs *[]error, flag, value string, hostRequired bool) (string, int) {
	host, portString, err := net.SplitHostPort(value)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("--%s must be host:port, got %q: %w", flag, value, err))
		return "", 0
	}
	// Port 0 would listen on a port picked at random, which neither the kubelet's probes nor ScyllaDB's clients know.
	port, err := strconv.Atoi(portString)
	if err != nil || port < 1 || port > 65535 {
		*errs = append(*errs, fmt.Errorf("--%s has an invalid port %q", flag, portString))
	}
	if hostRequired && host == "" {
		*errs = append(*errs, fmt.Errorf("--%s needs a host, got %q", flag, value))
	}
	return host, port
}

// Validate checks every flag and keeps their parsed forms. It reports all problems at once.
func (o *Options) Validate() error {
	var errs []error
	if err := o.ClientConfig.Validate(); err != nil {
		errs = append(errs, err)
	}
	for flag, value := range map[string]string{
		"pod-namespace": o.PodNamespace, "pod-name": o.PodName, "member-service-name": o.MemberServiceName,
		"cluster-name": o.ClusterName, "scylladb-entrypoint": o.ScyllaDBEntrypoint,
		"scylladb-config-dir": o.ScyllaDBConfigDir, "scylladb-data-dir": o.ScyllaDBDataDir,
	} {
		required(&errs, flag, value)
	}
	if len(o.PodName) != 0 && len(o.MemberServiceName) != 0 && o.PodName != o.MemberServiceName {
		// Every node finds its peers' Pods by their member Services' names (OrderMembers, ChooseSeeds).
		errs = append(errs, fmt.Errorf("--member-service-name %q must be the Pod's name, --pod-name %q: a node's member Service is named after its Pod", o.MemberServiceName, o.PodName))
	}
	for flag, value := range map[string]string{"datacenter": o.Datacenter, "rack": o.Rack} {
		required(&errs, flag, value)
		// They are written to a properties file, one per line.
		if strings.ContainsAny(value, "=:\n\r\\ \t#!") {
			errs = append(errs, fmt.Errorf("--%s %q must not contain whitespace or any of = : \\ # !", flag, value))
		}
	}
	for _, s := range o.ExternalSeeds {
		if err := ValidateSeed(s); err != nil {
			errs = append(errs, fmt.Errorf("--external-seeds: %w", err))
		}
	}

	family, err := ParseIPFamily(o.IPFamily)
	if err != nil {
		errs = append(errs, fmt.Errorf("--ip-family %w", err))
	}
	o.addressOptions = AddressOptions{
		BroadcastNodes:   validateBroadcast(&errs, "broadcast-nodes", o.BroadcastNodesType, o.BroadcastNodesPodIP),
		BroadcastClients: validateBroadcast(&errs, "broadcast-clients", o.BroadcastClientsType, o.BroadcastClientsPodIP),
		ListenNodes:      validateListen(&errs, "listen-nodes", o.ListenNodesType, o.ListenNodesPodIP),
		ListenClients:    validateListen(&errs, "listen-clients", o.ListenClientsType, o.ListenClientsPodIP),
		IPFamily:         family,
		HostNetworking:   o.HostNetworking,
	}
	if o.HostNetworking && o.addressOptions.BroadcastNodes.Type != BroadcastPodIP {
		errs = append(errs, fmt.Errorf("--broadcast-nodes-type must be PodIP with --host-networking, got %q", o.BroadcastNodesType))
	}

	if o.CPUCount < 0 {
		errs = append(errs, fmt.Errorf("--cpu-count must not be negative, got %d", o.CPUCount))
	}
	o.extraArgs, err = SplitArgs(o.ScyllaDBExtraArgs)
	if err != nil {
		errs = append(errs, fmt.Errorf("--scylladb-extra-args: %w", err))
	}
	o.apiHost, o.apiPort = validateHostPort(&errs, "scylladb-api-address", o.ScyllaDBAPIAddress, true)
	if o.probesListener == nil {
		validateHostPort(&errs, "probes-address", o.ProbesAddress, false)
	}
	if o.StartupTimeout <= 0 {
		errs = append(errs, fmt.Errorf("--startup-timeout must be positive, got %v", o.StartupTimeout))
	}
	var tlsErrs []error
	o.tlsSettings, tlsErrs = o.TLS.settings()
	errs = append(errs, tlsErrs...)
	return utilerrors.NewAggregate(errs)
}
