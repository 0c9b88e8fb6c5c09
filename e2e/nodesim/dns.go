package nodesim

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"

	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
)

// ClusterDomain is the cluster DNS domain of the simulated clusters.
const ClusterDomain = "cluster.local"

// resolverPathPrefix is followed by the namespace of the Pod that resolves: its search path depends on it.
const resolverPathPrefix = "/fake/dns/"

// maxCNAMEHops bounds chains of ExternalName Services, as a DNS resolver bounds CNAME chains.
const maxCNAMEHops = 8

// clusterDNS resolves Service names the way cluster DNS and a Pod's search path do, reading Services and
// EndpointSlices at each request so that it sees every change.
type clusterDNS struct {
	client kubernetes.Interface
}

// handler serves clusterDNS at resolverPathPrefix<namespace>?name=<name>.
func (d *clusterDNS) handler() http.Handler {
	return fakescylladb.NewResolverHandler(func(req *http.Request, name string) ([]string, error) {
		return d.resolve(req.Context(), req.PathValue("namespace"), name)
	})
}

// resolverURL is the resolver URL of Pods in namespace, given the base URL of the simulator's server.
func resolverURL(base, namespace string) string {
	return base + resolverPathPrefix + url.PathEscape(namespace)
}

// resolve returns the addresses of name as a Pod in podNamespace would resolve it, with the search path
// <podNamespace>.svc.<domain>, svc.<domain>, <domain>: <svc>, <svc>.<ns>, <svc>.<ns>.svc and
// <svc>.<ns>.svc.<domain> name a Service. A trailing dot makes the name absolute, so only the last form resolves
// with one, as with a real resolver. An unknown name is an error wrapping fakescylladb.ErrNotFound.
func (d *clusterDNS) resolve(ctx context.Context, podNamespace, name string) ([]string, error) {
	name = strings.ToLower(name)
	if absolute, ok := strings.CutSuffix(name, "."); ok {
		return d.resolveFQDN(ctx, absolute, 0)
	}
	var fqdn string
	switch labelCount := strings.Count(name, ".") + 1; {
	case strings.HasSuffix(name, ".svc."+ClusterDomain):
		fqdn = name
	case labelCount == 3 && strings.HasSuffix(name, ".svc"):
		fqdn = name + "." + ClusterDomain
	case labelCount == 2:
		fqdn = name + ".svc." + ClusterDomain
	case labelCount == 1:
		fqdn = name + "." + podNamespace + ".svc." + ClusterDomain
	default:
		return nil, notFound(name)
	}
	return d.resolveFQDN(ctx, fqdn, 0)
}

// resolveFQDN resolves a fully qualified name without its trailing dot; hops counts ExternalName Services followed.
func (d *clusterDNS) resolveFQDN(ctx context.Context, fqdn string, hops int) ([]string, error) {
	rest, ok := strings.CutSuffix(fqdn, ".svc."+ClusterDomain)
	if !ok {
		return nil, notFound(fqdn)
	}
	svcName, namespace, ok := strings.Cut(rest, ".")
	if !ok || svcName == "" || namespace == "" || strings.Contains(namespace, ".") {
		return nil, notFound(fqdn)
	}
	svc, err := d.client.CoreV1().Services(namespace).Get(ctx, svcName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, notFound(fqdn)
	}
	if err != nil {
		return nil, fmt.Errorf("can't get Service %q: %w", namespace+"/"+svcName, err)
	}
	switch {
	case svc.Spec.Type == corev1.ServiceTypeExternalName:
		target := strings.TrimSuffix(strings.ToLower(svc.Spec.ExternalName), ".")
		if net.ParseIP(target) != nil {
			return []string{target}, nil
		}
		if hops >= maxCNAMEHops {
			return nil, fmt.Errorf("%s: more than %d ExternalName Services chained: %w", fqdn, maxCNAMEHops, fakescylladb.ErrNotFound)
		}
		// The target of a CNAME is resolved as an absolute name.
		return d.resolveFQDN(ctx, target, hops+1)
	case svc.Spec.ClusterIP == corev1.ClusterIPNone:
		return d.readyEndpoints(ctx, svc)
	default:
		var out []string
		for _, ip := range append([]string{svc.Spec.ClusterIP}, svc.Spec.ClusterIPs...) {
			if ip != "" && !slices.Contains(out, ip) {
				out = append(out, ip)
			}
		}
		if len(out) == 0 {
			return nil, notFound(fqdn)
		}
		return out, nil
	}
}

// readyEndpoints returns the addresses of the ready endpoints of a headless Service's EndpointSlices, sorted.
// Endpoints with conditions.ready unset count as ready, as they do for cluster DNS.
func (d *clusterDNS) readyEndpoints(ctx context.Context, svc *corev1.Service) ([]string, error) {
	list, err := d.client.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("can't list the EndpointSlices of Service %q: %w", svc.Namespace+"/"+svc.Name, err)
	}
	var out []string
	for _, es := range list.Items {
		if es.AddressType != discoveryv1.AddressTypeIPv4 && es.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		for _, ep := range es.Endpoints {
			if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
				continue
			}
			for _, a := range ep.Addresses {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("headless Service %q has no ready endpoints: %w", svc.Namespace+"/"+svc.Name, fakescylladb.ErrNotFound)
	}
	slices.Sort(out)
	return out, nil
}

func notFound(name string) error {
	return fmt.Errorf("%s: %w", name, fakescylladb.ErrNotFound)
}
