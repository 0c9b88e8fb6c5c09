package resourceapply

import (
	"errors"
	"maps"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// withBookkeeping returns obj as Apply stores it: with the hash of obj and the keys it manages.
func withBookkeeping[T kubeinterfaces.ObjectInterface](t *testing.T, obj T, labelKeys, annotationKeys string) T {
	t.Helper()

	hash, err := Hash(obj)
	if err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopyObject().(T)
	annotations := maps.Clone(obj.GetAnnotations())
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[naming.ManagedHashAnnotation] = hash
	if len(labelKeys) != 0 {
		annotations[naming.ManagedLabelKeysAnnotation] = labelKeys
	}
	if len(annotationKeys) != 0 {
		annotations[naming.ManagedAnnotationKeysAnnotation] = annotationKeys
	}
	obj.SetAnnotations(annotations)
	return obj
}

// ignoreServerFields ignores what the fake clientset adds like an API server would: type meta and managed fields.
var ignoreServerFields = cmp.Options{
	cmpopts.IgnoreTypes(metav1.TypeMeta{}),
	cmpopts.IgnoreFields(metav1.ObjectMeta{}, "ManagedFields"),
}

const (
	testLabelKeys      = "app.kubernetes.io/name,scylla/cluster"
	testAnnotationKeys = "example.com/managed"
)

// testApplyTwice applies a freshly built object twice to an empty fake clientset: the first Apply creates it as
// built, plus the bookkeeping annotations, and the second one writes nothing and records no event.
func testApplyTwice[T kubeinterfaces.ObjectInterface](kind kindClient[T], newRequired func() T, labelKeys, annotationKeys string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Parallel()

		f := newApplyFixture(kind)
		required := newRequired()

		created, changed, err := f.apply(t, required, ApplyOptions{})
		if err != nil {
			t.Fatalf("first apply: unexpected error: %v", err)
		}
		if !changed {
			t.Error("first apply: expected a change")
		}
		if diff := cmp.Diff([]string{"create " + kind.gvr.Resource}, f.takeActions()); diff != "" {
			t.Errorf("first apply: unexpected actions (-want +got):\n%s", diff)
		}
		if events := f.takeEvents(); len(events) != 0 {
			t.Errorf("first apply: expected no events for a create, got %q", events)
		}
		want := withBookkeeping(t, newRequired(), labelKeys, annotationKeys)
		if diff := cmp.Diff(want, f.get(t, required.GetName()), ignoreServerFields); diff != "" {
			t.Errorf("first apply: unexpected stored object (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, created, ignoreServerFields); diff != "" {
			t.Errorf("first apply: unexpected returned object (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(newRequired(), required); diff != "" {
			t.Errorf("first apply: the required object was mutated (-want +got):\n%s", diff)
		}

		actual, changed, err := f.apply(t, newRequired(), ApplyOptions{})
		if err != nil {
			t.Fatalf("second apply: unexpected error: %v", err)
		}
		if changed {
			t.Error("second apply: expected no change")
		}
		if actions := f.takeActions(); len(actions) != 0 {
			t.Errorf("second apply: expected no writes, got %q", actions)
		}
		if events := f.takeEvents(); len(events) != 0 {
			t.Errorf("second apply: expected no events, got %q", events)
		}
		if diff := cmp.Diff(want, actual, ignoreServerFields); diff != "" {
			t.Errorf("second apply: unexpected returned object (-want +got):\n%s", diff)
		}
	}
}

func TestApplyCreatesOnceAndThenWritesNothing(t *testing.T) {
	t.Parallel()

	t.Run("ClusterIP Service", testApplyTwice(serviceKind, newTestService, testLabelKeys, testAnnotationKeys))
	t.Run("headless Service", testApplyTwice(serviceKind, newTestHeadlessService, testLabelKeys, testAnnotationKeys))
	t.Run("LoadBalancer Service", testApplyTwice(serviceKind, newTestLoadBalancerService, testLabelKeys, testAnnotationKeys))
	t.Run("StatefulSet", testApplyTwice(statefulSetKind, newTestStatefulSet, testLabelKeys, testAnnotationKeys))
	t.Run("Secret", testApplyTwice(secretKind, newTestSecret, testLabelKeys, testAnnotationKeys))
	t.Run("ConfigMap", testApplyTwice(configMapKind, newTestConfigMap, testLabelKeys, testAnnotationKeys))
	t.Run("ServiceAccount", testApplyTwice(serviceAccountKind, newTestServiceAccount, testLabelKeys, testAnnotationKeys))
	t.Run("RoleBinding", testApplyTwice(roleBindingKind, newTestRoleBinding, testLabelKeys, testAnnotationKeys))
	t.Run("PodDisruptionBudget", testApplyTwice(podDisruptionBudgetKind, newTestPodDisruptionBudget, testLabelKeys, testAnnotationKeys))
	t.Run("ScyllaDBDatacenter", testApplyTwice(scyllaDBDatacenterKind, newTestScyllaDBDatacenter, testLabelKeys, testAnnotationKeys))
	t.Run("ScyllaDBManagerTask", testApplyTwice(scyllaDBManagerTaskKind, newTestScyllaDBManagerTask, testLabelKeys, testAnnotationKeys))
	t.Run("Namespace without a controller", testApplyTwice(namespaceKind, newTestNamespace, "app.kubernetes.io/name", ""))
}

// storedService is a Service as Apply stored it from newTestService, with a resourceVersion and a UID.
func storedService(t *testing.T) *corev1.Service {
	t.Helper()

	svc := withBookkeeping(t, newTestService(), testLabelKeys, testAnnotationKeys)
	svc.ResourceVersion = "42"
	svc.UID = "service-uid"
	return svc
}

func TestApplyUpdatesWhenRequiredChanges(t *testing.T) {
	t.Parallel()

	f := newApplyFixture(serviceKind, storedService(t))
	required := newTestService()
	required.Spec.Ports = append(required.Spec.Ports, corev1.ServicePort{Name: "alternator", Port: 8000})

	actual, changed, err := f.apply(t, required, ApplyOptions{})
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if !changed {
		t.Error("expected a change")
	}
	if diff := cmp.Diff([]string{"update services"}, f.takeActions()); diff != "" {
		t.Errorf("unexpected actions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Normal ServiceUpdated Service scylla/basic-client updated"}, f.takeEvents()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}

	want := withBookkeeping(t, required, testLabelKeys, testAnnotationKeys)
	want.ResourceVersion = "42"
	want.UID = "service-uid"
	if diff := cmp.Diff(want, actual, ignoreServerFields); diff != "" {
		t.Errorf("unexpected returned object (-want +got):\n%s", diff)
	}

	if _, changed, err := f.apply(t, required, ApplyOptions{}); err != nil || changed {
		t.Errorf("apply after the update: expected no change and no error, got changed=%v, err=%v", changed, err)
	}
	if actions := f.takeActions(); len(actions) != 0 {
		t.Errorf("apply after the update: expected no writes, got %q", actions)
	}
}

func TestApplyRefusesObjectsItDoesNotControl(t *testing.T) {
	t.Parallel()

	otherController := func(mutate func(ref *metav1.OwnerReference)) func(*corev1.Service) {
		return func(svc *corev1.Service) {
			ref := testControllerRef()
			mutate(ref)
			svc.OwnerReferences = []metav1.OwnerReference{*ref}
		}
	}

	tt := []struct {
		name           string
		mutateExisting func(*corev1.Service)
		mutateRequired func(*corev1.Service)
		options        ApplyOptions
		wantError      string
		wantActions    []string
	}{
		{
			name:           "controller with another UID",
			mutateExisting: otherController(func(ref *metav1.OwnerReference) { ref.UID = "other-uid" }),
			wantError: `can't apply Service "scylla/basic-client": the existing object is controlled by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID other-uid), ` +
				`not by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid)`,
		},
		{
			name:           "controller of another kind with the same UID",
			mutateExisting: otherController(func(ref *metav1.OwnerReference) { ref.Kind = "ScyllaCluster" }),
			wantError: `can't apply Service "scylla/basic-client": the existing object is controlled by ScyllaCluster "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid), ` +
				`not by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid)`,
		},
		{
			name:           "controller of another API group with the same UID and kind",
			mutateExisting: otherController(func(ref *metav1.OwnerReference) { ref.APIVersion = "example.com/v1" }),
			wantError: `can't apply Service "scylla/basic-client": the existing object is controlled by ScyllaDBDatacenter "basic" (example.com/v1, UID owner-uid), ` +
				`not by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid)`,
		},
		{
			name:           "orphan without adoption",
			mutateExisting: func(svc *corev1.Service) { svc.OwnerReferences = nil },
			wantError: `can't apply Service "scylla/basic-client": the existing object has no controller and adopting orphans is not allowed, ` +
				`so it can't be claimed for ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid)`,
		},
		{
			name: "orphan with only a non-controller owner",
			mutateExisting: func(svc *corev1.Service) {
				svc.OwnerReferences[0].Controller = nil
			},
			wantError: `can't apply Service "scylla/basic-client": the existing object has no controller and adopting orphans is not allowed, ` +
				`so it can't be claimed for ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid)`,
		},
		{
			name:           "controlled object while required has no controller",
			mutateRequired: func(svc *corev1.Service) { svc.OwnerReferences = nil },
			wantError: `can't apply Service "scylla/basic-client": the existing object is controlled by ScyllaDBDatacenter "basic" (scylla.scylladb.com/v1alpha1, UID owner-uid) ` +
				`but the required object has no controller`,
		},
		{
			name:           "orphan adopted when allowed",
			mutateExisting: func(svc *corev1.Service) { svc.OwnerReferences = nil },
			options:        ApplyOptions{AdoptOrphans: true},
			wantActions:    []string{"update services"},
		},
		{
			name:           "orphan applied without a controller",
			mutateExisting: func(svc *corev1.Service) { svc.OwnerReferences = nil },
			mutateRequired: func(svc *corev1.Service) { svc.OwnerReferences = nil },
			wantActions:    []string{"update services"},
		},
		{
			name:           "same controller written in another API version",
			mutateExisting: otherController(func(ref *metav1.OwnerReference) { ref.APIVersion = "scylla.scylladb.com/v1" }),
			wantActions:    []string{"update services"},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			existing := storedService(t)
			// Another hash makes sure a refusal is not a no-op in disguise.
			existing.Annotations[naming.ManagedHashAnnotation] = "outdated"
			if tc.mutateExisting != nil {
				tc.mutateExisting(existing)
			}
			required := newTestService()
			if tc.mutateRequired != nil {
				tc.mutateRequired(required)
			}
			f := newApplyFixture(serviceKind, existing)

			actual, changed, err := f.apply(t, required, tc.options)
			if len(tc.wantError) != 0 {
				if err == nil || err.Error() != tc.wantError {
					t.Fatalf("expected error %q, got %v", tc.wantError, err)
				}
				if !errors.Is(err, ErrOwnershipConflict) {
					t.Errorf("the error is not an ErrOwnershipConflict: %v", err)
				}
				if actual != nil || changed {
					t.Errorf("expected no object and no change on error, got %v, %v", actual, changed)
				}
				if diff := cmp.Diff([]string{"Warning ServiceOwnershipConflict " + tc.wantError}, f.takeEvents()); diff != "" {
					t.Errorf("unexpected events (-want +got):\n%s", diff)
				}
			} else {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if got := f.get(t, required.GetName()); !cmp.Equal(got.OwnerReferences, required.OwnerReferences) {
					t.Errorf("expected the stored owner references to be the required ones, got %v", got.OwnerReferences)
				}
			}
			if diff := cmp.Diff(tc.wantActions, f.takeActions()); diff != "" {
				t.Errorf("unexpected actions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyMergesMetadataWithOtherActors(t *testing.T) {
	t.Parallel()

	// The operator applied newTestService before; since then other actors added their own keys.
	existing := storedService(t)
	existing.Labels["user.example.com/team"] = "db"
	existing.Annotations["user.example.com/note"] = "hands off"
	existing.OwnerReferences = append(existing.OwnerReferences, metav1.OwnerReference{
		APIVersion: "v1", Kind: "ConfigMap", Name: "other-owner", UID: "other-owner-uid",
	})
	existing.Finalizers = []string{"example.com/protect"}

	tt := []struct {
		name            string
		mutateExisting  func(*corev1.Service)
		mutateRequired  func(*corev1.Service)
		wantLabels      map[string]string
		wantAnnotations map[string]string
	}{
		{
			name: "required drops a label and an annotation and changes another label",
			mutateRequired: func(svc *corev1.Service) {
				delete(svc.Labels, "app.kubernetes.io/name")
				svc.Labels["scylla/cluster"] = "renamed"
				svc.Labels["scylla/datacenter"] = "us-east-1"
				delete(svc.Annotations, "example.com/managed")
			},
			wantLabels: map[string]string{
				"scylla/cluster":        "renamed",
				"scylla/datacenter":     "us-east-1",
				"user.example.com/team": "db",
			},
			wantAnnotations: map[string]string{
				"user.example.com/note":           "hands off",
				naming.ManagedLabelKeysAnnotation: "scylla/cluster,scylla/datacenter",
			},
		},
		{
			name: "another actor changed a managed label, required is unchanged",
			mutateExisting: func(svc *corev1.Service) {
				svc.Labels["scylla/cluster"] = "tampered"
			},
			wantLabels: map[string]string{
				"app.kubernetes.io/name": "scylla",
				"scylla/cluster":         "basic",
				"user.example.com/team":  "db",
			},
			wantAnnotations: map[string]string{
				"example.com/managed":                  "yes",
				"user.example.com/note":                "hands off",
				naming.ManagedLabelKeysAnnotation:      testLabelKeys,
				naming.ManagedAnnotationKeysAnnotation: testAnnotationKeys,
			},
		},
		{
			name: "another actor removed a managed annotation, required is unchanged",
			mutateExisting: func(svc *corev1.Service) {
				delete(svc.Annotations, "example.com/managed")
			},
			wantLabels: map[string]string{
				"app.kubernetes.io/name": "scylla",
				"scylla/cluster":         "basic",
				"user.example.com/team":  "db",
			},
			wantAnnotations: map[string]string{
				"example.com/managed":                  "yes",
				"user.example.com/note":                "hands off",
				naming.ManagedLabelKeysAnnotation:      testLabelKeys,
				naming.ManagedAnnotationKeysAnnotation: testAnnotationKeys,
			},
		},
		{
			name: "object without key bookkeeping, for example written by an older operator, keeps every key",
			mutateExisting: func(svc *corev1.Service) {
				delete(svc.Annotations, naming.ManagedLabelKeysAnnotation)
				delete(svc.Annotations, naming.ManagedAnnotationKeysAnnotation)
			},
			mutateRequired: func(svc *corev1.Service) {
				delete(svc.Labels, "app.kubernetes.io/name")
			},
			wantLabels: map[string]string{
				"app.kubernetes.io/name": "scylla",
				"scylla/cluster":         "basic",
				"user.example.com/team":  "db",
			},
			wantAnnotations: map[string]string{
				"example.com/managed":                  "yes",
				"user.example.com/note":                "hands off",
				naming.ManagedLabelKeysAnnotation:      "scylla/cluster",
				naming.ManagedAnnotationKeysAnnotation: testAnnotationKeys,
			},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			existing := existing.DeepCopy()
			if tc.mutateExisting != nil {
				tc.mutateExisting(existing)
			}
			newRequired := func() *corev1.Service {
				svc := newTestService()
				if tc.mutateRequired != nil {
					tc.mutateRequired(svc)
				}
				return svc
			}
			f := newApplyFixture(serviceKind, existing)

			if _, _, err := f.apply(t, newRequired(), ApplyOptions{}); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if diff := cmp.Diff([]string{"update services"}, f.takeActions()); diff != "" {
				t.Errorf("unexpected actions (-want +got):\n%s", diff)
			}

			got := f.get(t, "basic-client")
			hash, err := Hash(newRequired())
			if err != nil {
				t.Fatal(err)
			}
			tc.wantAnnotations[naming.ManagedHashAnnotation] = hash
			if diff := cmp.Diff(tc.wantLabels, got.Labels); diff != "" {
				t.Errorf("unexpected labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantAnnotations, got.Annotations); diff != "" {
				t.Errorf("unexpected annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(existing.OwnerReferences, got.OwnerReferences); diff != "" {
				t.Errorf("unexpected owner references (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(existing.Finalizers, got.Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
			if got.ResourceVersion != existing.ResourceVersion {
				t.Errorf("expected the update to carry resourceVersion %q, got %q", existing.ResourceVersion, got.ResourceVersion)
			}

			if _, changed, err := f.apply(t, newRequired(), ApplyOptions{}); err != nil || changed {
				t.Errorf("second apply: expected no change and no error, got changed=%v, err=%v", changed, err)
			}
			if actions := f.takeActions(); len(actions) != 0 {
				t.Errorf("second apply: expected no writes, got %q", actions)
			}
		})
	}
}

func TestApplyRejectsRequiredObjectsNotBuiltFromScratch(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		required  func() *corev1.Service
		wantError string
	}{
		{
			name:      "nil",
			required:  func() *corev1.Service { return nil },
			wantError: "can't apply Service: required object is nil",
		},
		{
			name: "no name",
			required: func() *corev1.Service {
				svc := newTestService()
				svc.Name = ""
				svc.GenerateName = "basic-"
				return svc
			},
			wantError: "can't apply Service: required object has no name",
		},
		{
			name: "read from the API",
			required: func() *corev1.Service {
				svc := newTestService()
				svc.ResourceVersion = "1"
				svc.UID = "uid"
				svc.DeletionTimestamp = new(metav1.Unix(0, 0))
				return svc
			},
			wantError: `can't apply Service: [required object has resourceVersion "1", required object has UID "uid", required object has a deletionTimestamp]`,
		},
		{
			name: "bookkeeping annotation",
			required: func() *corev1.Service {
				svc := newTestService()
				svc.Annotations[naming.ManagedHashAnnotation] = "x"
				return svc
			},
			wantError: `can't apply Service: required object sets annotation "scylla-operator.scylladb.com/managed-hash" that Apply manages`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newApplyFixture(serviceKind)
			_, _, err := f.apply(t, tc.required(), ApplyOptions{})
			if err == nil || err.Error() != tc.wantError {
				t.Errorf("expected error %q, got %v", tc.wantError, err)
			}
			if actions := f.takeActions(); len(actions) != 0 {
				t.Errorf("expected no writes, got %q", actions)
			}
		})
	}
}

func TestApplyWaitsForObjectsBeingDeleted(t *testing.T) {
	t.Parallel()

	existing := storedService(t)
	existing.Annotations[naming.ManagedHashAnnotation] = "outdated"
	existing.DeletionTimestamp = new(metav1.Unix(0, 0))
	existing.Finalizers = []string{"orphan"}
	f := newApplyFixture(serviceKind, existing)

	actual, changed, err := f.apply(t, newTestService(), ApplyOptions{})
	if !errors.Is(err, ErrObjectBeingDeleted) {
		t.Errorf("expected an error wrapping ErrObjectBeingDeleted, got %v", err)
	}
	if actual != nil || changed {
		t.Errorf("expected no object and no change, got %v, %v", actual, changed)
	}
	if actions := f.takeActions(); len(actions) != 0 {
		t.Errorf("expected no writes, got %q", actions)
	}
	if events := f.takeEvents(); len(events) != 0 {
		t.Errorf("expected no events, got %q", events)
	}
}

func TestApplyReportsFailures(t *testing.T) {
	t.Parallel()

	outdated := storedService(t)
	outdated.Annotations[naming.ManagedHashAnnotation] = "outdated"
	headless := outdated.DeepCopy()
	headless.Spec.ClusterIP = corev1.ClusterIPNone
	serviceResource := schema.GroupResource{Resource: "services"}

	tt := []struct {
		name       string
		existing   *corev1.Service
		verb       string
		err        error
		wantError  string
		wantEvents []string
	}{
		{
			name:      "create forbidden",
			verb:      "create",
			err:       apierrors.NewForbidden(serviceResource, "basic-client", errors.New("no way")),
			wantError: `can't create Service "scylla/basic-client": services "basic-client" is forbidden: no way`,
			wantEvents: []string{
				`Warning ServiceCreateFailed Failed to create Service scylla/basic-client: services "basic-client" is forbidden: no way`,
			},
		},
		{
			name:      "create racing with a cache that has not seen the object yet",
			verb:      "create",
			err:       apierrors.NewAlreadyExists(serviceResource, "basic-client"),
			wantError: `can't create Service "scylla/basic-client": services "basic-client" already exists`,
		},
		{
			name:      "update invalid",
			existing:  outdated,
			verb:      "update",
			err:       apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "basic-client", nil),
			wantError: `can't update Service "scylla/basic-client": Service "basic-client" is invalid`,
			wantEvents: []string{
				`Warning ServiceUpdateFailed Failed to update Service scylla/basic-client: Service "basic-client" is invalid`,
			},
		},
		{
			name:      "delete to recreate forbidden",
			existing:  headless,
			verb:      "delete",
			err:       apierrors.NewForbidden(serviceResource, "basic-client", errors.New("no way")),
			wantError: `can't delete Service "scylla/basic-client" to recreate it because immutable field spec.clusterIP changed (propagation Background): services "basic-client" is forbidden: no way`,
			wantEvents: []string{
				`Warning ServiceDeleteFailed Failed to delete Service scylla/basic-client to recreate it because immutable field spec.clusterIP changed (propagation Background): services "basic-client" is forbidden: no way`,
			},
		},
		{
			// The namespace and everything in it, events included, are going away: there is nobody to tell.
			name:      "create in a namespace being deleted",
			verb:      "create",
			err:       namespaceTerminatingError(serviceResource, "basic-client"),
			wantError: `can't create Service "scylla/basic-client": services "basic-client" is forbidden: unable to create new content in namespace scylla because it is being terminated`,
		},
		{
			name:      "update conflicting with a newer version",
			existing:  outdated,
			verb:      "update",
			err:       apierrors.NewConflict(serviceResource, "basic-client", errors.New("stale")),
			wantError: `can't update Service "scylla/basic-client": Operation cannot be fulfilled on services "basic-client": stale`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var f *applyFixture[*corev1.Service]
			if tc.existing != nil {
				f = newApplyFixture(serviceKind, tc.existing)
			} else {
				f = newApplyFixture(serviceKind)
			}
			f.failOn(tc.verb, tc.err)

			actual, changed, err := f.apply(t, newTestService(), ApplyOptions{})
			if err == nil || err.Error() != tc.wantError {
				t.Errorf("expected error %q, got %v", tc.wantError, err)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("expected the error to wrap %v", tc.err)
			}
			if actual != nil || changed {
				t.Errorf("expected no object and no change, got %v, %v", actual, changed)
			}
			if diff := cmp.Diff(tc.wantEvents, f.takeEvents()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyRecordsEventsOnTheControllerOrElseTheObject(t *testing.T) {
	t.Parallel()

	t.Run("controlled object", testApplyEventTarget(serviceKind, newTestService,
		"Normal ServiceUpdated Service scylla/basic-client updated involvedObject{kind=ScyllaDBDatacenter,apiVersion=scylla.scylladb.com/v1alpha1}"))
	t.Run("object without a controller", testApplyEventTarget(namespaceKind, newTestNamespace,
		"Normal NamespaceUpdated Namespace scylla-operator updated involvedObject{kind=Namespace,apiVersion=v1}"))
}

func testApplyEventTarget[T kubeinterfaces.ObjectInterface](kind kindClient[T], newRequired func() T, wantEvent string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Parallel()

		f := newApplyFixture(kind)
		f.recorder.IncludeObject = true

		if _, _, err := f.apply(t, newRequired(), ApplyOptions{}); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if events := f.takeEvents(); len(events) != 0 {
			t.Errorf("expected no events for a create, got %q", events)
		}
		changed := newRequired()
		changed.SetLabels(map[string]string{"changed": "yes"})
		if _, _, err := f.apply(t, changed, ApplyOptions{}); err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if diff := cmp.Diff([]string{wantEvent}, f.takeEvents()); diff != "" {
			t.Errorf("unexpected events (-want +got):\n%s", diff)
		}
	}
}

// namespaceTerminatingError is the error the API server returns for a create in a namespace being deleted.
func namespaceTerminatingError(resource schema.GroupResource, name string) error {
	err := apierrors.NewForbidden(resource, name, errors.New("unable to create new content in namespace scylla because it is being terminated"))
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    corev1.NamespaceTerminatingCause,
		Message: "namespace scylla is being terminated",
		Field:   "metadata.namespace",
	})
	return err
}

// A precondition sees the object Apply is about to update and can stop the write: a decision made on an older
// snapshot must not overwrite what another actor wrote since.
func TestApplyPreconditionStopsTheUpdate(t *testing.T) {
	t.Parallel()

	movedOn := errors.New("moved on")
	for _, tc := range []struct {
		name        string
		refuse      bool
		wantActions []string
	}{
		{name: "a precondition that holds lets the update through", wantActions: []string{"update services"}},
		{name: "a precondition that fails stops it", refuse: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newApplyFixture(serviceKind, storedService(t))
			required := newTestService()
			required.Spec.Ports = append(required.Spec.Ports, corev1.ServicePort{Name: "alternator", Port: 8000})
			var seen string
			_, changed, err := f.apply(t, required, ApplyOptions{Precondition: func(existing metav1.Object) error {
				seen = existing.GetResourceVersion()
				if tc.refuse {
					return movedOn
				}
				return nil
			}})
			if seen != "42" {
				t.Errorf("the precondition saw resourceVersion %q, want the existing object's 42", seen)
			}
			if tc.refuse {
				if !errors.Is(err, movedOn) || changed {
					t.Errorf("want the precondition's error and no change, got %v, %v", err, changed)
				}
				if events := f.takeEvents(); len(events) != 0 {
					t.Errorf("a refused precondition recorded events: %q", events)
				}
			} else if err != nil || !changed {
				t.Errorf("want an update, got %v, %v", err, changed)
			}
			if diff := cmp.Diff(tc.wantActions, f.takeActions()); diff != "" {
				t.Errorf("unexpected actions (-want +got):\n%s", diff)
			}
		})
	}
}
