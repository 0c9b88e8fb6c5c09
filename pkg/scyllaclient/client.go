// Package scyllaclient is a small client for the subset of ScyllaDB's REST API that the sidecar and the probes use:
// the local host ID, node status and state of every node, the native transport state, the operation mode and
// decommission.
package scyllaclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// NodeStatus says whether gossip sees a node alive.
type NodeStatus string

const (
	// NodeStatusUp means the node is alive in gossip.
	NodeStatusUp NodeStatus = "Up"
	// NodeStatusDown means the node is known but not alive in gossip.
	NodeStatusDown NodeStatus = "Down"
)

// NodeState is the node's place in the token ring lifecycle.
type NodeState string

const (
	// NodeStateNormal means the node owns its tokens and serves them.
	NodeStateNormal NodeState = "Normal"
	// NodeStateJoining means the node is bootstrapping.
	NodeStateJoining NodeState = "Joining"
	// NodeStateLeaving means the node is being decommissioned or removed.
	NodeStateLeaving NodeState = "Leaving"
	// NodeStateMoving means the node is moving its tokens.
	NodeStateMoving NodeState = "Moving"
)

// OperationMode is the local node's mode as reported by /storage_service/operation_mode.
type OperationMode string

// Operation modes ScyllaDB reports.
const (
	OperationModeStarting       OperationMode = "STARTING"
	OperationModeNormal         OperationMode = "NORMAL"
	OperationModeJoining        OperationMode = "JOINING"
	OperationModeLeaving        OperationMode = "LEAVING"
	OperationModeDecommissioned OperationMode = "DECOMMISSIONED"
	OperationModeMoving         OperationMode = "MOVING"
	OperationModeDraining       OperationMode = "DRAINING"
	OperationModeDrained        OperationMode = "DRAINED"
)

// NodeStatusInfo describes one node of the cluster as seen by the queried node.
type NodeStatusInfo struct {
	HostID string
	Addr   string
	Status NodeStatus
	State  NodeState
}

// IsUN reports whether the node is Up and Normal.
func (n NodeStatusInfo) IsUN() bool {
	return n.Status == NodeStatusUp && n.State == NodeStateNormal
}

// API paths of the ScyllaDB REST API used by this client.
const (
	PathLocalHostID     = "/storage_service/hostid/local"
	PathHostIDs         = "/storage_service/host_id"
	PathLiveEndpoints   = "/gossiper/endpoint/live/"
	PathDownEndpoints   = "/gossiper/endpoint/down/"
	PathJoiningNodes    = "/storage_service/nodes/joining"
	PathLeavingNodes    = "/storage_service/nodes/leaving"
	PathMovingNodes     = "/storage_service/nodes/moving"
	PathNativeTransport = "/storage_service/native_transport"
	PathOperationMode   = "/storage_service/operation_mode"
	PathDecommission    = "/storage_service/decommission"
)

// DefaultTimeout bounds every request that does not block on a long-running operation.
const DefaultTimeout = 10 * time.Second

// Client talks to one ScyllaDB node's REST API.
type Client struct {
	baseURL    *url.URL
	httpClient *http.Client
}

// NewClient returns a client for the REST API served at address ("host:port"). A nil httpClient means a client with
// DefaultTimeout.
func NewClient(address string, httpClient *http.Client) (*Client, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("can't parse ScyllaDB API address %q: %w", address, err)
	}
	if host == "" || port == "" {
		return nil, fmt.Errorf("can't parse ScyllaDB API address %q: host and port must both be set", address)
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{
		baseURL:    &url.URL{Scheme: "http", Host: net.JoinHostPort(host, port)},
		httpClient: httpClient,
	}, nil
}

// StatusError is returned when the API answers with a non-2xx status.
type StatusError struct {
	Method     string
	Path       string
	StatusCode int
	Body       string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("ScyllaDB API %s %s returned %d: %s", e.Method, e.Path, e.StatusCode, strings.TrimSpace(e.Body))
}

func (c *Client) do(ctx context.Context, method, path string, query url.Values, out any) error {
	u := *c.baseURL
	u.Path = path
	u.RawQuery = query.Encode()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("can't create request %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("can't call ScyllaDB API %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("can't read ScyllaDB API response to %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Method: method, Path: path, StatusCode: resp.StatusCode, Body: string(body)}
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(out); err != nil {
		return fmt.Errorf("can't decode ScyllaDB API response to %s %s: %w", method, path, err)
	}
	return nil
}

// LocalHostID returns the host ID of the queried node.
func (c *Client) LocalHostID(ctx context.Context) (string, error) {
	var hostID string
	if err := c.do(ctx, http.MethodGet, PathLocalHostID, nil, &hostID); err != nil {
		return "", err
	}
	if hostID == "" {
		return "", fmt.Errorf("ScyllaDB API %s returned an empty host ID", PathLocalHostID)
	}
	return hostID, nil
}

type keyValue struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func (c *Client) stringList(ctx context.Context, path string) ([]string, error) {
	var l []string
	if err := c.do(ctx, http.MethodGet, path, nil, &l); err != nil {
		return nil, err
	}
	return l, nil
}

// Status returns the status and state of every node the queried node knows about, sorted by address.
func (c *Client) Status(ctx context.Context) ([]NodeStatusInfo, error) {
	var hostIDs []keyValue
	if err := c.do(ctx, http.MethodGet, PathHostIDs, nil, &hostIDs); err != nil {
		return nil, err
	}
	live, err := c.stringList(ctx, PathLiveEndpoints)
	if err != nil {
		return nil, err
	}
	joining, err := c.stringList(ctx, PathJoiningNodes)
	if err != nil {
		return nil, err
	}
	leaving, err := c.stringList(ctx, PathLeavingNodes)
	if err != nil {
		return nil, err
	}
	moving, err := c.stringList(ctx, PathMovingNodes)
	if err != nil {
		return nil, err
	}

	nodes := make([]NodeStatusInfo, 0, len(hostIDs))
	for _, kv := range hostIDs {
		n := NodeStatusInfo{HostID: kv.Value, Addr: kv.Key, Status: NodeStatusDown, State: NodeStateNormal}
		if slices.Contains(live, kv.Key) {
			n.Status = NodeStatusUp
		}
		switch {
		case slices.Contains(joining, kv.Key):
			n.State = NodeStateJoining
		case slices.Contains(leaving, kv.Key):
			n.State = NodeStateLeaving
		case slices.Contains(moving, kv.Key):
			n.State = NodeStateMoving
		}
		nodes = append(nodes, n)
	}
	slices.SortFunc(nodes, func(a, b NodeStatusInfo) int { return strings.Compare(a.Addr, b.Addr) })
	return nodes, nil
}

// IsNativeTransportEnabled reports whether the CQL server of the queried node is running.
func (c *Client) IsNativeTransportEnabled(ctx context.Context) (bool, error) {
	var enabled bool
	if err := c.do(ctx, http.MethodGet, PathNativeTransport, nil, &enabled); err != nil {
		return false, err
	}
	return enabled, nil
}

// OperationMode returns the operation mode of the queried node.
func (c *Client) OperationMode(ctx context.Context) (OperationMode, error) {
	var mode string
	if err := c.do(ctx, http.MethodGet, PathOperationMode, nil, &mode); err != nil {
		return "", err
	}
	return OperationMode(mode), nil
}

// Decommission starts decommissioning the queried node. ScyllaDB answers when the decommission finished, which can
// outlast the HTTP client's timeout; callers poll OperationMode to learn the outcome either way.
func (c *Client) Decommission(ctx context.Context) error {
	return c.do(ctx, http.MethodPost, PathDecommission, nil, nil)
}
