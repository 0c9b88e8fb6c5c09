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
//   - being deleted and used by no ScyllaDBCluster: the client is stopped and the finalizer removed;
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
	if deleting {
		users, err = c.scyllaDBClustersUsing(name)
		if err != nil {
			return err
		}
		if len(users) == 0 {
			if _, _, err := controllerhelpers.RemoveFinalizer(ctx, c.patcher(), rkc, naming.RemoteKubernetesClusterFinalizer); err != nil {
				return err
			}
			c.forget(name)
			return nil
		}
	}

	result := c.syncClient(ctx, rkc)
	conditions := append(result.conditions, finalizerCondition(rkc, users))
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
// yet): they need its client to remove what they created in it.
func (c *Controller) scyllaDBClustersUsing(name string) ([]string, error) {
	scs, err := c.scyllaDBClusterLister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("can't list ScyllaDBClusters: %w", err)
	}
	withNamespaces, err := c.scyllaDBClustersWithNamespacesIn(name)
	if err != nil {
		return nil, err
	}
	var users []string
	for _, sc := range scs {
		key := cache.MetaObjectToName(sc)
		if remoteKubernetesClusterNames(sc).Has(name) || withNamespaces.Has(key) {
			users = append(users, key.String())
		}
	}
	slices.Sort(users)
	return users, nil
}

// scyllaDBClustersWithNamespacesIn returns the ScyllaDBClusters that have a namespace in the remote cluster of the
// RemoteKubernetesCluster name (naming.ScyllaDBClusterRemoteLabels), as its caches hold them. A remote cluster without
// a client, or whose caches have not synced, tells none: an unreachable one must not keep its RemoteKubernetesCluster
// forever.
func (c *Controller) scyllaDBClustersWithNamespacesIn(name string) (sets.Set[cache.ObjectName], error) {
	out := sets.New[cache.ObjectName]()
	rc, ok := c.pool.Get(name)
	if !ok || !rc.HasSynced() {
		return out, nil
	}
	namespaces, err := rc.KubeInformers().Core().V1().Namespaces().Lister().List(labels.SelectorFromSet(labels.Set{naming.ManagedByLabel: naming.RemoteManagedByLabelValue}))
	if err != nil {
		return nil, fmt.Errorf("can't list the namespaces of RemoteKubernetesCluster %q: %w", name, err)
	}
	for _, ns := range namespaces {
		scNamespace, scName := ns.Labels[naming.ParentScyllaDBClusterNamespaceLabel], ns.Labels[naming.ParentScyllaDBClusterNameLabel]
		if len(scNamespace) != 0 && len(scName) != 0 {
			out.Insert(cache.NewObjectName(scNamespace, scName))
		}
	}
	return out, nil
}

// finalizerCondition says whether the deletion of rkc waits for users, the ScyllaDBClusters that still use it.
func finalizerCondition(rkc *scyllav1alpha1.RemoteKubernetesCluster, users []string) metav1.Condition {
	condition := metav1.Condition{
		Type:               finalizerProgressingCondition,
		Status:             metav1.ConditionFalse,
		Reason:             controllerhelpers.AsExpectedReason,
		ObservedGeneration: rkc.Generation,
	}
	if rkc.DeletionTimestamp == nil || len(users) == 0 {
		return condition
	}
	listed := users
	more := ""
	if len(listed) > maxListedUsers {
		listed = listed[:maxListedUsers]
		more = fmt.Sprintf(" and %d more", len(users)-maxListedUsers)
	}
	condition.Status = metav1.ConditionTrue
	condition.Reason = inUseReason
	condition.Message = fmt.Sprintf("the RemoteKubernetesCluster is being deleted, but ScyllaDBClusters still use it: %s%s; it is deleted once none does", strings.Join(listed, ", "), more)
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
