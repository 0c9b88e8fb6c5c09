package remotekubernetescluster

import (
	"context"
	"fmt"
	"slices"
	"strings"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1apply "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
)

// calculateStatus returns rkc's status: its generation as observed, conditions with the aggregated Available,
// Progressing and Degraded added, each keeping the lastTransitionTime rkc has while its status holds.
func (c *Controller) calculateStatus(rkc *scyllav1alpha1.RemoteKubernetesCluster, conditions []metav1.Condition) (*scyllav1alpha1.RemoteKubernetesClusterStatus, error) {
	generation := rkc.Generation
	conditions = slices.Clone(conditions)
	if err := controllerhelpers.SetAggregatedConditions(&conditions, generation,
		controllerhelpers.AvailableCondition, controllerhelpers.ProgressingCondition, controllerhelpers.DegradedCondition); err != nil {
		return nil, fmt.Errorf("can't aggregate the conditions of RemoteKubernetesCluster %q: %w", rkc.Name, err)
	}
	controllerhelpers.SetTransitionTimes(conditions, rkc.Status.Conditions, metav1.NewTime(c.now()))
	sortConditions(conditions)
	return &scyllav1alpha1.RemoteKubernetesClusterStatus{ObservedGeneration: &generation, Conditions: conditions}, nil
}

// updateStatus applies status, with server-side apply under naming.OperatorFieldManager, unless rkc already has it.
// The operator is the only writer of a RemoteKubernetesCluster's status, so the whole status is applied, and a
// condition it no longer sends is removed. The UID makes the apply fail rather than land on another object recreated
// under the same name.
func (c *Controller) updateStatus(ctx context.Context, rkc *scyllav1alpha1.RemoteKubernetesCluster, status *scyllav1alpha1.RemoteKubernetesClusterStatus) error {
	existing := rkc.Status.DeepCopy()
	sortConditions(existing.Conditions)
	if apiequality.Semantic.DeepEqual(existing, status) {
		return nil
	}
	statusConfiguration, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1apply.RemoteKubernetesClusterStatusApplyConfiguration](status)
	if err != nil {
		return fmt.Errorf("can't apply the status of RemoteKubernetesCluster %q: %w", rkc.Name, err)
	}
	apply := scyllav1alpha1apply.RemoteKubernetesCluster(rkc.Name).WithUID(rkc.UID).WithStatus(statusConfiguration)
	applied, err := c.scyllaClient.ScyllaV1alpha1().RemoteKubernetesClusters().ApplyStatus(ctx, apply, metav1.ApplyOptions{
		FieldManager: naming.OperatorFieldManager,
		Force:        true,
	})
	if err != nil {
		return fmt.Errorf("can't apply the status of RemoteKubernetesCluster %q: %w", rkc.Name, err)
	}
	c.remoteKubernetesClusters.Written(applied)
	klog.FromContext(ctx).V(2).Info("Applied status", "resourceVersion", applied.ResourceVersion)
	return nil
}

// sortConditions orders conditions by type: the API server keeps an applied list's order, which is not what decides
// whether two statuses say the same.
func sortConditions(conditions []metav1.Condition) {
	slices.SortFunc(conditions, func(a, b metav1.Condition) int { return strings.Compare(a.Type, b.Type) })
}
