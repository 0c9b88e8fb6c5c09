package fakescylladb

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"go.yaml.in/yaml/v3"
)

// ConfigDirEnv names the directory holding scylla.yaml and cassandra-rackdc.properties, as it does for ScyllaDB.
const ConfigDirEnv = "SCYLLA_CONF"

// DefaultConfigDir is where ScyllaDB looks for its configuration when ConfigDirEnv is unset.
const DefaultConfigDir = "/etc/scylla"

// Settings are the values ScyllaDB would run with after applying its command line over scylla.yaml and reading
// cassandra-rackdc.properties.
type Settings struct {
	ClusterName         string   `json:"clusterName"`
	ListenAddress       string   `json:"listenAddress"`
	RPCAddress          string   `json:"rpcAddress"`
	BroadcastAddress    string   `json:"broadcastAddress"`
	BroadcastRPCAddress string   `json:"broadcastRPCAddress"`
	Seeds               []string `json:"seeds"`
	APIAddress          string   `json:"apiAddress"`
	APIPort             int      `json:"apiPort"`
	EndpointSnitch      string   `json:"endpointSnitch"`
	Datacenter          string   `json:"datacenter"`
	Rack                string   `json:"rack"`
	Workdir             string   `json:"workdir"`
	SMP                 string   `json:"smp,omitempty"`
	DeveloperMode       string   `json:"developerMode,omitempty"`
	// ReplaceNodeFirstBoot is ScyllaDB's replace_node_first_boot: the host ID of a dead node this node is to take
	// the place of when it first boots.
	ReplaceNodeFirstBoot string `json:"replaceNodeFirstBoot,omitempty"`
}

// Invocation is everything one start of the fake was given.
type Invocation struct {
	Args      []string          `json:"args"`
	ConfigDir string            `json:"configDir"`
	Config    map[string]any    `json:"config"`
	RackDC    map[string]string `json:"rackDC"`
	Settings  Settings          `json:"settings"`
}

// ParseInvocation reads the command line the way ScyllaDB's image entrypoint and ScyllaDB would, and the
// configuration files in configDir (empty means DefaultConfigDir). Options may be given as --name=value or
// --name value, with dashes or underscores; a later option overrides an earlier one and the command line overrides
// scylla.yaml. Options the fake doesn't know are recorded and otherwise ignored.
func ParseInvocation(args []string, configDir string) (*Invocation, error) {
	if configDir == "" {
		configDir = DefaultConfigDir
	}
	inv := &Invocation{Args: append([]string{}, args...), ConfigDir: configDir, Config: map[string]any{}}

	yamlPath := filepath.Join(configDir, "scylla.yaml")
	data, err := os.ReadFile(yamlPath)
	if err != nil {
		return nil, fmt.Errorf("can't read ScyllaDB configuration: %w", err)
	}
	if err := yaml.Unmarshal(data, &inv.Config); err != nil {
		return nil, fmt.Errorf("can't parse ScyllaDB configuration %q: %w", yamlPath, err)
	}
	if inv.Config == nil {
		inv.Config = map[string]any{}
	}

	inv.RackDC, err = readProperties(filepath.Join(configDir, "cassandra-rackdc.properties"))
	if err != nil {
		return nil, err
	}

	opts, err := parseOptions(args)
	if err != nil {
		return nil, err
	}

	s := &inv.Settings
	s.ClusterName = pick(opts, inv.Config, "cluster-name", "Test Cluster")
	s.ListenAddress = pick(opts, inv.Config, "listen-address", "localhost")
	s.RPCAddress = pick(opts, inv.Config, "rpc-address", "localhost")
	s.BroadcastAddress = pick(opts, inv.Config, "broadcast-address", s.ListenAddress)
	s.BroadcastRPCAddress = pick(opts, inv.Config, "broadcast-rpc-address", s.RPCAddress)
	s.APIAddress = pick(opts, inv.Config, "api-address", "localhost")
	s.EndpointSnitch = pick(opts, inv.Config, "endpoint-snitch", "SimpleSnitch")
	s.Workdir = pick(opts, inv.Config, "workdir", "/var/lib/scylla")
	s.SMP = opts["smp"]
	s.DeveloperMode = pick(opts, inv.Config, "developer-mode", "")
	port := pick(opts, inv.Config, "api-port", "10000")
	s.APIPort, err = strconv.Atoi(port)
	if err != nil || s.APIPort < 0 || s.APIPort > 65535 {
		return nil, fmt.Errorf("invalid api_port %q", port)
	}
	s.Seeds, err = seedsOf(opts, inv.Config)
	if err != nil {
		return nil, err
	}
	s.ReplaceNodeFirstBoot, err = replaceNodeFirstBootOf(opts, inv.Config)
	if err != nil {
		return nil, err
	}
	s.Datacenter = inv.RackDC["dc"]
	s.Rack = inv.RackDC["rack"]
	if s.EndpointSnitch == "GossipingPropertyFileSnitch" && (s.Datacenter == "" || s.Rack == "") {
		return nil, fmt.Errorf("GossipingPropertyFileSnitch needs dc and rack in cassandra-rackdc.properties, got %v", inv.RackDC)
	}
	return inv, nil
}

// unsupportedReplaceOptions are ScyllaDB's replace options that name the dead node by address. The fake refuses them
// rather than start as a fresh node, so that a caller passing them learns at once that they aren't honoured.
var unsupportedReplaceOptions = []string{"replace-address", "replace-address-first-boot"}

// replaceNodeFirstBootOf reads replace_node_first_boot, which must be empty or a host ID (a UUID), as ScyllaDB
// refuses to start with anything else.
func replaceNodeFirstBootOf(opts map[string]string, config map[string]any) (string, error) {
	for _, name := range unsupportedReplaceOptions {
		if v := pick(opts, config, name, ""); v != "" {
			return "", fmt.Errorf("%s=%q: the fake ScyllaDB replaces nodes by host ID only; use replace_node_first_boot", strings.ReplaceAll(name, "-", "_"), v)
		}
	}
	v := strings.TrimSpace(pick(opts, config, "replace-node-first-boot", ""))
	if v == "" {
		return "", nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		return "", fmt.Errorf("invalid replace_node_first_boot %q: it must be the host ID (a UUID) of the node to replace: %w", v, err)
	}
	return id.String(), nil
}

// parseOptions turns "--a=b", "--a b" and "--flag" into a map keyed by the dashed option name.
func parseOptions(args []string) (map[string]string, error) {
	opts := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
			return nil, fmt.Errorf("unexpected positional argument %q", a)
		}
		name := strings.TrimLeft(a, "-")
		value := ""
		if k, v, ok := strings.Cut(name, "="); ok {
			name, value = k, v
		} else if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			value = args[i+1]
			i++
		}
		opts[strings.ReplaceAll(name, "_", "-")] = value
	}
	return opts, nil
}

// pick returns the command-line option, else the scylla.yaml key (dashes turned to underscores), else def.
func pick(opts map[string]string, config map[string]any, name, def string) string {
	if v, ok := opts[name]; ok {
		return v
	}
	if v, ok := config[strings.ReplaceAll(name, "-", "_")]; ok && v != nil {
		return fmt.Sprint(v)
	}
	return def
}

// seedsOf reads --seeds, else seed_provider[0].parameters[0].seeds.
func seedsOf(opts map[string]string, config map[string]any) ([]string, error) {
	raw, ok := opts["seeds"]
	if !ok {
		var err error
		raw, err = seedsFromConfig(config["seed_provider"])
		if err != nil {
			return nil, err
		}
	}
	return SplitList(raw), nil
}

func seedsFromConfig(sp any) (string, error) {
	if sp == nil {
		return "", nil
	}
	providers, ok := sp.([]any)
	if !ok || len(providers) == 0 {
		return "", fmt.Errorf("seed_provider must be a non-empty list, got %v", sp)
	}
	provider, ok := providers[0].(map[string]any)
	if !ok {
		return "", fmt.Errorf("seed_provider[0] must be a map, got %v", providers[0])
	}
	params, ok := provider["parameters"].([]any)
	if !ok || len(params) == 0 {
		return "", fmt.Errorf("seed_provider[0].parameters must be a non-empty list, got %v", provider["parameters"])
	}
	p, ok := params[0].(map[string]any)
	if !ok {
		return "", fmt.Errorf("seed_provider[0].parameters[0] must be a map, got %v", params[0])
	}
	seeds, ok := p["seeds"].(string)
	if !ok {
		return "", fmt.Errorf("seed_provider[0].parameters[0].seeds must be a string, got %v", p["seeds"])
	}
	return seeds, nil
}

// readProperties reads a Java-style properties file of key=value lines; a missing file reads as empty.
func readProperties(path string) (map[string]string, error) {
	props := map[string]string{}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return props, nil
	}
	if err != nil {
		return nil, fmt.Errorf("can't read %q: %w", path, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: expected key=value, got %q", path, n, line)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return props, sc.Err()
}
