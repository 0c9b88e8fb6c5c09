package scylladbcluster

import (
	"errors"
	"fmt"
	"net"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/remoteclient"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// errCachesNotSynced is wrapped by remoteCluster's error when a remote cluster's informers have not listed yet: a
// wait, not a failure.
var errCachesNotSynced = errors.New("the caches of the remote cluster have not synced yet")

// errCachesNotSyncing is wrapped by remoteCluster's error when a remote cluster's informers have failed to list for
// cachesSyncTimeout, e.g. because the kubeconfig's user may not list what the operator watches (RBAC missing in the
// remote cluster): a failure, though the informers keep retrying.
var errCachesNotSyncing = errors.New("the caches of the remote cluster have not synced")

// cachesSyncTimeout is how long a remote cluster that answers its health checks may take to sync its caches while
// its informers report list errors before its datacenters are degraded: three default health-check periods (60s),
// so that an API server restarting or a kubeconfig whose RBAC is being set up is a wait, and more than five of the
// informers' longest back-off between lists (30s), so that the error has been seen on several retries.
const cachesSyncTimeout = 3 * time.Minute

// remoteDatacenter is what a sync knows of one datacenter of a ScyllaDBCluster in its remote cluster, from the
// remote informers' caches.
type remoteDatacenter struct {
	spec *scyllav1alpha1.ScyllaDBClusterDatacenter
	// namespace is the datacenter's remote namespace.
	namespace string
	// cluster is the remote cluster; nil when it has no clients or its caches have not synced (err says which).
	cluster *remoteclient.Cluster
	// err, when set, is why the remote cluster can't be written to. The caches of cluster, when set, still tell the
	// last known state.
	err error
	// sdc is the datacenter's ScyllaDBDatacenter, nil when it does not exist.
	sdc *scyllav1alpha1.ScyllaDBDatacenter
	// pods are the datacenter's ScyllaDB node pods, services its member Services by name.
	pods     []*corev1.Pod
	services map[string]*corev1.Service
}

// remoteCluster returns the remote cluster of the RemoteKubernetesCluster rkcName and nil, or, when it can't be
// written to, why: it has no clients (the RemoteKubernetesCluster does not exist or its kubeconfig is not usable),
// its last health check failed, or its caches have not synced (errCachesNotSynced, a wait; so is a
// RemoteKubernetesCluster the pool was not told about yet since the operator started), or have failed to list for
// cachesSyncTimeout (errCachesNotSyncing, with the last list error). When its health check
// failed but its caches have synced, the cluster is returned too: its caches hold the last known state. A cluster
// whose caches have not synced and whose health check failed is unreachable, not loading: its caches may never sync.
func (c *Controller) remoteCluster(rkcName string) (*remoteclient.Cluster, error) {
	rc, ok := c.pool.Get(rkcName)
	if !ok {
		if _, err := c.remoteKubernetesClusterLister.Get(rkcName); err == nil && !c.pool.Known(rkcName) {
			// Right after the operator started, before the RemoteKubernetesCluster controller built its client.
			return nil, fmt.Errorf("RemoteKubernetesCluster %q: its client is not built yet, %w", rkcName, errCachesNotSynced)
		}
		return nil, fmt.Errorf("RemoteKubernetesCluster %q has no client: it does not exist, or its kubeconfig Secret is missing or not usable (see its status)", rkcName)
	}
	var unreachable error
	if probe, ok := rc.LastProbe(); ok && probe.Err != nil {
		unreachable = fmt.Errorf("RemoteKubernetesCluster %q is unreachable: %w", rkcName, probe.Err)
	}
	switch {
	case rc.HasSynced():
		return rc, unreachable
	case unreachable != nil:
		return nil, unreachable
	default:
		if c.clock().Sub(rc.Built()) >= cachesSyncTimeout {
			if err := rc.SyncError(); err != nil {
				return nil, fmt.Errorf("RemoteKubernetesCluster %q: %w for over %v: %w", rkcName, errCachesNotSyncing, cachesSyncTimeout, err)
			}
		}
		return nil, fmt.Errorf("RemoteKubernetesCluster %q: %w", rkcName, errCachesNotSynced)
	}
}

// cachesSyncDeadline returns in how long the caches of the remote cluster of dc, which are loading, will have taken
// cachesSyncTimeout to sync, and whether there is such a cluster, not past it yet.
func (c *Controller) cachesSyncDeadline(dc *remoteDatacenter) (time.Duration, bool) {
	if !dc.loading() {
		return 0, false
	}
	rc, ok := c.pool.Get(dc.spec.RemoteKubernetesClusterName)
	if !ok {
		return 0, false
	}
	left := rc.Built().Add(cachesSyncTimeout).Sub(c.clock())
	return left, left > 0
}

// observeDatacenters returns what the remote caches hold of each datacenter of sc, in spec order.
func (c *Controller) observeDatacenters(sc *scyllav1alpha1.ScyllaDBCluster) []*remoteDatacenter {
	dcs := make([]*remoteDatacenter, 0, len(sc.Spec.Datacenters))
	for i := range sc.Spec.Datacenters {
		spec := &sc.Spec.Datacenters[i]
		dc := &remoteDatacenter{
			spec:      spec,
			namespace: naming.ScyllaDBClusterRemoteNamespaceName(sc.Namespace, spec.Name),
			services:  map[string]*corev1.Service{},
		}
		dc.cluster, dc.err = c.remoteCluster(spec.RemoteKubernetesClusterName)
		if dc.cluster != nil {
			dc.observe(naming.ScyllaDBClusterDatacenterName(sc.Name, spec.Name))
		}
		dcs = append(dcs, dc)
	}
	return dcs
}

// observe reads the ScyllaDBDatacenter sdcName, its pods and member Services from the caches of dc's cluster.
func (dc *remoteDatacenter) observe(sdcName string) {
	sdc, err := dc.cluster.ScyllaInformers().Scylla().V1alpha1().ScyllaDBDatacenters().Lister().ScyllaDBDatacenters(dc.namespace).Get(sdcName)
	if err == nil {
		dc.sdc = sdc
	}
	pods, err := dc.cluster.KubeInformers().Core().V1().Pods().Lister().Pods(dc.namespace).List(labels.SelectorFromSet(naming.NodePodLabels(sdcName)))
	if err == nil {
		dc.pods = pods
	}
	memberSelector := labels.SelectorFromSet(labels.Set{
		naming.ClusterNameLabel:       sdcName,
		naming.ScyllaServiceTypeLabel: naming.ScyllaServiceTypeMember,
	})
	services, err := dc.cluster.KubeInformers().Core().V1().Services().Lister().Services(dc.namespace).List(memberSelector)
	if err == nil {
		for _, svc := range services {
			dc.services[svc.Name] = svc
		}
	}
}

// loading tells whether the caches of dc's remote cluster have not synced yet: what they do not hold is unknown.
func (dc *remoteDatacenter) loading() bool {
	return errors.Is(dc.err, errCachesNotSynced)
}

// unknown tells whether nothing could be read of dc: its remote cluster has no client, or caches that have not
// synced (loading, failing to list, or its API server not answering). The status keeps what it said of dc: that its
// ScyllaDBDatacenter was not read is not that it does not exist.
func (dc *remoteDatacenter) unknown() bool {
	return dc.cluster == nil
}

// rolledOut tells whether dc's ScyllaDBDatacenter exists and its status at its current generation says its rollout
// is complete: Available, neither Progressing nor Degraded.
func (dc *remoteDatacenter) rolledOut() bool {
	sdc := dc.sdc
	if sdc == nil || sdc.DeletionTimestamp != nil || sdc.Status.ObservedGeneration == nil || *sdc.Status.ObservedGeneration != sdc.Generation {
		return false
	}
	is := func(condType string, want metav1.ConditionStatus) bool {
		c := apimeta.FindStatusCondition(sdc.Status.Conditions, condType)
		return c != nil && c.ObservedGeneration == sdc.Generation && c.Status == want
	}
	return is(controllerhelpers.AvailableCondition, metav1.ConditionTrue) &&
		is(controllerhelpers.ProgressingCondition, metav1.ConditionFalse) &&
		is(controllerhelpers.DegradedCondition, metav1.ConditionFalse)
}

// endpoints returns the addresses of dc's nodes of the broadcast type addressType, with the readiness of each node's
// pod: its Pod IP, its member Service's ClusterIP, or its member Service's first load balancer ingress IP. Nodes
// without such an address yet are left out.
func (dc *remoteDatacenter) endpoints(addressType scyllav1alpha1.BroadcastAddressType) []endpoint {
	var out []endpoint
	for _, pod := range dc.pods {
		var address string
		switch addressType {
		case scyllav1alpha1.BroadcastAddressTypePodIP:
			address = pod.Status.PodIP
		case scyllav1alpha1.BroadcastAddressTypeServiceClusterIP:
			if svc, ok := dc.services[pod.Name]; ok && svc.Spec.ClusterIP != corev1.ClusterIPNone {
				address = svc.Spec.ClusterIP
			}
		case scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngress, scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP:
			if svc, ok := dc.services[pod.Name]; ok && len(svc.Status.LoadBalancer.Ingress) != 0 {
				address = svc.Status.LoadBalancer.Ingress[0].IP
			}
		}
		if net.ParseIP(address) == nil {
			continue
		}
		out = append(out, endpoint{address: address, ready: controllerhelpers.IsPodReady(pod)})
	}
	return out
}

// broadcastTypes returns the address types of sc's nodes towards other nodes and towards clients.
func broadcastTypes(sc *scyllav1alpha1.ScyllaDBCluster) (nodes, clients scyllav1alpha1.BroadcastAddressType) {
	options := makeExposeOptions(sc.Spec.ExposeOptions).BroadcastOptions
	return options.Nodes.Type, options.Clients.Type
}
