package fakescyllamanager

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

func (s *Server) listClusters() result {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]clusterOut, 0, len(s.clusterOrder))
	for _, id := range s.clusterOrder {
		out = append(out, s.clusters[id].listOut())
	}
	return ok(out)
}

// lookupClusterLocked finds a cluster by ID or, when the parameter is not a UUID, by name.
func (s *Server) lookupClusterLocked(idOrName string) (*cluster, *apiError) {
	if isUUID(idOrName) {
		if c, found := s.clusters[strings.ToLower(idOrName)]; found {
			return c, nil
		}
	} else {
		for _, id := range s.clusterOrder {
			if c := s.clusters[id]; c.Name == idOrName {
				return c, nil
			}
		}
	}
	return nil, notFound("load cluster %q", idOrName)
}

func (s *Server) getCluster(idOrName string) (result, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.lookupClusterLocked(idOrName)
	if err != nil {
		return result{}, err
	}
	return ok(c.out()), nil
}

func (s *Server) createCluster(r *http.Request) (result, *apiError) {
	var in clusterIn
	if err := decodeJSON(r, &in); err != nil {
		return result{}, badRequest("%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// A caller-chosen ID that exists turns the create into an update.
	prev := s.clusters[string(in.ID)]
	c, err := s.putClusterLocked(in, prev)
	if err != nil {
		return result{}, err.wrap("create cluster")
	}
	if prev == nil {
		s.addDefaultTasksLocked(c, in.WithoutRepair)
	}
	loc := r.URL.ResolveReference(&url.URL{Path: path.Join("cluster", c.ID)})
	return result{status: http.StatusCreated, location: loc.String()}, nil
}

func (s *Server) updateCluster(r *http.Request, idOrName string) (result, *apiError) {
	var in clusterIn
	decodeErr := decodeJSON(r, &in)
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, err := s.lookupClusterLocked(idOrName)
	if err != nil {
		return result{}, err
	}
	if decodeErr != nil {
		return result{}, badRequest("%v", decodeErr)
	}
	in.ID = uuidField(prev.ID)
	c, err := s.putClusterLocked(in, prev)
	if err != nil {
		return result{}, err.wrap("update cluster %q", prev.ID)
	}
	return ok(c.out()), nil
}

// validateClusterIn returns ScyllaDB Manager's cluster validation errors, joined as it joins them.
func validateClusterIn(in clusterIn) *apiError {
	var errs []string
	if isUUID(in.Name) {
		errs = append(errs, "name cannot be an UUID")
	}
	switch {
	case in.Username == "" && in.Password != "":
		errs = append(errs, "missing user")
	case in.Username != "" && in.Password == "":
		errs = append(errs, "missing password")
	}
	switch {
	case in.AlternatorAccessKeyID == "" && in.AlternatorSecretAccessKey != "":
		errs = append(errs, "missing alternator access key ID")
	case in.AlternatorAccessKeyID != "" && in.AlternatorSecretAccessKey == "":
		errs = append(errs, "missing alternator secret access key")
	}
	switch {
	case len(in.SSLUserCertFile) != 0 && len(in.SSLUserKeyFile) == 0:
		errs = append(errs, "missing SSL user key")
	case len(in.SSLUserKeyFile) != 0 && len(in.SSLUserCertFile) == 0:
		errs = append(errs, "missing SSL user cert")
	case len(in.SSLUserCertFile) != 0:
		if _, err := tls.X509KeyPair(in.SSLUserCertFile, in.SSLUserKeyFile); err != nil {
			errs = append(errs, fmt.Sprintf("invalid SSL user key pair: %v", err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return validationError("invalid cluster: %s", strings.Join(errs, "; "))
}

// putClusterLocked validates and stores a cluster; prev is the cluster it replaces, nil for a new one. Secrets
// left empty are kept.
func (s *Server) putClusterLocked(in clusterIn, prev *cluster) (*cluster, *apiError) {
	if err := validateClusterIn(in); err != nil {
		return nil, err
	}
	id := string(in.ID)
	if id == "" {
		id = newUUID()
	}
	if in.Name != "" {
		for _, other := range s.clusters {
			if other.ID != id && other.Name == in.Name {
				return nil, validationError("name %q is already taken", in.Name)
			}
		}
	}
	c := &cluster{
		ID:                     id,
		Name:                   in.Name,
		Labels:                 maps.Clone(in.Labels),
		Host:                   in.Host,
		Port:                   in.Port,
		AuthToken:              in.AuthToken,
		ForceTLSDisabled:       in.ForceTLSDisabled,
		ForceNonSSLSessionPort: in.ForceNonSSLSessionPort,
	}
	connectionChanged := prev == nil || prev.Host != c.Host || prev.Port != c.Port || prev.AuthToken != c.AuthToken
	if connectionChanged {
		if err := s.checkAgents(c); err != nil {
			return nil, err
		}
	}
	if prev != nil {
		c.Username, c.Password = prev.Username, prev.Password
		c.AlternatorAccessKeyID, c.AlternatorSecretAccessKey = prev.AlternatorAccessKeyID, prev.AlternatorSecretAccessKey
		c.SSLUserCert, c.SSLUserKey = prev.SSLUserCert, prev.SSLUserKey
	}
	if in.Username != "" {
		c.Username, c.Password = in.Username, in.Password
	}
	if in.AlternatorAccessKeyID != "" {
		c.AlternatorAccessKeyID, c.AlternatorSecretAccessKey = in.AlternatorAccessKeyID, in.AlternatorSecretAccessKey
	}
	if len(in.SSLUserCertFile) != 0 {
		c.SSLUserCert, c.SSLUserKey = slices.Clone(in.SSLUserCertFile), slices.Clone(in.SSLUserKeyFile)
	}
	if prev == nil {
		s.clusterOrder = append(s.clusterOrder, c.ID)
	}
	s.clusters[c.ID] = c
	return c, nil
}

// addDefaultTasksLocked adds the tasks ScyllaDB Manager creates with every cluster: three healthchecks and, unless
// withoutRepair, the weekly repair.
func (s *Server) addDefaultTasksLocked(c *cluster, withoutRepair bool) {
	now := s.now()
	for _, hc := range []struct{ mode, cron string }{{"cql", "@every 15s"}, {"rest", "@every 1m"}, {"alternator", "@every 15s"}} {
		cronSpec, err := parseCron(hc.cron)
		if err != nil {
			panic(fmt.Sprintf("invalid built-in cron %q: %v", hc.cron, err))
		}
		s.addTaskLocked(&task{
			ClusterID:  c.ID,
			ID:         newUUID(),
			Type:       typeHealthcheck,
			Name:       hc.mode,
			Enabled:    true,
			Schedule:   schedule{Cron: cronSpec, StartDate: now, ScheduledAt: now},
			Properties: []byte(fmt.Sprintf(`{"mode":%q}`, hc.mode)),
		})
	}
	if withoutRepair {
		return
	}
	cronSpec, err := parseCron("0 23 * * SAT")
	if err != nil {
		panic(fmt.Sprintf("invalid built-in cron: %v", err))
	}
	s.addTaskLocked(&task{
		ClusterID:  c.ID,
		ID:         newUUID(),
		Type:       typeRepair,
		Name:       "all-weekly",
		Enabled:    true,
		Schedule:   schedule{Cron: cronSpec, StartDate: now, ScheduledAt: now, Timezone: s.serverTimezone, NumRetries: 3},
		Properties: []byte(`{}`),
	})
}

func (s *Server) deleteCluster(r *http.Request, idOrName string) (result, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.lookupClusterLocked(idOrName)
	if err != nil {
		return result{}, err
	}
	var flags [3]bool
	for i, name := range []string{"cql_creds", "alternator_creds", "ssl_user_cert"} {
		if flags[i], err = parseBoolParam(r, name, false); err != nil {
			return result{}, err
		}
	}
	cqlCreds, alternatorCreds, sslUserCert := flags[0], flags[1], flags[2]
	if cqlCreds {
		c.Username, c.Password = "", ""
	}
	if alternatorCreds {
		c.AlternatorAccessKeyID, c.AlternatorSecretAccessKey = "", ""
	}
	if sslUserCert {
		c.SSLUserCert, c.SSLUserKey = nil, nil
	}
	if cqlCreds || alternatorCreds || sslUserCert {
		return emptyOK, nil
	}

	// The cluster goes away; its tasks are soft-deleted and backups in the bucket are not touched.
	for _, id := range s.taskOrder {
		if t := s.tasks[id]; t.ClusterID == c.ID && !t.Deleted {
			s.deleteTaskLocked(t)
		}
	}
	delete(s.clusters, c.ID)
	s.clusterOrder = slices.DeleteFunc(s.clusterOrder, func(id string) bool { return id == c.ID })
	return emptyOK, nil
}

func (s *Server) clusterStatus(idOrName string) (result, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, err := s.lookupClusterLocked(idOrName)
	if err != nil {
		return result{}, err
	}
	if err := s.checkAgents(c); err != nil {
		return result{}, err.wrap("status")
	}
	var out []hostStatusOut
	for _, dc := range s.topology(c.Host).Datacenters {
		for _, n := range dc.Nodes {
			hs := hostStatusOut{
				DC: dc.Name, HostID: n.HostID, Host: n.Address,
				Status: "UN", CQLStatus: "UP", CQLRttMs: 1, RESTStatus: "UP", RESTRttMs: 1,
				TotalRAM: 8 << 30, Uptime: 3600, CPUCount: 4, ScyllaVersion: "2025.1.0", AgentVersion: s.version,
			}
			if s.nodeDown(n.Address) {
				hs = hostStatusOut{
					DC: dc.Name, HostID: n.HostID, Host: n.Address, Status: "DN",
					CQLStatus: "DOWN", CQLCause: "dial tcp " + n.Address + ":9042: i/o timeout",
					RESTStatus: "DOWN", RESTCause: "timeout",
				}
			}
			out = append(out, hs)
		}
	}
	return ok(out), nil
}

// errUnknownCluster is returned by the Go API for IDs it does not know.
var errUnknownCluster = errors.New("unknown cluster")
