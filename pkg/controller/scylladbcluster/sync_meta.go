package scylladbcluster

import (
	"context"
	"errors"
	"fmt"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/resourceapply"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// syncAuthTokenSecret applies sc's agent auth-token Secret in the meta cluster and returns the token: the one the
// Secret holds, or a new one the first time (and when the Secret's is unreadable). Every datacenter gets a copy.
func (c *Controller) syncAuthTokenSecret(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster) (string, error) {
	name := naming.ScyllaDBClusterAuthTokenSecretName(sc.Name)
	var token string
	existing, err := c.secretLister.Secrets(sc.Namespace).Get(name)
	switch {
	case err == nil:
		token, _ = scyllaagent.AuthTokenFromConfig(existing.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	case !apierrors.IsNotFound(err):
		return "", fmt.Errorf("can't get the agent auth-token Secret %q: %w", name, err)
	}
	if len(token) == 0 {
		if token, err = c.generateAuthToken(); err != nil {
			return "", fmt.Errorf("can't generate the agent auth token: %w", err)
		}
	}
	required, err := makeAuthTokenSecret(sc, token)
	if err != nil {
		return "", err
	}
	if _, _, err := resourceapply.Apply(ctx, c.kubeClient.CoreV1().Secrets(sc.Namespace), c.secretLister.Secrets(sc.Namespace), c.eventRecorder, required, resourceapply.ApplyOptions{}); err != nil {
		return "", err
	}
	return token, nil
}

// syncClientService applies sc's client Service in the meta cluster and its EndpointSlices, which list the client
// addresses of every datacenter's nodes as the remote caches last saw them, and removes EndpointSlices no longer
// needed. While the remote cluster of a datacenter can't be read (it has no client, or its caches have not synced),
// nothing is known of its nodes: the addresses the EndpointSlices have that no other datacenter has are kept, so that
// ScyllaDB Manager keeps reaching its agents.
func (c *Controller) syncClientService(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter) error {
	svc := makeClientService(sc)
	client, lister := c.kubeClient.DiscoveryV1().EndpointSlices(sc.Namespace), c.endpointSliceLister.EndpointSlices(sc.Namespace)
	existing, err := lister.List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
	if err != nil {
		return fmt.Errorf("can't list EndpointSlices: %w", err)
	}

	_, clientsType := broadcastTypes(sc)
	var endpoints []endpoint
	unknown := false
	for _, dc := range dcs {
		if dc.cluster == nil {
			unknown = true
			continue
		}
		endpoints = append(endpoints, dc.endpoints(clientsType)...)
	}
	if unknown {
		endpoints = append(endpoints, keptEndpoints(sc, existing, endpoints)...)
	}

	var errs []error
	if _, _, err := resourceapply.Apply(ctx, c.kubeClient.CoreV1().Services(sc.Namespace), c.serviceLister.Services(sc.Namespace), c.eventRecorder, svc, resourceapply.ApplyOptions{}); err != nil {
		errs = append(errs, err)
	}
	required, err := makeClientEndpointSlices(sc, endpoints)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, slice := range required {
		if _, _, err := resourceapply.Apply(ctx, client, lister, c.eventRecorder, slice, resourceapply.ApplyOptions{}); err != nil {
			errs = append(errs, err)
		}
	}
	if _, err := resourceapply.Prune(ctx, client, c.eventRecorder, metav1.NewControllerRef(sc, scyllaDBClusterGVK), existing, required, resourceapply.PruneOptions{}); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// keptEndpoints returns the endpoints of existing, sc's client EndpointSlices, whose addresses known does not have,
// with the readiness they have.
func keptEndpoints(sc *scyllav1alpha1.ScyllaDBCluster, existing []*discoveryv1.EndpointSlice, known []endpoint) []endpoint {
	knownAddresses := sets.New[string]()
	for _, e := range known {
		knownAddresses.Insert(e.address)
	}
	var kept []endpoint
	for _, slice := range existing {
		if !metav1.IsControlledBy(slice, sc) {
			continue
		}
		for _, e := range slice.Endpoints {
			for _, address := range e.Addresses {
				if !knownAddresses.Has(address) {
					kept = append(kept, endpoint{address: address, ready: e.Conditions.Ready == nil || *e.Conditions.Ready})
				}
			}
		}
	}
	return kept
}
