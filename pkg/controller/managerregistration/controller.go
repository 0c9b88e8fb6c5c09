// Package managerregistration holds the manager-controller's controllers that register ScyllaDB clusters with
// ScyllaDB Manager (manager-integration.md, "Registration of ScyllaDB clusters with ScyllaDB Manager"). A registrar
// reconciles the cluster one object asks for, whatever its kind; a controller per kind (ScyllaDBDatacenter,
// ScyllaDBCluster), built on the shared registrationController, watches its objects and tells the registrar what each
// one asks for.
package managerregistration

import (
	"context"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1informers "github.com/scyllakube/client/scylla/informers/externalversions/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
)

// ScyllaDBDatacenterControllerName names the ScyllaDBDatacenter registration controller in logs, events, metrics and
// its workqueue.
const ScyllaDBDatacenterControllerName = "ScyllaDBDatacenterManagerRegistrationController"

var (
	scyllaDBDatacenterGVK = scyllav1alpha1.SchemeGroupVersion.WithKind("ScyllaDBDatacenter")
	scyllaClusterGVK      = scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster")
)

// ScyllaDBDatacenterController registers with ScyllaDB Manager every ScyllaDBDatacenter labelled
// naming.RegisterWithScyllaDBManagerLabel once it is rolled out, keeps the registration in line with the datacenter
// (name, host, agent auth token), and deregisters it when the datacenter is deleted or unlabelled.
type ScyllaDBDatacenterController struct {
	*registrationController[*scyllav1alpha1.ScyllaDBDatacenter]
}

// NewScyllaDBDatacenterController returns a ScyllaDBDatacenterController that reads through the given informers and
// writes through the clients. secretInformer only needs to hold the operator's Secrets (naming.ManagedObjectsSelector),
// among them the agent auth-token Secrets. The caller starts the informers (after every controller registered its
// handlers) and then calls Run.
func NewScyllaDBDatacenterController(
	kubeClient kubernetes.Interface,
	scyllaClient scyllaclientset.Interface,
	managerClient *managerclient.Client,
	scyllaDBDatacenterInformer scyllav1alpha1informers.ScyllaDBDatacenterInformer,
	secretInformer corev1informers.SecretInformer,
) (*ScyllaDBDatacenterController, error) {
	lister := scyllaDBDatacenterInformer.Lister()
	rc, err := newRegistrationController(kubeClient, managerClient, secretInformer, registrationControllerConfig[*scyllav1alpha1.ScyllaDBDatacenter]{
		name:     ScyllaDBDatacenterControllerName,
		gvk:      scyllaDBDatacenterGVK,
		resource: scyllav1alpha1.Resource("scylladbdatacenters"),
		informer: scyllaDBDatacenterInformer.Informer(),
		client: func(namespace string) kubeinterfaces.PatcherInterface[*scyllav1alpha1.ScyllaDBDatacenter] {
			return scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(namespace)
		},
		applyConditions: func(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, conditions []metav1.Condition) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
			return applyScyllaDBDatacenterConditions(ctx, scyllaClient, sdc, conditions)
		},
		conditions: scyllaDBDatacenterConditions,
		get: func(namespace, name string) (*scyllav1alpha1.ScyllaDBDatacenter, error) {
			return lister.ScyllaDBDatacenters(namespace).Get(name)
		},
		list: func(namespace string) ([]*scyllav1alpha1.ScyllaDBDatacenter, error) {
			return lister.ScyllaDBDatacenters(namespace).List(labels.Everything())
		},
		authTokenSecretName: naming.AgentAuthTokenSecretName,
		observedGeneration:  scyllaDBDatacenterObservedGeneration,
		target:              makeScyllaDBDatacenterTarget,
	})
	if err != nil {
		return nil, err
	}
	return &ScyllaDBDatacenterController{registrationController: rc}, nil
}

func scyllaDBDatacenterConditions(sdc *scyllav1alpha1.ScyllaDBDatacenter) []metav1.Condition {
	return sdc.Status.Conditions
}

func scyllaDBDatacenterObservedGeneration(sdc *scyllav1alpha1.ScyllaDBDatacenter) *int64 {
	return sdc.Status.ObservedGeneration
}
