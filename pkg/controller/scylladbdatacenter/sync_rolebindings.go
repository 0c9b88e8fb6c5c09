package scylladbdatacenter

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// syncRoleBindings applies the RoleBinding that grants the member ClusterRole to the member ServiceAccount.
func (c *Controller) syncRoleBindings(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects) ([]metav1.Condition, error) {
	_, progressing, err := applyAndPrune(ctx, c, sdc,
		c.kubeClient.RbacV1().RoleBindings(sdc.Namespace), c.roleBindingLister.RoleBindings(sdc.Namespace),
		owned, owned.roleBindings, makeRoleBinding(sdc))
	return progressing, err
}
