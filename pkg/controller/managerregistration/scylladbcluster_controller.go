package managerregistration

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1apply "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
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

	// scyllaDBClusters is what a sync reads its ScyllaDBCluster from: the informer's copy, or the one the
	// controller's last write returned while the informer has not caught up with it.
	scyllaDBClusters *controllerhelpers.MutationCache[*scyllav1alpha1.ScyllaDBCluster]
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
	scyllaDBClusters := controllerhelpers.NewMutationCache[*scyllav1alpha1.ScyllaDBCluster](
		scyllaDBClusterInformer.Informer().GetStore(), scyllav1alpha1.Resource("scylladbclusters"))
	lister := scyllaDBClusterInformer.Lister()
	rc, err := newRegistrationController(kubeClient, managerClient, secretInformer, registrationControllerConfig[*scyllav1alpha1.ScyllaDBCluster]{
		name: ScyllaDBClusterControllerName,
		gvk:  scyllaDBClusterGVK,
		kind: targetKind[*scyllav1alpha1.ScyllaDBCluster]{
			kind: scyllaDBClusterGVK.Kind,
			client: func(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBCluster] {
				return scyllaDBClusters.Patcher(scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(namespace))
			},
			conditions: scyllaDBClusterConditions,
			applyConditions: func(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBCluster, error) {
				applied, err := applyScyllaDBClusterConditions(ctx, scyllaClient, sc, conditions)
				if err == nil {
					scyllaDBClusters.Written(applied)
				}
				return applied, err
			},
		},
		objectInformer: scyllaDBClusterInformer.Informer(),
		get: func(namespace, name string) (*scyllav1alpha1.ScyllaDBCluster, error) {
			return lister.ScyllaDBClusters(namespace).Get(name)
		},
		list: func(namespace string) ([]*scyllav1alpha1.ScyllaDBCluster, error) {
			return lister.ScyllaDBClusters(namespace).List(labels.Everything())
		},
		authTokenSecretName: naming.ScyllaDBClusterAuthTokenSecretName,
		observedGeneration:  scyllaDBClusterObservedGeneration,
	})
	if err != nil {
		return nil, err
	}

	c := &ScyllaDBClusterController{
		registrationController: rc,
		scyllaDBClusters:       scyllaDBClusters,
	}
	rc.syncKey = c.sync
	return c, nil
}

func scyllaDBClusterConditions(sc *scyllav1alpha1.ScyllaDBCluster) []metav1.Condition {
	return sc.Status.Conditions
}

func scyllaDBClusterObservedGeneration(sc *scyllav1alpha1.ScyllaDBCluster) *int64 {
	return sc.Status.ObservedGeneration
}

// scyllaDBClusterHandlerFuncs are the ScyllaDBCluster informer's handlers (registrationController's
// objectHandlerFuncs).
func (c *ScyllaDBClusterController) scyllaDBClusterHandlerFuncs() cache.ResourceEventHandlerFuncs {
	return c.objectHandlerFuncs()
}

// scyllaDBClusterUpdateMatters tells whether the update from oldSC to newSC can change what the registration of newSC
// does (registrationUpdateMatters).
func scyllaDBClusterUpdateMatters(oldSC, newSC *scyllav1alpha1.ScyllaDBCluster) bool {
	return registrationUpdateMatters(oldSC, newSC, scyllaDBClusterObservedGeneration, scyllaDBClusterConditions)
}

// sync reconciles the ScyllaDB Manager cluster of the ScyllaDBCluster named by key.
func (c *ScyllaDBClusterController) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)

	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		// Keys come from the informers; a malformed one never becomes valid.
		logger.Error(err, "Can't split key", "key", key)
		return nil
	}

	sc, err := c.scyllaDBClusters.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		// Its finalizer kept it until its cluster was deregistered, unless it never had one.
		logger.V(4).Info("ScyllaDBCluster is gone", "scyllaDBCluster", klog.KRef(namespace, name))
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBCluster %q: %w", key, err)
	}

	authTokenSecret, err := c.authTokenSecret(sc)
	if err != nil {
		return err
	}

	spec, waiting := makeScyllaDBClusterClusterSpec(sc, authTokenSecret)
	ctx = klog.NewContext(ctx, logger.WithValues("scyllaDBCluster", klog.KObj(sc)))
	return c.registrar.sync(ctx, &registrationTarget[*scyllav1alpha1.ScyllaDBCluster]{
		object:  sc,
		spec:    spec,
		waiting: waiting,
	})
}

// makeScyllaDBClusterClusterSpec returns the cluster sc asks ScyllaDB Manager to hold, given its agent auth-token
// Secret in the meta cluster (nil when it does not exist), or what it waits for. The operator reports the
// ScyllaDBCluster Available only once every datacenter is.
func makeScyllaDBClusterClusterSpec(sc *scyllav1alpha1.ScyllaDBCluster, authTokenSecret *corev1.Secret) (*managerClusterSpec, *progress) {
	if waiting := rollout(scyllaDBClusterGVK.Kind, sc.Generation, sc.Status.ObservedGeneration, sc.Status.Conditions); waiting != nil {
		return nil, waiting
	}
	token, waiting := agentAuthToken(naming.ScyllaDBClusterAuthTokenSecretName(sc.Name), authTokenSecret)
	if waiting != nil {
		return nil, waiting
	}
	return &managerClusterSpec{
		Name:      managerClusterName(scyllaDBClusterGVK.Kind, sc),
		Host:      naming.ScyllaDBManagerClusterHostForScyllaDBCluster(sc.Namespace, sc.Name),
		AuthToken: token,
	}, nil
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
