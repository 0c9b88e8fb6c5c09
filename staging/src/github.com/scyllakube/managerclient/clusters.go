package managerclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

func clusterPath(idOrName string) string {
	return "/cluster/" + url.PathEscape(idOrName)
}

// ListClusters returns every registered cluster. Credentials are masked: Username and Password read "set" when
// CQL credentials are stored.
func (c *Client) ListClusters(ctx context.Context) ([]Cluster, error) {
	var clusters []Cluster
	if _, err := c.do(ctx, request{method: http.MethodGet, path: "/clusters"}, &clusters); err != nil {
		return nil, err
	}
	if clusters == nil {
		clusters = []Cluster{}
	}
	return clusters, nil
}

// GetCluster returns the cluster with the given ID or name. Names may contain any character, "/" included.
func (c *Client) GetCluster(ctx context.Context, idOrName string) (*Cluster, error) {
	if err := requireArgs("cluster ID", idOrName); err != nil {
		return nil, err
	}
	cluster := &Cluster{}
	if _, err := c.do(ctx, request{method: http.MethodGet, path: clusterPath(idOrName)}, cluster); err != nil {
		return nil, err
	}
	return cluster, nil
}

// CreateCluster registers a cluster and returns its ID. When cluster.ID is set, the cluster gets that ID; if a
// cluster with that ID exists, it is updated instead. ScyllaDB Manager contacts the cluster's agents before
// storing it, and adds healthcheck tasks and, unless WithoutRepair is set, a weekly repair task.
func (c *Client) CreateCluster(ctx context.Context, cluster *Cluster) (string, error) {
	if cluster == nil {
		return "", errors.New("cluster must not be nil")
	}
	if cluster.ID != "" && !IsUUID(cluster.ID) {
		return "", fmt.Errorf("cluster ID %q is not a UUID", cluster.ID)
	}
	resp, err := c.do(ctx, request{method: http.MethodPost, path: "/clusters", body: cluster}, nil)
	if err != nil {
		return "", err
	}
	return idFromLocation(resp)
}

// UpdateCluster replaces the cluster with ID cluster.ID and returns the stored cluster. Credentials and the SSL
// key pair are kept when left empty; use DeleteClusterSecrets to remove them.
func (c *Client) UpdateCluster(ctx context.Context, cluster *Cluster) (*Cluster, error) {
	if cluster == nil {
		return nil, errors.New("cluster must not be nil")
	}
	if err := requireArgs("cluster ID", cluster.ID); err != nil {
		return nil, err
	}
	updated := &Cluster{}
	if _, err := c.do(ctx, request{method: http.MethodPut, path: clusterPath(cluster.ID), body: cluster}, updated); err != nil {
		return nil, err
	}
	return updated, nil
}

// DeleteCluster removes a cluster and soft-deletes its tasks. Backups in object storage are left untouched.
func (c *Client) DeleteCluster(ctx context.Context, idOrName string) error {
	if err := requireArgs("cluster ID", idOrName); err != nil {
		return err
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: clusterPath(idOrName)}, nil)
	return err
}

// DeleteSecretsOptions select the secrets DeleteClusterSecrets removes.
type DeleteSecretsOptions struct {
	CQLCredentials        bool
	AlternatorCredentials bool
	SSLUserCert           bool
}

// DeleteClusterSecrets removes the selected secrets of a cluster and keeps the cluster. At least one secret must be
// selected: the same request without any would delete the whole cluster.
func (c *Client) DeleteClusterSecrets(ctx context.Context, idOrName string, opts DeleteSecretsOptions) error {
	if err := requireArgs("cluster ID", idOrName); err != nil {
		return err
	}
	q := url.Values{}
	if opts.CQLCredentials {
		q.Set("cql_creds", strconv.FormatBool(true))
	}
	if opts.AlternatorCredentials {
		q.Set("alternator_creds", strconv.FormatBool(true))
	}
	if opts.SSLUserCert {
		q.Set("ssl_user_cert", strconv.FormatBool(true))
	}
	if len(q) == 0 {
		return errors.New("no secret selected: select at least one, or use DeleteCluster to delete the cluster")
	}
	_, err := c.do(ctx, request{method: http.MethodDelete, path: clusterPath(idOrName), query: q}, nil)
	return err
}

// ClusterStatus returns the status of every host of a cluster.
func (c *Client) ClusterStatus(ctx context.Context, idOrName string) ([]HostStatus, error) {
	if err := requireArgs("cluster ID", idOrName); err != nil {
		return nil, err
	}
	var hosts []HostStatus
	if _, err := c.do(ctx, request{method: http.MethodGet, path: clusterPath(idOrName) + "/status"}, &hosts); err != nil {
		return nil, err
	}
	if hosts == nil {
		hosts = []HostStatus{}
	}
	return hosts, nil
}
