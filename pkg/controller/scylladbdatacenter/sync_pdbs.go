package scylladbdatacenter

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncPodDisruptionBudgets applies the datacenter's PodDisruptionBudget.
func (c *Controller) syncPodDisruptionBudgets(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects) ([]metav1.Condition, error) {
	_, progressing, err := applyAndPrune(ctx, c, sdc,
		c.kubeClient.PolicyV1().PodDisruptionBudgets(sdc.Namespace), c.pdbLister.PodDisruptionBudgets(sdc.Namespace),
		owned, owned.pdbs, makePodDisruptionBudget(sdc))
	return progressing, err
}
