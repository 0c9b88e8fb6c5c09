package fakescylladb

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/scyllakube/scylla-operator/pkg/scyllaclient"
)

// Files the fake keeps in ScyllaDB's workdir, so a restarted node keeps its identity like a real one.
const (
	HostIDFile         = "fake-scylladb-host-id"
	DecommissionedFile = "fake-scylladb-decommissioned"
	// ReplacingFile holds the host ID of the node this node is replacing until the replacement finished, so that a
	// restart midway resumes it.
	ReplacingFile = "fake-scylladb-replacing"
)

// Paths of the fake's own endpoints, served beside the REST API.
const (
	PathKnobs  = "/fake/knobs"
	PathRecord = "/fake/record"
)

// PathTokensEndpoint is ScyllaDB's REST API path listing which node owns each token, as [{"key": token, "value":
// address}] sorted by token. Only nodes that finished joining own tokens.
const PathTokensEndpoint = "/storage_service/tokens_endpoint"

// ErrDecommissioned is returned when a decommissioned node is started again, which ScyllaDB refuses too.
var ErrDecommissioned = errors.New("this node was decommissioned and will not rejoin the ring")

// Record is what one start of the fake writes to its record file and serves at PathRecord.
type Record struct {
	// Invocation keeps the seeds as given, names included.
	Invocation *Invocation `json:"invocation,omitempty"`
	Args       []string    `json:"args"`
	HostID     string      `json:"hostID,omitempty"`
	// ReplaceHostID is the host ID of the node this start replaces: replace_node_first_boot on first boot, or the
	// unfinished replacement a restart resumes. Unset when the node replaces nothing or ignored the option.
	ReplaceHostID string `json:"replaceHostID,omitempty"`
	// ResolvedSeeds are the seed addresses the node last tried to join with, once a Resolver turned seed names into
	// addresses; unset without a Resolver.
	ResolvedSeeds []string `json:"resolvedSeeds,omitempty"`
	Error         string   `json:"error,omitempty"`
}

// NodeOptions configure a fake node.
type NodeOptions struct {
	Invocation *Invocation
	Registry   *RegistryClient
	// Resolver, if set, resolves seeds that aren't IP addresses before each join; without it seeds are matched
	// literally.
	Resolver Resolver
	// RecordPath, if set, is the record file whose last entry, this start's, gets ResolvedSeeds.
	RecordPath        string
	Aliases           []string
	Knobs             Knobs
	HeartbeatInterval time.Duration
	Logger            *log.Logger
}

// Node is one fake ScyllaDB node: it serves the REST API subset and keeps its ring membership in the registry.
type Node struct {
	opts          NodeOptions
	hostID        string
	replaceHostID string
	record        Record

	lock            sync.Mutex
	knobs           Knobs
	mode            scyllaclient.OperationMode
	nativeTransport bool
	joined          bool
}

// NewNode prepares a node: it loads or creates the host ID in the workdir and refuses a decommissioned workdir.
func NewNode(opts NodeOptions) (*Node, error) {
	if opts.Invocation == nil || opts.Registry == nil {
		return nil, fmt.Errorf("a node needs an invocation and a registry client")
	}
	if opts.HeartbeatInterval <= 0 {
		opts.HeartbeatInterval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = log.New(os.Stderr, "fake-scylladb: ", log.LstdFlags)
	}
	hostID, replaceHostID, err := loadIdentity(opts.Invocation.Settings, opts.Logger)
	if err != nil {
		return nil, err
	}
	return &Node{
		opts:          opts,
		hostID:        hostID,
		replaceHostID: replaceHostID,
		knobs:         opts.Knobs,
		mode:          scyllaclient.OperationModeStarting,
		record: Record{
			Invocation: opts.Invocation, Args: opts.Invocation.Args, HostID: hostID, ReplaceHostID: replaceHostID,
		},
	}, nil
}

// HostID returns the node's host ID.
func (n *Node) HostID() string { return n.hostID }

// ReplaceHostID returns the host ID of the node this node replaces, or "" when it replaces none.
func (n *Node) ReplaceHostID() string { return n.replaceHostID }

// loadIdentity loads the node's host ID from the workdir, creating one on first boot, and decides which node this
// start replaces. As in ScyllaDB, replace_node_first_boot counts only on first boot and is ignored, with a log line,
// by a node that already has its identity; but a node that started replacing and restarts before it became Normal
// hasn't finished bootstrapping, so it resumes that replacement (the workdir remembers it, whether or not the option
// is still given) and refuses to replace another node instead.
func loadIdentity(s Settings, logger *log.Logger) (hostID, replaceHostID string, err error) {
	if err := os.MkdirAll(s.Workdir, 0o755); err != nil {
		return "", "", fmt.Errorf("can't create workdir: %w", err)
	}
	replacingPath := filepath.Join(s.Workdir, ReplacingFile)
	if replaceHostID, err = readWorkdirFile(replacingPath); err != nil {
		return "", "", err
	}
	hostIDPath := filepath.Join(s.Workdir, HostIDFile)
	if hostID, err = readWorkdirFile(hostIDPath); err != nil {
		return "", "", err
	}
	option := s.ReplaceNodeFirstBoot
	switch {
	case replaceHostID != "" && option != "" && option != replaceHostID:
		return "", "", fmt.Errorf("this node started replacing %s and hasn't finished; it can't replace %s (replace_node_first_boot) instead", replaceHostID, option)
	case replaceHostID != "":
		logger.Printf("resuming the unfinished replacement of node %s", replaceHostID)
	case option != "" && hostID == "":
		// Written before the host ID, so that a crash in between still leaves a node that replaces.
		if err := os.WriteFile(replacingPath, []byte(option+"\n"), 0o644); err != nil {
			return "", "", fmt.Errorf("can't record the replacement: %w", err)
		}
		replaceHostID = option
	case option != "":
		logger.Printf("ignoring replace_node_first_boot=%s: this node already has host ID %s, so this isn't its first boot", option, hostID)
	}
	if hostID == "" {
		hostID = uuid.NewString()
		if err := os.WriteFile(hostIDPath, []byte(hostID+"\n"), 0o644); err != nil {
			return "", "", fmt.Errorf("can't write host ID: %w", err)
		}
	}
	return hostID, replaceHostID, nil
}

// readWorkdirFile returns the trimmed content of a file in the workdir, or "" when there is none.
func readWorkdirFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("can't read %s: %w", path, err)
	}
	return strings.TrimSpace(string(data)), nil
}

// IsDecommissioned reports whether the node's workdir says it was decommissioned.
func (n *Node) IsDecommissioned() bool {
	_, err := os.Stat(filepath.Join(n.opts.Invocation.Settings.Workdir, DecommissionedFile))
	return err == nil
}

// APIAddress is the host:port the REST API is served on.
func (n *Node) APIAddress() string {
	s := n.opts.Invocation.Settings
	return net.JoinHostPort(s.APIAddress, strconv.Itoa(s.APIPort))
}

// Run serves the REST API on listener, joins the ring and heartbeats until ctx is done, then marks the node Down
// and returns nil. It returns an error when the node can't join a ring, as ScyllaDB would fail to start; stopped
// while it joins, it returns nil.
func (n *Node) Run(ctx context.Context, listener net.Listener) error {
	if n.IsDecommissioned() {
		return ErrDecommissioned
	}
	srv := &http.Server{Handler: n.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(listener) }()
	defer func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()

	if err := sleep(ctx, time.Duration(n.currentKnobs().StartupDelay)); err != nil {
		return nil
	}
	if err := n.join(ctx); err != nil {
		if ctx.Err() != nil {
			// Stopped while it joined, as a node stopped during its bootstrap: not a failure to join.
			return nil
		}
		return err
	}

	ticker := time.NewTicker(n.opts.HeartbeatInterval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			n.leave()
			return nil
		case err := <-serveErr:
			return fmt.Errorf("REST API server stopped: %w", err)
		case <-ticker.C:
			if n.currentMode() == scyllaclient.OperationModeDecommissioned {
				continue
			}
			if err := n.opts.Registry.Heartbeat(ctx, n.hostID); err != nil && ctx.Err() == nil {
				n.opts.Logger.Printf("heartbeat failed: %v", err)
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (n *Node) currentKnobs() Knobs {
	n.lock.Lock()
	defer n.lock.Unlock()
	return n.knobs
}

func (n *Node) currentMode() scyllaclient.OperationMode {
	n.lock.Lock()
	defer n.lock.Unlock()
	return n.mode
}

func (n *Node) setMode(mode scyllaclient.OperationMode, nativeTransport bool) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.mode = mode
	n.nativeTransport = nativeTransport
}

func (n *Node) join(ctx context.Context) error {
	s := n.opts.Invocation.Settings
	addresses := slices.Clone(n.opts.Aliases)
	for _, a := range []string{s.ListenAddress, s.RPCAddress, s.BroadcastRPCAddress} {
		if ip := net.ParseIP(a); ip != nil && !ip.IsUnspecified() && !slices.Contains(addresses, a) {
			addresses = append(addresses, a)
		}
	}
	knobs := n.currentKnobs()
	state := StateNormal
	if knobs.BootstrapDelay > 0 {
		state = StateJoining
	}
	n.setMode(scyllaclient.OperationModeJoining, false)
	seeds, err := n.resolveSeeds(ctx, s.Seeds)
	if err != nil {
		return fmt.Errorf("can't join a ring: %w", err)
	}
	ring, err := n.opts.Registry.Join(ctx, JoinRequest{State: state, NodeInfo: NodeInfo{
		HostID:              n.hostID,
		ClusterName:         s.ClusterName,
		Datacenter:          s.Datacenter,
		Rack:                s.Rack,
		BroadcastAddress:    s.BroadcastAddress,
		BroadcastRPCAddress: s.BroadcastRPCAddress,
		Addresses:           addresses,
		Seeds:               seeds,
		ReplaceHostID:       n.replaceHostID,
	}})
	if err != nil {
		return fmt.Errorf("can't join a ring: %w", err)
	}
	if n.replaceHostID != "" {
		n.opts.Logger.Printf("node %s (%s) joined %s with %d members, replacing node %s", n.hostID, s.BroadcastAddress, ring.ID, len(ring.Members), n.replaceHostID)
	} else {
		n.opts.Logger.Printf("node %s (%s) joined %s with %d members", n.hostID, s.BroadcastAddress, ring.ID, len(ring.Members))
	}
	n.lock.Lock()
	n.joined = true
	n.lock.Unlock()

	if knobs.Down {
		if err := n.opts.Registry.SetState(ctx, n.hostID, StateRequest{Status: StatusDown}); err != nil {
			return err
		}
	}
	if state == StateJoining {
		if err := n.bootstrap(ctx, time.Now()); err != nil {
			return nil
		}
		if err := n.opts.Registry.SetState(ctx, n.hostID, StateRequest{State: StateNormal}); err != nil {
			return err
		}
	}
	if n.replaceHostID != "" {
		n.finishReplacement()
	}
	n.setMode(scyllaclient.OperationModeNormal, !n.currentKnobs().NativeTransportDisabled)
	return nil
}

// finishReplacement forgets the replacement in the workdir once the registry has the node Normal. Should that
// fail, the next start resumes a finished replacement, which the registry accepts as a plain restart.
func (n *Node) finishReplacement() {
	err := os.Remove(filepath.Join(n.opts.Invocation.Settings.Workdir, ReplacingFile))
	if err != nil && !os.IsNotExist(err) {
		n.opts.Logger.Printf("can't forget the finished replacement in the workdir: %v", err)
	}
	n.opts.Logger.Printf("node %s replaced node %s", n.hostID, n.replaceHostID)
}

// bootstrapPoll is how often a Joining node rereads the bootstrapDelay knob.
const bootstrapPoll = 20 * time.Millisecond

// bootstrap waits until bootstrapDelay has passed since start, rereading the knob so that a test can shorten or
// end the Joining state through /fake/knobs.
func (n *Node) bootstrap(ctx context.Context, start time.Time) error {
	for {
		remaining := time.Until(start.Add(time.Duration(n.currentKnobs().BootstrapDelay)))
		if remaining <= 0 {
			return ctx.Err()
		}
		if err := sleep(ctx, min(remaining, bootstrapPoll)); err != nil {
			return err
		}
	}
}

// resolveSeeds turns seed names into addresses through the Resolver, as ScyllaDB resolves its seeds through DNS. IP
// addresses are kept; a name contributes all its addresses; a name that can't be resolved is left out, and it is an
// error when no seed remains. Without a Resolver the seeds are kept as given.
func (n *Node) resolveSeeds(ctx context.Context, seeds []string) ([]string, error) {
	if n.opts.Resolver == nil {
		return seeds, nil
	}
	var out []string
	add := func(addrs ...string) {
		for _, a := range addrs {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	for _, seed := range seeds {
		if net.ParseIP(seed) != nil {
			add(seed)
			continue
		}
		addrs, err := n.opts.Resolver.Resolve(ctx, seed)
		if err != nil {
			n.opts.Logger.Printf("leaving out seed %q: %v", seed, err)
			continue
		}
		n.opts.Logger.Printf("seed %q resolved to %v", seed, addrs)
		add(addrs...)
	}
	n.setResolvedSeeds(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("none of the seeds %v resolved to an address", seeds)
	}
	return out, nil
}

// setResolvedSeeds records the resolved seeds in the served record and in this start's entry of the record file.
func (n *Node) setResolvedSeeds(seeds []string) {
	n.updateRecord(func(r *Record) { r.ResolvedSeeds = slices.Clone(seeds) })
}

// recordError records why the node stopped, such as a refused join, in the served record and in this start's entry
// of the record file.
func (n *Node) recordError(err error) {
	n.updateRecord(func(r *Record) { r.Error = err.Error() })
}

func (n *Node) updateRecord(update func(*Record)) {
	n.lock.Lock()
	update(&n.record)
	record := n.record
	n.lock.Unlock()
	if n.opts.RecordPath == "" {
		return
	}
	if err := replaceLastRecord(n.opts.RecordPath, record); err != nil {
		n.opts.Logger.Printf("can't update the record: %v", err)
	}
}

func (n *Node) leave() {
	n.lock.Lock()
	joined := n.joined
	n.lock.Unlock()
	if !joined || n.currentMode() == scyllaclient.OperationModeDecommissioned {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := n.opts.Registry.SetState(ctx, n.hostID, StateRequest{Status: StatusDown}); err != nil {
		n.opts.Logger.Printf("can't mark the node Down on stop: %v", err)
	}
}

// Handler serves the REST API subset and the fake's own endpoints.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathRecord, func(w http.ResponseWriter, r *http.Request) {
		n.lock.Lock()
		record := n.record
		n.lock.Unlock()
		writeJSON(w, http.StatusOK, record)
	})
	mux.HandleFunc("GET "+PathKnobs, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, n.currentKnobs())
	})
	mux.HandleFunc("POST "+PathKnobs, n.serveSetKnobs)

	api := http.NewServeMux()
	api.HandleFunc("GET "+scyllaclient.PathLocalHostID, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, n.hostID)
	})
	api.HandleFunc("GET "+scyllaclient.PathHostIDs, func(w http.ResponseWriter, r *http.Request) {
		n.serveRing(w, r, func(m Member) (any, bool) {
			return map[string]string{"key": m.BroadcastAddress, "value": m.HostID}, true
		})
	})
	api.HandleFunc("GET "+scyllaclient.PathLiveEndpoints, func(w http.ResponseWriter, r *http.Request) {
		n.serveRing(w, r, func(m Member) (any, bool) { return m.BroadcastAddress, m.Status == StatusUp })
	})
	api.HandleFunc("GET "+scyllaclient.PathDownEndpoints, func(w http.ResponseWriter, r *http.Request) {
		n.serveRing(w, r, func(m Member) (any, bool) { return m.BroadcastAddress, m.Status == StatusDown })
	})
	for path, state := range map[string]NodeState{
		scyllaclient.PathJoiningNodes: StateJoining,
		scyllaclient.PathLeavingNodes: StateLeaving,
	} {
		api.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			n.serveRing(w, r, func(m Member) (any, bool) { return m.BroadcastAddress, m.State == state })
		})
	}
	api.HandleFunc("GET "+scyllaclient.PathMovingNodes, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, []string{})
	})
	api.HandleFunc("GET "+PathTokensEndpoint, n.serveTokensEndpoint)
	api.HandleFunc("GET "+scyllaclient.PathNativeTransport, func(w http.ResponseWriter, r *http.Request) {
		n.lock.Lock()
		defer n.lock.Unlock()
		writeJSON(w, http.StatusOK, n.nativeTransport)
	})
	api.HandleFunc("GET "+scyllaclient.PathOperationMode, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, string(n.currentMode()))
	})
	api.HandleFunc("POST "+scyllaclient.PathDecommission, n.serveDecommission)

	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.currentKnobs().APIFailure {
			writeJSON(w, http.StatusInternalServerError, map[string]any{"message": "injected failure", "code": 500})
			return
		}
		api.ServeHTTP(w, r)
	}))
	return mux
}

func (n *Node) serveSetKnobs(w http.ResponseWriter, r *http.Request) {
	var k Knobs
	if err := json.NewDecoder(r.Body).Decode(&k); err != nil {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: err.Error()})
		return
	}
	n.lock.Lock()
	old := n.knobs
	n.knobs = k
	joined := n.joined
	if n.mode == scyllaclient.OperationModeNormal {
		n.nativeTransport = !k.NativeTransportDisabled
	}
	n.lock.Unlock()
	if joined && old.Down != k.Down {
		status := StatusUp
		if k.Down {
			status = StatusDown
		}
		if err := n.opts.Registry.SetState(r.Context(), n.hostID, StateRequest{Status: status}); err != nil {
			writeJSON(w, http.StatusBadGateway, errorBody{Error: err.Error()})
			return
		}
	}
	writeJSON(w, http.StatusOK, k)
}

// serveRing answers with one entry per ring member that pick accepts; a node outside any ring knows no members.
// ScyllaDB keys these lists by address, so a node being replaced by one at the same address is left out: the
// address is the replacing node's.
func (n *Node) serveRing(w http.ResponseWriter, r *http.Request, pick func(Member) (any, bool)) {
	ring, ok := n.ring(w, r)
	if !ok {
		return
	}
	addressOf := map[string]string{}
	for _, m := range ring.Members {
		addressOf[m.HostID] = m.BroadcastAddress
	}
	hidden := map[string]bool{}
	for _, m := range ring.Members {
		if addr, ok := addressOf[m.ReplaceHostID]; ok && addr == m.BroadcastAddress {
			hidden[m.ReplaceHostID] = true
		}
	}
	out := []any{}
	for _, m := range ring.Members {
		if hidden[m.HostID] {
			continue
		}
		if v, ok := pick(m); ok {
			out = append(out, v)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// ring returns the ring this node is in, empty outside any; on error it answers 500 and returns false.
func (n *Node) ring(w http.ResponseWriter, r *http.Request) (Ring, bool) {
	ring, err := n.opts.Registry.RingOf(r.Context(), n.hostID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": err.Error(), "code": 500})
		return Ring{}, false
	}
	return ring, true
}

// serveTokensEndpoint answers PathTokensEndpoint. A Joining node owns no tokens yet; a node it replaces keeps
// them until the replacement finished.
func (n *Node) serveTokensEndpoint(w http.ResponseWriter, r *http.Request) {
	ring, ok := n.ring(w, r)
	if !ok {
		return
	}
	type owned struct {
		value int64
		kv    map[string]string
	}
	var tokens []owned
	for _, m := range ring.Members {
		if m.State == StateJoining {
			continue
		}
		for _, t := range m.Tokens {
			v, err := strconv.ParseInt(t, 10, 64)
			if err != nil {
				writeJSON(w, http.StatusInternalServerError, map[string]any{"message": fmt.Sprintf("node %s has a malformed token %q", m.HostID, t), "code": 500})
				return
			}
			tokens = append(tokens, owned{value: v, kv: map[string]string{"key": t, "value": m.BroadcastAddress}})
		}
	}
	slices.SortFunc(tokens, func(a, b owned) int { return cmp.Compare(a.value, b.value) })
	out := make([]map[string]string, 0, len(tokens))
	for _, t := range tokens {
		out = append(out, t.kv)
	}
	writeJSON(w, http.StatusOK, out)
}

func (n *Node) serveDecommission(w http.ResponseWriter, r *http.Request) {
	n.lock.Lock()
	if n.mode != scyllaclient.OperationModeNormal {
		mode := n.mode
		n.lock.Unlock()
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": fmt.Sprintf("node is in mode %s, not NORMAL", mode), "code": 500})
		return
	}
	n.mode = scyllaclient.OperationModeLeaving
	delay := time.Duration(n.knobs.DecommissionDelay)
	n.lock.Unlock()

	// The decommission goes on even if the caller gives up waiting, like ScyllaDB's.
	ctx := context.WithoutCancel(r.Context())
	err := n.opts.Registry.SetState(ctx, n.hostID, StateRequest{State: StateLeaving})
	if err == nil {
		_ = sleep(ctx, delay)
		err = n.opts.Registry.SetState(ctx, n.hostID, StateRequest{State: StateDecommissioned})
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(n.opts.Invocation.Settings.Workdir, DecommissionedFile), nil, 0o644)
	}
	if err != nil {
		n.setMode(scyllaclient.OperationModeNormal, true)
		writeJSON(w, http.StatusInternalServerError, map[string]any{"message": err.Error(), "code": 500})
		return
	}
	n.setMode(scyllaclient.OperationModeDecommissioned, false)
	n.opts.Logger.Printf("node %s decommissioned", n.hostID)
	w.WriteHeader(http.StatusOK)
}
