package fakescyllamanager

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"
)

// Endpoint names an API operation for per-endpoint knobs.
type Endpoint string

// API endpoints the fake serves.
const (
	EndpointPing            Endpoint = "Ping"
	EndpointVersion         Endpoint = "Version"
	EndpointListClusters    Endpoint = "ListClusters"
	EndpointCreateCluster   Endpoint = "CreateCluster"
	EndpointGetCluster      Endpoint = "GetCluster"
	EndpointUpdateCluster   Endpoint = "UpdateCluster"
	EndpointDeleteCluster   Endpoint = "DeleteCluster"
	EndpointClusterStatus   Endpoint = "ClusterStatus"
	EndpointListTasks       Endpoint = "ListTasks"
	EndpointCreateTask      Endpoint = "CreateTask"
	EndpointGetTask         Endpoint = "GetTask"
	EndpointUpdateTask      Endpoint = "UpdateTask"
	EndpointDeleteTask      Endpoint = "DeleteTask"
	EndpointStartTask       Endpoint = "StartTask"
	EndpointStopTask        Endpoint = "StopTask"
	EndpointTaskHistory     Endpoint = "TaskHistory"
	EndpointTaskRunProgress Endpoint = "TaskRunProgress"

	// EndpointAll applies a knob to every API endpoint that has no knob of its own.
	EndpointAll Endpoint = "*"
)

// Endpoints lists every API endpoint.
var Endpoints = []Endpoint{
	EndpointPing, EndpointVersion, EndpointListClusters, EndpointCreateCluster, EndpointGetCluster,
	EndpointUpdateCluster, EndpointDeleteCluster, EndpointClusterStatus, EndpointListTasks, EndpointCreateTask,
	EndpointGetTask, EndpointUpdateTask, EndpointDeleteTask, EndpointStartTask, EndpointStopTask,
	EndpointTaskHistory, EndpointTaskRunProgress,
}

func validateEndpoint(e Endpoint) error {
	if e == EndpointAll || slices.Contains(Endpoints, e) {
		return nil
	}
	return fmt.Errorf("unknown endpoint %q", e)
}

// Duration is a time.Duration that encodes as a Go duration string ("1.5s") in JSON.
type Duration struct {
	time.Duration
}

// MarshalJSON encodes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// UnmarshalJSON decodes a Go duration string.
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"1.5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = v
	return nil
}

// Failure is an injected failure of an endpoint.
type Failure struct {
	// Status is the HTTP status to answer with, 400 to 599. The body is ScyllaDB Manager's error document.
	Status int `json:"status,omitempty"`
	// Message is the error message; empty means "injected failure".
	Message string `json:"message,omitempty"`
	// DropConnection closes the connection without any response instead; Status must then be zero.
	DropConnection bool `json:"dropConnection,omitempty"`
	// Times is how many requests fail; zero means every request until the failure is cleared.
	Times int `json:"times,omitempty"`
}

func (f Failure) validate() error {
	switch {
	case f.Times < 0:
		return fmt.Errorf("times must not be negative, got %d", f.Times)
	case f.DropConnection && f.Status != 0:
		return errors.New("a dropped connection has no status")
	case !f.DropConnection && (f.Status < 400 || f.Status > 599):
		return fmt.Errorf("status must be between 400 and 599, got %d", f.Status)
	}
	return nil
}

// LocationState is the state of a backup location's bucket as the fake's agents see it.
type LocationState string

// Location states.
const (
	// LocationAccessible is the default: the bucket exists and every node can write to it.
	LocationAccessible LocationState = "Accessible"
	// LocationInaccessible makes backup task validation fail with 400 "location is not accessible".
	LocationInaccessible LocationState = "Inaccessible"
	// LocationBucketMissing makes backup task validation fail with 500 "specified bucket does not exist".
	LocationBucketMissing LocationState = "BucketMissing"
)

// Node is a ScyllaDB node of a fake cluster.
type Node struct {
	// Address is the node's IP address.
	Address string `json:"address"`
	// HostID is the node's host ID.
	HostID string `json:"hostID"`
}

// Datacenter is a datacenter of a fake cluster.
type Datacenter struct {
	Name  string `json:"name"`
	Nodes []Node `json:"nodes"`
}

// Topology is what the fake's agents report for a cluster: its datacenters and keyspaces. Backup and repair
// validation, cluster status and the single-node rule read it.
type Topology struct {
	Datacenters []Datacenter `json:"datacenters"`
	Keyspaces   []string     `json:"keyspaces"`
}

func (t Topology) validate() error {
	if len(t.Datacenters) == 0 {
		return errors.New("topology has no datacenters")
	}
	seenDC := map[string]bool{}
	seenAddr := map[string]bool{}
	for _, dc := range t.Datacenters {
		if dc.Name == "" {
			return errors.New("datacenter name must not be empty")
		}
		if seenDC[dc.Name] {
			return fmt.Errorf("datacenter %q is listed twice", dc.Name)
		}
		seenDC[dc.Name] = true
		if len(dc.Nodes) == 0 {
			return fmt.Errorf("datacenter %q has no nodes", dc.Name)
		}
		for _, n := range dc.Nodes {
			if !isIP(n.Address) {
				return fmt.Errorf("node address %q of datacenter %q is not an IP address", n.Address, dc.Name)
			}
			if seenAddr[n.Address] {
				return fmt.Errorf("node address %q is listed twice", n.Address)
			}
			seenAddr[n.Address] = true
		}
	}
	return nil
}

func (t Topology) deepCopy() Topology {
	out := Topology{Keyspaces: slices.Clone(t.Keyspaces)}
	for _, dc := range t.Datacenters {
		out.Datacenters = append(out.Datacenters, Datacenter{Name: dc.Name, Nodes: slices.Clone(dc.Nodes)})
	}
	return out
}

func (t Topology) nodeCount() int {
	n := 0
	for _, dc := range t.Datacenters {
		n += len(dc.Nodes)
	}
	return n
}

// DefaultTopology is the topology of a cluster whose host has none of its own: one datacenter "dc1" with three
// nodes and ScyllaDB's system keyspaces.
func DefaultTopology() Topology {
	return Topology{
		Datacenters: []Datacenter{{
			Name: "dc1",
			Nodes: []Node{
				{Address: "10.0.0.1", HostID: "00000000-0000-4000-8000-000000000001"},
				{Address: "10.0.0.2", HostID: "00000000-0000-4000-8000-000000000002"},
				{Address: "10.0.0.3", HostID: "00000000-0000-4000-8000-000000000003"},
			},
		}},
		Keyspaces: []string{"system_auth", "system_distributed", "system_traces"},
	}
}

// Knobs steer the fake's behaviour. The zero value is a healthy ScyllaDB Manager.
type Knobs struct {
	// Latency delays requests to an endpoint (or EndpointAll) before they are handled.
	Latency map[Endpoint]Duration `json:"latency,omitempty"`
	// BackupValidationLatency delays backup task creation and update, where ScyllaDB Manager checks every
	// location from every node.
	BackupValidationLatency Duration `json:"backupValidationLatency,omitempty"`
	// Failures make requests to an endpoint (or EndpointAll) fail before they are handled.
	Failures map[Endpoint]Failure `json:"failures,omitempty"`
	// UnreachableAgents lists cluster hosts (the cluster's "host" field) whose agents can't be reached; "*" means
	// every host.
	UnreachableAgents []string `json:"unreachableAgents,omitempty"`
	// AgentAuthTokens maps a cluster host to the auth token its agents expect; other hosts accept any token.
	AgentAuthTokens map[string]string `json:"agentAuthTokens,omitempty"`
	// DownNodes lists node addresses that are down.
	DownNodes []string `json:"downNodes,omitempty"`
	// SuspendedClusters lists cluster IDs whose scheduling is suspended.
	SuspendedClusters []string `json:"suspendedClusters,omitempty"`
	// Locations maps "<provider>:<bucket>" to the bucket's state; absent buckets are accessible.
	Locations map[string]LocationState `json:"locations,omitempty"`
	// Topologies maps a cluster host to its topology; other hosts get DefaultTopology.
	Topologies map[string]Topology `json:"topologies,omitempty"`
	// RunStatus is the final status of runs the fake starts: DONE (the default), RUNNING or ERROR.
	RunStatus string `json:"runStatus,omitempty"`
	// S3Endpoints maps "s3:<bucket>" to how the fake reaches that bucket over S3. A started backup task uploads a
	// small backup to the buckets of its locations found here (see S3Endpoint); other locations get nothing.
	// The secret is served back by GET /fake/knobs: use test credentials only.
	S3Endpoints map[string]S3Endpoint `json:"s3Endpoints,omitempty"`
}

func (k Knobs) validate() error {
	var errs []error
	for e, d := range k.Latency {
		if err := validateEndpoint(e); err != nil {
			errs = append(errs, fmt.Errorf("latency: %w", err))
		}
		if d.Duration < 0 {
			errs = append(errs, fmt.Errorf("latency of %s must not be negative", e))
		}
	}
	if k.BackupValidationLatency.Duration < 0 {
		errs = append(errs, errors.New("backup validation latency must not be negative"))
	}
	for e, f := range k.Failures {
		if err := validateEndpoint(e); err != nil {
			errs = append(errs, fmt.Errorf("failures: %w", err))
		}
		if err := f.validate(); err != nil {
			errs = append(errs, fmt.Errorf("failure of %s: %w", e, err))
		}
	}
	for _, a := range k.DownNodes {
		if !isIP(a) {
			errs = append(errs, fmt.Errorf("down node %q is not an IP address", a))
		}
	}
	for _, id := range k.SuspendedClusters {
		if !isUUID(id) {
			errs = append(errs, fmt.Errorf("suspended cluster %q is not a UUID", id))
		}
	}
	for loc, state := range k.Locations {
		if _, err := parseLocation(loc); err != nil {
			errs = append(errs, fmt.Errorf("locations: %w", err))
		}
		switch state {
		case LocationAccessible, LocationInaccessible, LocationBucketMissing:
		default:
			errs = append(errs, fmt.Errorf("location %q has unknown state %q", loc, state))
		}
	}
	for host, t := range k.Topologies {
		if err := t.validate(); err != nil {
			errs = append(errs, fmt.Errorf("topology of host %q: %w", host, err))
		}
	}
	for loc, e := range k.S3Endpoints {
		if err := validateS3Endpoint(loc, e); err != nil {
			errs = append(errs, fmt.Errorf("s3Endpoints: %w", err))
		}
	}
	switch k.RunStatus {
	case "", statusDone, statusRunning, statusError:
	default:
		errs = append(errs, fmt.Errorf("run status must be %s, %s or %s, got %q", statusDone, statusRunning, statusError, k.RunStatus))
	}
	return errors.Join(errs...)
}

func (k Knobs) deepCopy() Knobs {
	out := Knobs{
		Latency:                 maps.Clone(k.Latency),
		BackupValidationLatency: k.BackupValidationLatency,
		Failures:                maps.Clone(k.Failures),
		UnreachableAgents:       slices.Clone(k.UnreachableAgents),
		AgentAuthTokens:         maps.Clone(k.AgentAuthTokens),
		DownNodes:               slices.Clone(k.DownNodes),
		SuspendedClusters:       slices.Clone(k.SuspendedClusters),
		Locations:               maps.Clone(k.Locations),
		RunStatus:               k.RunStatus,
		S3Endpoints:             maps.Clone(k.S3Endpoints),
	}
	if k.Topologies != nil {
		out.Topologies = make(map[string]Topology, len(k.Topologies))
		for h, t := range k.Topologies {
			out.Topologies[h] = t.deepCopy()
		}
	}
	return out
}

// Knobs returns a copy of the current knobs.
func (s *Server) Knobs() Knobs {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.knobs.deepCopy()
}

// SetKnobs replaces all knobs. Invalid knobs are rejected and the current ones kept.
func (s *Server) SetKnobs(k Knobs) error {
	return s.UpdateKnobs(func(cur *Knobs) { *cur = k })
}

// UpdateKnobs changes the knobs atomically through mutate, which gets a copy. If the result is invalid, it is
// rejected and the current knobs kept.
func (s *Server) UpdateKnobs(mutate func(k *Knobs)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := s.knobs.deepCopy()
	mutate(&next)
	if err := next.validate(); err != nil {
		return fmt.Errorf("can't set knobs: %w", err)
	}
	s.knobs = next.deepCopy()
	return nil
}

// SetLatency delays every request to endpoint by d; zero removes the delay.
func (s *Server) SetLatency(endpoint Endpoint, d time.Duration) error {
	return s.UpdateKnobs(func(k *Knobs) {
		if d == 0 {
			delete(k.Latency, endpoint)
			return
		}
		if k.Latency == nil {
			k.Latency = map[Endpoint]Duration{}
		}
		k.Latency[endpoint] = Duration{d}
	})
}

// SetBackupValidationLatency delays backup task creation and update by d.
func (s *Server) SetBackupValidationLatency(d time.Duration) error {
	return s.UpdateKnobs(func(k *Knobs) { k.BackupValidationLatency = Duration{d} })
}

// InjectFailure makes requests to endpoint fail as f says.
func (s *Server) InjectFailure(endpoint Endpoint, f Failure) error {
	return s.UpdateKnobs(func(k *Knobs) {
		if k.Failures == nil {
			k.Failures = map[Endpoint]Failure{}
		}
		k.Failures[endpoint] = f
	})
}

// ClearFailures removes every injected failure.
func (s *Server) ClearFailures() {
	_ = s.UpdateKnobs(func(k *Knobs) { k.Failures = nil })
}

// SetAgentsUnreachable makes the agents of a cluster host ("*" for every host) unreachable or reachable again.
func (s *Server) SetAgentsUnreachable(host string, unreachable bool) {
	_ = s.UpdateKnobs(func(k *Knobs) { k.UnreachableAgents = setMember(k.UnreachableAgents, host, unreachable) })
}

// SetAgentAuthToken makes the agents of a cluster host expect token; an empty token accepts any.
func (s *Server) SetAgentAuthToken(host, token string) {
	_ = s.UpdateKnobs(func(k *Knobs) {
		if token == "" {
			delete(k.AgentAuthTokens, host)
			return
		}
		if k.AgentAuthTokens == nil {
			k.AgentAuthTokens = map[string]string{}
		}
		k.AgentAuthTokens[host] = token
	})
}

// SetNodeDown marks the node with the given address down or up.
func (s *Server) SetNodeDown(address string, down bool) error {
	return s.UpdateKnobs(func(k *Knobs) { k.DownNodes = setMember(k.DownNodes, address, down) })
}

// SetClusterSuspended suspends or resumes scheduling of a cluster.
func (s *Server) SetClusterSuspended(clusterID string, suspended bool) error {
	return s.UpdateKnobs(func(k *Knobs) { k.SuspendedClusters = setMember(k.SuspendedClusters, clusterID, suspended) })
}

// SetLocationState sets the state of the bucket of a "<provider>:<bucket>" location.
func (s *Server) SetLocationState(location string, state LocationState) error {
	return s.UpdateKnobs(func(k *Knobs) {
		if k.Locations == nil {
			k.Locations = map[string]LocationState{}
		}
		k.Locations[location] = state
	})
}

// SetTopology sets the topology the agents of a cluster host report.
func (s *Server) SetTopology(host string, t Topology) error {
	return s.UpdateKnobs(func(k *Knobs) {
		if k.Topologies == nil {
			k.Topologies = map[string]Topology{}
		}
		k.Topologies[host] = t.deepCopy()
	})
}

// SetRunStatus sets the final status of runs the fake starts: DONE, RUNNING or ERROR.
func (s *Server) SetRunStatus(status string) error {
	return s.UpdateKnobs(func(k *Knobs) { k.RunStatus = status })
}

func setMember(list []string, v string, member bool) []string {
	list = slices.DeleteFunc(list, func(e string) bool { return e == v })
	if member {
		list = append(list, v)
	}
	return list
}

// Knob lookups; the caller holds s.mu.

func (s *Server) agentsUnreachable(host string) bool {
	return slices.Contains(s.knobs.UnreachableAgents, "*") || slices.Contains(s.knobs.UnreachableAgents, host)
}

func (s *Server) nodeDown(address string) bool {
	return slices.Contains(s.knobs.DownNodes, address)
}

func (s *Server) clusterSuspended(clusterID string) bool {
	return slices.Contains(s.knobs.SuspendedClusters, clusterID)
}

func (s *Server) topology(host string) Topology {
	if t, ok := s.knobs.Topologies[host]; ok {
		return t
	}
	return s.defaultTopology
}

func (s *Server) locationState(providerBucket string) LocationState {
	if state, ok := s.knobs.Locations[providerBucket]; ok {
		return state
	}
	return LocationAccessible
}

// endpointKnobs returns the latency of an endpoint and consumes one injected failure, if any.
func (s *Server) endpointKnobs(e Endpoint) (time.Duration, *Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	latency, ok := s.knobs.Latency[e]
	if !ok {
		latency = s.knobs.Latency[EndpointAll]
	}
	key := e
	f, ok := s.knobs.Failures[key]
	if !ok {
		key = EndpointAll
		f, ok = s.knobs.Failures[key]
	}
	if !ok {
		return latency.Duration, nil
	}
	if f.Times > 0 {
		if f.Times == 1 {
			delete(s.knobs.Failures, key)
		} else {
			f.Times--
			s.knobs.Failures[key] = f
		}
	}
	return latency.Duration, &f
}

// serveKnobs serves GET and PUT /fake/knobs.
func (s *Server) serveKnobs(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		writeJSON(w, http.StatusOK, s.Knobs())
	case http.MethodPut:
		var k Knobs
		if err := decodeJSON(r, &k); err != nil {
			s.writeError(w, http.StatusBadRequest, "malformed request: "+err.Error(), "")
			return
		}
		if err := s.SetKnobs(k); err != nil {
			s.writeError(w, http.StatusBadRequest, err.Error(), "")
			return
		}
		writeJSON(w, http.StatusOK, s.Knobs())
	default:
		s.writeError(w, http.StatusMethodNotAllowed, "method not allowed", "")
	}
}
