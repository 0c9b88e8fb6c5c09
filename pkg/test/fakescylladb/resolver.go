package fakescylladb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Resolver resolves a host name to addresses, standing in for the DNS a ScyllaDB node resolves its seeds with.
// A name it doesn't know is an error wrapping ErrNotFound.
type Resolver interface {
	Resolve(ctx context.Context, name string) ([]string, error)
}

// ResolverQueryName is the query parameter holding the name to resolve: GET <resolver URL>?name=<name>.
const ResolverQueryName = "name"

// ResolveResponse is a resolver's answer to a name it knows.
type ResolveResponse struct {
	Addresses []string `json:"addresses"`
}

// NewResolverHandler serves resolve over HTTP: GET ?name=<name> answers 200 with a ResolveResponse, 404 with
// {"error"} for an unknown name (resolve's error wraps ErrNotFound or it returns no addresses), 400 without a name
// and 500 for any other error. resolve gets the request so that it can read path values.
func NewResolverHandler(resolve func(req *http.Request, name string) ([]string, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet {
			writeJSON(w, http.StatusMethodNotAllowed, errorBody{Error: "only GET resolves names"})
			return
		}
		name := req.URL.Query().Get(ResolverQueryName)
		if name == "" {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: fmt.Sprintf("query parameter %q is required", ResolverQueryName)})
			return
		}
		addresses, err := resolve(req, name)
		if err == nil && len(addresses) == 0 {
			err = fmt.Errorf("%s has no addresses: %w", name, ErrNotFound)
		}
		switch {
		case errors.Is(err, ErrNotFound):
			writeJSON(w, http.StatusNotFound, errorBody{Error: err.Error()})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
		default:
			writeJSON(w, http.StatusOK, ResolveResponse{Addresses: addresses})
		}
	})
}

// ResolverClient resolves names through a resolver served by NewResolverHandler.
type ResolverClient struct {
	url        *url.URL
	httpClient *http.Client
}

var _ Resolver = &ResolverClient{}

// NewResolverClient returns a client for the resolver at rawURL ("http://127.0.0.1:PORT/some/path").
func NewResolverClient(rawURL string) (*ResolverClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("resolver URL must be http://host:port[/path], got %q", rawURL)
	}
	return &ResolverClient{url: u, httpClient: &http.Client{Timeout: 10 * time.Second}}, nil
}

// Resolve returns the addresses of name; an unknown name is an error wrapping ErrNotFound.
func (c *ResolverClient) Resolve(ctx context.Context, name string) ([]string, error) {
	u := *c.url
	q := u.Query()
	q.Set(ResolverQueryName, name)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("can't reach the resolver: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		var eb errorBody
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		if resp.StatusCode == http.StatusNotFound {
			return nil, fmt.Errorf("can't resolve %q: %s: %w", name, msg, ErrNotFound)
		}
		return nil, fmt.Errorf("can't resolve %q: resolver returned %d: %s", name, resp.StatusCode, msg)
	}
	var out ResolveResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("can't parse the resolver's answer for %q: %w", name, err)
	}
	return out.Addresses, nil
}
