package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// Names of the sub-syncs, which prefix their conditions.
const (
	authTokenSecretControllerName   = "AgentAuthTokenSecretController"
	remoteDatacenterControllerName  = "RemoteDatacenterController"
	removedDatacenterControllerName = "RemovedDatacenterController"
	clientServiceControllerName     = "ClientServiceController"
	// datacentersAvailableCondition is True when every datacenter's ScyllaDBDatacenter is Available.
	datacentersAvailableCondition = "DatacentersAvailable"
)

// sync makes what the ScyllaDBCluster named by key asks for exist in the meta and remote clusters, and writes its
// status.
func (c *Controller) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Dropping an invalid key", "key", key)
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("scyllaDBCluster", klog.KRef(namespace, name))
	ctx = klog.NewContext(ctx, logger)
	start := time.Now()
	logger.V(4).Info("Started syncing")
	defer func() {
		logger.V(4).Info("Finished syncing", "duration", time.Since(start))
	}()

	sc, err := c.scyllaDBClusters.Get(namespace, name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("ScyllaDBCluster is gone")
		c.statusBatcher.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get ScyllaDBCluster %q: %w", key, err)
	}
	if sc.DeletionTimestamp != nil {
		return c.syncDeletion(ctx, sc)
	}

	client := c.scyllaDBClusters.Patcher(c.scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace))
	sc, _, err = controllerhelpers.AddFinalizer(ctx, client, sc, naming.ScyllaDBClusterProtectionFinalizer)
	if err != nil {
		return err
	}

	if err := validation.ValidateScyllaDBCluster(sc).ToAggregate(); err != nil {
		// Nothing is built from a spec that can't be; what exists stays as it is.
		return c.updateStatus(ctx, sc, invalidSpecStatus(sc, err))
	}

	dcs := c.observeDatacenters(sc)
	var token string
	var dcProgressing []metav1.Condition
	var dcErr error
	conditions, syncErr := controllerhelpers.RunSubSyncs(ctx, sc.Generation,
		controllerhelpers.SubSync{Name: authTokenSecretControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			var err error
			token, err = c.syncAuthTokenSecret(ctx, sc)
			return nil, err
		}},
		controllerhelpers.SubSync{Name: remoteDatacenterControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			dcProgressing, dcErr = c.syncDatacenters(ctx, sc, dcs, token)
			return dcProgressing, dcErr
		}},
		controllerhelpers.SubSync{Name: removedDatacenterControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return c.syncRemovedDatacenters(ctx, sc)
		}},
		controllerhelpers.SubSync{Name: clientServiceControllerName, Sync: func(ctx context.Context) ([]metav1.Condition, error) {
			return nil, c.syncClientService(ctx, sc, dcs)
		}},
	)

	status, err := calculateStatus(sc, dcs, conditions)
	if err != nil {
		return errors.Join(syncErr, err)
	}
	var statusErr error
	quiet, err := c.onlyLoading(sc, dcs, conditions, dcProgressing, dcErr)
	switch {
	case err != nil:
		statusErr = err
	case quiet:
		logger.V(4).Info("Not writing the status: only the caches of remote clusters are loading")
	default:
		statusErr = c.updateStatus(ctx, sc, status)
	}

	if referencesObjects(sc) {
		c.queue.AddAfter(key, referencedObjectsPeriod)
	}
	for _, dc := range dcs {
		// Nothing else may happen when caches that fail to list pass cachesSyncTimeout.
		if left, ok := c.cachesSyncDeadline(dc); ok {
			c.queue.AddAfter(key, left)
		}
	}
	return errors.Join(syncErr, statusErr)
}

// syncDeletion removes what sc created in the remote clusters, its remote namespaces, and then its finalizer. Objects
// in the meta cluster go with sc through the garbage collector. Until every remote cluster that may hold a namespace
// of sc answered, the finalizer stays: deleting sc must not leave ScyllaDB nodes running unseen.
func (c *Controller) syncDeletion(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster) error {
	if !controllerhelpers.HasFinalizer(sc, naming.ScyllaDBClusterProtectionFinalizer) {
		return nil
	}
	remaining, unlisted, err := c.deleteRemoteNamespaces(ctx, sc, func(*remoteclient.Cluster, *corev1.Namespace) bool { return true })
	if err != nil {
		return err
	}
	if len(remaining) != 0 || len(unlisted) != 0 {
		klog.FromContext(ctx).V(2).Info("Waiting for remote namespaces to be deleted", "namespaces", remaining, "notListedYet", unlisted)
		// Their deletion events requeue sc.
		return nil
	}
	client := c.scyllaDBClusters.Patcher(c.scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(sc.Namespace))
	_, _, err = controllerhelpers.RemoveFinalizer(ctx, client, sc, naming.ScyllaDBClusterProtectionFinalizer)
	return err
}

// onlyLoading tells whether the status computed from conditions says nothing new but that the caches of some
// datacenters' remote clusters are loading: the status sc has, with the RemoteDatacenterController's progressing
// conditions of those (dcProgressing, returned with dcErr) left out, is the status it would get. Caches load after
// every restart of the operator and change of a kubeconfig, for a moment: the status stays as it is then.
func (c *Controller) onlyLoading(sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter, conditions, dcProgressing []metav1.Condition, dcErr error) (bool, error) {
	if !slices.ContainsFunc(dcs, (*remoteDatacenter).loading) {
		return false, nil
	}
	progressing, degraded, err := controllerhelpers.SubSyncConditions(remoteDatacenterControllerName, sc.Generation,
		slices.DeleteFunc(slices.Clone(dcProgressing), func(p metav1.Condition) bool { return p.Reason == waitingForClusterReason }), dcErr)
	if err != nil {
		return false, err
	}
	conditions = slices.Clone(conditions)
	for i := range conditions {
		switch conditions[i].Type {
		case progressing.Type:
			conditions[i] = progressing
		case degraded.Type:
			conditions[i] = degraded
		}
	}
	status, err := calculateStatus(sc, dcs, conditions)
	if err != nil {
		return false, err
	}
	controllerhelpers.SetTransitionTimes(status.Conditions, sc.Status.Conditions, metav1.NewTime(c.clock()))
	applier := c.statusApplier()
	owned := sets.New[string]()
	for _, c := range status.Conditions {
		owned.Insert(c.Type)
	}
	byType := func(x, y metav1.Condition) int { return strings.Compare(x.Type, y.Type) }
	existing, desired := applier.OwnedStatus(&sc.Status, owned), applier.OwnedStatus(status, owned)
	existing.Conditions, desired.Conditions = slices.SortedStableFunc(slices.Values(existing.Conditions), byType), slices.SortedStableFunc(slices.Values(desired.Conditions), byType)
	return apiequality.Semantic.DeepEqual(existing, desired), nil
}
