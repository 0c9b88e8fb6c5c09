package scylladbdatacenter

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllav1alpha1applyconfigurations "github.com/scyllakube/client/scylla/applyconfiguration/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// ingressWrites are the writes to Ingresses among f's writes.
func ingressWrites(f *fixture) []string {
	return slices.DeleteFunc(f.kubeWrites(), func(w string) bool { return !strings.Contains(w, " ingresses ") })
}

// newIngressSDC returns newBasicSDC with CQL ingress of class haproxy below db.example.com and db.example.org.
func newIngressSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	sdc := newBasicSDC()
	withCQLIngress(sdc, scyllav1alpha1.IngressOptions{IngressClassName: "haproxy"}, "db.example.com", "db.example.org")
	return sdc
}

// withHostIDs returns w with the member Services named in hostIDs annotated with their host IDs, as their sidecars
// record them.
func withHostIDs(t *testing.T, w world, hostIDs map[string]string) world {
	t.Helper()
	out := world{sdc: w.sdc, objects: slices.Clone(w.objects)}
	for name, hostID := range hostIDs {
		svc := object[*corev1.Service](t, w, name).DeepCopy()
		if svc.Annotations == nil {
			svc.Annotations = map[string]string{}
		}
		svc.Annotations[naming.HostIDAnnotation] = hostID
		out = without[*corev1.Service](out, name)
		out.objects = append(out.objects, svc)
	}
	return out
}

// ingressWorld returns the world of a datacenter with CQL ingress whose first node of each rack has recorded its host
// ID, after the syncs that created its Ingresses.
func ingressWorld(t *testing.T) world {
	t.Helper()
	f := newFixture(t, world{sdc: newIngressSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"create ingresses basic-client-cql"}, ingressWrites(f)); diff != "" {
		t.Fatalf("unexpected Ingress writes before any host ID is known (-want +got):\n%s", diff)
	}
	w := withHostIDs(t, f.world(), map[string]string{"basic-dc1-a-0": testHostID0, "basic-dc1-b-0": testHostID1})
	w, _ = step(t, "host IDs recorded", w, "create ingresses basic-dc1-a-0-cql", "create ingresses basic-dc1-b-0-cql")
	return w
}

func TestSyncCreatesCQLIngressesThenWritesNothing(t *testing.T) {
	t.Parallel()

	w := ingressWorld(t)
	for _, name := range []string{"basic-client-cql", "basic-dc1-a-0-cql", "basic-dc1-b-0-cql"} {
		ingress := object[*networkingv1.Ingress](t, w, name)
		if diff := cmp.Diff([]metav1.OwnerReference{testControllerRef()}, ingress.OwnerReferences); diff != "" {
			t.Errorf("Ingress %s: unexpected owner references (-want +got):\n%s", name, diff)
		}
		if _, ok := ingress.Annotations[naming.ManagedHashAnnotation]; !ok {
			t.Errorf("Ingress %s has no annotation %s", name, naming.ManagedHashAnnotation)
		}
		if got := ingress.Spec.IngressClassName; got == nil || *got != "haproxy" {
			t.Errorf("Ingress %s: ingressClassName %v, want haproxy", name, got)
		}
	}
	if got := object[*networkingv1.Ingress](t, w, "basic-dc1-b-0-cql").Spec.Rules[1].Host; got != testHostID1+".cql.db.example.org" {
		t.Errorf("unexpected host %q", got)
	}

	f := newFixture(t, w)
	f.syncWriting("at rest")
	if writes := f.writes(); len(writes) != 0 {
		t.Errorf("a datacenter at rest wrote %q", writes)
	}
}

func TestSyncDeletesCQLIngressesNoLongerWanted(t *testing.T) {
	t.Parallel()

	// Someone else's Ingress in the namespace, which only looks like one of the datacenter's.
	foreign := &networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "basic-dc1-a-1-cql", Labels: map[string]string{"team": "db"}}}
	tt := []struct {
		name       string
		change     func(t *testing.T, w world) world
		wantWrites []string
	}{
		{
			name: "CQL ingress removed from the spec: every Ingress",
			change: func(t *testing.T, w world) world {
				w.sdc.Spec.ExposeOptions = nil
				return w
			},
			wantWrites: []string{"delete ingresses basic-client-cql", "delete ingresses basic-dc1-a-0-cql", "delete ingresses basic-dc1-b-0-cql"},
		},
		{
			name: "a member Service gone (created again, without a host ID): its node's Ingress",
			change: func(t *testing.T, w world) world {
				return without[*corev1.Service](w, "basic-dc1-b-0")
			},
			wantWrites: []string{"create services basic-dc1-b-0", "delete ingresses basic-dc1-b-0-cql"},
		},
		{
			name: "a host ID changed (a replaced node): its node's Ingress routes the new host",
			change: func(t *testing.T, w world) world {
				return withHostIDs(t, w, map[string]string{"basic-dc1-a-0": "3f8a2b1c-0d4e-4f5a-8b6c-7d8e9f0a1b2c"})
			},
			wantWrites: []string{"update ingresses basic-dc1-a-0-cql"},
		},
		{
			name: "a domain removed: every Ingress loses its rule",
			change: func(t *testing.T, w world) world {
				w.sdc.Spec.DNSDomains = w.sdc.Spec.DNSDomains[:1]
				return w
			},
			wantWrites: []string{"update ingresses basic-client-cql", "update ingresses basic-dc1-a-0-cql", "update ingresses basic-dc1-b-0-cql"},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := ingressWorld(t)
			w.sdc = w.sdc.DeepCopy()
			w.sdc.Generation++
			w = tc.change(t, w)
			w.objects = append(w.objects, foreign)
			w, f := step(t, tc.name, w, tc.wantWrites...)
			object[*networkingv1.Ingress](t, w, foreign.Name)
			f.checkDegraded("")
		})
	}
}

// TestSyncWithoutDNSDomainsKeepsTheCQLIngressesAndSaysWhy: the webhook refuses CQL ingress without DNS domains; a
// datacenter stored without it is reported with the webhook's message, and its Ingresses are left as they are.
func TestSyncWithoutDNSDomainsKeepsTheCQLIngressesAndSaysWhy(t *testing.T) {
	t.Parallel()

	w := ingressWorld(t)
	w.sdc = w.sdc.DeepCopy()
	w.sdc.Generation++
	w.sdc.Spec.DNSDomains = nil
	f := syncSpecError(t, w, "SpecValidationDegraded: spec.dnsDomains: Required value: CQL ingress (spec.exposeOptions.cql.ingress) needs at least one DNS domain")
	if writes := ingressWrites(f); len(writes) != 0 {
		t.Errorf("unexpected Ingress writes %q", writes)
	}
}

func TestSyncReportsAFailedCQLIngressWriteInTheConditions(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newIngressSDC()})
	f.kubeClient.PrependReactor("create", "ingresses", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcd is down")
	})
	err := f.sync()
	if err == nil || isSpecOnly(err) {
		t.Fatalf("expected an error to retry, got %v", err)
	}
	status := f.written("scylladbdatacenters", f.sdcName()).(*scyllav1alpha1.ScyllaDBDatacenter).Status
	for _, conditionType := range []string{"IngressControllerDegraded", "Degraded"} {
		c := meta.FindStatusCondition(status.Conditions, conditionType)
		if c == nil || c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, `Ingress "scylla/basic-client-cql"`) || !strings.Contains(c.Message, "etcd is down") {
			t.Errorf("expected %s True naming the Ingress and the error, got %+v", conditionType, c)
		}
	}
}

// Once CQL ingress is removed and its Ingresses are gone, the datacenter has no IngressController conditions any more:
// its status is what it was before CQL ingress existed.
func TestSyncDropsTheIngressConditionsOnceTheIngressesAreGone(t *testing.T) {
	t.Parallel()

	w := ingressWorld(t)
	w.sdc = w.sdc.DeepCopy()
	w.sdc.Generation++
	w.sdc.Spec.ExposeOptions = nil
	w, f := step(t, "CQL ingress removed", w, "delete ingresses basic-client-cql", "delete ingresses basic-dc1-a-0-cql", "delete ingresses basic-dc1-b-0-cql")
	if got := ingressConditionTypes(f.world().sdc.Status.Conditions); len(got) == 0 {
		t.Fatalf("the sync that deletes the Ingresses reports no IngressController conditions")
	}

	// The datacenter as the API server holds it: its status applied by the operator, which owns its conditions.
	s := newAPIServer(t)
	sdc := w.sdc.DeepCopy()
	sdc.ManagedFields = nil
	created := sdc.DeepCopy()
	created.Status = scyllav1alpha1.ScyllaDBDatacenterStatus{}
	live, err := s.Create(created, "kubectl")
	if err != nil {
		t.Fatal(err)
	}
	status, err := controllerhelpers.ApplyConfigurationFrom[scyllav1alpha1applyconfigurations.ScyllaDBDatacenterStatusApplyConfiguration](&sdc.Status)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(scyllav1alpha1applyconfigurations.ScyllaDBDatacenter(sdc.Name, sdc.Namespace).WithStatus(status))
	if err != nil {
		t.Fatal(err)
	}
	if live, err = s.Apply(live, patch, "status", naming.OperatorFieldManager, true); err != nil {
		t.Fatal(err)
	}
	w.sdc = live.(*scyllav1alpha1.ScyllaDBDatacenter)

	f = newFixture(t, w)
	f.syncWriting("Ingresses gone")
	got := f.replayScyllaDBDatacenterWrites(s, live).(*scyllav1alpha1.ScyllaDBDatacenter)
	if types := ingressConditionTypes(got.Status.Conditions); len(types) != 0 {
		t.Errorf("the status still has conditions %q", types)
	}
}

// ingressConditionTypes are the types of the IngressController conditions among conditions.
func ingressConditionTypes(conditions []metav1.Condition) []string {
	var types []string
	for _, c := range conditions {
		if strings.HasPrefix(c.Type, ingressControllerName) {
			types = append(types, c.Type)
		}
	}
	return types
}
