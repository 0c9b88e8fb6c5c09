//go:build e2e

package operator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// testCQLIngresses checks that a ScyllaCluster with spec.exposeOptions.cql.ingress gets an Ingress to its client
// Service for cql.<domain> and one per node to its member Service for <hostID>.cql.<domain>, with the ingress class
// and labels asked for, and that disabling the option removes them.
func testCQLIngresses(t *testing.T, op *operatorProcess) {
	e := newTestEnv(t)
	const domain = "scylla.example.com"
	sc := e.newScyllaCluster(2, 1)
	sc.Spec.DNSDomains = []string{domain}
	sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{CQL: &scyllav1.CQLExposeOptions{Ingress: &scyllav1.CQLExposeIngressOptions{
		IngressClassName: "haproxy",
		ObjectTemplateMetadata: scyllav1.ObjectTemplateMetadata{
			Labels: map[string]string{"team": "db"},
		},
	}}}
	sc = e.createScyllaCluster(sc)
	sc = e.waitForRollout(sc.Name, "the ScyllaCluster with CQL ingress to roll out")
	sdcName := naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)

	// An Ingress, as what it routes where.
	type route struct {
		Type, Class, Team, Host, Service, Port string
	}
	// want returns the Ingresses the member Services call for once each has a host ID.
	want := func(ctx context.Context) (map[string]route, error) {
		svcs, err := e.memberServices(ctx, sc.Name)
		if err != nil {
			return nil, err
		}
		routes := map[string]route{
			naming.AnyNodeCQLIngressName(sdcName): {naming.ScyllaIngressTypeAnyNode, "haproxy", "db", naming.AnyNodeCQLHost(domain), naming.ClientServiceName(sdcName), naming.CQLIngressServicePortName},
		}
		for name, svc := range svcs {
			hostID := svc.Annotations[naming.HostIDAnnotation]
			if len(hostID) == 0 {
				return nil, fmt.Errorf("member Service %s has no host ID yet", name)
			}
			routes[naming.NodeCQLIngressName(name)] = route{naming.ScyllaIngressTypeNode, "haproxy", "db", naming.NodeCQLHost(hostID, domain), name, naming.CQLIngressServicePortName}
		}
		return routes, nil
	}
	got := func(ctx context.Context) (map[string]route, error) {
		list, err := e.kube.NetworkingV1().Ingresses(e.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		routes := map[string]route{}
		for _, ing := range list.Items {
			r := route{Type: ing.Labels[naming.ScyllaIngressTypeLabel], Team: ing.Labels["team"]}
			if ing.Spec.IngressClassName != nil {
				r.Class = *ing.Spec.IngressClassName
			}
			if len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].HTTP == nil || len(ing.Spec.Rules[0].HTTP.Paths) != 1 {
				return nil, fmt.Errorf("Ingress %s has rules %+v, want one host with one path", ing.Name, ing.Spec.Rules)
			}
			r.Host = ing.Spec.Rules[0].Host
			if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b != nil {
				r.Service, r.Port = b.Name, b.Port.Name
			}
			routes[ing.Name] = r
		}
		return routes, nil
	}
	e.f.WaitFor(rolloutTimeout, "the CQL Ingresses of every node", func(ctx context.Context) (bool, error) {
		w, err := want(ctx)
		if err != nil {
			return false, err
		}
		g, err := got(ctx)
		if err != nil {
			return false, err
		}
		if diff := cmp.Diff(w, g); diff != "" {
			return false, fmt.Errorf("Ingresses differ (-want +got):\n%s", diff)
		}
		return true, nil
	})
	e.expectNoWrites(op, sc, 1)

	e.updateScyllaCluster(sc.Name, func(sc *scyllav1.ScyllaCluster) { sc.Spec.ExposeOptions.CQL.Ingress.Disabled = new(true) })
	e.f.WaitFor(rolloutTimeout, "the CQL Ingresses to be deleted", func(ctx context.Context) (bool, error) {
		g, err := got(ctx)
		if err != nil {
			return false, err
		}
		if len(g) != 0 {
			return false, fmt.Errorf("Ingresses left: %v", slices.Sorted(maps.Keys(g)))
		}
		return true, nil
	})
}
