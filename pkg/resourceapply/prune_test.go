package resourceapply

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

func newMemberService(name string, mutate func(*corev1.Service)) *corev1.Service {
	svc := newTestHeadlessService()
	svc.Name = name
	svc.UID = types.UID(name + "-uid")
	if mutate != nil {
		mutate(svc)
	}
	return svc
}

func TestPruneDeletesOnlyUnwantedObjectsOfTheController(t *testing.T) {
	t.Parallel()

	existing := []*corev1.Service{
		newMemberService("wanted", nil),
		newMemberService("unwanted", nil),
		newMemberService("unwanted-too", nil),
		newMemberService("other-controller", func(svc *corev1.Service) { svc.OwnerReferences[0].UID = "other-uid" }),
		newMemberService("other-kind", func(svc *corev1.Service) { svc.OwnerReferences[0].Kind = "ScyllaCluster" }),
		newMemberService("orphan", func(svc *corev1.Service) { svc.OwnerReferences = nil }),
		newMemberService("owned-not-controlled", func(svc *corev1.Service) { svc.OwnerReferences[0].Controller = nil }),
		newMemberService("being-deleted", func(svc *corev1.Service) {
			svc.DeletionTimestamp = new(metav1.Unix(0, 0))
			svc.Finalizers = []string{"example.com/wait"}
		}),
	}
	required := []*corev1.Service{newMemberService("wanted", nil), newMemberService("not-created-yet", nil)}

	tt := []struct {
		name            string
		options         PruneOptions
		failDelete      map[string]error
		wantDeleted     bool
		wantError       string
		wantDeletes     []string
		wantPropagation metav1.DeletionPropagation
		wantEvents      []string
	}{
		{
			name:            "background by default",
			wantDeleted:     true,
			wantDeletes:     []string{"unwanted", "unwanted-too"},
			wantPropagation: metav1.DeletePropagationBackground,
			wantEvents: []string{
				"Normal ServiceDeleted Service scylla/unwanted deleted because it is no longer wanted",
				"Normal ServiceDeleted Service scylla/unwanted-too deleted because it is no longer wanted",
			},
		},
		{
			name:            "propagation as asked",
			options:         PruneOptions{PropagationPolicy: metav1.DeletePropagationForeground},
			wantDeleted:     true,
			wantDeletes:     []string{"unwanted", "unwanted-too"},
			wantPropagation: metav1.DeletePropagationForeground,
			wantEvents: []string{
				"Normal ServiceDeleted Service scylla/unwanted deleted because it is no longer wanted",
				"Normal ServiceDeleted Service scylla/unwanted-too deleted because it is no longer wanted",
			},
		},
		{
			name: "a failure does not stop the other deletes",
			failDelete: map[string]error{
				"unwanted": apierrors.NewForbidden(schema.GroupResource{Resource: "services"}, "unwanted", errors.New("no way")),
			},
			wantDeleted:     true,
			wantError:       `can't delete Service "scylla/unwanted" because it is no longer wanted: services "unwanted" is forbidden: no way`,
			wantDeletes:     []string{"unwanted", "unwanted-too"},
			wantPropagation: metav1.DeletePropagationBackground,
			wantEvents: []string{
				`Warning ServiceDeleteFailed Failed to delete Service scylla/unwanted because it is no longer wanted: services "unwanted" is forbidden: no way`,
				"Normal ServiceDeleted Service scylla/unwanted-too deleted because it is no longer wanted",
			},
		},
		{
			name: "objects already gone and UID conflicts are not worth a warning",
			failDelete: map[string]error{
				"unwanted":     apierrors.NewNotFound(schema.GroupResource{Resource: "services"}, "unwanted"),
				"unwanted-too": apierrors.NewConflict(schema.GroupResource{Resource: "services"}, "unwanted-too", errors.New("UID mismatch")),
			},
			wantError:       `can't delete Service "scylla/unwanted-too" because it is no longer wanted: Operation cannot be fulfilled on services "unwanted-too": UID mismatch`,
			wantDeletes:     []string{"unwanted", "unwanted-too"},
			wantPropagation: metav1.DeletePropagationBackground,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var objects []runtime.Object
			for _, svc := range existing {
				objects = append(objects, svc)
			}
			f := newApplyFixture(serviceKind, objects...)
			f.clientset.PrependReactor("delete", "services", func(action clienttesting.Action) (bool, runtime.Object, error) {
				err, ok := tc.failDelete[action.(clienttesting.DeleteAction).GetName()]
				return ok, nil, err
			})

			deleted, err := Prune(t.Context(), f.client, f.recorder, testControllerRef(), existing, required, tc.options)
			if deleted != tc.wantDeleted {
				t.Errorf("expected deleted=%v, got %v", tc.wantDeleted, deleted)
			}
			if (err == nil && len(tc.wantError) != 0) || (err != nil && err.Error() != tc.wantError) {
				t.Errorf("expected error %q, got %v", tc.wantError, err)
			}

			var wantOptions []metav1.DeleteOptions
			actions := f.takeRawActions()
			var gotDeletes []string
			for i, action := range actions {
				gotDeletes = append(gotDeletes, action.(clienttesting.DeleteAction).GetName())
				uid := types.UID(gotDeletes[i] + "-uid")
				wantOptions = append(wantOptions, metav1.DeleteOptions{
					Preconditions:     &metav1.Preconditions{UID: &uid},
					PropagationPolicy: &tc.wantPropagation,
				})
			}
			if diff := cmp.Diff(tc.wantDeletes, gotDeletes); diff != "" {
				t.Errorf("unexpected deletes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantOptions, deleteOptions(actions)); diff != "" {
				t.Errorf("unexpected delete options (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, f.takeEvents()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPruneRejectsAMissingControllerRef(t *testing.T) {
	t.Parallel()

	f := newApplyFixture(serviceKind)
	_, err := Prune(t.Context(), f.client, f.recorder, nil, []*corev1.Service{newMemberService("a", nil)}, nil, PruneOptions{})
	if want := "can't prune Service objects: controllerRef is nil"; err == nil || err.Error() != want {
		t.Errorf("expected error %q, got %v", want, err)
	}
	if actions := f.takeActions(); len(actions) != 0 {
		t.Errorf("expected no writes, got %q", actions)
	}
}
