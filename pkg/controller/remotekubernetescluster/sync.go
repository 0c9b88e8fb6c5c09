package remotekubernetescluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/metrics"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// maxListedUsers bounds how many ScyllaDBClusters a condition names.
const maxListedUsers = 10

// sync reconciles the RemoteKubernetesCluster named by key:
//   - gone, or being deleted without the finalizer: its remote client is stopped and forgotten;
//   - without the finalizer: the finalizer is added, and nothing else (the patch's watch event syncs it again);
//   - being deleted and used by no ScyllaDBCluster: the client is stopped and the finalizer removed, once the caches
//     of a remote cluster that answers have told which ScyllaDBClusters have namespaces there;
//   - otherwise (also while being deleted but still used, since the ScyllaDBClusters need the client to clean up):
//     the client is (re)built from the kubeconfig Secret and health-checked when due, the status written when it
//     changed, and the object synced again when the next health check is due.
func (c *Controller) sync(ctx context.Context, key string) error {
	_, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		klog.FromContext(ctx).Error(err, "Dropping an invalid key", "key", key)
		return nil
	}
	logger := klog.FromContext(ctx).WithValues("remoteKubernetesCluster", name)
	ctx = klog.NewContext(ctx, logger)

	rkc, err := c.remoteKubernetesClusters.Get("", name)
	if apierrors.IsNotFound(err) {
		logger.V(2).Info("RemoteKubernetesCluster is gone")
		c.forget(name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("can't get RemoteKubernetesCluster %q: %w", name, err)
	}

	deleting := rkc.DeletionTimestamp != nil
	if !controllerhelpers.HasFinalizer(rkc, naming.RemoteKubernetesClusterFinalizer) {
		if deleting {
			c.forget(name)
			return nil
		}
		_, _, err := controllerhelpers.AddFinalizer(ctx, c.patcher(), rkc, naming.RemoteKubernetesClusterFinalizer)
		return err
	}

	var users []string
	listed := true
	if deleting {
		if users, listed, err = c.scyllaDBClustersUsing(name); err != nil {
			return err
		}
		if len(users) == 0 && listed {
			return c.removeFinalizer(ctx, rkc)
		}
	}

	result := c.syncClient(ctx, rkc)
	if deleting && !listed {
		// The remote caches could not tell which ScyllaDBClusters still have namespaces there: the operator has just
		// started (the pool had no client yet) or the client was just rebuilt. A remote cluster that answers is waited
		// for, its caches' sync enqueues the RemoteKubernetesCluster; one without a usable kubeconfig, or that does not
		// answer, holds nothing up.
		if users, listed, err = c.scyllaDBClustersUsing(name); err != nil {
			return errors.Join(result.err, err)
		}
		if !listed && result.err == nil && !c.answers(name) {
			listed = true
		}
		if len(users) == 0 && listed {
			return c.removeFinalizer(ctx, rkc)
		}
	}
	conditions := append(result.conditions, finalizerCondition(rkc, users, listed))
	status, err := c.calculateStatus(rkc, conditions)
	if err != nil {
		return errors.Join(result.err, err)
	}
	if err := c.updateStatus(ctx, rkc, status); err != nil {
		return errors.Join(result.err, err)
	}
	if result.err != nil {
		return result.err
	}
	c.queue.AddAfter(key, result.requeueAfter)
	return nil
}

// removeFinalizer removes the finalizer of rkc, which nothing uses any more, and stops its client.
func (c *Controller) removeFinalizer(ctx context.Context, rkc *scyllav1alpha1.RemoteKubernetesCluster) error {
	if _, _, err := controllerhelpers.RemoveFinalizer(ctx, c.patcher(), rkc, naming.RemoteKubernetesClusterFinalizer); err != nil {
		return err
	}
	c.forget(rkc.Name)
	return nil
}

// answers tells whether the remote cluster of the RemoteKubernetesCluster name has a client whose last health check
// succeeded.
func (c *Controller) answers(name string) bool {
	rc, ok := c.pool.Get(name)
	if !ok {
		return false
	}
	probe, ok := rc.LastProbe()
	return ok && probe.Err == nil
}

// patcher is the RemoteKubernetesCluster client, with its patches recorded for the next sync's read.
func (c *Controller) patcher() kubeinterfaces.PatcherInterface[*scyllav1alpha1.RemoteKubernetesCluster] {
	return c.remoteKubernetesClusters.Patcher(c.scyllaClient.ScyllaV1alpha1().RemoteKubernetesClusters())
}

// forget stops the remote client of the RemoteKubernetesCluster name and drops its metrics.
func (c *Controller) forget(name string) {
	c.pool.Delete(name)
	metrics.ForgetRemoteKubernetesCluster(name)
}

// scyllaDBClustersUsing returns, sorted, the namespace/name of every ScyllaDBCluster with a datacenter in the
// RemoteKubernetesCluster name, including those being deleted, or, as far as the synced caches of its remote cluster
// tell, with a namespace there (a datacenter removed from the spec or moved elsewhere, whose namespace is not deleted
// yet): they need its client to remove what they created in it. listed is false when the remote cluster's caches could
// not tell the namespaces (scyllaDBClustersWithNamespacesIn).
func (c *Controller) scyllaDBClustersUsing(name string) (users []string, listed bool, _ error) {
	scs, err := c.scyllaDBClusterLister.List(labels.Everything())
	if err != nil {
		return nil, false, fmt.Errorf("can't list ScyllaDBClusters: %w", err)
	}
	withNamespaces, listed, err := c.scyllaDBClustersWithNamespacesIn(name)
	if err != nil {
		return nil, false, err
	}
	for _, sc := range scs {
		key := cache.MetaObjectToName(sc)
		if remoteKubernetesClusterNames(sc).Has(name) || withNamespaces.Has(key) {
			users = append(users, key.String())
		}
	}
	slices.Sort(users)
	return users, listed, nil
}

// scyllaDBClustersWithNamespacesIn returns the ScyllaDBClusters that have a namespace in the remote cluster of the
// RemoteKubernetesCluster name (naming.ScyllaDBClusterRemoteLabels), as its caches hold them. A remote cluster without
// a client, or whose caches have not synced, tells none, and listed is false: the caller decides whether to wait.
func (c *Controller) scyllaDBClustersWithNamespacesIn(name string) (_ sets.Set[cache.ObjectName], listed bool, _ error) {
	out := sets.New[cache.ObjectName]()
	rc, ok := c.pool.Get(name)
	if !ok || !rc.HasSynced() {
		return out, false, nil
	}
	namespaces, err := rc.KubeInformers().Core().V1().Namespaces().Lister().List(labels.SelectorFromSet(labels.Set{naming.ManagedByLabel: naming.RemoteManagedByLabelValue}))
	if err != nil {
		return nil, false, fmt.Errorf("can't list the namespaces of RemoteKubernetesCluster %q: %w", name, err)
	}
	for _, ns := range namespaces {
		scNamespace, scName := ns.Labels[naming.ParentScyllaDBClusterNamespaceLabel], ns.Labels[naming.ParentScyllaDBClusterNameLabel]
		if len(scNamespace) != 0 && len(scName) != 0 {
			out.Insert(cache.NewObjectName(scNamespace, scName))
		}
	}
	return out, true, nil
}

// finalizerCondition says whether the deletion of rkc waits for users, the ScyllaDBClusters that still use it, or,
// when not listed, for the caches of its remote cluster to tell which ScyllaDBClusters have namespaces there.
func finalizerCondition(rkc *scyllav1alpha1.RemoteKubernetesCluster, users []string, listed bool) metav1.Condition {
	condition := metav1.Condition{
		Type:               finalizerProgressingCondition,
		Status:             metav1.ConditionFalse,
		Reason:             controllerhelpers.AsExpectedReason,
		ObservedGeneration: rkc.Generation,
	}
	if rkc.DeletionTimestamp == nil || (len(users) == 0 && listed) {
		return condition
	}
	if len(users) == 0 {
		condition.Status = metav1.ConditionTrue
		condition.Reason = waitingForRemoteCachesReason
		condition.Message = "the RemoteKubernetesCluster is being deleted; waiting for the caches of the remote cluster to list the namespaces ScyllaDBClusters may still have there"
		return condition
	}
	named := users
	more := ""
	if len(named) > maxListedUsers {
		named = named[:maxListedUsers]
		more = fmt.Sprintf(" and %d more", len(users)-maxListedUsers)
	}
	condition.Status = metav1.ConditionTrue
	condition.Reason = inUseReason
	condition.Message = fmt.Sprintf("the RemoteKubernetesCluster is being deleted, but ScyllaDBClusters still use it: %s%s; it is deleted once none does", strings.Join(named, ", "), more)
	return condition
}

// probePeriod is how often rkc's remote API server is health-checked: spec.clientHealthcheckProbes.periodSeconds,
// 60 seconds when unset. The CRD rejects periods below 1 second; one that got through anyway counts as unset.
func probePeriod(rkc *scyllav1alpha1.RemoteKubernetesCluster) time.Duration {
	if p := rkc.Spec.ClientHealthcheckProbes; p != nil && p.PeriodSeconds > 0 {
		return time.Duration(p.PeriodSeconds) * time.Second
	}
	return 60 * time.Second
}
