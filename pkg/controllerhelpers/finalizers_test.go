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
			wantPatch: `[{"op":"test","path":"/metadata/uid","value":"basic-uid"},{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["scylla-operator.scylladb.com/scylladb-manager-cluster"]}]`,
		},
		{
			name:      "add next to others",
			obj:       newFinalizedService("example.com/other"),
			add:       true,
			finalizer: testFinalizer,
			wantPatch: `[{"op":"test","path":"/metadata/uid","value":"basic-uid"},{"op":"test","path":"/metadata/finalizers","value":["example.com/other"]},{"op":"add","path":"/metadata/finalizers","value":["example.com/other","scylla-operator.scylladb.com/scylladb-manager-cluster"]}]`,
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
			wantPatch: `[{"op":"test","path":"/metadata/uid","value":"basic-uid"},{"op":"test","path":"/metadata/finalizers","value":["scylla-operator.scylladb.com/scylladb-manager-cluster"]},{"op":"add","path":"/metadata/finalizers","value":[]}]`,
		},
		{
			name:      "remove among others",
			obj:       newFinalizedService("example.com/a", testFinalizer, "example.com/b"),
			finalizer: testFinalizer,
			wantPatch: `[{"op":"test","path":"/metadata/uid","value":"basic-uid"},{"op":"test","path":"/metadata/finalizers","value":["example.com/a","scylla-operator.scylladb.com/scylladb-manager-cluster","example.com/b"]},{"op":"add","path":"/metadata/finalizers","value":["example.com/a","example.com/b"]}]`,
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

func TestFinalizerPatchesNeitherDropOthersFinalizersNorFailOnOtherChanges(t *testing.T) {
	t.Parallel()

	t.Run("a status write since the read", func(t *testing.T) {
		t.Parallel()
		read := newFinalizedService()
		current := read.DeepCopy()
		current.ResourceVersion = "13"
		current.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "10.0.0.1"}}
		client := fake.NewClientset(current).CoreV1().Services("scylla")
		added, changed, err := AddFinalizer(t.Context(), client, read, testFinalizer)
		if err != nil || !changed {
			t.Fatalf("expected the finalizer added over the newer object, got changed=%v, err=%v", changed, err)
		}
		if diff := cmp.Diff([]string{testFinalizer}, added.Finalizers); diff != "" {
			t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
		}
	})

	for _, tc := range []struct {
		name    string
		read    []string
		current []string
		add     bool
	}{
		{name: "add when someone added one to none", read: nil, current: []string{"example.com/other"}, add: true},
		{name: "add when someone added one to others", read: []string{"example.com/a"}, current: []string{"example.com/a", "example.com/b"}, add: true},
		{name: "remove when someone added one", read: []string{testFinalizer}, current: []string{testFinalizer, "example.com/other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			read := newFinalizedService(tc.read...)
			kubeClient := fake.NewClientset(newFinalizedService(tc.current...))
			client := kubeClient.CoreV1().Services("scylla")
			patch := RemoveFinalizer[*corev1.Service]
			if tc.add {
				patch = AddFinalizer[*corev1.Service]
			}
			if _, changed, err := patch(t.Context(), client, read, testFinalizer); err == nil || changed {
				t.Errorf("expected the stale finalizers refused, got changed=%v, err=%v", changed, err)
			}
			stored, err := client.Get(t.Context(), "basic", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.current, stored.Finalizers); diff != "" {
				t.Errorf("the stored finalizers changed (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("another object under the same name", func(t *testing.T) {
		t.Parallel()
		recreated := newFinalizedService()
		recreated.UID = "other-uid"
		client := fake.NewClientset(recreated).CoreV1().Services("scylla")
		if _, changed, err := AddFinalizer(t.Context(), client, newFinalizedService(), testFinalizer); err == nil || changed {
			t.Errorf("expected the patch refused, got changed=%v, err=%v", changed, err)
		}
	})
}

func TestAddFinalizerReportsFailures(t *testing.T) {
	t.Parallel()

	obj := newFinalizedService()
	kubeClient := fake.NewClientset(obj)
	conflict := apierrors.NewConflict(schema.GroupResource{Resource: "services"}, "basic", errors.New("the object has been modified"))
	kubeClient.PrependReactor("patch", "services", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, conflict
	})

	got, changed, err := AddFinalizer(t.Context(), kubeClient.CoreV1().Services("scylla"), obj, testFinalizer)
	if !apierrors.IsConflict(err) {
		t.Errorf("expected the conflict, got %v", err)
	}
	if got != nil || changed {
		t.Errorf("expected no object and no change, got %v, %v", got, changed)
	}
}
