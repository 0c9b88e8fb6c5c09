package sidecar

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ScyllaDBSettings are the values the sidecar owns in ScyllaDB's configuration.
type ScyllaDBSettings struct {
	ClusterName   string
	Datacenter    string
	Rack          string
	Addresses     Addresses
	Seeds         []string
	APIAddress    string
	APIPort       int
	Workdir       string
	IPFamily      IPFamily
	CPUCount      int
	DeveloperMode bool
	TLS           TLSSettings
	// ReplaceNodeFirstBoot is the host ID of the node this one replaces, passed as --replace-node-first-boot;
	// empty for none. ScyllaDB honours it on the node's first boot only.
	ReplaceNodeFirstBoot string
}

// SeedProviderClass is the seed provider ScyllaDB is configured with.
const SeedProviderClass = "org.apache.cassandra.locator.SimpleSeedProvider"

// EndpointSnitch reads dc and rack from cassandra-rackdc.properties.
const EndpointSnitch = "GossipingPropertyFileSnitch"

// ownedConfigKeys are the scylla.yaml keys the sidecar sets; a user's custom config can't override them.
// listen_interface and rpc_interface conflict with the addresses and are owned so nobody sets them. So are the
// replace options: a node is replaced through its member Service (ReplaceNodeHostID), and a replace option in the
// datacenter's shared config would apply to the first boot of every new node.
var ownedConfigKeys = []string{
	"api_address", "api_port", "broadcast_address", "broadcast_rpc_address", "cluster_name",
	"enable_ipv6_dns_lookup", "endpoint_snitch", "listen_address", "listen_interface",
	"listen_interface_prefer_ipv6", "replace_address", "replace_address_first_boot", "replace_node_first_boot",
	"rpc_address", "rpc_interface", "rpc_interface_prefer_ipv6", "seed_provider", "workdir",
}

// OwnedConfig returns the scylla.yaml keys and values the sidecar sets.
func OwnedConfig(s ScyllaDBSettings) map[string]any {
	config := map[string]any{
		"cluster_name":          s.ClusterName,
		"endpoint_snitch":       EndpointSnitch,
		"listen_address":        s.Addresses.ListenAddress,
		"rpc_address":           s.Addresses.RPCAddress,
		"broadcast_address":     s.Addresses.BroadcastAddress,
		"broadcast_rpc_address": s.Addresses.BroadcastRPCAddress,
		"seed_provider": []any{map[string]any{
			"class_name": SeedProviderClass,
			"parameters": []any{map[string]any{"seeds": strings.Join(s.Seeds, ",")}},
		}},
		"api_address":            s.APIAddress,
		"api_port":               s.APIPort,
		"workdir":                s.Workdir,
		"enable_ipv6_dns_lookup": s.IPFamily == IPv6,
	}
	maps.Copy(config, TLSConfig(s.TLS))
	return config
}

func parseYAMLMap(name string, data []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("can't parse %s as a YAML map: %w", name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// alternatorAddressKey is where ScyllaDB serves Alternator; it stays the custom config's.
const alternatorAddressKey = "alternator_address"

// MergeConfig lays the user's custom scylla.yaml over the base (the image's) and the sidecar's owned keys over both,
// key by key at the top level. With IPv6, alternator_address is :: unless the custom config sets it. It returns the
// merged YAML and, sorted, the owned keys the custom config tried to set, which are ignored.
func MergeConfig(base, custom []byte, s ScyllaDBSettings) ([]byte, []string, error) {
	merged, err := parseYAMLMap("the base config", base)
	if err != nil {
		return nil, nil, err
	}
	user, err := parseYAMLMap("the custom config", custom)
	if err != nil {
		return nil, nil, err
	}
	owned := append(slices.Clone(ownedConfigKeys), ownedTLSKeys(s.TLS)...)
	var ignored []string
	for k, v := range user {
		if slices.Contains(owned, k) {
			ignored = append(ignored, k)
			continue
		}
		merged[k] = v
	}
	slices.Sort(ignored)
	// ScyllaDB serves Alternator on alternator_address, 0.0.0.0 unless set, which an IPv6 Pod can't be reached on.
	if _, set := user[alternatorAddressKey]; !set && s.IPFamily == IPv6 {
		merged[alternatorAddressKey] = WildcardAddress(IPv6)
	}
	for _, k := range owned {
		delete(merged, k)
	}
	maps.Copy(merged, OwnedConfig(s))
	out, err := yaml.Marshal(merged)
	if err != nil {
		return nil, nil, fmt.Errorf("can't marshal the merged config: %w", err)
	}
	return out, ignored, nil
}

// RackDCProperties returns cassandra-rackdc.properties for the node.
func RackDCProperties(s ScyllaDBSettings) []byte {
	return []byte(fmt.Sprintf("dc=%s\nrack=%s\nprefer_local=false\n", s.Datacenter, s.Rack))
}

// ownedOptions are the command-line options the sidecar sets, or that would override what it set in scylla.yaml,
// in their dashed spelling. A user argument naming one is dropped. The replace options are owned whether or not the
// node replaces another (see ownedConfigKeys).
var ownedOptions = []string{
	"api-address", "api-port", "broadcast-address", "broadcast-rpc-address", "cluster-name", "developer-mode",
	"enable-ipv6-dns-lookup", "endpoint-snitch", "listen-address", "listen-interface", "listen-interface-prefer-ipv6",
	"options-file", "replace-address", "replace-address-first-boot", "replace-node-first-boot", "rpc-address",
	"rpc-interface", "rpc-interface-prefer-ipv6", "seed-provider", "seed-provider-parameters", "seeds", "workdir",
}

// shortOwnedOptions are one-letter spellings of owned options: Seastar's -c for --smp and ScyllaDB's -W for
// --workdir.
var shortOwnedOptions = map[byte]string{'c': "smp", 'W': "workdir"}

// userOptionsPrefixingOwned are ScyllaDB options that stay the user's although their names are prefixes of owned
// ones (the plain CQL ports of native_transport_port_ssl and native_shard_aware_transport_port_ssl): given in full,
// they name themselves, not an abbreviation.
var userOptionsPrefixingOwned = []string{"native-transport-port", "native-shard-aware-transport-port"}

// ScyllaDBArgs returns the arguments ScyllaDB is started with: the sidecar's own, then the user's extra arguments
// without the ones that would override an owned setting. Those are returned, as given, in ignored. User arguments
// may be --name=value or --name value, with dashes or underscores, abbreviated to any prefix of the name (the image
// entrypoint's argparse and ScyllaDB's option parser both accept unambiguous abbreviations), or a short -c (--smp)
// or -W (--workdir), with the value attached or next. --smp is owned when CPUCount is set, and the TLS settings of
// the endpoints served over TLS (ownedTLSKeys) are owned as in scylla.yaml. --replace-node-first-boot is given when
// ReplaceNodeFirstBoot is set.
func ScyllaDBArgs(s ScyllaDBSettings, extra []string) (args []string, ignored []string) {
	args = []string{
		"--listen-address=" + s.Addresses.ListenAddress,
		"--rpc-address=" + s.Addresses.RPCAddress,
		"--broadcast-address=" + s.Addresses.BroadcastAddress,
		"--broadcast-rpc-address=" + s.Addresses.BroadcastRPCAddress,
		"--seeds=" + strings.Join(s.Seeds, ","),
		"--api-address=" + s.APIAddress,
		"--api-port=" + strconv.Itoa(s.APIPort),
		"--developer-mode=" + boolArg(s.DeveloperMode),
	}
	owned := slices.Clone(ownedOptions)
	if s.CPUCount > 0 {
		args = append(args, "--smp="+strconv.Itoa(s.CPUCount))
		owned = append(owned, "smp")
	}
	if s.ReplaceNodeFirstBoot != "" {
		args = append(args, "--replace-node-first-boot="+s.ReplaceNodeFirstBoot)
	}
	for _, key := range ownedTLSKeys(s.TLS) {
		owned = append(owned, strings.ReplaceAll(key, "_", "-"))
	}

	for i := 0; i < len(extra); i++ {
		a := extra[i]
		isOwned, hasValue := ownedOption(a, owned)
		if !isOwned {
			args = append(args, a)
			continue
		}
		// The option's value is the next argument unless it came attached or the next argument is an option.
		if !hasValue && i+1 < len(extra) && !strings.HasPrefix(extra[i+1], "-") {
			ignored = append(ignored, a+" "+extra[i+1])
			i++
			continue
		}
		ignored = append(ignored, a)
	}
	return args, ignored
}

// ownedOption reports whether arg sets one of the owned options and whether it carries its value.
func ownedOption(arg string, owned []string) (isOwned, hasValue bool) {
	name, hasValue := optionName(arg)
	if name == "" {
		return false, false
	}
	if strings.HasPrefix(arg, "--") {
		if slices.Contains(userOptionsPrefixingOwned, name) {
			return false, false
		}
		// Any unambiguous prefix of a long option's name selects it.
		return slices.ContainsFunc(owned, func(o string) bool { return strings.HasPrefix(o, name) }), hasValue
	}
	if slices.Contains(owned, name) {
		return true, hasValue
	}
	// A short option: one dash and a letter, its value attached ("-c4") or next ("-c 4").
	if len(arg) >= 2 {
		if long, ok := shortOwnedOptions[arg[1]]; ok && slices.Contains(owned, long) {
			return true, len(arg) > 2
		}
	}
	return false, false
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// optionName returns the dashed name of a "--name[=value]" argument and whether it carries its value.
func optionName(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", false
	}
	name := strings.TrimLeft(arg, "-")
	name, _, hasValue := strings.Cut(name, "=")
	return strings.ReplaceAll(name, "_", "-"), hasValue
}

// SplitArgs splits a command line the way a POSIX shell splits words, without expansions: whitespace separates
// words, single quotes keep everything literal, double quotes keep everything but \" and \\, and a backslash
// outside quotes escapes the next character.
func SplitArgs(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated single quote at offset %d", i)
			}
			cur.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' && j+1 < len(s) && (s[j+1] == '"' || s[j+1] == '\\') {
					j++
				}
				cur.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated double quote at offset %d", i)
			}
			i = j
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("trailing backslash")
			}
			cur.WriteByte(s[i+1])
			i++
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args, nil
}

// ValidateSeed reports whether seed can be given to ScyllaDB as a seed (spec.externalSeeds, --external-seeds).
// It accepts:
//   - an IPv4 address in dotted-decimal form ("10.0.0.1");
//   - an IPv6 address without brackets or zone ("fd00::1", "::ffff:10.0.0.1");
//   - a DNS name as RFC 1123 defines a host name: dot-separated labels of 1 to 63 letters, digits and hyphens, no label
//     starting or ending with a hyphen, at most 253 characters, optionally ending with a dot ("seed.example.com.").
//
// It refuses everything else, among them the empty string, whitespace, ports ("10.0.0.1:7000"), URLs, bracketed or
// zoned IPv6 addresses, underscores, and names whose last label is numeric ("10.0.0.300"), which are malformed IP
// addresses rather than names. ScyllaDB resolves a name seed when it starts and fails if that lookup fails, so a valid
// name still has to resolve.
func ValidateSeed(seed string) error {
	if seed == "" {
		return fmt.Errorf("a seed must not be empty")
	}
	if net.ParseIP(seed) != nil {
		return nil
	}
	notAHost := fmt.Errorf("%q is neither an IP address nor a DNS name", seed)
	name := strings.TrimSuffix(seed, ".")
	if len(name) == 0 || len(name) > 253 {
		return notAHost
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return notAHost
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return notAHost
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return fmt.Errorf("%w: its last label is numeric, so it looks like a malformed IP address", notAHost)
	}
	return nil
}
