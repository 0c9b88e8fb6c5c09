package controllerhelpers

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

const testFinalizer = "scylla-operator.scylladb.com/scylladb-manager-cluster"

func newFinalizedService(finalizers ...string) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "scylla",
		Name:            "basic",
		UID:             "basic-uid",
		ResourceVersion: "12",
		Finalizers:      finalizers,
	}}
}

func TestFinalizerPatches(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		obj       *corev1.Service
		add       bool
		finalizer string
		wantPatch string
		wantError string
	}{
		{
			name:      "add to none",
			obj:       newFinalizedService(),
			add:       true,
			finalizer: testFinalizer,
			wantPatch: `{"metadata":{"finalizers":["scylla-operator.scylladb.com/scylladb-manager-cluster"],"resourceVersion":"12","uid":"basic-uid"}}`,
		},
		{
			name:      "add next to others",
			obj:       newFinalizedService("example.com/other"),
			add:       true,
			finalizer: testFinalizer,
			wantPatch: `{"metadata":{"finalizers":["example.com/other","scylla-operator.scylladb.com/scylladb-manager-cluster"],"resourceVersion":"12","uid":"basic-uid"}}`,
		},
		{
			name:      "add present",
			obj:       newFinalizedService(testFinalizer),
			add:       true,
			finalizer: testFinalizer,
		},
		{
			name:      "remove the last",
			obj:       newFinalizedService(testFinalizer),
			finalizer: testFinalizer,
			wantPatch: `{"metadata":{"finalizers":[],"resourceVersion":"12","uid":"basic-uid"}}`,
		},
		{
			name:      "remove among others",
			obj:       newFinalizedService("example.com/a", testFinalizer, "example.com/b"),
			finalizer: testFinalizer,
			wantPatch: `{"metadata":{"finalizers":["example.com/a","example.com/b"],"resourceVersion":"12","uid":"basic-uid"}}`,
		},
		{
			name:      "remove absent",
			obj:       newFinalizedService("example.com/a"),
			finalizer: testFinalizer,
		},
		{
			name:      "add empty",
			obj:       newFinalizedService(),
			add:       true,
			wantError: "can't add an empty finalizer",
		},
		{
			name:      "remove empty",
			obj:       newFinalizedService(),
			wantError: "can't remove an empty finalizer",
		},
		{
			name: "object without resourceVersion",
			obj: func() *corev1.Service {
				svc := newFinalizedService()
				svc.ResourceVersion = ""
				return svc
			}(),
			add:       true,
			finalizer: testFinalizer,
			wantError: `can't add finalizer "scylla-operator.scylladb.com/scylladb-manager-cluster" to "scylla/basic": the object has no resourceVersion to patch against`,
		},
		{
			name: "object without UID",
			obj: func() *corev1.Service {
				svc := newFinalizedService(testFinalizer)
				svc.UID = ""
				return svc
			}(),
			finalizer: testFinalizer,
			wantError: `can't remove finalizer "scylla-operator.scylladb.com/scylladb-manager-cluster" from "scylla/basic": the object has no UID to patch against`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			makePatch := RemoveFinalizerPatch
			if tc.add {
				makePatch = AddFinalizerPatch
			}
			patch, err := makePatch(tc.obj, tc.finalizer)
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPatch, string(patch)); diff != "" {
				t.Errorf("unexpected patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddAndRemoveFinalizerWriteOnlyWhenNeeded(t *testing.T) {
	t.Parallel()

	obj := newFinalizedService("example.com/other")
	kubeClient := fake.NewClientset(obj)
	client := kubeClient.CoreV1().Services("scylla")

	added, changed, err := AddFinalizer(t.Context(), client, obj, testFinalizer)
	if err != nil || !changed {
		t.Fatalf("add: expected a change and no error, got changed=%v, err=%v", changed, err)
	}
	if diff := cmp.Diff([]string{"example.com/other", testFinalizer}, added.Finalizers); diff != "" {
		t.Errorf("add: unexpected finalizers (-want +got):\n%s", diff)
	}

	again, changed, err := AddFinalizer(t.Context(), client, added, testFinalizer)
	if err != nil || changed || again != added {
		t.Errorf("add again: expected the same object, no change and no error, got changed=%v, err=%v", changed, err)
	}

	removed, changed, err := RemoveFinalizer(t.Context(), client, added, testFinalizer)
	if err != nil || !changed {
		t.Fatalf("remove: expected a change and no error, got changed=%v, err=%v", changed, err)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, removed.Finalizers); diff != "" {
		t.Errorf("remove: unexpected finalizers (-want +got):\n%s", diff)
	}

	if _, changed, err := RemoveFinalizer(t.Context(), client, removed, testFinalizer); err != nil || changed {
		t.Errorf("remove again: expected no change and no error, got changed=%v, err=%v", changed, err)
	}

	var verbs []string
	for _, action := range kubeClient.Actions() {
		verbs = append(verbs, action.GetVerb())
	}
	if diff := cmp.Diff([]string{"patch", "patch"}, verbs); diff != "" {
		t.Errorf("unexpected requests (-want +got):\n%s", diff)
	}
}

func TestAddFinalizerReportsConflicts(t *testing.T) {
	t.Parallel()

	obj := newFinalizedService()
	kubeClient := fake.NewClientset(obj)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "services"}, "basic", errors.New("the object has been modified"))
	kubeClient.PrependReactor("patch", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, conflict
	})

	got, changed, err := AddFinalizer(t.Context(), kubeClient.CoreV1().Services("scylla"), obj, testFinalizer)
	if !apierrors.IsConflict(err) {
		t.Errorf("expected a conflict, got %v", err)
	}
	if got != nil || changed {
		t.Errorf("expected no object and no change, got %v, %v", got, changed)
	}
}
