//go:build e2e

// Package multidc proves that the e2e framework runs several control planes at once, one per datacenter, each
// with its own nodes, address ranges and audit log.
package multidc

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const waitTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "multidc", ControlPlanes: 2}))
}

func TestEachDatacenterHasItsOwnNodesAddressesAndAuditLog(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	if len(f.Clusters) != 2 {
		t.Fatalf("expected 2 clusters, got %d", len(f.Clusters))
	}

	regions := map[string]int{}
	lbNets := map[string]int{}
	for i, c := range f.Clusters {
		nodes, err := c.Clients.Kube.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes.Items) == 0 {
			t.Fatalf("cluster %d has no nodes", i)
		}
		for _, n := range nodes.Items {
			region := n.Labels[corev1.LabelTopologyRegion]
			if prev, ok := regions[region]; ok && prev != i {
				t.Errorf("clusters %d and %d both have nodes in region %q", prev, i, region)
			}
			regions[region] = i
		}
		if prev, ok := lbNets[c.ControlPlane.Options.LoadBalancerCIDR]; ok {
			t.Errorf("clusters %d and %d share load balancer range %s", prev, i, c.ControlPlane.Options.LoadBalancerCIDR)
		}
		lbNets[c.ControlPlane.Options.LoadBalancerCIDR] = i
	}

	marks := make([]framework.AuditMark, len(f.Clusters))
	for i, c := range f.Clusters {
		var err error
		if marks[i], err = c.ControlPlane.Audit.Mark(); err != nil {
			t.Fatal(err)
		}
	}
	// A LoadBalancer Service in each datacenter gets an address from that datacenter's range.
	for i, c := range f.Clusters {
		_, err := c.Clients.Kube.CoreV1().Services(c.Namespace).Create(t.Context(), &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("lb-%d", i)},
			Spec: corev1.ServiceSpec{
				Type:  corev1.ServiceTypeLoadBalancer,
				Ports: []corev1.ServicePort{{Name: "cql", Port: 9042}},
			},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range f.Clusters {
		_, lbNet, err := net.ParseCIDR(c.ControlPlane.Options.LoadBalancerCIDR)
		if err != nil {
			t.Fatal(err)
		}
		f.WaitFor(waitTimeout, fmt.Sprintf("the Service in cluster %d to get an address in %s", i, lbNet), func(ctx context.Context) (bool, error) {
			svc, err := c.Clients.Kube.CoreV1().Services(c.Namespace).Get(ctx, fmt.Sprintf("lb-%d", i), metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			ingress := svc.Status.LoadBalancer.Ingress
			return len(ingress) == 1 && lbNet.Contains(net.ParseIP(ingress[0].IP)), fmt.Errorf("ingress %+v", ingress)
		})
	}
	// Each audit log holds only its own cluster's create.
	for i, c := range f.Clusters {
		f.WaitFor(waitTimeout, fmt.Sprintf("cluster %d's audit log to hold exactly its own create", i), func(context.Context) (bool, error) {
			events, err := c.ControlPlane.Audit.EventsSince(marks[i])
			if err != nil {
				return false, err
			}
			var names []string
			for _, e := range events {
				if e.UserAgent == f.UserAgent && e.Verb == "create" && e.ObjectRef != nil && e.ObjectRef.Resource == "services" {
					names = append(names, e.ObjectRef.Name)
				}
			}
			want := fmt.Sprintf("lb-%d", i)
			return len(names) == 1 && names[0] == want, fmt.Errorf("service creates logged: %v, want [%s]", names, want)
		})
	}
}
