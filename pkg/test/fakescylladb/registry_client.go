package fakescylladb

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// RegistryClient talks to a Registry served over HTTP.
type RegistryClient struct {
	baseURL    string
	httpClient *http.Client
}

// NewRegistryClient returns a client for the registry at baseURL ("http://127.0.0.1:PORT").
func NewRegistryClient(baseURL string) (*RegistryClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("registry URL must be http://host:port, got %q", baseURL)
	}
	return &RegistryClient{baseURL: strings.TrimSuffix(baseURL, "/"), httpClient: &http.Client{Timeout: 10 * time.Second}}, nil
}

func (c *RegistryClient) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return fmt.Errorf("can't reach the fake ScyllaDB registry: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			if resp.StatusCode == http.StatusNotFound {
				return fmt.Errorf("registry %s %s: %s: %w", method, path, eb.Error, ErrNotFound)
			}
			return fmt.Errorf("registry %s %s: %s", method, path, eb.Error)
		}
		return fmt.Errorf("registry %s %s returned %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// Join asks the registry to admit the node; see Registry.Join.
func (c *RegistryClient) Join(ctx context.Context, req JoinRequest) (Ring, error) {
	var ring Ring
	err := c.do(ctx, http.MethodPost, RegistryPathJoin, req, &ring)
	return ring, err
}

// Heartbeat tells the registry the node is alive.
func (c *RegistryClient) Heartbeat(ctx context.Context, hostID string) error {
	return c.do(ctx, http.MethodPost, RegistryPathNodes+url.PathEscape(hostID)+"/heartbeat", nil, nil)
}

// SetState changes the node's status or state; see Registry.SetState.
func (c *RegistryClient) SetState(ctx context.Context, hostID string, req StateRequest) error {
	return c.do(ctx, http.MethodPost, RegistryPathNodes+url.PathEscape(hostID)+"/state", req, nil)
}

// RingOf returns the ring the node belongs to.
func (c *RegistryClient) RingOf(ctx context.Context, hostID string) (Ring, error) {
	var ring Ring
	err := c.do(ctx, http.MethodGet, RegistryPathNodes+url.PathEscape(hostID)+"/ring", nil, &ring)
	return ring, err
}

// Rings returns every ring with members.
func (c *RegistryClient) Rings(ctx context.Context) ([]Ring, error) {
	var rings []Ring
	err := c.do(ctx, http.MethodGet, RegistryPathRings, nil, &rings)
	return rings, err
}
