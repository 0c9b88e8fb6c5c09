package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"

	"github.com/scyllakube/scylla-operator/pkg/controller/remotekubernetescluster"
	"github.com/scyllakube/scylla-operator/pkg/controller/scyllacluster"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbcluster"
	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbdatacenter"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
)

// OperatorOptions are the options of the operator program.
type OperatorOptions struct {
	ControllerProgramOptions

	OperatorImage string
	TLS           TLSOptions
}

// NewOperatorOptions returns OperatorOptions with their defaults.
func NewOperatorOptions() *OperatorOptions {
	return &OperatorOptions{
		ControllerProgramOptions: NewControllerProgramOptions("operator", "scylla-operator-lock"),
		TLS:                      NewTLSOptions(),
	}
}

// AddFlags registers the operator's flags.
func (o *OperatorOptions) AddFlags(cmd *cobra.Command) {
	o.ControllerProgramOptions.AddFlags(cmd, "How often every object is synced again even when nothing changed.")
	cmd.Flags().StringVar(&o.OperatorImage, "image", o.OperatorImage, "The operator's own image; its binary is copied into ScyllaDB pods to run the sidecar.")
	o.TLS.AddFlags(cmd)
}

// Validate rejects options the operator can't run with.
func (o *OperatorOptions) Validate() error {
	errs := o.ControllerProgramOptions.Validate()
	if len(o.OperatorImage) == 0 {
		errs = append(errs, errors.New("--image must name the operator image"))
	}
	if err := o.TLS.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run serves health and metrics, then reconciles once this replica leads, until ctx is done.
func (o *OperatorOptions) Run(ctx context.Context) error {
	klog.InfoS("Starting the operator", "image", o.OperatorImage, "concurrentSyncs", o.ConcurrentSyncs)
	p := &controllerProgram{
		serving:        &o.Serving,
		leaderElection: &o.LeaderElection,
		kubeClient:     o.kubeClient,
		newControllers: o.newControllers,
	}
	return p.run(ctx)
}

// newManagedObjectsInformerFactory returns an informer factory that sees only the objects the operator manages
// (naming.ManagedObjectsSelector), rather than every Secret, Pod, Service, ConfigMap and claim of the cluster. The
// objects users own and controllers read by name are read from the API server. Its caches hold the objects trimmed
// of what no controller reads (controllerhelpers.TrimForInformerCache).
func newManagedObjectsInformerFactory(client kubernetes.Interface, resync time.Duration) kubeinformers.SharedInformerFactory {
	return kubeinformers.NewSharedInformerFactoryWithOptions(client, resync, managedObjectsInformerOptions()...)
}

// managedObjectsInformerOptions make a Kubernetes informer factory see only the objects the operator manages and
// cache them trimmed (newManagedObjectsInformerFactory).
func managedObjectsInformerOptions() []kubeinformers.SharedInformerOption {
	return []kubeinformers.SharedInformerOption{
		kubeinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
			options.LabelSelector = naming.ManagedObjectsSelector().String()
		}),
		kubeinformers.WithTransform(controllerhelpers.TrimForInformerCache),
	}
}

// newScyllaInformerFactory returns the informer factory of the scylla.scylladb.com kinds, whose caches hold the objects
// trimmed of what no controller reads (controllerhelpers.TrimForInformerCache).
func newScyllaInformerFactory(client scyllaclientset.Interface, resync time.Duration) scyllainformers.SharedInformerFactory {
	return scyllainformers.NewSharedInformerFactoryWithOptions(client, resync,
		scyllainformers.WithTransform(controllerhelpers.TrimForInformerCache))
}

// remoteClientOptions configure the pool of the clients of the remote clusters RemoteKubernetesClusters reach. Remote
// clients are rate-limited and identified like the operator's own; remote informers, like the local ones, see only
// the objects the operator manages and cache them trimmed.
func (o *OperatorOptions) remoteClientOptions() remoteclient.Options {
	return remoteclient.Options{
		QPS:          o.QPS,
		Burst:        o.Burst,
		UserAgent:    genericclioptions.UserAgent(o.ProgramName),
		ResyncPeriod: o.ResyncPeriod,
		KubeInformerOptions: []kubeinformers.SharedInformerOption{
			kubeinformers.WithTweakListOptions(func(options *metav1.ListOptions) {
				options.LabelSelector = naming.RemoteObjectsSelector().String()
			}),
			kubeinformers.WithTransform(controllerhelpers.TrimForInformerCache),
		},
		ScyllaInformerOptions: []scyllainformers.SharedInformerOption{
			scyllainformers.WithTransform(controllerhelpers.TrimForInformerCache),
		},
	}
}

// newControllers builds the operator's controllers on informers of its own factories.
func (o *OperatorOptions) newControllers() (*controllerSet, error) {
	kubeInformers := newManagedObjectsInformerFactory(o.kubeClient, o.ResyncPeriod)
	scyllaInformers := newScyllaInformerFactory(o.scyllaClient, o.ResyncPeriod)
	// Nodes and PersistentVolumes carry no operator label: they are watched cluster-wide, trimmed to what orphan
	// detection reads.
	clusterInformers := kubeinformers.NewSharedInformerFactoryWithOptions(o.kubeClient, o.ResyncPeriod,
		kubeinformers.WithTransform(scylladbdatacenter.TrimForOrphanDetection))
	remoteClients := remoteclient.NewPool(o.remoteClientOptions())

	scController, err := scyllacluster.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1().ScyllaClusters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks(),
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaCluster controller: %w", err)
	}

	sdcController, err := scylladbdatacenter.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBDatacenters(),
		kubeInformers.Apps().V1().StatefulSets(),
		kubeInformers.Core().V1().Services(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().ConfigMaps(),
		kubeInformers.Core().V1().ServiceAccounts(),
		kubeInformers.Rbac().V1().RoleBindings(),
		kubeInformers.Policy().V1().PodDisruptionBudgets(),
		kubeInformers.Networking().V1().Ingresses(),
		kubeInformers.Core().V1().Pods(),
		kubeInformers.Core().V1().PersistentVolumeClaims(),
		clusterInformers.Core().V1().Nodes(),
		clusterInformers.Core().V1().PersistentVolumes(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets(),
		o.OperatorImage,
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBDatacenter controller: %w", err)
	}
	if err := o.TLS.apply(sdcController); err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBDatacenter controller: %w", err)
	}

	rkcController, err := remotekubernetescluster.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters(),
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		remoteClients,
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the RemoteKubernetesCluster controller: %w", err)
	}

	clusterID, err := metaClusterID(o.kubeClient)
	if err != nil {
		return nil, err
	}
	sdcClusterController, err := scylladbcluster.NewController(
		o.kubeClient,
		o.scyllaClient,
		scyllaInformers.Scylla().V1alpha1().ScyllaDBClusters(),
		scyllaInformers.Scylla().V1alpha1().RemoteKubernetesClusters(),
		kubeInformers.Core().V1().Secrets(),
		kubeInformers.Core().V1().Services(),
		controllerhelpers.OperatorEndpointSlices(kubeInformers, naming.OperatorEndpointSlicesSelector()),
		remoteClients,
		clusterID,
	)
	if err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBCluster controller: %w", err)
	}
	if err := sdcClusterController.WatchBackups(scyllaInformers.Scylla().V1alpha1().ScyllaDBManagerTasks(), scyllaInformers.Scylla().V1alpha1().ScyllaDBBackupBuckets()); err != nil {
		return nil, fmt.Errorf("can't create the ScyllaDBCluster controller: %w", err)
	}

	return &controllerSet{
		// The pool is shut down with the factories: its remote informers stop when the operator stops leading.
		informerFactories: []informerFactory{kubeInformers, clusterInformers, scyllaInformers, remoteClients},
		runs: []func(ctx context.Context){
			func(ctx context.Context) { scController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { sdcController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { rkcController.Run(ctx, o.ConcurrentSyncs) },
			func(ctx context.Context) { sdcClusterController.Run(ctx, o.ConcurrentSyncs) },
		},
	}, nil
}

// NewOperatorCommand returns the operator subcommand.
func NewOperatorCommand() *cobra.Command {
	o := NewOperatorOptions()
	return newControllerProgramCommand(o, "operator",
		"Reconcile ScyllaClusters and ScyllaDBDatacenters into ScyllaDB deployments, and keep clients of the remote clusters RemoteKubernetesClusters reach.",
		"")
}

// metaClusterIDTimeout bounds the read of the meta cluster's identity at start.
const metaClusterIDTimeout = 30 * time.Second

// metaClusterID returns what identifies the Kubernetes cluster the operator runs in, for
// naming.ManagedByClusterLabel on what its ScyllaDBClusters create in remote clusters: the UID of its kube-system
// namespace, which lives as long as the cluster. A cluster without one (as fake clientsets in tests) has no ID.
func metaClusterID(client kubernetes.Interface) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), metaClusterIDTimeout)
	defer cancel()
	ns, err := client.CoreV1().Namespaces().Get(ctx, metav1.NamespaceSystem, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		klog.InfoS("The cluster has no kube-system namespace; remote namespaces of ScyllaDBClusters are not labelled with the cluster's identity", "label", naming.ManagedByClusterLabel)
		return "", nil
	case err != nil:
		return "", fmt.Errorf("can't read the cluster's identity (the UID of namespace %q): %w", metav1.NamespaceSystem, err)
	}
	return string(ns.UID), nil
}
