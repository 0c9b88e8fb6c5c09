package fakescylladb

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// NodeStatus is whether gossip would see the node alive.
type NodeStatus string

// NodeState is the node's place in the ring lifecycle.
type NodeState string

// Node statuses and states the registry tracks.
const (
	StatusUp   NodeStatus = "Up"
	StatusDown NodeStatus = "Down"

	StateJoining        NodeState = "Joining"
	StateNormal         NodeState = "Normal"
	StateLeaving        NodeState = "Leaving"
	StateDecommissioned NodeState = "Decommissioned"
)

// NodeInfo describes a node as it joins: who it is, where it is reachable, and the seeds it started with.
type NodeInfo struct {
	HostID              string `json:"hostID"`
	ClusterName         string `json:"clusterName"`
	Datacenter          string `json:"datacenter"`
	Rack                string `json:"rack"`
	BroadcastAddress    string `json:"broadcastAddress"`
	BroadcastRPCAddress string `json:"broadcastRPCAddress"`
	// Addresses are every address the node is reachable at besides BroadcastAddress: concrete listen and RPC
	// addresses and aliases such as a Service ClusterIP in front of it.
	Addresses []string `json:"addresses"`
	Seeds     []string `json:"seeds"`
}

// Member is one node as the registry knows it.
type Member struct {
	NodeInfo
	Status NodeStatus `json:"status"`
	State  NodeState  `json:"state"`
	RingID string     `json:"ringID"`
}

// Ring is a set of nodes that know each other: one ScyllaDB cluster.
type Ring struct {
	ID          string   `json:"id"`
	ClusterName string   `json:"clusterName"`
	Members     []Member `json:"members"`
}

// JoinRequest is what a starting node tells the registry. State is Joining or Normal (the default).
type JoinRequest struct {
	NodeInfo
	State NodeState `json:"state"`
}

// StateRequest changes a member's status, state, or both; empty fields are left alone.
type StateRequest struct {
	Status NodeStatus `json:"status,omitempty"`
	State  NodeState  `json:"state,omitempty"`
}

type member struct {
	Member
	lastHeartbeat time.Time
}

// Registry is the shared view of ring membership that fake ScyllaDB nodes consult instead of gossiping. It is safe
// for concurrent use. Nodes that stop heartbeating for longer than the TTL read as Down.
type Registry struct {
	ttl time.Duration
	now func() time.Time

	lock           sync.Mutex
	members        map[string]*member
	rings          map[string]string // ring ID -> cluster name
	nextRing       int
	decommissioned map[string]bool
}

// NewRegistry returns an empty registry. A ttl of 0 disables heartbeat expiry: nodes are Down only when told so.
func NewRegistry(ttl time.Duration) *Registry {
	return &Registry{
		ttl:            ttl,
		now:            time.Now,
		members:        map[string]*member{},
		rings:          map[string]string{},
		decommissioned: map[string]bool{},
	}
}

// ErrNotFound is returned for a host ID the registry doesn't know.
var ErrNotFound = errors.New("not found")

func (r *Registry) effective(m *member) Member {
	out := m.Member
	out.Addresses = slices.Clone(m.Addresses)
	out.Seeds = slices.Clone(m.Seeds)
	if out.Status == StatusUp && r.ttl > 0 && r.now().Sub(m.lastHeartbeat) > r.ttl {
		out.Status = StatusDown
	}
	return out
}

func (m *member) reachableAt(addr string) bool {
	return m.BroadcastAddress == addr || slices.Contains(m.Addresses, addr)
}

// Join admits a starting node. A node the registry already knows rejoins its ring (a restart). A node whose seeds
// are all its own addresses founds a new ring. Any other node joins the ring of the first of its seeds that is
// reachable at a live node, and fails when none is.
func (r *Registry) Join(req JoinRequest) (Ring, error) {
	if req.HostID == "" || req.ClusterName == "" || req.BroadcastAddress == "" {
		return Ring{}, fmt.Errorf("hostID, clusterName and broadcastAddress are required")
	}
	if len(req.Seeds) == 0 {
		return Ring{}, fmt.Errorf("node %s has no seeds", req.HostID)
	}
	state := req.State
	if state == "" {
		state = StateNormal
	}
	if state != StateJoining && state != StateNormal {
		return Ring{}, fmt.Errorf("a node joins as %s or %s, not %q", StateJoining, StateNormal, state)
	}

	r.lock.Lock()
	defer r.lock.Unlock()

	if r.decommissioned[req.HostID] {
		return Ring{}, fmt.Errorf("node %s was decommissioned and will not rejoin the ring", req.HostID)
	}
	for _, m := range r.members {
		if m.HostID != req.HostID && m.BroadcastAddress == req.BroadcastAddress && r.effective(m).Status == StatusUp {
			return Ring{}, fmt.Errorf("a live node %s already has address %s", m.HostID, req.BroadcastAddress)
		}
	}

	info := req.NodeInfo
	info.Addresses = slices.Clone(info.Addresses)
	info.Seeds = slices.Clone(info.Seeds)
	self := &member{Member: Member{NodeInfo: info, Status: StatusUp, State: state}, lastHeartbeat: r.now()}

	if existing, ok := r.members[req.HostID]; ok {
		if existing.ClusterName != req.ClusterName {
			return Ring{}, fmt.Errorf("node %s belongs to cluster %q, not %q", req.HostID, existing.ClusterName, req.ClusterName)
		}
		self.RingID = existing.RingID
		self.State = StateNormal
		r.members[req.HostID] = self
		return r.ringLocked(self.RingID), nil
	}

	var others []string
	for _, s := range req.Seeds {
		if !self.reachableAt(s) {
			others = append(others, s)
		}
	}
	if len(others) == 0 {
		r.nextRing++
		self.RingID = fmt.Sprintf("ring-%d", r.nextRing)
		r.rings[self.RingID] = req.ClusterName
		r.members[req.HostID] = self
		return r.ringLocked(self.RingID), nil
	}

	for _, s := range others {
		for _, m := range r.sortedMembersLocked() {
			e := r.effective(m)
			if !m.reachableAt(s) || e.Status != StatusUp || e.State == StateDecommissioned {
				continue
			}
			if m.ClusterName != req.ClusterName {
				return Ring{}, fmt.Errorf("seed %s belongs to cluster %q, not %q", s, m.ClusterName, req.ClusterName)
			}
			self.RingID = m.RingID
			r.members[req.HostID] = self
			return r.ringLocked(self.RingID), nil
		}
	}
	return Ring{}, fmt.Errorf("node %s can't join a ring: no live node at any of its seeds %v", req.HostID, req.Seeds)
}

func (r *Registry) sortedMembersLocked() []*member {
	ms := make([]*member, 0, len(r.members))
	for _, m := range r.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *member) int { return strings.Compare(a.HostID, b.HostID) })
	return ms
}

func (r *Registry) ringLocked(id string) Ring {
	ring := Ring{ID: id, ClusterName: r.rings[id], Members: []Member{}}
	for _, m := range r.sortedMembersLocked() {
		if m.RingID == id {
			ring.Members = append(ring.Members, r.effective(m))
		}
	}
	return ring
}

// Heartbeat records that the node is alive.
func (r *Registry) Heartbeat(hostID string) error {
	r.lock.Lock()
	defer r.lock.Unlock()
	m, ok := r.members[hostID]
	if !ok {
		return fmt.Errorf("node %s: %w", hostID, ErrNotFound)
	}
	m.lastHeartbeat = r.now()
	return nil
}

// SetState changes a member's status or state. Setting the state to Decommissioned removes the node from its ring
// for good.
func (r *Registry) SetState(hostID string, req StateRequest) error {
	switch req.Status {
	case "", StatusUp, StatusDown:
	default:
		return fmt.Errorf("unknown status %q", req.Status)
	}
	switch req.State {
	case "", StateJoining, StateNormal, StateLeaving, StateDecommissioned:
	default:
		return fmt.Errorf("unknown state %q", req.State)
	}

	r.lock.Lock()
	defer r.lock.Unlock()
	m, ok := r.members[hostID]
	if !ok {
		return fmt.Errorf("node %s: %w", hostID, ErrNotFound)
	}
	if req.Status != "" {
		m.Status = req.Status
		m.lastHeartbeat = r.now()
	}
	if req.State == StateDecommissioned {
		delete(r.members, hostID)
		r.decommissioned[hostID] = true
		return nil
	}
	if req.State != "" {
		m.State = req.State
	}
	return nil
}

// RingOf returns the ring the node belongs to.
func (r *Registry) RingOf(hostID string) (Ring, error) {
	r.lock.Lock()
	defer r.lock.Unlock()
	m, ok := r.members[hostID]
	if !ok {
		return Ring{}, fmt.Errorf("node %s: %w", hostID, ErrNotFound)
	}
	return r.ringLocked(m.RingID), nil
}

// Rings returns every ring that has members, sorted by ID. More than one ring of the same cluster name is a split.
func (r *Registry) Rings() []Ring {
	r.lock.Lock()
	defer r.lock.Unlock()
	var ids []string
	for id := range r.rings {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rings := []Ring{}
	for _, id := range ids {
		if ring := r.ringLocked(id); len(ring.Members) > 0 {
			rings = append(rings, ring)
		}
	}
	return rings
}

// Registry HTTP API paths.
const (
	RegistryPathJoin  = "/v1/join"
	RegistryPathRings = "/v1/rings"
	// RegistryPathNodes is followed by "<hostID>/heartbeat" (POST), "<hostID>/state" (POST StateRequest) or
	// "<hostID>/ring" (GET).
	RegistryPathNodes = "/v1/nodes/"
)

// Handler serves the registry over HTTP with JSON bodies. Errors are answered as {"error": "..."} with 409 for a
// refused join, 404 for an unknown node and 400 for a bad request.
func (r *Registry) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+RegistryPathJoin, func(w http.ResponseWriter, req *http.Request) {
		var jr JoinRequest
		if err := json.NewDecoder(req.Body).Decode(&jr); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: err.Error()})
			return
		}
		ring, err := r.Join(jr)
		if err != nil {
			writeJSON(w, http.StatusConflict, errorBody{Error: err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, ring)
	})
	mux.HandleFunc("GET "+RegistryPathRings, func(w http.ResponseWriter, req *http.Request) {
		writeJSON(w, http.StatusOK, r.Rings())
	})
	mux.HandleFunc("POST "+RegistryPathNodes+"{hostID}/heartbeat", func(w http.ResponseWriter, req *http.Request) {
		writeResult(w, nil, r.Heartbeat(req.PathValue("hostID")))
	})
	mux.HandleFunc("POST "+RegistryPathNodes+"{hostID}/state", func(w http.ResponseWriter, req *http.Request) {
		var sr StateRequest
		if err := json.NewDecoder(req.Body).Decode(&sr); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: err.Error()})
			return
		}
		writeResult(w, nil, r.SetState(req.PathValue("hostID"), sr))
	})
	mux.HandleFunc("GET "+RegistryPathNodes+"{hostID}/ring", func(w http.ResponseWriter, req *http.Request) {
		ring, err := r.RingOf(req.PathValue("hostID"))
		writeResult(w, ring, err)
	})
	return mux
}

type errorBody struct {
	Error string `json:"error"`
}

func writeResult(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, errorBody{Error: err.Error()})
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errorBody{Error: err.Error()})
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
