package managerregistration

import (
	"context"
	"time"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// managerClient is the part of the ScyllaDB Manager client the registrar calls.
type managerClient interface {
	GetCluster(ctx context.Context, idOrName string) (*managerclient.Cluster, error)
	ListClusters(ctx context.Context) ([]managerclient.Cluster, error)
	CreateCluster(ctx context.Context, cluster *managerclient.Cluster) (string, error)
	UpdateCluster(ctx context.Context, cluster *managerclient.Cluster) (*managerclient.Cluster, error)
	DeleteCluster(ctx context.Context, idOrName string) error
}

var _ managerClient = &managerclient.Client{}

// targetKind is how the registrar reads and writes objects of one kind (ScyllaDBDatacenter or ScyllaDBCluster):
// everything in the reconciliation that depends on the kind's Go type.
type targetKind[T kubeinterfaces.ObjectInterface] struct {
	// kind names the kind in messages, events and the derived cluster IDs (naming.ScyllaDBManagerClusterID).
	kind string
	// client returns the typed client of the kind in namespace; metadata patches (finalizer, annotation) go through it.
	client func(namespace string) kubeinterfaces.PatcherInterface[T]
	// conditions returns obj's status conditions.
	conditions func(obj T) []metav1.Condition
	// applyConditions writes conditions, and no other field, as obj's status conditions owned by the
	// manager-controller: with server-side apply, so that conditions it no longer lists are removed and the
	// operator's are left alone. It returns the updated object.
	applyConditions func(ctx context.Context, obj T, conditions []metav1.Condition) (T, error)
}

// registrationTarget is one object that may ask for a cluster in ScyllaDB Manager, as its kind's controller sees it
// in one sync.
type registrationTarget[T kubeinterfaces.ObjectInterface] struct {
	// object is the object as cached, or as the sync's last write of it returned. It is read-only.
	object T
	// spec is the cluster the object asks for. It is nil while the object can't be registered yet, and waiting says
	// why.
	spec    *managerClusterSpec
	waiting *progress
	// previousOwners are UIDs other than the object's under which an older manager-controller may have registered
	// the object's cluster; clusters labelled with them are adopted.
	previousOwners []types.UID
	// refused, when set, says why the object must not be registered at all, although it is labelled: it is reported
	// as Degraded, and nothing is registered or read from ScyllaDB Manager. A cluster registered for it before is
	// left alone until the object is deleted or unlabelled.
	refused *progress

	// retryLater is set by the sync when it failed for a cause outside the object that may go away by itself: ScyllaDB
	// Manager rejected (400) what it sent, or holds a cluster of another object under the name. It is not retried with
	// back-off but synced again after a delay.
	retryLater bool
}

// registrar reconciles the cluster each registration target asks for in ScyllaDB Manager, for targets of kind T. It
// is the part of the manager-controller's registration controllers that every kind shares.
type registrar[T kubeinterfaces.ObjectInterface] struct {
	kind          targetKind[T]
	managerClient managerClient
	recorder      record.EventRecorder
	// clock is the time source of condition transitions; tests replace it.
	clock func() time.Time
}

// now returns the time conditions that change status get as lastTransitionTime.
func (r *registrar[T]) now() metav1.Time {
	return metav1.NewTime(r.clock().Truncate(time.Second))
}
