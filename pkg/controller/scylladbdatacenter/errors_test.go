package scylladbdatacenter

import (
	"errors"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
)

// failingLister is a lister whose cache is broken.
type failingLister[T runtime.Object] struct{}

func (failingLister[T]) List(labels.Selector) ([]T, error) { return nil, errors.New("cache is broken") }

func TestErrorsNameTheKindAndTheObject(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name    string
		objects []runtime.Object
		run     func(t *testing.T, f *fixture) error
		want    string
	}{
		{
			name: "a list that fails",
			run: func(t *testing.T, f *fixture) error {
				_, errs := claim(t.Context(), newBasicSDC(), naming.ClusterSelector("basic"), nil, failingLister[*corev1.Service]{}, f.kubeClient.CoreV1().Services(testNamespace), map[string]bool{}, nil)
				return errors.Join(errs...)
			},
			want: `can't list Services in namespace "scylla": cache is broken`,
		},
		{
			name:    "an adoption that fails",
			objects: []runtime.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "basic-dc1-a-0", UID: "svc-uid", ResourceVersion: "1", Labels: clusterLabels()}}},
			run: func(t *testing.T, f *fixture) error {
				f.kubeClient.PrependReactor("patch", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("etcd is down")
				})
				_, err := f.controller.getOwnedObjects(t.Context(), newBasicSDC())
				return err
			},
			want: `can't claim Services for ScyllaDBDatacenter "scylla/basic": can't adopt "scylla/basic-dc1-a-0": etcd is down`,
		},
		{
			name: "a managed config without the rack's scylla.yaml",
			run: func(t *testing.T, f *fixture) error {
				sdc := newBasicSDC()
				racks := collectRacks(sdc, effectiveRacks(sdc), &ownedObjects{}, f.controller.expectations)
				managedConfig := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "basic-managed-config"}, Data: map[string]string{}}
				_, err := f.controller.syncStatefulSets(t.Context(), sdc, &ownedObjects{}, racks[:1], planScale("dc1", false, racks[:1], ""), managedConfig,
					statefulSetInputs{operatorImage: testOperatorImage}, map[string]*appsv1.StatefulSet{})
				return err
			},
			want: `can't make StatefulSet "basic-dc1-a": ConfigMap "basic-managed-config" has no key "scylla-a.yaml"`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, world{sdc: newBasicSDC(), objects: tc.objects})
			err := tc.run(t, f)
			if err == nil || err.Error() != tc.want {
				t.Errorf("expected error %q, got %v", tc.want, err)
			}
		})
	}
}
