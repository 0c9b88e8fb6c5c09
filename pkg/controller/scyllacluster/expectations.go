package scyllacluster

import (
	"sync"
	"time"
)

// createExpectationsTTL bounds how long a created object the cache never showed is waited for, in case something
// deleted it before the informer saw it; the Kubernetes controllers use the same bound.
const createExpectationsTTL = 5 * time.Minute

// createExpectations remember, per ScyllaCluster key, the ScyllaDBManagerTasks a sync created that the informer cache
// may not show yet. A sync creates a ScyllaCluster's tasks one after the other, and the add event of the first one
// syncs the ScyllaCluster again as soon as that sync ends, often before the informer has the second: read through the
// cache alone, that sync would create the second task again and be refused with a 409. An expectation is dropped once
// the cache shows the task, when the ScyllaCluster is gone, or after createExpectationsTTL. They live in memory only:
// after a restart the caches are fresh.
type createExpectations struct {
	now func() time.Time

	lock sync.Mutex
	// created holds, by ScyllaCluster key and then object name, when the object was created.
	created map[string]map[string]time.Time
}

func newCreateExpectations(now func() time.Time) *createExpectations {
	return &createExpectations{now: now, created: map[string]map[string]time.Time{}}
}

// recordCreate records that a sync of the ScyllaCluster key created the object name.
func (e *createExpectations) recordCreate(key, name string) {
	e.lock.Lock()
	defer e.lock.Unlock()
	if e.created[key] == nil {
		e.created[key] = map[string]time.Time{}
	}
	e.created[key][name] = e.now()
}

// pending tells whether the object name, which the cache does not show, was created by a sync of the ScyllaCluster
// key less than createExpectationsTTL ago; an expired expectation is dropped.
func (e *createExpectations) pending(key, name string) bool {
	e.lock.Lock()
	defer e.lock.Unlock()
	at, ok := e.created[key][name]
	if !ok {
		return false
	}
	if e.now().Sub(at) < createExpectationsTTL {
		return true
	}
	e.dropLocked(key, name)
	return false
}

// observed drops the expectation of the object name of the ScyllaCluster key: the cache shows it.
func (e *createExpectations) observed(key, name string) {
	e.lock.Lock()
	defer e.lock.Unlock()
	e.dropLocked(key, name)
}

func (e *createExpectations) dropLocked(key, name string) {
	delete(e.created[key], name)
	if len(e.created[key]) == 0 {
		delete(e.created, key)
	}
}

// forget drops every expectation of the ScyllaCluster key, which is gone.
func (e *createExpectations) forget(key string) {
	e.lock.Lock()
	defer e.lock.Unlock()
	delete(e.created, key)
}
