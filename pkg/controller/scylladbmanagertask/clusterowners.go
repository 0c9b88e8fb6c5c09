package scylladbmanagertask

import (
	"context"
	"fmt"
	"sync"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/types"
)

// clusterOwners remembers which ScyllaDB Manager clusters were found labelled with which owner UID, so that an
// annotation naming a cluster under an ID not derived from its object's UID is checked once per process, not once per
// sync. The owner label of a cluster is written by the registration controller only, and only for its own object, so a
// cluster found labelled with a UID stays that object's.
type clusterOwners struct {
	mu     sync.Mutex
	owners map[string]types.UID
}

func newClusterOwners() *clusterOwners {
	return &clusterOwners{owners: map[string]types.UID{}}
}

func (o *clusterOwners) get(clusterID string) (types.UID, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	uid, ok := o.owners[clusterID]
	return uid, ok
}

func (o *clusterOwners) set(clusterID string, uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.owners[clusterID] = uid
}

// verifyClusterOwner tells whether reg's cluster is the referenced object's, or why the task must wait before it is
// scheduled there. An ID derived from the object's UID is its own (naming.ScyllaDBManagerClusterID); any other ID (the
// established operator's, which the operator copies into the annotation, or one adopted by name) is the object's once
// ScyllaDB Manager holds it labelled with the object's UID, which the registration controller writes when it registers
// or adopts it. Until then the annotation may have come with a manifest copied from another object, and the task
// would be scheduled into that object's cluster. A cluster ScyllaDB Manager does not hold is left to the task list's
// read, which waits for its registration. The error is ScyllaDB Manager's, to retry.
func (c *Controller) verifyClusterOwner(ctx context.Context, kind string, reg registration) (waiting string, _ error) {
	if reg.clusterID == naming.ScyllaDBManagerClusterID(kind, reg.uid) {
		return "", nil
	}
	if uid, ok := c.clusterOwners.get(reg.clusterID); ok && uid == reg.uid {
		return "", nil
	}
	cluster, err := c.managerClient.GetCluster(ctx, reg.clusterID)
	switch {
	case managerclient.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	owner := types.UID(cluster.Labels[naming.ScyllaDBManagerOwnerUIDLabel])
	if owner != reg.uid {
		return fmt.Sprintf("ScyllaDB Manager cluster %q (ID %s) is not labelled %s=%s yet (it has %q): waiting for the registration controller to register it for %s; an ID annotation copied from another object's manifest is replaced then",
			cluster.Name, reg.clusterID, naming.ScyllaDBManagerOwnerUIDLabel, reg.uid, owner, kind), nil
	}
	c.clusterOwners.set(reg.clusterID, reg.uid)
	return "", nil
}
