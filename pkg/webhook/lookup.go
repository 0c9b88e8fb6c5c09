package webhook

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"

	"github.com/scyllakube/scylla-operator/pkg/validation"
)

// lookup answers validation.Lookup from the informer caches, and from the API server when the cache misses: an
// object created just before the one referring to it (one `kubectl apply` of both) may not be cached yet.
type lookup struct {
	scyllaClient     scyllaclientset.Interface
	clusterLister    scyllav1alpha1listers.ScyllaDBClusterLister
	datacenterLister scyllav1alpha1listers.ScyllaDBDatacenterLister
}

var _ validation.Lookup = &lookup{}

// NewLookup returns the validation.Lookup the webhook uses.
func NewLookup(scyllaClient scyllaclientset.Interface, clusterLister scyllav1alpha1listers.ScyllaDBClusterLister, datacenterLister scyllav1alpha1listers.ScyllaDBDatacenterLister) validation.Lookup {
	return &lookup{scyllaClient: scyllaClient, clusterLister: clusterLister, datacenterLister: datacenterLister}
}

// ScyllaDBManagerTaskTargetExists reports whether the ScyllaDBCluster or ScyllaDBDatacenter ref names exists.
func (l *lookup) ScyllaDBManagerTaskTargetExists(ctx context.Context, namespace string, ref scyllav1alpha1.LocalScyllaDBReference) (bool, error) {
	var cacheErr, liveErr error
	switch ref.Kind {
	case "ScyllaDBCluster":
		if _, cacheErr = l.clusterLister.ScyllaDBClusters(namespace).Get(ref.Name); cacheErr == nil {
			return true, nil
		}
		_, liveErr = l.scyllaClient.ScyllaV1alpha1().ScyllaDBClusters(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	case "ScyllaDBDatacenter":
		if _, cacheErr = l.datacenterLister.ScyllaDBDatacenters(namespace).Get(ref.Name); cacheErr == nil {
			return true, nil
		}
		_, liveErr = l.scyllaClient.ScyllaV1alpha1().ScyllaDBDatacenters(namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	default:
		return false, fmt.Errorf("can't look up kind %q, want ScyllaDBCluster or ScyllaDBDatacenter", ref.Kind)
	}
	switch {
	case cacheErr != nil && !apierrors.IsNotFound(cacheErr):
		return false, fmt.Errorf("can't get %s %q from the cache: %w", ref.Kind, namespace+"/"+ref.Name, cacheErr)
	case liveErr == nil:
		return true, nil
	case apierrors.IsNotFound(liveErr):
		return false, nil
	default:
		return false, fmt.Errorf("can't get %s %q: %w", ref.Kind, namespace+"/"+ref.Name, liveErr)
	}
}
