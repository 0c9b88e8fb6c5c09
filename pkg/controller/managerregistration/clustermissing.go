package managerregistration

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/klog/v2"
)

// defaultClusterMissingInterval is the shortest time between two syncs of one object that reports of its lost cluster
// start: the task controller looks at a missing cluster again every 30 seconds for each of its tasks, so one report
// per such look is taken, whatever the number of tasks.
const defaultClusterMissingInterval = 30 * time.Second

// clusterMissingReports remembers, per object key, what limits the syncs that reports of its lost cluster start.
type clusterMissingReports struct {
	mu      sync.Mutex
	entries map[string]clusterMissingEntry
}

type clusterMissingEntry struct {
	// accepted is when a report last enqueued the object.
	accepted time.Time
	// retryLaterUntil is when the delayed retry of a sync that ScyllaDB Manager rejected (registrationTarget.retryLater)
	// is due; until then a report adds nothing but another rejected request.
	retryLaterUntil time.Time
}

func newClusterMissingReports() *clusterMissingReports {
	return &clusterMissingReports{entries: map[string]clusterMissingEntry{}}
}

// accept tells whether a report of key's lost cluster at now enqueues the object, and records it when it does.
func (r *clusterMissingReports) accept(key string, now time.Time, interval time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entries[key]
	if now.Before(e.retryLaterUntil) || (!e.accepted.IsZero() && now.Sub(e.accepted) < interval) {
		return false
	}
	e.accepted = now
	r.entries[key] = e
	return true
}

// synced records the outcome of a sync of key: until retryLaterUntil (zero when the sync scheduled no delayed retry)
// reports are not taken.
func (r *clusterMissingReports) synced(key string, retryLaterUntil time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.entries[key]
	if !ok && retryLaterUntil.IsZero() {
		return
	}
	e.retryLaterUntil = retryLaterUntil
	r.entries[key] = e
}

// forget drops what is known of key, once its object is gone.
func (r *clusterMissingReports) forget(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, key)
}

// ClusterMissing is told by the task controller that ScyllaDB Manager answered 404 for clusterID, the cluster ID
// annotation of the object named name in namespace: its database was lost or restored from an old copy, or the
// cluster was deleted there by hand. The object is synced at once, which registers the cluster again under the same
// ID, instead of at its next resync. Nothing is read from ScyllaDB Manager here.
//
// A report is dropped when it no longer describes the object (gone, being deleted, unlabelled, or annotated with
// another ID since), when a retry of the object is already scheduled (with back-off after an error, or after
// rejectedRetryDelay after a rejection), and when a report enqueued the object less than clusterMissingInterval ago: a
// registration that keeps failing is retried no sooner than the queue's back-off allows, and the reports of the many
// tasks of one cluster start one sync. It does not block.
func (c *registrationController[T]) ClusterMissing(namespace, name, clusterID string) {
	logger := klog.Background().WithName(c.name).WithValues("object", klog.KRef(namespace, name), "clusterID", clusterID)
	// The key the object's handlers enqueue it under.
	key := namespace + "/" + name

	obj, err := c.objects.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(4).Info("Dropping a report of a missing ScyllaDB Manager cluster: the object is gone")
		return
	}
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("can't get %s %q: %w", c.registrar.kind.kind, key, err))
		return
	}
	_, labelled := obj.GetLabels()[naming.RegisterWithScyllaDBManagerLabel]
	if !labelled || obj.GetDeletionTimestamp() != nil || obj.GetAnnotations()[naming.ScyllaDBManagerClusterIDAnnotation] != clusterID {
		logger.V(4).Info("Dropping a report of a missing ScyllaDB Manager cluster: the object no longer registers under that ID")
		return
	}
	if c.queue.NumRequeues(key) > 0 {
		logger.V(4).Info("Dropping a report of a missing ScyllaDB Manager cluster: a retry with back-off is scheduled")
		return
	}
	if !c.clusterMissingReports.accept(key, c.clock(), c.clusterMissingInterval) {
		logger.V(4).Info("Dropping a report of a missing ScyllaDB Manager cluster: the object was synced for one recently, or a retry is scheduled")
		return
	}
	logger.V(2).Info("ScyllaDB Manager does not hold the cluster of a registered object; syncing it to register it again")
	c.queue.Add(key)
}

// ClusterMissingReporter hands the task controller's reports of lost clusters to the registration controller of the
// object's kind.
type ClusterMissingReporter struct {
	scyllaDBDatacenters *ScyllaDBDatacenterController
	scyllaDBClusters    *ScyllaDBClusterController
}

// NewClusterMissingReporter returns a ClusterMissingReporter that hands reports of ScyllaDBDatacenters to
// scyllaDBDatacenters and reports of ScyllaDBClusters to scyllaDBClusters.
func NewClusterMissingReporter(scyllaDBDatacenters *ScyllaDBDatacenterController, scyllaDBClusters *ScyllaDBClusterController) (*ClusterMissingReporter, error) {
	if scyllaDBDatacenters == nil || scyllaDBClusters == nil {
		return nil, errors.New("can't create the ClusterMissingReporter: both registration controllers are needed")
	}
	return &ClusterMissingReporter{scyllaDBDatacenters: scyllaDBDatacenters, scyllaDBClusters: scyllaDBClusters}, nil
}

// ReportClusterMissing says that ScyllaDB Manager answered 404 for clusterID, the cluster ID annotation of the object
// of kind (ScyllaDBDatacenter or ScyllaDBCluster) named name in namespace. It does not block.
func (r *ClusterMissingReporter) ReportClusterMissing(kind, namespace, name, clusterID string) {
	switch kind {
	case scyllaDBDatacenterGVK.Kind:
		r.scyllaDBDatacenters.ClusterMissing(namespace, name, clusterID)
	case scyllaDBClusterGVK.Kind:
		r.scyllaDBClusters.ClusterMissing(namespace, name, clusterID)
	default:
		utilruntime.HandleError(fmt.Errorf("can't hand over the missing ScyllaDB Manager cluster %q of %s %q: no registration controller registers that kind", clusterID, kind, klog.KRef(namespace, name)))
	}
}
