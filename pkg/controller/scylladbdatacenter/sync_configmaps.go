package scylladbdatacenter

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// syncConfigMaps applies the managed scylla.yaml ConfigMap; makeErr is why it could not be built, if it could not.
// It also reports settings of scylla.yaml the operator can't honour (unservableAlternatorError).
func (c *Controller) syncConfigMaps(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, managedConfig *corev1.ConfigMap, makeErr error) ([]metav1.Condition, error) {
	if makeErr != nil {
		return nil, makeErr
	}
	_, progressing, err := applyAndPrune(ctx, c, sdc,
		c.kubeClient.CoreV1().ConfigMaps(sdc.Namespace), c.configMapLister.ConfigMaps(sdc.Namespace),
		owned, owned.configMaps, managedConfig)
	return progressing, utilerrors.NewAggregate([]error{err, unservableAlternatorError(sdc, c.tlsEnabled())})
}
