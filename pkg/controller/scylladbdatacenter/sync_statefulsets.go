package scylladbdatacenter

import (
	"context"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/cache"
)

// syncStatefulSets applies the StatefulSet of every rack of the spec with the replicas its plan says (a rack that has
// none yet and waits for its turn to grow gets it when it grows), and deletes
// the StatefulSet of a rack removed from the spec once it runs no node and no pod of it is left. A removed rack that
// still counts nodes is a spec error: its nodes must be decommissioned first, by scaling the rack to 0. The
// StatefulSets the API server returned are put into applied, by name.
func (c *Controller) syncStatefulSets(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, racks []*rackObjects, plans []rackPlan, managedConfig *corev1.ConfigMap, in statefulSetInputs, applied map[string]*appsv1.StatefulSet) ([]metav1.Condition, error) {
	var required []*appsv1.StatefulSet
	var progressing []metav1.Condition
	var errs []error
	removed := map[string]*appsv1.StatefulSet{}
	rackRequired := make([]*appsv1.StatefulSet, len(racks))
	for i, r := range racks {
		if r.pendingReplicas != nil {
			// Written already; the plan says what to wait for. Writing again over a stale cache would only conflict.
			progressing = append(progressing, plans[i].progressing...)
			continue
		}
		if r.rack == nil {
			if replicas := r.currentReplicas(); replicas != 0 {
				errs = append(errs, newSpecError("rack %q was removed from spec.racks while its StatefulSet %q still runs %d nodes: "+
					"add the rack back with nodes: 0, wait until its nodes are decommissioned, then remove it", r.name, r.statefulSetName, max(replicas, r.statefulSet.Status.Replicas)))
				continue
			}
			if running := r.statefulSet.Status.Replicas; running != 0 {
				// Scaled to 0, as the webhook requires before a removal, with the pod of its last, decommissioned node
				// still stopping: nothing for a person to do.
				progressing = append(progressing, rackCondition(r.name, waitingForStatefulSetReason,
					"waiting for %d pods of StatefulSet %s to stop before deleting it", running, r.statefulSetName))
				continue
			}
			removed[r.statefulSetName] = r.statefulSet
			continue
		}

		progressing = append(progressing, plans[i].progressing...)
		if plans[i].err != nil {
			errs = append(errs, plans[i].err)
		}
		if r.statefulSet == nil && plans[i].replicas == 0 && rackNodes(r.rack) != 0 {
			// A rack waiting for its turn to grow gets its StatefulSet when it does, with its nodes: created at zero
			// and scaled up later, it would cost a write and a round of the StatefulSet controller more.
			continue
		}
		rackIn := in
		rackIn.replicas = plans[i].replicas
		rackIn.rackOrdinal = i
		configKey := naming.ScyllaDBManagedConfigKey(r.name)
		config, ok := managedConfig.Data[configKey]
		if !ok {
			errs = append(errs, fmt.Errorf("can't make StatefulSet %q: ConfigMap %q has no key %q", r.statefulSetName, managedConfig.Name, configKey))
			continue
		}
		hash, err := dataHash(config)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rackIn.managedConfigHash = hash
		sts, err := makeStatefulSet(sdc, r.rack, rackIn)
		if err != nil {
			errs = append(errs, fmt.Errorf("can't make StatefulSet %q of rack %q: %w", r.statefulSetName, r.name, err))
			continue
		}
		keepRestartedAt(sts, r.statefulSet)
		templateHash, err := resourceapply.Hash(&sts.Spec.Template)
		if err != nil {
			errs = append(errs, fmt.Errorf("can't make StatefulSet %q of rack %q: %w", r.statefulSetName, r.name, err))
			continue
		}
		sts.Annotations = merge.Maps(sts.Annotations, map[string]string{naming.PodTemplateHashAnnotation: templateHash})
		required = append(required, sts)
		rackRequired[i] = sts
	}

	nodeOperation := ""
	for _, plan := range plans {
		if len(plan.nodeOperation) != 0 {
			nodeOperation = plan.nodeOperation
			break
		}
	}
	progressing = append(progressing, planRollout(racks, rackRequired, nodeOperation)...)

	actual, applyProgressing, err := applyAll(ctx, c, owned, c.kubeClient.AppsV1().StatefulSets(sdc.Namespace), c.statefulSetLister.StatefulSets(sdc.Namespace), required)
	progressing = append(progressing, applyProgressing...)
	errs = append(errs, err)
	key := cache.MetaObjectToName(sdc).String()
	for _, sts := range actual.written {
		c.expectations.wroteStatefulSet(key, sts)
	}
	for _, r := range racks {
		if sts, ok := actual.byName[r.statefulSetName]; ok {
			applied[sts.Name] = sts
			progressing = append(progressing, rolloutConditions(r.name, sts)...)
		}
	}

	errs = append(errs, prune(ctx, c, sdc, c.kubeClient.AppsV1().StatefulSets(sdc.Namespace), removed, nil))
	return progressing, utilerrors.NewAggregate(errs)
}

// rolloutConditions describe how far a rack's StatefulSet is from running every node ready and available at its
// current spec.
func rolloutConditions(rack string, sts *appsv1.StatefulSet) []metav1.Condition {
	replicas := specReplicas(sts)
	s := sts.Status
	var message string
	switch {
	case s.ObservedGeneration < sts.Generation:
		message = fmt.Sprintf("waiting for StatefulSet %s to observe generation %d", sts.Name, sts.Generation)
	case s.Replicas < replicas:
		message = fmt.Sprintf("scaling up StatefulSet %s: %d of %d nodes exist", sts.Name, s.Replicas, replicas)
	case s.Replicas > replicas:
		message = fmt.Sprintf("waiting for %d nodes of StatefulSet %s to stop", s.Replicas-replicas, sts.Name)
	case s.UpdatedReplicas < replicas || s.CurrentRevision != s.UpdateRevision:
		message = fmt.Sprintf("rolling out StatefulSet %s: %d of %d nodes updated", sts.Name, s.UpdatedReplicas, replicas)
	case s.ReadyReplicas < replicas:
		message = fmt.Sprintf("%d of %d nodes of StatefulSet %s are ready", s.ReadyReplicas, replicas, sts.Name)
	case s.AvailableReplicas < replicas:
		message = fmt.Sprintf("%d of %d nodes of StatefulSet %s are available", s.AvailableReplicas, replicas, sts.Name)
	default:
		return nil
	}
	return []metav1.Condition{rackCondition(rack, waitingForStatefulSetReason, "%s", message)}
}

// keepRestartedAt copies into required the restart annotation `kubectl rollout restart` put on existing's pod
// template: dropping it would change the template and restart every pod once more.
func keepRestartedAt(required, existing *appsv1.StatefulSet) {
	if existing == nil {
		return
	}
	if v, ok := existing.Spec.Template.Annotations[naming.KubectlRestartedAtAnnotation]; ok {
		required.Spec.Template.Annotations[naming.KubectlRestartedAtAnnotation] = v
	}
}
