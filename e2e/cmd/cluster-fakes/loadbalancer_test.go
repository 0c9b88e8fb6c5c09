package main

import (
	"context"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestAddressPool(t *testing.T) {
	t.Parallel()

	type step struct {
		op      string // "allocate", "release" or "record"
		key     string
		addr    string // for "record"; expected result for "allocate"
		wantErr bool
	}
	tt := []struct {
		name   string
		prefix string
		steps  []step
	}{
		{
			name:   "allocates the lowest free addresses, skipping the network address",
			prefix: "192.0.2.0/24",
			steps: []step{
				{op: "allocate", key: "a", addr: "192.0.2.1"},
				{op: "allocate", key: "b", addr: "192.0.2.2"},
				{op: "allocate", key: "a", addr: "192.0.2.1"},
			},
		},
		{
			name:   "reuses a released address",
			prefix: "192.0.2.0/24",
			steps: []step{
				{op: "allocate", key: "a", addr: "192.0.2.1"},
				{op: "allocate", key: "b", addr: "192.0.2.2"},
				{op: "release", key: "a"},
				{op: "allocate", key: "c", addr: "192.0.2.1"},
			},
		},
		{
			name:   "skips recorded addresses",
			prefix: "192.0.2.0/24",
			steps: []step{
				{op: "record", key: "old", addr: "192.0.2.1"},
				{op: "allocate", key: "new", addr: "192.0.2.2"},
			},
		},
		{
			name:   "refuses to record an address another key holds",
			prefix: "192.0.2.0/24",
			steps: []step{
				{op: "allocate", key: "a", addr: "192.0.2.1"},
				{op: "record", key: "b", addr: "192.0.2.1", wantErr: true},
			},
		},
		{
			name:   "never hands out the broadcast address and fails when exhausted",
			prefix: "198.51.100.0/30",
			steps: []step{
				{op: "allocate", key: "a", addr: "198.51.100.1"},
				{op: "allocate", key: "b", addr: "198.51.100.2"},
				{op: "allocate", key: "c", wantErr: true},
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool := newAddressPool(netip.MustParsePrefix(tc.prefix))
			for i, s := range tc.steps {
				var err error
				switch s.op {
				case "allocate":
					var got netip.Addr
					got, err = pool.Allocate(s.key)
					if err == nil && got.String() != s.addr {
						t.Errorf("step %d: expected address %s for %q, got %s", i, s.addr, s.key, got)
					}
				case "release":
					pool.Release(s.key)
				case "record":
					err = pool.Record(s.key, netip.MustParseAddr(s.addr))
				default:
					t.Fatalf("step %d: unknown op %q", i, s.op)
				}
				if (err != nil) != s.wantErr {
					t.Errorf("step %d (%s %q): expected error %v, got %v", i, s.op, s.key, s.wantErr, err)
				}
			}
		})
	}
}

func newService(name string, typ corev1.ServiceType, ingressIPs ...string) *corev1.Service {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       corev1.ServiceSpec{Type: typ},
	}
	for _, ip := range ingressIPs {
		svc.Status.LoadBalancer.Ingress = append(svc.Status.LoadBalancer.Ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	return svc
}

func TestLoadBalancerControllerSync(t *testing.T) {
	t.Parallel()

	withClass := newService("classy", corev1.ServiceTypeLoadBalancer)
	withClass.Spec.LoadBalancerClass = ptr.To("example.com/other")

	tt := []struct {
		name        string
		services    []*corev1.Service
		key         string
		wantIngress []corev1.LoadBalancerIngress // nil: no status write expected
	}{
		{
			name:        "a new LoadBalancer Service gets the first free address",
			services:    []*corev1.Service{newService("lb", corev1.ServiceTypeLoadBalancer)},
			key:         "ns/lb",
			wantIngress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}},
		},
		{
			name: "addresses other Services hold are skipped",
			services: []*corev1.Service{
				newService("old", corev1.ServiceTypeLoadBalancer, "192.0.2.1"),
				newService("lb", corev1.ServiceTypeLoadBalancer),
			},
			key:         "ns/lb",
			wantIngress: []corev1.LoadBalancerIngress{{IP: "192.0.2.2"}},
		},
		{
			name:     "a Service that already has an address is not written",
			services: []*corev1.Service{newService("lb", corev1.ServiceTypeLoadBalancer, "192.0.2.7")},
			key:      "ns/lb",
		},
		{
			name:     "a ClusterIP Service is left alone",
			services: []*corev1.Service{newService("plain", corev1.ServiceTypeClusterIP)},
			key:      "ns/plain",
		},
		{
			name:     "a Service of another load balancer class is left alone",
			services: []*corev1.Service{withClass},
			key:      "ns/classy",
		},
		{
			name: "a deleted Service is ignored",
			key:  "ns/gone",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			objs := make([]runtime.Object, 0, len(tc.services))
			for _, svc := range tc.services {
				objs = append(objs, svc)
			}
			client := fake.NewClientset(objs...)
			factory := informers.NewSharedInformerFactory(client, 0)
			c := newLoadBalancerController(client, factory.Core().V1().Services(), newAddressPool(netip.MustParsePrefix("192.0.2.0/24")))
			for _, svc := range tc.services {
				if err := factory.Core().V1().Services().Informer().GetIndexer().Add(svc); err != nil {
					t.Fatal(err)
				}
				c.recordIngress(ctx, svc)
			}
			client.ClearActions()

			if err := c.sync(ctx, tc.key); err != nil {
				t.Fatalf("unexpected sync error: %v", err)
			}

			actions := client.Actions()
			if tc.wantIngress == nil {
				if len(actions) != 0 {
					t.Fatalf("expected no API calls, got %v", actions)
				}
				return
			}
			if len(actions) != 1 || actions[0].GetVerb() != "update" || actions[0].GetSubresource() != "status" {
				t.Fatalf("expected one status update, got %v", actions)
			}
			namespace, name, _ := cache.SplitMetaNamespaceKey(tc.key)
			got, err := client.CoreV1().Services(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantIngress, got.Status.LoadBalancer.Ingress); diff != "" {
				t.Errorf("unexpected ingress (-want +got):\n%s", diff)
			}
		})
	}
}
