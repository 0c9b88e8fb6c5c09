package fakescylladb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Environment variables the fake reads. ScyllaDB's own command line and configuration are left for what the sidecar
// computes, so everything about the fake itself comes from the environment, which the sidecar passes on to its child.
const (
	// EnvRegistryURL is the base URL of the ring registry ("http://127.0.0.1:PORT"). Required.
	EnvRegistryURL = "FAKE_SCYLLADB_REGISTRY_URL"
	// EnvResolverURL is the URL of a resolver (see Resolver and ResolverClient) that stands in for the cluster DNS:
	// seeds that aren't IP addresses are resolved through it before joining. Optional; without it seeds are matched
	// literally.
	EnvResolverURL = "FAKE_SCYLLADB_RESOLVER_URL"
	// EnvRecordPath is a file to which each start appends its Invocation (a JSON array). Optional.
	EnvRecordPath = "FAKE_SCYLLADB_RECORD_PATH"
	// EnvAliasAddresses is a comma-separated list of further addresses the node is reachable at, such as its member
	// Service's ClusterIP; it stands in for kube-proxy when a seed is a Service address. Optional.
	EnvAliasAddresses = "FAKE_SCYLLADB_ALIAS_ADDRESSES"
	// EnvHeartbeatInterval is how often the node tells the registry it's alive (Go duration, default 1s).
	EnvHeartbeatInterval = "FAKE_SCYLLADB_HEARTBEAT_INTERVAL"

	// EnvStartupDelay delays joining the ring after start (Go duration): a slow node.
	EnvStartupDelay = "FAKE_SCYLLADB_STARTUP_DELAY"
	// EnvBootstrapDelay keeps a newly joined node in the Joining state this long (Go duration).
	EnvBootstrapDelay = "FAKE_SCYLLADB_BOOTSTRAP_DELAY"
	// EnvDecommissionDelay keeps a decommissioning node in the Leaving state this long (Go duration).
	EnvDecommissionDelay = "FAKE_SCYLLADB_DECOMMISSION_DELAY"
	// EnvDown makes the node report itself Down ("true"/"false").
	EnvDown = "FAKE_SCYLLADB_DOWN"
	// EnvAPIFailure makes every REST API call answer 500 ("true"/"false").
	EnvAPIFailure = "FAKE_SCYLLADB_API_FAILURE"
	// EnvNativeTransportDisabled keeps the CQL server reported as off ("true"/"false").
	EnvNativeTransportDisabled = "FAKE_SCYLLADB_NATIVE_TRANSPORT_DISABLED"
	// EnvExitCode makes the fake exit with this code right after recording its invocation: a crashing node.
	EnvExitCode = "FAKE_SCYLLADB_EXIT_CODE"
)

// Duration is a time.Duration that reads and writes JSON as a Go duration string ("1.5s").
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Knobs make the node slow, down or failing. The ones that matter after start can be changed at run time through
// the node's /fake/knobs endpoint.
type Knobs struct {
	StartupDelay            Duration `json:"startupDelay"`
	BootstrapDelay          Duration `json:"bootstrapDelay"`
	DecommissionDelay       Duration `json:"decommissionDelay"`
	Down                    bool     `json:"down"`
	APIFailure              bool     `json:"apiFailure"`
	NativeTransportDisabled bool     `json:"nativeTransportDisabled"`
	// ExitCode, when set, makes the node exit with it right after recording its invocation.
	ExitCode *int `json:"exitCode,omitempty"`
}

// KnobsFromEnv reads the knobs from the environment through getenv.
func KnobsFromEnv(getenv func(string) string) (Knobs, error) {
	var k Knobs
	for _, d := range []struct {
		env string
		dst *Duration
	}{
		{EnvStartupDelay, &k.StartupDelay},
		{EnvBootstrapDelay, &k.BootstrapDelay},
		{EnvDecommissionDelay, &k.DecommissionDelay},
	} {
		if v := getenv(d.env); v != "" {
			parsed, err := time.ParseDuration(v)
			if err != nil || parsed < 0 {
				return Knobs{}, fmt.Errorf("%s must be a non-negative Go duration, got %q", d.env, v)
			}
			*d.dst = Duration(parsed)
		}
	}
	for _, b := range []struct {
		env string
		dst *bool
	}{
		{EnvDown, &k.Down},
		{EnvAPIFailure, &k.APIFailure},
		{EnvNativeTransportDisabled, &k.NativeTransportDisabled},
	} {
		if v := getenv(b.env); v != "" {
			parsed, err := strconv.ParseBool(v)
			if err != nil {
				return Knobs{}, fmt.Errorf("%s must be true or false, got %q", b.env, v)
			}
			*b.dst = parsed
		}
	}
	if v := getenv(EnvExitCode); v != "" {
		code, err := strconv.Atoi(v)
		if err != nil || code < 0 || code > 255 {
			return Knobs{}, fmt.Errorf("%s must be an integer from 0 to 255, got %q", EnvExitCode, v)
		}
		k.ExitCode = &code
	}
	return k, nil
}

// SplitList splits a comma-separated list, dropping empty entries.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
