package controllerhelpers

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// newClaimablePod returns a pod in namespace scylla with the given rack label (none when empty) and owner references.
func newClaimablePod(name, rack string, ownerReferences ...metav1.OwnerReference) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Namespace:       "scylla",
		Name:            name,
		UID:             types.UID(name + "-uid"),
		ResourceVersion: "3",
		OwnerReferences: ownerReferences,
	}}
	if len(rack) != 0 {
		pod.Labels = map[string]string{"scylla/rack": rack}
	}
	return pod
}

// patchesByName returns the merge patches among actions, by object name.
func patchesByName(t *testing.T, actions []clienttesting.Action) map[string]string {
	t.Helper()

	patches := map[string]string{}
	for _, action := range actions {
		patch, ok := action.(clienttesting.PatchAction)
		if !ok {
			t.Errorf("unexpected action %s %s", action.GetVerb(), action.GetResource().Resource)
			continue
		}
		if patch.GetPatchType() != types.MergePatchType {
			t.Errorf("expected a merge patch, got %s", patch.GetPatchType())
		}
		patches[patch.GetName()] = string(patch.GetPatch())
	}
	return patches
}

func TestClaimerAdoptsMatchingOrphansAndReleasesWhatNoLongerMatches(t *testing.T) {
	t.Parallel()

	rack := newStatefulSet("rack-a", "rack-a-uid")
	ours := *controllerRefTo(rack)
	theirs := *controllerRefTo(newStatefulSet("rack-b", "rack-b-uid"))
	ownedNotControlled := *controllerRefTo(rack)
	ownedNotControlled.Controller = nil
	otherOwner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm-uid"}
	deleting := func(obj metav1.Object) metav1.Object {
		obj.SetDeletionTimestamp(new(metav1.Unix(0, 0)))
		return obj
	}

	pods := []*corev1.Pod{
		newClaimablePod("ours-matching", "a", ours),
		newClaimablePod("ours-not-matching", "b", otherOwner, ours),
		newClaimablePod("orphan-matching", "a", otherOwner),
		newClaimablePod("orphan-owned-not-controlled", "a", ownedNotControlled),
		newClaimablePod("orphan-not-matching", "b"),
		deleting(newClaimablePod("orphan-matching-deleting", "a")).(*corev1.Pod),
		newClaimablePod("theirs-matching", "a", theirs),
	}

	const (
		oursRef  = `{"apiVersion":"apps/v1","kind":"StatefulSet","name":"rack-a","uid":"rack-a-uid","controller":true,"blockOwnerDeletion":true}`
		otherRef = `{"apiVersion":"v1","kind":"ConfigMap","name":"cm","uid":"cm-uid"}`
	)

	tt := []struct {
		name        string
		controller  *appsv1.StatefulSet
		canAdopt    CanAdoptFunc
		failPatch   map[string]error
		wantClaimed []string
		wantPatches map[string]string
		wantError   string
	}{
		{
			name:        "controller alive",
			controller:  rack,
			wantClaimed: []string{"ours-matching", "orphan-matching", "orphan-owned-not-controlled"},
			wantPatches: map[string]string{
				"ours-not-matching":           `{"metadata":{"ownerReferences":[` + otherRef + `],"resourceVersion":"3","uid":"ours-not-matching-uid"}}`,
				"orphan-matching":             `{"metadata":{"ownerReferences":[` + otherRef + `,` + oursRef + `],"resourceVersion":"3","uid":"orphan-matching-uid"}}`,
				"orphan-owned-not-controlled": `{"metadata":{"ownerReferences":[` + oursRef + `],"resourceVersion":"3","uid":"orphan-owned-not-controlled-uid"}}`,
			},
		},
		{
			name:        "controller being deleted neither adopts nor releases",
			controller:  deleting(rack.DeepCopy()).(*appsv1.StatefulSet),
			wantClaimed: []string{"ours-matching"},
			wantPatches: map[string]string{},
		},
		{
			name:        "adoption refused on recheck",
			controller:  rack,
			canAdopt:    func(context.Context) error { return errors.New("recreated") },
			wantClaimed: []string{"ours-matching"},
			wantPatches: map[string]string{
				"ours-not-matching": `{"metadata":{"ownerReferences":[` + otherRef + `],"resourceVersion":"3","uid":"ours-not-matching-uid"}}`,
			},
			wantError: `[can't adopt "scylla/orphan-matching": recreated, can't adopt "scylla/orphan-owned-not-controlled": recreated]`,
		},
		{
			name:       "objects gone meanwhile are skipped, other failures reported",
			controller: rack,
			failPatch: map[string]error{
				"orphan-matching":   apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "orphan-matching"),
				"ours-not-matching": apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, "ours-not-matching"),
				"orphan-owned-not-controlled": apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, "orphan-owned-not-controlled",
					errors.New("the object has been modified")),
			},
			wantClaimed: []string{"ours-matching"},
			wantPatches: map[string]string{
				"ours-not-matching":           `{"metadata":{"ownerReferences":[` + otherRef + `],"resourceVersion":"3","uid":"ours-not-matching-uid"}}`,
				"orphan-matching":             `{"metadata":{"ownerReferences":[` + otherRef + `,` + oursRef + `],"resourceVersion":"3","uid":"orphan-matching-uid"}}`,
				"orphan-owned-not-controlled": `{"metadata":{"ownerReferences":[` + oursRef + `],"resourceVersion":"3","uid":"orphan-owned-not-controlled-uid"}}`,
			},
			wantError: `can't adopt "scylla/orphan-owned-not-controlled": Operation cannot be fulfilled on pods "orphan-owned-not-controlled": the object has been modified`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			var objects []runtime.Object
			for _, pod := range pods {
				objects = append(objects, pod)
			}
			kubeClient := fake.NewClientset(objects...)
			kubeClient.PrependReactor("patch", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
				err, ok := tc.failPatch[action.(clienttesting.PatchAction).GetName()]
				return ok, nil, err
			})
			canAdoptCalls := 0
			canAdopt := func(ctx context.Context) error {
				canAdoptCalls++
				if tc.canAdopt != nil {
					return tc.canAdopt(ctx)
				}
				return nil
			}

			claimer := NewClaimer(tc.controller, statefulSetGVK, labels.SelectorFromSet(labels.Set{"scylla/rack": "a"}), kubeClient.CoreV1().Pods("scylla"), canAdopt)
			claimed, err := claimer.Claim(t.Context(), pods)

			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			var claimedNames []string
			for _, pod := range claimed {
				claimedNames = append(claimedNames, pod.Name)
			}
			if diff := cmp.Diff(tc.wantClaimed, claimedNames); diff != "" {
				t.Errorf("unexpected claimed objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPatches, patchesByName(t, kubeClient.Actions())); diff != "" {
				t.Errorf("unexpected patches (-want +got):\n%s", diff)
			}
			if canAdoptCalls > 1 {
				t.Errorf("expected canAdopt to be called at most once, got %d calls", canAdoptCalls)
			}
		})
	}
}

func TestClaimerPatchesApplyOnTheAPIServer(t *testing.T) {
	t.Parallel()

	rack := newStatefulSet("rack-a", "rack-a-uid")
	orphan := newClaimablePod("orphan", "a")
	kubeClient := fake.NewClientset(orphan)

	claimer := NewClaimer(rack, statefulSetGVK, labels.Everything(), kubeClient.CoreV1().Pods("scylla"), nil)
	if _, err := claimer.Claim(t.Context(), []*corev1.Pod{orphan}); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}

	got, err := kubeClient.CoreV1().Pods("scylla").Get(t.Context(), "orphan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]metav1.OwnerReference{*controllerRefTo(rack)}, got.OwnerReferences); diff != "" {
		t.Errorf("unexpected owner references (-want +got):\n%s", diff)
	}
}

func TestRecheckController(t *testing.T) {
	t.Parallel()

	rack := newStatefulSet("rack-a", "rack-a-uid")

	tt := []struct {
		name      string
		fresh     metav1.Object
		err       error
		wantError string
	}{
		{name: "same and alive", fresh: rack.DeepCopy()},
		{
			name:      "recreated",
			fresh:     newStatefulSet("rack-a", "new-uid"),
			wantError: `controller "scylla/rack-a" was recreated (UID new-uid, expected rack-a-uid), so it can't adopt`,
		},
		{
			name: "being deleted",
			fresh: func() metav1.Object {
				sts := rack.DeepCopy()
				sts.DeletionTimestamp = new(metav1.Unix(0, 0))
				return sts
			}(),
			wantError: `controller "scylla/rack-a" is being deleted, so it can't adopt`,
		},
		{
			name:      "lookup failing",
			err:       errors.New("timeout"),
			wantError: `can't recheck controller "scylla/rack-a" before adopting: timeout`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			canAdopt := RecheckController(rack, func(context.Context) (metav1.Object, error) { return tc.fresh, tc.err })
			err := canAdopt(t.Context())
			if diff := cmp.Diff(tc.wantError, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
		})
	}
}
