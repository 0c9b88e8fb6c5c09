package fakescylladb

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
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
	// ReplaceHostID is the host ID of the Down node this node takes the place of (ScyllaDB's
	// replace_node_first_boot). In a Member it stays set after the replacement finished.
	ReplaceHostID string `json:"replaceHostID,omitempty"`
}

// Member is one node as the registry knows it.
type Member struct {
	NodeInfo
	Status NodeStatus `json:"status"`
	State  NodeState  `json:"state"`
	RingID string     `json:"ringID"`
	// Tokens are the node's ring position: TokensPerNode tokens derived from the host ID of the node that first
	// joined at this position and handed on to the node that replaces it.
	Tokens []string `json:"tokens"`
}

// TokensPerNode is how many tokens each node owns. ScyllaDB's default is 256; a few are enough to tell ring
// positions apart and keep the registry's answers small.
const TokensPerNode = 4

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
	// replaced maps the host ID of a node that was replaced to the host ID of the node that took its place.
	replaced map[string]string
}

// NewRegistry returns an empty registry. A ttl of 0 disables heartbeat expiry: nodes are Down only when told so.
func NewRegistry(ttl time.Duration) *Registry {
	return &Registry{
		ttl:            ttl,
		now:            time.Now,
		members:        map[string]*member{},
		rings:          map[string]string{},
		decommissioned: map[string]bool{},
		replaced:       map[string]string{},
	}
}

// ErrNotFound is returned for a host ID the registry doesn't know.
var ErrNotFound = errors.New("not found")

func (r *Registry) effective(m *member) Member {
	out := m.Member
	out.Addresses = slices.Clone(m.Addresses)
	out.Seeds = slices.Clone(m.Seeds)
	out.Tokens = slices.Clone(m.Tokens)
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
// reachable at a live node, and fails when none is. A new node gets its own tokens; a node with ReplaceHostID takes
// over the tokens of the node it replaces instead (see joinReplacingLocked).
func (r *Registry) Join(req JoinRequest) (Ring, error) {
	if req.HostID == "" || req.ClusterName == "" || req.BroadcastAddress == "" {
		return Ring{}, fmt.Errorf("hostID, clusterName and broadcastAddress are required")
	}
	if len(req.Seeds) == 0 {
		return Ring{}, fmt.Errorf("node %s has no seeds", req.HostID)
	}
	if req.ReplaceHostID == req.HostID {
		return Ring{}, fmt.Errorf("node %s can't replace itself", req.HostID)
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
	if by, ok := r.replaced[req.HostID]; ok {
		return Ring{}, fmt.Errorf("node %s was replaced by %s and will not rejoin the ring", req.HostID, by)
	}

	info := req.NodeInfo
	info.Addresses = slices.Clone(info.Addresses)
	info.Seeds = slices.Clone(info.Seeds)
	self := &member{Member: Member{NodeInfo: info, Status: StatusUp, State: state}, lastHeartbeat: r.now()}

	if existing, ok := r.members[req.HostID]; ok {
		return r.rejoinLocked(existing, self)
	}
	if req.ReplaceHostID != "" {
		return r.joinReplacingLocked(self)
	}
	if err := r.checkAddressFreeLocked(self); err != nil {
		return Ring{}, err
	}
	if len(r.seedsOfOthersLocked(self)) == 0 {
		r.nextRing++
		self.RingID = fmt.Sprintf("ring-%d", r.nextRing)
		r.rings[self.RingID] = req.ClusterName
		self.Tokens = tokensFor(self.HostID)
		r.members[req.HostID] = self
		return r.ringLocked(self.RingID), nil
	}
	ringID, err := r.seedRingLocked(self)
	if err != nil {
		return Ring{}, err
	}
	self.RingID = ringID
	self.Tokens = tokensFor(self.HostID)
	r.members[req.HostID] = self
	return r.ringLocked(self.RingID), nil
}

// checkAddressFreeLocked refuses a node whose broadcast address a live node already has.
func (r *Registry) checkAddressFreeLocked(self *member) error {
	for _, m := range r.sortedMembersLocked() {
		if m.HostID != self.HostID && m.BroadcastAddress == self.BroadcastAddress && r.effective(m).Status == StatusUp {
			return fmt.Errorf("a live node %s already has address %s", m.HostID, self.BroadcastAddress)
		}
	}
	return nil
}

// seedsOfOthersLocked returns the node's seeds that aren't its own addresses.
func (r *Registry) seedsOfOthersLocked(self *member) []string {
	var others []string
	for _, s := range self.Seeds {
		if !self.reachableAt(s) {
			others = append(others, s)
		}
	}
	return others
}

// seedRingLocked returns the ring of the first of the node's seeds that is reachable at a live node.
func (r *Registry) seedRingLocked(self *member) (string, error) {
	for _, s := range r.seedsOfOthersLocked(self) {
		for _, m := range r.sortedMembersLocked() {
			e := r.effective(m)
			if !m.reachableAt(s) || e.Status != StatusUp || e.State == StateDecommissioned {
				continue
			}
			if m.ClusterName != self.ClusterName {
				return "", fmt.Errorf("seed %s belongs to cluster %q, not %q", s, m.ClusterName, self.ClusterName)
			}
			return m.RingID, nil
		}
	}
	return "", fmt.Errorf("node %s can't join a ring: no live node at any of its seeds %v", self.HostID, self.Seeds)
}

// rejoinLocked takes a restarted node back into its ring with its tokens. A node that hadn't finished replacing
// another resumes that replacement, in the state it asks for, and must name the same node; any other node comes
// back Normal.
func (r *Registry) rejoinLocked(existing, self *member) (Ring, error) {
	if existing.ClusterName != self.ClusterName {
		return Ring{}, fmt.Errorf("node %s belongs to cluster %q, not %q", self.HostID, existing.ClusterName, self.ClusterName)
	}
	if err := r.checkAddressFreeLocked(self); err != nil {
		return Ring{}, err
	}
	replacing := r.replacingLocked(existing)
	switch {
	case self.ReplaceHostID == existing.ReplaceHostID:
	case existing.ReplaceHostID == "":
		return Ring{}, fmt.Errorf("node %s has already bootstrapped and can't replace %s", self.HostID, self.ReplaceHostID)
	case replacing && self.ReplaceHostID == "":
		return Ring{}, fmt.Errorf("node %s hasn't finished replacing %s and must restart with replace_node_first_boot=%s", self.HostID, existing.ReplaceHostID, existing.ReplaceHostID)
	case replacing:
		return Ring{}, fmt.Errorf("node %s hasn't finished replacing %s and can't replace %s instead", self.HostID, existing.ReplaceHostID, self.ReplaceHostID)
	case self.ReplaceHostID != "":
		return Ring{}, fmt.Errorf("node %s replaced %s, not %s", self.HostID, existing.ReplaceHostID, self.ReplaceHostID)
	}
	self.RingID = existing.RingID
	self.Tokens = existing.Tokens
	self.ReplaceHostID = existing.ReplaceHostID
	if !replacing {
		self.State = StateNormal
		r.members[self.HostID] = self
		return r.ringLocked(self.RingID), nil
	}
	if _, err := r.replaceTargetLocked(self); err != nil {
		return Ring{}, err
	}
	r.members[self.HostID] = self
	if self.State == StateNormal {
		r.finishReplaceLocked(self)
	}
	return r.ringLocked(self.RingID), nil
}

// joinReplacingLocked admits a new node that takes the place of the Down node ReplaceHostID in the ring its seeds
// lead to: it gets that node's tokens, and the replaced node leaves the ring for good once this one is Normal. A
// replacement that another node started and left unfinished, Down, is dropped in favour of this one.
func (r *Registry) joinReplacingLocked(self *member) (Ring, error) {
	target, err := r.replaceTargetLocked(self)
	if err != nil {
		return Ring{}, err
	}
	if err := r.checkAddressFreeLocked(self); err != nil {
		return Ring{}, err
	}
	ringID, err := r.seedRingLocked(self)
	if err != nil {
		return Ring{}, err
	}
	if target.RingID != ringID {
		return Ring{}, fmt.Errorf("cannot replace node %s: host ID not found in ring %s of cluster %q that the seeds %v lead to", self.ReplaceHostID, ringID, self.ClusterName, self.Seeds)
	}
	for _, m := range r.sortedMembersLocked() {
		if m.HostID != self.HostID && m.ReplaceHostID == self.ReplaceHostID && r.replacingLocked(m) {
			delete(r.members, m.HostID)
		}
	}
	self.RingID = ringID
	self.Tokens = slices.Clone(target.Tokens)
	r.members[self.HostID] = self
	if self.State == StateNormal {
		r.finishReplaceLocked(self)
	}
	return r.ringLocked(self.RingID), nil
}

// replaceTargetLocked returns the node self is to replace, or why it can't: the host ID is unknown or already
// replaced, the node is still Up, or another node that is Up is replacing it already.
func (r *Registry) replaceTargetLocked(self *member) (*member, error) {
	id := self.ReplaceHostID
	if by, ok := r.replaced[id]; ok {
		return nil, fmt.Errorf("cannot replace node %s: it was already replaced by %s", id, by)
	}
	target, ok := r.members[id]
	if !ok || target.ClusterName != self.ClusterName {
		return nil, fmt.Errorf("cannot replace node %s: host ID not found in cluster %q", id, self.ClusterName)
	}
	if e := r.effective(target); e.Status != StatusDown {
		return nil, fmt.Errorf("cannot replace a live node %s (%s): it is %s, a replaced node must be Down", id, target.BroadcastAddress, e.Status)
	}
	for _, m := range r.sortedMembersLocked() {
		if m.HostID != self.HostID && m.ReplaceHostID == id && r.replacingLocked(m) && r.effective(m).Status == StatusUp {
			return nil, fmt.Errorf("cannot replace node %s: node %s (%s) is replacing it already", id, m.HostID, m.BroadcastAddress)
		}
	}
	return target, nil
}

// replacingLocked reports whether m started replacing a node and hasn't finished.
func (r *Registry) replacingLocked(m *member) bool {
	return m.ReplaceHostID != "" && r.replaced[m.ReplaceHostID] != m.HostID
}

// finishReplaceLocked removes the node m replaced from its ring for good.
func (r *Registry) finishReplaceLocked(m *member) {
	delete(r.members, m.ReplaceHostID)
	r.replaced[m.ReplaceHostID] = m.HostID
}

// tokensFor derives a node's tokens from its host ID, so that they are stable and differ between nodes.
func tokensFor(hostID string) []string {
	values := make([]int64, 0, TokensPerNode)
	for i := 0; i < TokensPerNode; i++ {
		sum := sha256.Sum256([]byte(hostID + "/" + strconv.Itoa(i)))
		values = append(values, int64(binary.BigEndian.Uint64(sum[:8])))
	}
	slices.Sort(values)
	tokens := make([]string, 0, len(values))
	for _, v := range values {
		tokens = append(tokens, strconv.FormatInt(v, 10))
	}
	return tokens
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
// for good; a replacing node that becomes Normal removes the node it replaced from its ring for good.
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
	if m.State == StateNormal && r.replacingLocked(m) {
		r.finishReplaceLocked(m)
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
