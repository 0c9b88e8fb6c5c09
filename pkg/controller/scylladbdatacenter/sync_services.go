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
	"k8s.io/apimachinery/pkg/types"
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
	// What each of required is built from, in the same order.
	inputs := []serviceInputs{c.serviceInputs(sdc, "")}
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
			inputs = append(inputs, c.serviceInputs(sdc, plans[i].decommissioned[ordinal]))
		}
	}

	applied, progressing, applyErr := c.applyServices(ctx, sdc, owned, required, inputs)
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

// serviceInputs are what makeClientService and makeMemberService build a Service from besides its name: the datacenter
// as its UID and resourceVersion identify it (the racks are merged from it), the decommission request and whether
// automatic TLS is on.
type serviceInputs struct {
	sdcUID             types.UID
	sdcResourceVersion string
	decommissioned     string
	automaticTLS       bool
}

func (c *Controller) serviceInputs(sdc *scyllav1alpha1.ScyllaDBDatacenter, decommissioned string) serviceInputs {
	return serviceInputs{sdcUID: sdc.UID, sdcResourceVersion: sdc.ResourceVersion, decommissioned: decommissioned, automaticTLS: c.tlsEnabled()}
}

// applyServices is applyAll of the required Services, built from inputs, but for those Apply last found as required
// from the same inputs and that the caches show unchanged since (noOpApplies): every sync of every datacenter
// builds them all, and most of the time nothing changed. The datacenter must have a UID and a resourceVersion, and
// adoptions and ownership conflicts always go through applyAll.
func (c *Controller) applyServices(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, required []*corev1.Service, inputs []serviceInputs) (appliedObjects[*corev1.Service], []metav1.Condition, error) {
	lister := c.serviceLister.Services(sdc.Namespace)
	mayKeep := len(sdc.UID) != 0 && len(sdc.ResourceVersion) != 0 && len(owned.adopted) == 0 && !c.conflicts.any(owned.key)
	toApply := make([]*corev1.Service, 0, len(required))
	var kept []*corev1.Service
	for i, svc := range required {
		if mayKeep {
			if inCache, err := lister.Get(svc.Name); err == nil && c.serviceApplies.unchanged(owned.key, inputs[i], inCache) {
				kept = append(kept, inCache)
				continue
			}
		}
		toApply = append(toApply, svc)
	}

	applied, progressing, err := applyAll(ctx, c, owned, c.kubeClient.CoreV1().Services(sdc.Namespace), lister, toApply)
	remembered := make(map[string]noOpApply[serviceInputs], len(required))
	for _, svc := range kept {
		applied.byName[svc.Name] = svc
	}
	for i, svc := range required {
		actual, ok := applied.byName[svc.Name]
		if !ok || slices.Contains(applied.written, actual) {
			continue
		}
		remembered[svc.Name] = noOpApply[serviceInputs]{inputs: inputs[i], uid: actual.UID, resourceVersion: actual.ResourceVersion}
	}
	if mayKeep {
		c.serviceApplies.Set(owned.key, remembered)
	} else {
		c.serviceApplies.Forget(owned.key)
	}
	return applied, progressing, err
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
