package scylladbcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
)

// removingDatacenterReason is the reason of the progressing condition of a removed datacenter being deleted.
const removingDatacenterReason = "RemovingDatacenter"

// syncRemovedDatacenters deletes the remote namespaces of datacenters sc no longer has (removed from
// spec.datacenters, or moved to another RemoteKubernetesCluster), once their ScyllaDBDatacenter has no node left: a
// datacenter is scaled to zero before it is removed, as a rack is. One that still has nodes is kept, and reported.
func (c *Controller) syncRemovedDatacenters(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster) ([]metav1.Condition, error) {
	wanted := map[string]string{}
	for _, dc := range sc.Spec.Datacenters {
		wanted[dc.Name] = dc.RemoteKubernetesClusterName
	}
	var notEmpty []error
	remaining, _, err := c.deleteRemoteNamespaces(ctx, sc, func(rc *remoteclient.Cluster, ns *corev1.Namespace) bool {
		dcName := ns.Labels[naming.ParentScyllaDBClusterDatacenterNameLabel]
		if rkcName, ok := wanted[dcName]; ok && rkcName == rc.Name() {
			return false
		}
		sdcName := naming.ScyllaDBClusterDatacenterName(sc.Name, dcName)
		sdc, err := rc.ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Lister().ScyllaDBDatacenters(ns.Name).Get(sdcName)
		if err == nil && hasNodes(sdc) {
			notEmpty = append(notEmpty, fmt.Errorf("datacenter %q was removed from spec.datacenters (or moved from RemoteKubernetesCluster %q) while its ScyllaDBDatacenter %q still has nodes: put it back, scale it to zero nodes, and remove it once it has none", dcName, rc.Name(), sdcName))
			return false
		}
		return true
	})
	var progressing []metav1.Condition
	if len(remaining) != 0 {
		progressing = append(progressing, metav1.Condition{
			Type:    "RemovedDatacenters",
			Reason:  removingDatacenterReason,
			Message: fmt.Sprintf("waiting for the namespaces of removed datacenters to be deleted: %v", remaining),
		})
	}
	return progressing, errors.Join(append(notEmpty, err)...)
}

// hasNodes tells whether sdc may still run ScyllaDB nodes: its status counts some, or its spec asks for some.
func hasNodes(sdc *scyllav1alpha1.ScyllaDBDatacenter) bool {
	if sdc.Status.Nodes == nil || *sdc.Status.Nodes != 0 {
		return true
	}
	for _, rack := range sdc.Spec.Racks {
		nodes := rack.Nodes
		if nodes == nil && sdc.Spec.RackTemplate != nil {
			nodes = sdc.Spec.RackTemplate.Nodes
		}
		if nodes != nil && *nodes != 0 {
			return true
		}
	}
	return false
}

// deleteRemoteNamespaces deletes the namespaces sc has in the remote clusters, in every remote cluster of the pool,
// for which shouldDelete says so, and returns those that still exist ("<RemoteKubernetesCluster>/<namespace>").
// Namespaces of a ScyllaDBCluster of the same name in another meta cluster are not sc's and never deleted. A
// remote cluster one of sc's datacenters is in, but that can't be read, is an error: it may hold a namespace of sc;
// one whose caches have not listed yet, or which the pool was not told about yet (the operator has just started),
// whether sc's datacenters are in it or not, is returned in unlisted.
func (c *Controller) deleteRemoteNamespaces(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, shouldDelete func(rc *remoteclient.Cluster, ns *corev1.Namespace) bool) (remaining, unlisted []string, _ error) {
	used := sets.New[string]()
	for _, dc := range sc.Spec.Datacenters {
		used.Insert(dc.RemoteKubernetesClusterName)
	}
	rkcs, err := c.remoteKubernetesClusterLister.List(labels.Everything())
	if err != nil {
		return nil, nil, fmt.Errorf("can't list RemoteKubernetesClusters: %w", err)
	}
	existing := sets.New[string]()
	for _, rkc := range rkcs {
		existing.Insert(rkc.Name)
	}
	var errs []error
	for _, rkcName := range sets.List(used.Union(existing).Union(sets.New(c.pool.Names()...))) {
		rc, err := c.remoteCluster(rkcName)
		switch {
		case rc != nil:
		case errors.Is(err, errCachesNotSynced) || (existing.Has(rkcName) && !c.pool.Known(rkcName)):
			// Also when no datacenter of sc is in it any more: a removed or moved datacenter's namespace may be left
			// there. The pool tells when its caches sync, or that it has no clients (enqueueUsersOf).
			unlisted = append(unlisted, rkcName)
			continue
		case !used.Has(rkcName):
			continue
		default:
			errs = append(errs, fmt.Errorf("can't look for namespaces to delete: %w", err))
			continue
		}
		namespaces, listErr := rc.KubeInformers().Core().V1().Namespaces().Lister().List(naming.ScyllaDBClusterSelector(sc.Namespace, sc.Name))
		if listErr != nil {
			errs = append(errs, fmt.Errorf("can't list the namespaces of RemoteKubernetesCluster %q: %w", rkcName, listErr))
			continue
		}
		slices.SortFunc(namespaces, func(a, b *corev1.Namespace) int { return strings.Compare(a.Name, b.Name) })
		for _, ns := range namespaces {
			if _, ok := c.otherMetaCluster(ns); ok || !shouldDelete(rc, ns) {
				continue
			}
			remaining = append(remaining, rkcName+"/"+ns.Name)
			if ns.DeletionTimestamp != nil {
				continue
			}
			if err != nil {
				// The cluster is unreachable: the delete would fail.
				errs = append(errs, err)
				continue
			}
			uid := ns.UID
			err := rc.KubeClient().CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
			switch {
			case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			case err != nil:
				errs = append(errs, fmt.Errorf("can't delete namespace %q of RemoteKubernetesCluster %q: %w", ns.Name, rkcName, err))
			default:
				c.eventRecorder.Eventf(sc, corev1.EventTypeNormal, "DeletedRemoteNamespace", "deleted namespace %q of datacenter %q in RemoteKubernetesCluster %q", ns.Name, ns.Labels[naming.ParentScyllaDBClusterDatacenterNameLabel], rkcName)
				klog.FromContext(ctx).V(2).Info("Deleted a remote namespace", "remoteKubernetesCluster", rkcName, "namespace", ns.Name)
			}
		}
	}
	return remaining, unlisted, errors.Join(errs...)
}
