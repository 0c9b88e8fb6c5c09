package scylladbdatacenter

import (
	"context"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// syncIngresses applies the CQL Ingresses (makeCQLIngresses) of the datacenter, built from its Services as
// syncServices applied them, and deletes the Ingresses it controls and no longer wants: all of them once
// spec.exposeOptions.cql.ingress is removed, a node's once its member Service is gone or its host ID changed.
// Without DNS domains it changes nothing and reports why.
func (c *Controller) syncIngresses(ctx context.Context, sdc *scyllav1alpha1.ScyllaDBDatacenter, owned *ownedObjects, services map[string]*corev1.Service) ([]metav1.Condition, error) {
	ingresses, makeErr := makeCQLIngresses(sdc, services)
	if makeErr != nil && len(ingresses.required) == 0 {
		return nil, makeErr
	}
	client := c.kubeClient.NetworkingV1().Ingresses(sdc.Namespace)
	_, progressing, applyErr := applyAll(ctx, c, owned, client, c.ingressLister.Ingresses(sdc.Namespace), ingresses.required)

	wanted := make(map[string]bool, len(ingresses.required))
	for _, ingress := range ingresses.required {
		wanted[ingress.Name] = true
	}
	unwanted := map[string]*networkingv1.Ingress{}
	for name, ingress := range owned.ingresses {
		if !wanted[name] && !ingresses.keep[name] {
			unwanted[name] = ingress
		}
	}
	pruneErr := prune(ctx, c, sdc, client, unwanted, nil)
	return progressing, utilerrors.NewAggregate([]error{makeErr, applyErr, pruneErr})
}
