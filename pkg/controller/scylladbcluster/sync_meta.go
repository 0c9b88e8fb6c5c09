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
// addresses of every datacenter's nodes as the remote caches last saw them: one EndpointSlice per datacenter and
// address family, labelled with the datacenter's name (makeClientEndpointSlices).
//
//   - A datacenter whose remote cluster can be read gets the addresses its nodes have now; its other EndpointSlices
//     (a family it no longer has) are removed.
//   - A datacenter whose remote cluster can't be read (it has no client, or its caches have not synced) keeps its
//     EndpointSlices exactly as they are: nothing is known of its nodes, and ScyllaDB Manager keeps reaching its agents.
//   - The EndpointSlices of datacenters no longer in the spec are removed.
//   - The un-attributed EndpointSlices of earlier versions ("<client Service>-ipv4/-ipv6", without the datacenter
//     label) are removed once no datacenter depends on them: when every datacenter that can't be read has
//     EndpointSlices of its own and every other datacenter's were applied in this sync. Until then they stay as they
//     are, as the only record of an unreadable datacenter's addresses.
func (c *Controller) syncClientService(ctx context.Context, sc *scyllav1alpha1.ScyllaDBCluster, dcs []*remoteDatacenter) error {
	svc := makeClientService(sc)
	client, lister := c.kubeClient.DiscoveryV1().EndpointSlices(sc.Namespace), c.endpointSliceLister.EndpointSlices(sc.Namespace)
	existing, err := lister.List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
	if err != nil {
		return fmt.Errorf("can't list EndpointSlices: %w", err)
	}

	var errs []error
	if _, _, err := resourceapply.Apply(ctx, c.kubeClient.CoreV1().Services(sc.Namespace), c.serviceLister.Services(sc.Namespace), c.eventRecorder, svc, resourceapply.ApplyOptions{}); err != nil {
		errs = append(errs, err)
	}

	_, clientsType := broadcastTypes(sc)
	// unread are the datacenters whose EndpointSlices stay as they are.
	unread := sets.New[string]()
	var required []*discoveryv1.EndpointSlice
	for _, dc := range dcs {
		if dc.cluster == nil {
			unread.Insert(dc.spec.Name)
			continue
		}
		slices, err := makeClientEndpointSlices(sc, dc.spec.Name, dc.endpoints(clientsType))
		if err != nil {
			errs = append(errs, fmt.Errorf("datacenter %q: %w", dc.spec.Name, err))
			unread.Insert(dc.spec.Name)
			continue
		}
		required = append(required, slices...)
	}
	applied := true
	for _, slice := range required {
		if _, _, err := resourceapply.Apply(ctx, client, lister, c.eventRecorder, slice, resourceapply.ApplyOptions{}); err != nil {
			errs = append(errs, err)
			applied = false
		}
	}

	keepLegacy := !applied || !clientSliceDatacenters(sc, existing).IsSuperset(unread)
	var prunable []*discoveryv1.EndpointSlice
	for _, slice := range existing {
		dcName, attributed := slice.Labels[naming.ScyllaDBClusterDatacenterNameLabel]
		switch {
		case attributed && unread.Has(dcName):
		case !attributed && keepLegacy:
		default:
			prunable = append(prunable, slice)
		}
	}
	if _, err := resourceapply.Prune(ctx, client, c.eventRecorder, metav1.NewControllerRef(sc, scyllaDBClusterGVK), prunable, required, resourceapply.PruneOptions{}); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// clientSliceDatacenters returns the datacenters that have EndpointSlices of their own among existing, sc's client
// Service's EndpointSlices.
func clientSliceDatacenters(sc *scyllav1alpha1.ScyllaDBCluster, existing []*discoveryv1.EndpointSlice) sets.Set[string] {
	out := sets.New[string]()
	for _, slice := range existing {
		if dcName, ok := slice.Labels[naming.ScyllaDBClusterDatacenterNameLabel]; ok && metav1.IsControlledBy(slice, sc) && slice.DeletionTimestamp == nil {
			out.Insert(dcName)
		}
	}
	return out
}
