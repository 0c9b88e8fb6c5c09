package scylladbdatacenter

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var serviceResource = corev1.SchemeGroupVersion.WithResource("services")

// foreignClientService returns a Service named like the datacenter's client Service, controlled by a Deployment.
func foreignClientService(labels map[string]string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Namespace:       testNamespace,
		Name:            "basic-client",
		UID:             "foreign-uid",
		ResourceVersion: "7",
		Labels:          labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "web-uid", Controller: new(true)}},
	}}
}

func TestSyncReportsAnOwnershipConflictOnce(t *testing.T) {
	t.Parallel()

	const wantMessage = `ServiceControllerDegraded: can't apply Service "scylla/basic-client": the existing object is controlled by ` +
		`Deployment "web" (apps/v1, UID web-uid), not by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID sdc-uid)`

	tt := []struct {
		name string
		// seed puts the foreign Service where the test needs it.
		seed func(f *fixture, svc *corev1.Service)
	}{
		{
			name: "in the cache",
			seed: func(f *fixture, svc *corev1.Service) {
				f.cache(svc)
				if err := f.kubeClient.Tracker().Add(svc); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "outside the cache, which holds only the operator's objects",
			seed: func(f *fixture, svc *corev1.Service) {
				if err := f.kubeClient.Tracker().Add(svc); err != nil {
					t.Fatal(err)
				}
			},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, world{sdc: newBasicSDC()})
			f.controller.recheckInterval = 0
			svc := foreignClientService(clusterLabels())
			tc.seed(f, svc)

			if err := f.sync(); err != nil {
				t.Fatalf("an ownership conflict must not be retried as an error, got %v", err)
			}
			f.checkDegraded(wantMessage)
			warnings := slices.DeleteFunc(f.events(), func(e string) bool { return !strings.HasPrefix(e, "Warning ") })
			if diff := cmp.Diff([]string{"Warning ServiceOwnershipConflict " + strings.TrimPrefix(wantMessage, "ServiceControllerDegraded: ")}, warnings); diff != "" {
				t.Errorf("unexpected warnings (-want +got):\n%s", diff)
			}
			// It is checked again later, without a hot loop.
			if diff := cmp.Diff([]string{"scylla/basic"}, queued(f.controller)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}

			// The next syncs say nothing new.
			f.catchUp(func(obj runtime.Object) bool { return objectName(obj) == "basic-client" })
			f.cache(f.world().sdc)
			f.syncWriting("conflict known")
			if events := f.events(); len(events) != 0 {
				t.Errorf("a known conflict recorded events again: %q", events)
			}

			// Once the other object is gone, the client Service is created.
			if err := f.kubeClient.Tracker().Delete(serviceResource, testNamespace, "basic-client"); err != nil {
				t.Fatal(err)
			}
			f.uncache(svc)
			f.syncWriting("conflict resolved", "create services basic-client")
			f.checkDegraded("")
		})
	}
}
