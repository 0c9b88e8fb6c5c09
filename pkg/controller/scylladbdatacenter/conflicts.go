package scylladbdatacenter

import (
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
)

// defaultRecheckInterval is how often a datacenter that depends on objects outside the informer caches is synced
// again (Controller.recheckInterval).
const defaultRecheckInterval = time.Minute

// ownershipConflicts remember, per datacenter key, the objects the datacenter needs whose names are taken by objects
// that belong to someone else (resourceapply.ErrOwnershipConflict): by kindNameKey, the version (UID and
// resourceVersion) of the object in the way when the conflict was found, and the error reporting it. While that
// object stays as it was, the conflict is reported again without another attempt to apply, and so without another
// event. They live in memory only: after a restart a conflict is reported once more.
type ownershipConflicts struct {
	lock  sync.Mutex
	byKey map[string]map[string]ownershipConflict
}

type ownershipConflict struct {
	version string
	err     error
}

func newOwnershipConflicts() *ownershipConflicts {
	return &ownershipConflicts{byKey: map[string]map[string]ownershipConflict{}}
}

// objectVersion identifies a state of obj: another object of that name, or any change to it, has another version.
func objectVersion(obj kubeinterfaces.ObjectInterface) string {
	return string(obj.GetUID()) + "/" + obj.GetResourceVersion()
}

// get returns the conflict recorded for object of the datacenter key.
func (o *ownershipConflicts) get(key, object string) (ownershipConflict, bool) {
	o.lock.Lock()
	defer o.lock.Unlock()
	c, ok := o.byKey[key][object]
	return c, ok
}

// record records a conflict of the datacenter key about object.
func (o *ownershipConflicts) record(key, object string, c ownershipConflict) {
	o.lock.Lock()
	defer o.lock.Unlock()
	if o.byKey[key] == nil {
		o.byKey[key] = map[string]ownershipConflict{}
	}
	o.byKey[key][object] = c
}

// resolve forgets the conflict of the datacenter key about object.
func (o *ownershipConflicts) resolve(key, object string) {
	o.lock.Lock()
	defer o.lock.Unlock()
	delete(o.byKey[key], object)
	if len(o.byKey[key]) == 0 {
		delete(o.byKey, key)
	}
}

// any tells whether the datacenter key has a conflict.
func (o *ownershipConflicts) any(key string) bool {
	o.lock.Lock()
	defer o.lock.Unlock()
	return len(o.byKey[key]) != 0
}

// forget drops every conflict of the datacenter key, which is gone.
func (o *ownershipConflicts) forget(key string) {
	o.lock.Lock()
	defer o.lock.Unlock()
	delete(o.byKey, key)
}
