package resourceapply

import (
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clienttesting "k8s.io/client-go/testing"
)

// testKeepsForeignMetadata re-applies a changed required object over one the operator applied before and that other
// programs annotated and gave finalizers since: the update keeps all of theirs and carries the resourceVersion it was
// built from, so that a write of theirs after the cache read makes it conflict instead of being undone.
func testKeepsForeignMetadata[T kubeinterfaces.ObjectInterface](kind kindClient[T], newRequired func() T, change func(T), foreignAnnotations map[string]string, foreignFinalizers []string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Parallel()

		existing := stored(t, newRequired(), func(obj T) {
			annotations := maps.Clone(obj.GetAnnotations())
			maps.Copy(annotations, foreignAnnotations)
			obj.SetAnnotations(annotations)
			obj.SetFinalizers(foreignFinalizers)
		})
		f := newApplyFixture(kind, existing)
		required := newRequired()
		change(required)
		if _, _, err := f.apply(t, required, ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
		actions := f.takeRawActions()
		if len(actions) != 1 || actions[0].GetVerb() != "update" {
			t.Fatalf("expected one update, got %v", actions)
		}

		got := f.get(t, required.GetName())
		for key, value := range foreignAnnotations {
			if got.GetAnnotations()[key] != value {
				t.Errorf("annotation %q: expected %q, got %q", key, value, got.GetAnnotations()[key])
			}
		}
		if diff := cmp.Diff(foreignFinalizers, got.GetFinalizers()); diff != "" {
			t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
		}
		if managed := got.GetAnnotations()[naming.ManagedAnnotationKeysAnnotation]; managed != testAnnotationKeys {
			t.Errorf("the foreign annotations must not become managed keys, got %q", managed)
		}
		if got.GetResourceVersion() != existing.GetResourceVersion() {
			t.Errorf("expected the update to carry resourceVersion %q, got %q", existing.GetResourceVersion(), got.GetResourceVersion())
		}

		if _, changed, err := f.apply(t, required, ApplyOptions{}); err != nil || changed {
			t.Errorf("second apply: expected no change and no error, got changed=%v, err=%v", changed, err)
		}
	}
}

func TestApplyKeepsWhatOtherProgramsWroteIntoMetadata(t *testing.T) {
	t.Parallel()

	t.Run("ScyllaDBDatacenter registered with ScyllaDB Manager", testKeepsForeignMetadata(scyllaDBDatacenterKind, newTestScyllaDBDatacenter,
		func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
			sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2025.1.1"
		},
		map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "2b9d7a54-5a4c-4f0e-9f43-8a6e6e5e8c1d"},
		[]string{naming.ScyllaDBManagerClusterFinalizer}))
	t.Run("ScyllaDBManagerTask scheduled in ScyllaDB Manager", testKeepsForeignMetadata(scyllaDBManagerTaskKind, newTestScyllaDBManagerTask,
		func(task *scyllav1alpha1.ScyllaDBManagerTask) { task.Spec.Repair.Keyspace = []string{"ks"} },
		map[string]string{naming.ScyllaDBManagerTaskStatusAnnotation: `{"id":"7f6b2f7e-6a1c-4f1e-8e0e-4b3f0b7a9d2c"}`},
		[]string{naming.ScyllaDBManagerTaskFinalizer}))
}

func TestApplySetsAnnotationsIfAbsentOnly(t *testing.T) {
	t.Parallel()

	const key = naming.ScyllaDBManagerClusterIDAnnotation
	handedOver := map[string]string{key: "handed-over"}
	storedWith := func(t *testing.T, annotations map[string]string, managedKeys string) *scyllav1alpha1.ScyllaDBDatacenter {
		return stored(t, newTestScyllaDBDatacenter(), func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
			maps.Copy(sdc.Annotations, annotations)
			if len(managedKeys) != 0 {
				sdc.Annotations[naming.ManagedAnnotationKeysAnnotation] = managedKeys
			}
		})
	}

	tt := []struct {
		name        string
		existing    *scyllav1alpha1.ScyllaDBDatacenter
		newRequired func() *scyllav1alpha1.ScyllaDBDatacenter
		wantActions []string
		wantValue   string
	}{
		{
			name:        "an object created with it",
			wantActions: []string{"create scylladbdatacenters"},
			wantValue:   "handed-over",
		},
		{
			name:        "an up-to-date object without it gets it",
			existing:    storedWith(t, nil, ""),
			wantActions: []string{"update scylladbdatacenters"},
			wantValue:   "handed-over",
		},
		{
			name:      "the owner's value is left alone, with no write",
			existing:  storedWith(t, map[string]string{key: "owners"}, ""),
			wantValue: "owners",
		},
		{
			name:      "an empty value is a value",
			existing:  storedWith(t, map[string]string{key: ""}, ""),
			wantValue: "",
		},
		{
			name: "a key an older operator managed is kept when the object is updated",
			existing: storedWith(t, map[string]string{key: "owners", "example.com/obsolete": "x"},
				testAnnotationKeys+","+key+",example.com/obsolete"),
			newRequired: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newTestScyllaDBDatacenter()
				sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2025.1.1"
				return sdc
			},
			wantActions: []string{"update scylladbdatacenters"},
			wantValue:   "owners",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			newRequired := tc.newRequired
			if newRequired == nil {
				newRequired = newTestScyllaDBDatacenter
			}
			var f *applyFixture[*scyllav1alpha1.ScyllaDBDatacenter]
			if tc.existing != nil {
				f = newApplyFixture(scyllaDBDatacenterKind, tc.existing)
			} else {
				f = newApplyFixture(scyllaDBDatacenterKind)
			}
			options := ApplyOptions{AnnotationsIfAbsent: handedOver}
			if _, _, err := f.apply(t, newRequired(), options); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantActions, f.takeActions()); diff != "" {
				t.Errorf("unexpected actions (-want +got):\n%s", diff)
			}
			got := f.get(t, "basic")
			if value, ok := got.Annotations[key]; !ok || value != tc.wantValue {
				t.Errorf("expected annotation %q %q, got %q (present: %v)", key, tc.wantValue, value, ok)
			}
			if managed := got.Annotations[naming.ManagedAnnotationKeysAnnotation]; managed != testAnnotationKeys {
				t.Errorf("expected managed annotation keys %q, got %q", testAnnotationKeys, managed)
			}
			hash, err := Hash(newRequired())
			if err != nil {
				t.Fatal(err)
			}
			if got.Annotations[naming.ManagedHashAnnotation] != hash {
				t.Errorf("the hash must not cover annotations set only if absent")
			}

			// Stable: neither the next apply nor one that no longer hands it over writes or removes it.
			for _, options := range []ApplyOptions{options, {}} {
				if _, changed, err := f.apply(t, newRequired(), options); err != nil || changed {
					t.Errorf("next apply: expected no change and no error, got changed=%v, err=%v", changed, err)
				}
			}
			if actions := f.takeActions(); len(actions) != 0 {
				t.Errorf("next applies: expected no writes, got %q", actions)
			}
		})
	}
}

func TestApplyRefusesAnnotationsBothRequiredAndIfAbsent(t *testing.T) {
	t.Parallel()

	f := newApplyFixture(scyllaDBDatacenterKind)
	for _, key := range []string{"example.com/managed", naming.ManagedHashAnnotation} {
		_, _, err := f.apply(t, newTestScyllaDBDatacenter(), ApplyOptions{AnnotationsIfAbsent: map[string]string{key: "x"}})
		if err == nil {
			t.Errorf("annotation %q: expected an error", key)
		}
	}
	if actions := f.takeActions(); len(actions) != 0 {
		t.Errorf("expected no writes, got %q", actions)
	}
}

// The update an absent annotation causes carries the resourceVersion of the object it was computed from, so that
// it can't undo the owner's value written meanwhile.
func TestApplySetsAnAbsentAnnotationOnlyOnTheObjectItRead(t *testing.T) {
	t.Parallel()

	f := newApplyFixture(scyllaDBDatacenterKind, stored(t, newTestScyllaDBDatacenter(), nil))
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "scylla.scylladb.com", Resource: "scylladbdatacenters"}, "basic", nil)
	f.failOn("update", conflict)
	_, _, err := f.apply(t, newTestScyllaDBDatacenter(), ApplyOptions{AnnotationsIfAbsent: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "x"}})
	if !apierrors.IsConflict(err) {
		t.Fatalf("expected the conflict, got %v", err)
	}
	actions := f.takeRawActions()
	if len(actions) != 1 {
		t.Fatalf("expected one update, got %v", actions)
	}
	sent := actions[0].(clienttesting.UpdateAction).GetObject().(*scyllav1alpha1.ScyllaDBDatacenter)
	if sent.ResourceVersion != "7" {
		t.Errorf("expected the update to carry resourceVersion %q, got %q", "7", sent.ResourceVersion)
	}
}
