package scylladbdatacenter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

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

// maxReplaceSteps bounds the steps one replacement takes in a sync: start, delete the claim, delete the pod.
const maxReplaceSteps = 3

// planReplacements finds the datacenter's orphaned nodes and plans its node replacements (planReplacements). A
// replacement that runs, starts or is stuck is the datacenter's node operation: plans get it, so that no rollout
// restarts a pod meanwhile (planRollout).
func (c *Controller) planReplacements(sdc *scyllav1alpha1.ScyllaDBDatacenter, racks []*rackObjects, plans []rackPlan) (*replacementPlan, error) {
	orphans, err := findOrphans(racks, c.pvLister, c.nodeIndexer)
	if err != nil {
		return nil, err
	}
	key := cache.MetaObjectToName(sdc).String()
	plan := planReplacements(datacenterName(sdc), racks, plans, orphans, orphanReplacementDisabled(sdc),
		func(uid types.UID) bool { return c.expectations.pendingDeletion(key, uid) })
	operation := plan.nodeOperation()
	if len(operation) == 0 {
		// A replacement that can't go on (its markers are broken) is still one: nothing else may start meanwhile.
		operation = replacementInProgress(racks)
	}
	if len(operation) != 0 {
		for i := range plans {
			if len(plans[i].nodeOperation) == 0 {
				plans[i].nodeOperation = operation
			}
		}
	}
	return &plan, nil
}

// useWrittenServices puts into owned the member Services as node replacement last patched them, where the cache
// does not show that write yet (replacementServices).
func (c *Controller) useWrittenServices(owned *ownedObjects) {
	for name, svc := range owned.services {
		if written, err := c.replacementServices.Get(svc.Namespace, name); err == nil {
			owned.services[name] = written
		}
	}
}

// syncReplacements carries out plan (planReplacements): it requests the replacement of orphaned nodes and takes each
// replacement as many steps as it can without waiting. current holds the member Services as the Service sync
// applied them: a write to one carries the resourceVersion it read, so that nothing written meanwhile (a person
// removing naming.ReplaceLabel, the sidecar recording another host ID) is overwritten by a decision made without it.
func (c *Controller) syncReplacements(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, plan *replacementPlan, current map[string]*corev1.Service) ([]metav1.Condition, error) {
	progressing := plan.progressing
	errs := append([]error{}, plan.errs...)
	key := cache.MetaObjectToName(sdc).String()

	for _, request := range plan.orphanRequests {
		n := request.node
		svc := freshService(current, n.service)
		if _, err := c.patchMemberService(ctx, svc, map[string]*string{naming.ReplaceLabel: new("")}, nil); err != nil {
			errs = append(errs, fmt.Errorf("can't request the replacement of orphaned node %s: %w", svc.Name, err))
			continue
		}
		c.eventRecorder.Eventf(sdc, corev1.EventTypeWarning, "OrphanedNode",
			"Node %s is orphaned: its data PersistentVolume %s can only be used on Kubernetes node %s, which no longer exists; requested its replacement",
			svc.Name, request.orphan.volume, request.orphan.kubeNode)
	}

	for i, r := range plan.replacements {
		n := r.node
		n.service = freshService(current, n.service)
		decision := r.decision
		for range maxReplaceSteps {
			if decision.step == replaceStepWait {
				break
			}
			var err error
			n, err = c.takeReplaceStep(ctx, sdc, key, n, decision)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if decision.step == replaceStepFinish {
				plan.replacements[i].finished = true
				break
			}
			decision, err = replaceProgress(n, func(uid types.UID) bool { return c.expectations.pendingDeletion(key, uid) })
			if err != nil {
				errs = append(errs, err)
				break
			}
		}
		if decision.step != replaceStepFinish {
			progressing = append(progressing, rackCondition(n.rack.name, replacingNodeReason, "%s", replaceProgressMessage(n, decision)))
		}
	}
	return progressing, utilerrors.NewAggregate(errs)
}

// replaceProgressMessage describes where the replacement of n stands after decision, its last step.
func replaceProgressMessage(n memberNode, decision replaceDecision) string {
	if decision.step == replaceStepWait {
		return decision.message
	}
	return fmt.Sprintf("replacing node %s (host ID %s)", n.service.Name, decision.hostID)
}

// freshService returns the newer of svc and the Service of the same name in current, by resourceVersion (which the
// API server orders as integers, as controllerhelpers.MutationCache assumes too).
func freshService(current map[string]*corev1.Service, svc *corev1.Service) *corev1.Service {
	fresh, ok := current[svc.Name]
	if !ok || fresh == nil || fresh.UID != svc.UID {
		return svc
	}
	freshVersion, freshErr := strconv.ParseUint(fresh.ResourceVersion, 10, 64)
	version, err := strconv.ParseUint(svc.ResourceVersion, 10, 64)
	if freshErr == nil && err == nil && version > freshVersion {
		return svc
	}
	return fresh
}

// takeReplaceStep carries out decision, a step of the replacement of n other than replaceStepWait, and returns n as
// the step left it.
func (c *Controller) takeReplaceStep(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, key string, n memberNode, decision replaceDecision) (memberNode, error) {
	logger := klog.FromContext(ctx)
	name := n.service.Name
	switch decision.step {
	case replaceStepStart:
		record, err := marshalReplacedObjects(decision.objects)
		if err != nil {
			return n, err
		}
		svc, err := c.patchMemberService(ctx, n.service,
			map[string]*string{naming.ReplacingNodeHostIDLabel: &decision.hostID},
			map[string]*string{naming.ReplacingNodeObjectsAnnotation: &record})
		if err != nil {
			return n, fmt.Errorf("can't start replacing node %s: %w", name, err)
		}
		n.service = svc
		logger.V(2).Info("Started replacing a node", "service", klog.KObj(svc), "hostID", decision.hostID)
		c.eventRecorder.Eventf(sdc, corev1.EventTypeNormal, "ReplacingNode",
			"Replacing node %s (host ID %s): deleting its data PersistentVolumeClaim and pod", name, decision.hostID)

	case replaceStepDeleteClaim:
		return n, c.deleteReplacedObject(ctx, key, name, "PersistentVolumeClaim", c.kubeClient.CoreV1().PersistentVolumeClaims(n.pvc.Namespace), n.pvc)

	case replaceStepDeletePod:
		return n, c.deleteReplacedObject(ctx, key, name, "Pod", c.kubeClient.CoreV1().Pods(n.pod.Namespace), n.pod)

	case replaceStepFinish:
		svc, err := c.patchMemberService(ctx, n.service,
			map[string]*string{naming.ReplaceLabel: nil, naming.ReplacingNodeHostIDLabel: nil},
			map[string]*string{naming.ReplacingNodeObjectsAnnotation: nil})
		if err != nil {
			return n, fmt.Errorf("can't finish replacing node %s: %w", name, err)
		}
		n.service = svc
		logger.V(2).Info("Finished replacing a node", "service", klog.KObj(svc), "hostID", decision.hostID, "newHostID", decision.newHostID)
		c.eventRecorder.Eventf(sdc, corev1.EventTypeNormal, "ReplacedNode",
			"Node %s replaced host ID %s; its new host ID is %s", name, decision.hostID, decision.newHostID)

	default:
		return n, fmt.Errorf("can't take replace step %d of node %s: unknown step", decision.step, name)
	}
	return n, nil
}

// deleterInterface deletes objects of one kind in a namespace.
type deleterInterface interface {
	Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// deleteReplacedObject deletes obj, an object of kind of the node being replaced node, on condition that it still
// has its UID, and records the deletion for the datacenter key (expectations) so that a cache that does not show it
// yet doesn't get it deleted twice. An object already gone, or replaced by another of the same name, was deleted.
func (c *Controller) deleteReplacedObject(ctx context.Context, key, node, kind string, client deleterInterface, obj metav1.Object) error {
	uid := obj.GetUID()
	err := client.Delete(ctx, obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsConflict(err):
	case err != nil:
		return fmt.Errorf("can't delete %s %q of node %s being replaced: %w", kind, klog.KObj(obj), node, err)
	}
	c.expectations.wroteDeletion(key, uid)
	klog.FromContext(ctx).V(2).Info("Deleted an object of a node being replaced", "kind", kind, "object", klog.KObj(obj), "uid", uid)
	return nil
}

// servicePatch returns a JSON merge patch of svc's labels and annotations (a nil value removes the key) that applies
// only to svc as read: its UID and resourceVersion are preconditions.
func servicePatch(svc *corev1.Service, labels, annotations map[string]*string) ([]byte, error) {
	metadata := map[string]any{}
	if len(svc.UID) != 0 {
		metadata["uid"] = svc.UID
	}
	if len(svc.ResourceVersion) != 0 {
		metadata["resourceVersion"] = svc.ResourceVersion
	}
	if labels != nil {
		metadata["labels"] = labels
	}
	if annotations != nil {
		metadata["annotations"] = annotations
	}
	patch, err := json.Marshal(map[string]any{"metadata": metadata})
	if err != nil {
		return nil, fmt.Errorf("can't encode the patch of Service %q: %w", klog.KObj(svc), err)
	}
	return patch, nil
}

// patchMemberService patches the labels and annotations of svc (servicePatch) and returns the Service the API server
// returned, which the following syncs read until the cache shows it (replacementServices). A conflict means svc
// changed since it was read: the sync is retried over the change.
func (c *Controller) patchMemberService(ctx context.Context, svc *corev1.Service, labels, annotations map[string]*string) (*corev1.Service, error) {
	patch, err := servicePatch(svc, labels, annotations)
	if err != nil {
		return nil, err
	}
	patched, err := c.replacementServices.Patcher(c.kubeClient.CoreV1().Services(svc.Namespace)).Patch(ctx, svc.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		if apierrors.IsConflict(err) {
			return nil, errors.Join(errMemberServiceChanged, err)
		}
		return nil, err
	}
	return patched, nil
}

// errMemberServiceChanged: a member Service changed after the sync read it; the sync runs again over the change.
var errMemberServiceChanged = errors.New("the member Service changed since this sync read it")
