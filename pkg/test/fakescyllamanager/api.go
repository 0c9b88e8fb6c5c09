package fakescyllamanager

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// result is what an API handler answers on success.
type result struct {
	status int
	// body is encoded as JSON when not nil.
	body any
	// location is set as the Location header when not empty.
	location string
	// after, when set, runs once the handler has released the lock and before the answer is written: work such
	// as backup uploads that must not hold the lock.
	after func(context.Context)
}

func ok(body any) result {
	return result{status: http.StatusOK, body: body}
}

var emptyOK = result{status: http.StatusOK}

// serveAPI runs the handler of a matched route and writes its answer.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request, rt route) {
	var (
		res  result
		aErr *apiError
	)
	switch rt.endpoint {
	case EndpointPing:
		res = result{status: http.StatusNoContent}
	case EndpointVersion:
		res = ok(map[string]string{"version": s.version})
	case EndpointListClusters:
		res = s.listClusters()
	case EndpointCreateCluster:
		res, aErr = s.createCluster(r)
	default:
		var clusterID string
		clusterID, aErr = clusterParam(rt)
		if aErr == nil {
			res, aErr = s.serveClusterScoped(r, rt, clusterID)
		}
	}
	if aErr != nil {
		s.writeAPIError(w, aErr)
		return
	}
	if res.after != nil {
		// ScyllaDB Manager goes on with a run when the client leaves.
		res.after(context.WithoutCancel(r.Context()))
	}
	if res.location != "" {
		w.Header().Set("Location", res.location)
	}
	if res.body == nil {
		w.WriteHeader(res.status)
		return
	}
	writeJSON(w, res.status, res.body)
}

// clusterParam decodes the cluster path parameter the way ScyllaDB Manager does.
func clusterParam(rt route) (string, *apiError) {
	id, err := url.QueryUnescape(rt.rawClusterID)
	if err != nil {
		return "", badRequest("invalid encoding in cluster ID")
	}
	return id, nil
}

func (s *Server) serveClusterScoped(r *http.Request, rt route, clusterID string) (result, *apiError) {
	switch rt.endpoint {
	case EndpointGetCluster:
		return s.getCluster(clusterID)
	case EndpointUpdateCluster:
		return s.updateCluster(r, clusterID)
	case EndpointDeleteCluster:
		return s.deleteCluster(r, clusterID)
	case EndpointClusterStatus:
		return s.clusterStatus(clusterID)
	case EndpointListTasks:
		return s.listTasks(r, clusterID)
	case EndpointCreateTask:
		return s.createTask(r, clusterID)
	case EndpointUpdateTask:
		return s.updateTask(r, rt, clusterID)
	}
	// The remaining endpoints only read the task or act on it under the lock.
	s.mu.Lock()
	defer s.mu.Unlock()
	c, t, aErr := s.lookupTaskLocked(clusterID, rt.taskType, rt.taskID)
	if aErr != nil {
		return result{}, aErr
	}
	switch rt.endpoint {
	case EndpointGetTask:
		return ok(t.out()), nil
	case EndpointDeleteTask:
		s.deleteTaskLocked(t)
		return emptyOK, nil
	case EndpointStartTask:
		if _, err := parseBoolParam(r, "continue", true); err != nil {
			return result{}, err
		}
		_, after := s.startRunLocked(c, t)
		return result{status: http.StatusOK, after: after}, nil
	case EndpointStopTask:
		disable, err := parseBoolParam(r, "disable", false)
		if err != nil {
			return result{}, err
		}
		if disable {
			t.Enabled = false
		}
		s.stopRunLocked(t)
		return emptyOK, nil
	case EndpointTaskHistory:
		return s.taskHistoryLocked(r, t)
	case EndpointTaskRunProgress:
		return s.taskRunProgressLocked(t, rt.run)
	}
	return result{}, internalError("no handler for endpoint %s", rt.endpoint)
}

// parseBoolParam reads an optional boolean query parameter; a malformed value is a bad request.
func parseBoolParam(r *http.Request, name string, def bool) (bool, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badRequest("%v", err)
	}
	return b, nil
}
