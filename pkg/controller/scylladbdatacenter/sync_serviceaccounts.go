package scylladbdatacenter

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncServiceAccounts applies the member ServiceAccount ScyllaDB pods run as.
func (c *Controller) syncServiceAccounts(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects) ([]metav1.Condition, error) {
	_, progressing, err := applyAndPrune(ctx, c, sdc,
		c.kubeClient.CoreV1().ServiceAccounts(sdc.Namespace), c.serviceAccountLister.ServiceAccounts(sdc.Namespace),
		owned, owned.serviceAccounts, makeServiceAccount(sdc))
	return progressing, err
}
