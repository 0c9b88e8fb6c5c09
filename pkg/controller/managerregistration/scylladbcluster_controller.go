package managerregistration

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1apply "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
)

// ScyllaDBClusterControllerName names the ScyllaDBCluster registration controller in logs, events, metrics and its
// workqueue.
const ScyllaDBClusterControllerName = "ScyllaDBClusterManagerRegistrationController"

var scyllaDBClusterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBCluster")

// ScyllaDBClusterController registers with ScyllaDB Manager every ScyllaDBCluster labelled
// naming.RegisterWithScyllaDBManagerLabel, as one cluster whatever its number of datacenters, once it is rolled out;
// keeps the registration in line with it (name, host, agent auth token); and deregisters it when the ScyllaDBCluster
// is deleted or unlabelled. ScyllaDB Manager reaches the agents through the ScyllaDBCluster's local client Service
// in the meta cluster, where both run.
type ScyllaDBClusterController struct {
	*registrationController[*scyllav1alpha1.ScyllaDBCluster]
}

// NewScyllaDBClusterController returns a ScyllaDBClusterController that reads through the given informers and writes
// through the clients. secretInformer only needs to hold the operator's Secrets (naming.ManagedObjectsSelector),
// among them the ScyllaDBClusters' agent auth-token Secrets. The caller starts the informers (after every controller
// registered its handlers) and then calls Run.
func NewScyllaDBClusterController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	managerClient *managerclient.Client,
	scyllaDBClusterInformer scyllav1alpha1informers.ScyllaDBClusterInformer,
	secretInformer corev1informers.SecretInformer,
) (*ScyllaDBClusterController, error) {
	lister := scyllaDBClusterInformer.Lister()
	rc, err := newRegistrationController(kubeClient, managerClient, secretInformer, registrationControllerConfig[*scyllav1alpha1.ScyllaDBCluster]{
		name:     ScyllaDBClusterControllerName,
		gvk:      scyllaDBClusterGVK,
		resource: scyllav1alpha1.Resource("scylladbclusters"),
		informer: scyllaDBClusterInformer.Informer(),
		client: func(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBCluster] {
			return scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(namespace)
		},
		applyConditions: func(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBCluster, error) {
			return applyScyllaDBClusterConditions(ctx, scyllaClient, sc, conditions)
		},
		conditions: scyllaDBClusterConditions,
		get: func(namespace, name string) (*scyllav1alpha1.ScyllaDBCluster, error) {
			return lister.ScyllaDBClusters(namespace).Get(name)
		},
		list: func(namespace string) ([]*scyllav1alpha1.ScyllaDBCluster, error) {
			return lister.ScyllaDBClusters(namespace).List(labels.Everything())
		},
		authTokenSecretName: naming.ScyllaDBClusterAuthTokenSecretName,
		observedGeneration:  scyllaDBClusterObservedGeneration,
		target:              makeScyllaDBClusterTarget,
	})
	if err != nil {
		return nil, err
	}
	return &ScyllaDBClusterController{registrationController: rc}, nil
}

func scyllaDBClusterConditions(sc *scyllav1alpha1.ScyllaDBCluster) []metav1.Condition {
	return sc.Status.Conditions
}

func scyllaDBClusterObservedGeneration(sc *scyllav1alpha1.ScyllaDBCluster) *int64 {
	return sc.Status.ObservedGeneration
}

// makeScyllaDBClusterTarget returns what sc asks the registrar for, given its agent auth-token Secret in the meta
// cluster (nil when it does not exist). A ScyllaDBCluster has no previous owner: no older manager-controller
// registered one.
func makeScyllaDBClusterTarget(sc *scyllav1alpha1.ScyllaDBCluster, authTokenSecret *corev1.Secret) *registrationTarget[*scyllav1alpha1.ScyllaDBCluster] {
	spec, waiting := makeScyllaDBClusterClusterSpec(sc, authTokenSecret)
	return &registrationTarget[*scyllav1alpha1.ScyllaDBCluster]{
		object:  sc,
		spec:    spec,
		waiting: waiting,
	}
}

// makeScyllaDBClusterClusterSpec returns the cluster sc asks ScyllaDB Manager to hold, given its agent auth-token
// Secret in the meta cluster (nil when it does not exist), or what it waits for. The operator reports the
// ScyllaDBCluster Available only once every datacenter is.
func makeScyllaDBClusterClusterSpec(sc *scyllav1alpha1.ScyllaDBCluster, authTokenSecret *corev1.Secret) (*managerClusterSpec, *progress) {
	return makeClusterSpec(scyllaDBClusterGVK.Kind, sc, sc.Status.ObservedGeneration, sc.Status.Conditions,
		naming.ScyllaDBClusterAuthTokenSecretName(sc.Name), authTokenSecret, naming.ScyllaDBManagerClusterHostForScyllaDBCluster(sc.Namespace, sc.Name))
}

// applyScyllaDBClusterConditions makes conditions the status conditions the manager-controller owns on sc, with
// server-side apply on the status subresource, as applyScyllaDBDatacenterConditions does for ScyllaDBDatacenters.
func applyScyllaDBClusterConditions(ctx context.Context, client scyllaclientset.Interface, sc *scyllav1alpha1.ScyllaDBCluster, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBCluster, error) {
	status := scyllav1alpha1apply.ScyllaDBClusterStatus().WithConditions(controllerhelpers.ConditionApplyConfigurations(conditions)...)
	apply := scyllav1alpha1apply.ScyllaDBCluster(sc.Name, sc.Namespace).
		WithUID(sc.UID).
		WithStatus(status)
	return client.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace).ApplyStatus(ctx, apply, metav1.ApplyOptions{
		FieldManager: naming.ManagerControllerFieldManager,
		Force:        true,
	})
}
