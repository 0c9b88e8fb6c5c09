package fakescyllamanager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Task target validation: what ScyllaDB Manager checks against the live cluster before it stores a backup or repair
// task. The caller holds s.mu.

var (
	providers    = []string{"s3", "gcs", "azure", "localstorage"}
	bucketName   = regexp.MustCompile(`^[a-z0-9.-]+$`)
	limitPattern = regexp.MustCompile(`^(?:([^:]+):)?(\d+)$`)
)

// location is a parsed "[dc:]<provider>:<bucket>" backup location.
type location struct {
	DC       string
	Provider string
	Bucket   string
}

func (l location) providerBucket() string {
	return l.Provider + ":" + l.Bucket
}

func parseLocation(s string) (location, error) {
	parts := strings.Split(s, ":")
	var l location
	switch len(parts) {
	case 2:
		l = location{Provider: parts[0], Bucket: parts[1]}
	case 3:
		l = location{DC: parts[0], Provider: parts[1], Bucket: parts[2]}
	default:
		return location{}, fmt.Errorf("invalid location %q: the format is [dc:]<provider>:<path>", s)
	}
	if !slices.Contains(providers, l.Provider) {
		return location{}, fmt.Errorf("invalid location %q: unsupported provider %q, use one of %s", s, l.Provider, strings.Join(providers, ", "))
	}
	if !bucketName.MatchString(l.Bucket) {
		return location{}, fmt.Errorf("invalid location %q: the format is [dc:]<provider>:<path>, where path matches %s", s, bucketName)
	}
	return l, nil
}

// matchGlobs returns the names that the glob patterns select: the last pattern matching a name decides, and "!"
// patterns exclude. No patterns, or a first pattern that excludes, start from everything.
func matchGlobs(patterns, names []string) ([]string, error) {
	if len(patterns) == 0 || strings.HasPrefix(patterns[0], "!") {
		patterns = append([]string{"*"}, patterns...)
	}
	for _, p := range patterns {
		if _, err := path.Match(strings.TrimPrefix(p, "!"), ""); err != nil {
			return nil, fmt.Errorf("invalid pattern %q: %w", p, err)
		}
	}
	var out []string
	for _, n := range names {
		included := false
		for _, p := range patterns {
			neg := strings.HasPrefix(p, "!")
			if ok, _ := path.Match(strings.TrimPrefix(p, "!"), n); ok {
				included = !neg
			}
		}
		if included {
			out = append(out, n)
		}
	}
	return out, nil
}

// matchKeyspaces applies keyspace filter patterns ("ks", "ks.table", "!ks") at keyspace level: a keyspace is kept
// when a pattern selects some of its tables and no pattern excludes all of them.
func matchKeyspaces(patterns, keyspaces []string) ([]string, error) {
	ksPatterns := make([]string, 0, len(patterns))
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		ks, table, hasTable := strings.Cut(strings.TrimPrefix(p, "!"), ".")
		if neg && hasTable && table != "*" {
			// Excluding some tables leaves the keyspace selected.
			continue
		}
		if neg {
			ks = "!" + ks
		}
		ksPatterns = append(ksPatterns, ks)
	}
	if len(patterns) > 0 && len(ksPatterns) == 0 {
		ksPatterns = []string{"*"}
	}
	return matchGlobs(ksPatterns, keyspaces)
}

func datacenterNames(t Topology) []string {
	names := make([]string, 0, len(t.Datacenters))
	for _, dc := range t.Datacenters {
		names = append(names, dc.Name)
	}
	return names
}

// decodeProperties decodes task properties into v like ScyllaDB Manager: unknown keys are ignored, type errors are
// validation errors.
func decodeProperties(raw json.RawMessage, v any) *apiError {
	if err := json.Unmarshal(raw, v); err != nil {
		return validationError("parse properties: %v", err)
	}
	return nil
}

// checkAgents fails like ScyllaDB Manager when it can't talk to the agents of c.
func (s *Server) checkAgents(c *cluster) *apiError {
	port := c.Port
	if port == 0 {
		port = 10001
	}
	addr := c.Host + ":" + strconv.Itoa(port)
	if c.Host == "" || s.agentsUnreachable(c.Host) {
		return internalError("couldn't connect to %s: dial tcp %s: connect: connection refused: "+
			"make sure the IP is correct and access to port %d is unblocked", addr, addr, port)
	}
	if want, ok := s.knobs.AgentAuthTokens[c.Host]; ok && want != c.AuthToken {
		return internalError("couldn't connect to %s: agent responded with status 401 Unauthorized: "+
			"make sure auth_token config option on nodes is set correctly", addr)
	}
	return nil
}

// backupProperties are the backup properties the fake validates.
type backupProperties struct {
	Location          []string `json:"location"`
	Keyspace          []string `json:"keyspace"`
	DC                []string `json:"dc"`
	Retention         *int     `json:"retention"`
	RetentionDays     *int     `json:"retention_days"`
	RateLimit         []string `json:"rate_limit"`
	SnapshotParallel  []string `json:"snapshot_parallel"`
	UploadParallel    []string `json:"upload_parallel"`
	Transfers         *int     `json:"transfers"`
	Continue          *bool    `json:"continue"`
	PurgeOnly         bool     `json:"purge_only"`
	SkipSchema        bool     `json:"skip_schema"`
	Method            string   `json:"method"`
	RetentionLockMode string   `json:"retention_lock_mode"`
}

// validateBackupTarget checks backup properties against the cluster, in ScyllaDB Manager's order and with its
// status codes: format errors are 400, missing location, negative retention, unknown datacenters and missing
// buckets are 500.
func (s *Server) validateBackupTarget(c *cluster, raw json.RawMessage) *apiError {
	var p backupProperties
	if err := decodeProperties(raw, &p); err != nil {
		return err
	}
	if len(p.Location) == 0 {
		return internalError("missing location")
	}
	var locs []location
	for _, l := range p.Location {
		parsed, err := parseLocation(l)
		if err != nil {
			return validationError("%v", err)
		}
		locs = append(locs, parsed)
	}
	if p.Retention != nil && *p.Retention < 0 {
		return internalError("negative retention")
	}
	if p.RetentionDays != nil && *p.RetentionDays < 0 {
		return internalError("negative retention days")
	}
	switch p.Method {
	case "", "auto", "rclone", "native":
	default:
		return validationError("invalid method %q: use auto, rclone or native", p.Method)
	}
	switch p.RetentionLockMode {
	case "", "disabled":
	case "unlocked", "locked", "event_based_hold":
		for _, l := range locs {
			if l.Provider != "gcs" {
				return validationError("retention lock mode %q is supported by gcs only, location %q uses %s", p.RetentionLockMode, l.providerBucket(), l.Provider)
			}
		}
	default:
		return validationError("invalid retention lock mode %q", p.RetentionLockMode)
	}

	topo := s.topology(c.Host)
	allDCs := datacenterNames(topo)
	dcs, err := matchGlobs(p.DC, allDCs)
	if err != nil {
		return validationError("dc: %v", err)
	}
	if len(dcs) == 0 {
		return validationError("no matching datacenters found for dc=%s", strings.Join(p.DC, ","))
	}
	covered := map[string]bool{}
	global := false
	for _, l := range locs {
		if l.DC == "" {
			global = true
			continue
		}
		if !slices.Contains(allDCs, l.DC) {
			return internalError("no such datacenter %s", l.DC)
		}
		covered[l.DC] = true
	}
	if !global {
		for _, dc := range dcs {
			if !covered[dc] {
				return internalError("missing object for datacenter %s", dc)
			}
		}
	}
	for field, limits := range map[string][]string{"rate_limit": p.RateLimit, "snapshot_parallel": p.SnapshotParallel, "upload_parallel": p.UploadParallel} {
		for _, l := range limits {
			m := limitPattern.FindStringSubmatch(l)
			if m == nil {
				return validationError("%s: invalid limit %q: the format is [dc:]<limit>", field, l)
			}
			if m[1] != "" && !slices.Contains(allDCs, m[1]) {
				return internalError("%s: no such datacenter %s", field, m[1])
			}
		}
	}

	if err := s.checkAgents(c); err != nil {
		return err
	}
	for _, l := range locs {
		switch s.locationState(l.providerBucket()) {
		case LocationBucketMissing:
			return internalError("location %s: specified bucket does not exist", l.providerBucket())
		case LocationInaccessible:
			node := topo.Datacenters[0].Nodes[0].Address
			return validationError("location is not accessible: %s: %s: access denied: make sure the location is correct and credentials are set on the node", node, l.providerBucket())
		}
	}
	kss, err := matchKeyspaces(p.Keyspace, topo.Keyspaces)
	if err != nil {
		return validationError("keyspace: %v", err)
	}
	if len(kss) == 0 {
		return validationError("no keyspace matched criteria %s", strings.Join(p.Keyspace, ","))
	}
	return nil
}

// repairProperties are the repair properties the fake validates.
type repairProperties struct {
	Keyspace            []string `json:"keyspace"`
	DC                  []string `json:"dc"`
	Host                string   `json:"host"`
	IgnoreDownHosts     bool     `json:"ignore_down_hosts"`
	FailFast            bool     `json:"fail_fast"`
	Continue            *bool    `json:"continue"`
	Intensity           *float64 `json:"intensity"`
	Parallel            *int     `json:"parallel"`
	SmallTableThreshold *int64   `json:"small_table_threshold"`
	AllowEmpty          bool     `json:"allow_empty"`
}

// defaultRepairKeyspaces is ScyllaDB Manager's default keyspace filter of repair.
var defaultRepairKeyspaces = []string{"*", "!system_traces"}

// validateRepairTarget checks repair properties against the cluster: format errors and a single-node cluster are
// 400, a down node without ignore_down_hosts is 500 with details.
func (s *Server) validateRepairTarget(c *cluster, raw json.RawMessage) *apiError {
	var p repairProperties
	if err := decodeProperties(raw, &p); err != nil {
		return err
	}
	if p.Host != "" && !isIP(p.Host) {
		return validationError("parse host IP address: %q is not an IP address", p.Host)
	}
	if err := s.checkAgents(c); err != nil {
		return err
	}
	topo := s.topology(c.Host)
	if topo.nodeCount() < 2 {
		return validationError("repair requires a cluster with at least 2 nodes, the cluster has %d", topo.nodeCount())
	}
	dcs, err := matchGlobs(p.DC, datacenterNames(topo))
	if err != nil {
		return validationError("dc: %v", err)
	}
	if len(dcs) == 0 {
		return validationError("no matching datacenters found for dc=%s", strings.Join(p.DC, ","))
	}
	var nodes []string
	for _, dc := range topo.Datacenters {
		if !slices.Contains(dcs, dc.Name) {
			continue
		}
		for _, n := range dc.Nodes {
			nodes = append(nodes, n.Address)
		}
	}
	if p.Host != "" && !slices.Contains(nodes, p.Host) {
		return validationError("host %s is not a node of the selected datacenters", p.Host)
	}
	if !p.IgnoreDownHosts {
		var down []string
		for _, n := range nodes {
			if s.nodeDown(n) {
				down = append(down, n)
			}
		}
		if len(down) > 0 {
			return &apiError{
				status:  http.StatusInternalServerError,
				message: fmt.Sprintf("host %s is down", strings.Join(down, ", ")),
				details: "One of the nodes is down. Task cannot be created. Check --ignore-down-hosts to repair the live nodes only.",
			}
		}
	}
	patterns := p.Keyspace
	if len(patterns) == 0 {
		patterns = defaultRepairKeyspaces
	}
	kss, err := matchKeyspaces(patterns, topo.Keyspaces)
	if err != nil {
		return validationError("keyspace: %v", err)
	}
	if len(kss) == 0 && !p.AllowEmpty {
		return validationError("no keyspace matched criteria %s", strings.Join(patterns, ","))
	}
	return nil
}

// normalizeProperties defaults absent and null properties to {}.
func normalizeProperties(raw json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return json.RawMessage(`{}`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, trimmed); err != nil {
		// The body decoded, so its parts are valid JSON.
		return slices.Clone(trimmed)
	}
	return compact.Bytes()
}
