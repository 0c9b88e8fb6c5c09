package scylladbdatacenter

import (
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// expectationsTTL bounds how long a write the caches never showed is waited for, in case something undid it before
// the informer saw it; the Kubernetes controllers use the same bound.
const expectationsTTL = 5 * time.Minute

// expectations remember, per datacenter key, the writes that decide what a node operation may do next and that the
// informer caches may not show yet: the replica counts last written to StatefulSets, and the decommission requests
// last written to member Services. A sync reads the caches through them (collectRacks), so that a lagging cache never
// reads as a StatefulSet with fewer nodes or as a datacenter where no node is leaving: two nodes are never asked to
// leave at once. An expectation is
// dropped once the cache shows the write, when the object it is about is gone or replaced, or after expectationsTTL.
// They live in memory only: after a restart the caches are fresh.
type expectations struct {
	now func() time.Time

	lock sync.Mutex
	// statefulSets and decommissions hold, by datacenter key and then object name, what was written.
	statefulSets  map[string]map[string]statefulSetWrite
	decommissions map[string]map[string]decommissionWrite
	// deletions hold, by datacenter key, when each object a node replacement deleted, by UID, was deleted.
	deletions map[string]map[types.UID]time.Time
}

// statefulSetWrite is a StatefulSet as a write returned it.
type statefulSetWrite struct {
	uid        types.UID
	generation int64
	replicas   int32
	at         time.Time
}

// decommissionWrite is a member Service the decommission request was written to.
type decommissionWrite struct {
	uid types.UID
	at  time.Time
}

func newExpectations(now func() time.Time) *expectations {
	return &expectations{
		now:           now,
		statefulSets:  map[string]map[string]statefulSetWrite{},
		decommissions: map[string]map[string]decommissionWrite{},
		deletions:     map[string]map[types.UID]time.Time{},
	}
}

// wroteStatefulSet records sts, as the API server returned it from a write for the datacenter key.
func (e *expectations) wroteStatefulSet(key string, sts *appsv1.StatefulSet) {
	e.lock.Lock()
	defer e.lock.Unlock()
	if e.statefulSets[key] == nil {
		e.statefulSets[key] = map[string]statefulSetWrite{}
	}
	var replicas int32
	if sts.Spec.Replicas != nil {
		replicas = *sts.Spec.Replicas
	}
	e.statefulSets[key][sts.Name] = statefulSetWrite{uid: sts.UID, generation: sts.Generation, replicas: replicas, at: e.now()}
}

// pendingReplicas returns the replica count last written to the StatefulSet name of the datacenter key when cached,
// the cache's copy of it (nil: none), does not show that write yet.
func (e *expectations) pendingReplicas(key, name string, cached *appsv1.StatefulSet) (int32, bool) {
	e.lock.Lock()
	defer e.lock.Unlock()
	write, ok := e.statefulSets[key][name]
	if !ok {
		return 0, false
	}
	switch {
	case e.now().Sub(write.at) > expectationsTTL,
		// The cache shows the write, or another StatefulSet: ours was replaced since.
		cached != nil && (cached.UID != write.uid || cached.Generation >= write.generation):
		delete(e.statefulSets[key], name)
		return 0, false
	}
	return write.replicas, true
}

// wroteDecommission records that the decommission request was written to svc, as the API server returned it, for
// the datacenter key.
func (e *expectations) wroteDecommission(key string, svc *corev1.Service) {
	e.lock.Lock()
	defer e.lock.Unlock()
	if e.decommissions[key] == nil {
		e.decommissions[key] = map[string]decommissionWrite{}
	}
	e.decommissions[key][svc.Name] = decommissionWrite{uid: svc.UID, at: e.now()}
}

// pendingDecommission tells whether a decommission request was written to the member Service name of the datacenter
// key that cached, the cache's copy of it (nil: none), does not show yet.
func (e *expectations) pendingDecommission(key, name string, cached *corev1.Service) bool {
	e.lock.Lock()
	defer e.lock.Unlock()
	write, ok := e.decommissions[key][name]
	if !ok {
		return false
	}
	if cached == nil || cached.UID != write.uid || e.now().Sub(write.at) > expectationsTTL {
		delete(e.decommissions[key], name)
		return false
	}
	if _, labelled := cached.Labels[naming.DecommissionedLabel]; labelled {
		delete(e.decommissions[key], name)
		return false
	}
	return true
}

// forget drops everything recorded for the datacenter key, which is gone.
func (e *expectations) forget(key string) {
	e.lock.Lock()
	defer e.lock.Unlock()
	delete(e.statefulSets, key)
	delete(e.decommissions, key)
	delete(e.deletions, key)
}

// wroteDeletion records that the object uid was deleted for the datacenter key, and drops the deletions recorded
// longer than expectationsTTL ago.
func (e *expectations) wroteDeletion(key string, uid types.UID) {
	e.lock.Lock()
	defer e.lock.Unlock()
	now := e.now()
	for k, at := range e.deletions[key] {
		if now.Sub(at) > expectationsTTL {
			delete(e.deletions[key], k)
		}
	}
	if e.deletions[key] == nil {
		e.deletions[key] = map[types.UID]time.Time{}
	}
	e.deletions[key][uid] = now
}

// pendingDeletion tells whether the object uid was deleted for the datacenter key less than expectationsTTL ago:
// a cache that still shows it without a deletion timestamp is behind.
func (e *expectations) pendingDeletion(key string, uid types.UID) bool {
	e.lock.Lock()
	defer e.lock.Unlock()
	at, ok := e.deletions[key][uid]
	return ok && e.now().Sub(at) <= expectationsTTL
}
