package scylladbdatacenter

import (
	"context"
	"fmt"
	"maps"
	"slices"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// syncServices applies the client Service and the member Service of every node the plans keep, and removes the
// member Services of nodes that are gone for good (nodeGone): once the rack's StatefulSet no longer counts a node and
// its pod no longer exists, its Service is deleted, after its data claim when the node was decommissioned, so that a
// node added later under the same name starts afresh. The member Services of a rack removed from the spec but still
// running, and of nodes that left without decommission and kept their data, are left alone.
func (c *Controller) syncServices(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, racks []*rackObjects, plans []rackPlan, current map[string]*corev1.Service) ([]metav1.Condition, error) {
	clientService, err := makeClientService(sdc, c.tlsEnabled())
	if err != nil {
		return nil, err
	}
	required := []*corev1.Service{clientService}
	keep := map[string]bool{}
	for i, r := range racks {
		// A node stays until its StatefulSet, as the cache has it, no longer counts it: removing its Service or data
		// earlier could hand them to a pod the StatefulSet recreates meanwhile.
		for ordinal, svc := range r.services {
			if ordinal < r.currentReplicas() {
				keep[svc.Name] = true
			}
		}
		if r.rack == nil {
			continue
		}
		for ordinal := range plans[i].replicas {
			name := naming.MemberServiceName(r.statefulSetName, ordinal)
			if r.pendingDecommissions[name] {
				// Written already; writing again over a stale cache would only conflict.
				keep[name] = true
				continue
			}
			svc, err := makeMemberService(sdc, r.rack, name, plans[i].decommissioned[ordinal], c.tlsEnabled())
			if err != nil {
				return nil, err
			}
			required = append(required, svc)
		}
	}

	applied, progressing, applyErr := applyAll(ctx, c, owned, c.kubeClient.CoreV1().Services(sdc.Namespace), c.serviceLister.Services(sdc.Namespace), required)
	// What the API server returned: a Service created now has its ClusterIPs, which the certificates name.
	maps.Copy(current, applied.byName)
	errs := []error{applyErr}
	key := cache.MetaObjectToName(sdc).String()
	for _, svc := range applied.written {
		if svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelFalse {
			c.expectations.wroteDecommission(key, svc)
		}
	}

	wanted := map[string]bool{}
	for _, svc := range required {
		wanted[svc.Name] = true
	}
	unwanted := map[string]*corev1.Service{}
	for _, name := range slices.Sorted(maps.Keys(owned.services)) {
		svc := owned.services[name]
		if wanted[name] || keep[name] {
			continue
		}
		if svc.Labels[naming.ScyllaServiceTypeLabel] == naming.ScyllaServiceTypeMember {
			if _, ok := owned.pods[name]; ok {
				progressing = append(progressing, metav1.Condition{
					Type:    "Service " + name,
					Reason:  waitingForPodRemovalReason,
					Message: fmt.Sprintf("waiting for pod %s to be gone before deleting its member Service", name),
				})
				continue
			}
			if !nodeGone(svc, owned.pvcs[naming.PVCName(name)]) {
				klog.FromContext(ctx).V(4).Info("Keeping the member Service of a node that still has its data", "service", klog.KObj(svc))
				continue
			}
			if svc.Labels[naming.DecommissionedLabel] == naming.DecommissionedLabelTrue {
				if err := c.deleteDataClaim(ctx, sdc, owned, name); err != nil {
					errs = append(errs, err)
					continue
				}
			}
		}
		unwanted[name] = svc
	}
	errs = append(errs, prune(ctx, c, sdc, c.kubeClient.CoreV1().Services(sdc.Namespace), unwanted, nil))

	return progressing, utilerrors.NewAggregate(errs)
}

// deleteDataClaim deletes the data claim of the decommissioned node podName, if it is still there: the data of a
// node that left the ring must never be used again.
func (c *Controller) deleteDataClaim(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, podName string) error {
	pvc, ok := owned.pvcs[naming.PVCName(podName)]
	if !ok || pvc.DeletionTimestamp != nil {
		return nil
	}
	uid := pvc.UID
	err := c.kubeClient.CoreV1().PersistentVolumeClaims(pvc.Namespace).Delete(ctx, pvc.Name, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid},
	})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		c.eventRecorder.Eventf(sdc, corev1.EventTypeWarning, "PersistentVolumeClaimDeleteFailed",
			"Failed to delete PersistentVolumeClaim %s of decommissioned node %s: %v", pvc.Name, podName, err)
		return fmt.Errorf("can't delete PersistentVolumeClaim %q: %w", klog.KObj(pvc), err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted the data claim of a decommissioned node", "persistentVolumeClaim", klog.KObj(pvc))
	c.eventRecorder.Eventf(sdc, corev1.EventTypeNormal, "PersistentVolumeClaimDeleted",
		"PersistentVolumeClaim %s of decommissioned node %s deleted", pvc.Name, podName)
	return nil
}
