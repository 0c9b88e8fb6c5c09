package scylladbdatacenter

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// serviceWrites are the writes to Services among f's writes.
func serviceWrites(f *fixture) []string {
	return slices.DeleteFunc(f.kubeWrites(), func(w string) bool { return !strings.Contains(w, " services ") })
}

// Services the caches show as Apply last found them, built from the same datacenter, are not applied again; a Service
// changed since, which the API server gives a new resourceVersion, is, and so is every Service once the datacenter
// changes.
func TestServicesAtRestAreAppliedAgainOnlyOnceTheyOrTheDatacenterChanged(t *testing.T) {
	t.Parallel()

	first := newFixture(t, world{sdc: newBasicSDC()})
	if err := first.sync(); err != nil {
		t.Fatal(err)
	}
	w := withServerFields(withNodes(first.world()))
	f := newFixture(t, w)
	// Until a sync writes nothing: the datacenter's status writes give it new resourceVersions.
	for i := 0; ; i++ {
		if i == 5 {
			t.Fatalf("the datacenter does not come to rest: %q", f.writes())
		}
		before := len(f.writes())
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		if writes := serviceWrites(f); len(writes) != 0 {
			t.Fatalf("sync %d wrote Services: %q", i, writes)
		}
		if len(f.writes()) == before {
			break
		}
	}

	checkAppliedAgainOnlyOnceChanged(t, f, object[*corev1.Service](t, w, "basic-dc1-a-0"), serviceWrites, "update services basic-dc1-a-0")

	// A new version of the datacenter with labels for the node Services: every member Service gets them.
	sdc := f.world().sdc.DeepCopy()
	sdc.Spec.RackTemplate.ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
		ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"team": "db"}},
	}}
	sdc.Generation++
	version, err := strconv.Atoi(sdc.ResourceVersion)
	if err != nil {
		t.Fatal(err)
	}
	sdc.ResourceVersion = strconv.Itoa(version + 1)
	f.cache(sdc)
	f.kubeClient.ClearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, rack := range []string{"a", "b"} {
		for ordinal := range 3 {
			want = append(want, "update services basic-dc1-"+rack+"-"+strconv.Itoa(ordinal))
		}
	}
	if diff := cmp.Diff(want, sortedStrings(serviceWrites(f))); diff != "" {
		t.Errorf("unexpected Service writes after the datacenter changed (-want +got):\n%s", diff)
	}
}

// checkAppliedAgainOnlyOnceChanged puts obj into f's caches with another managed hash, first at its resourceVersion,
// then at a new one, and syncs after each: the API server never changes an object without a new resourceVersion, so
// the first sync must not apply the object again (or it would restore the hash), and the second must (wantUpdate),
// as writes, f's writes of obj's kind, show.
func checkAppliedAgainOnlyOnceChanged(t *testing.T, f *fixture, obj runtime.Object, writes func(*fixture) []string, wantUpdate string) {
	t.Helper()
	for _, tc := range []struct {
		name               string
		newResourceVersion bool
		want               []string
	}{
		{name: "the same resourceVersion"},
		{name: "a new resourceVersion", newResourceVersion: true, want: []string{wantUpdate}},
	} {
		edited := obj.DeepCopyObject()
		accessor, err := meta.Accessor(edited)
		if err != nil {
			t.Fatal(err)
		}
		accessor.SetAnnotations(merge.Maps(accessor.GetAnnotations(), map[string]string{naming.ManagedHashAnnotation: "edited"}))
		if tc.newResourceVersion {
			accessor.SetResourceVersion(accessor.GetResourceVersion() + "0")
		}
		f.cache(edited)
		f.kubeClient.ClearActions()
		if err := f.sync(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, writes(f), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: unexpected writes (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestNoOpAppliesNeedTheSameInputsAndVersion(t *testing.T) {
	t.Parallel()

	svc := &corev1.Service{}
	svc.Name, svc.UID, svc.ResourceVersion = "basic-dc1-a-0", "svc-uid", "7"
	inputs := serviceInputs{sdcUID: "sdc-uid", sdcResourceVersion: "3", automaticTLS: true}
	applies := newNoOpApplies[serviceInputs]()
	applies.Set("scylla/basic", map[string]noOpApply[serviceInputs]{svc.Name: {inputs: inputs, uid: svc.UID, resourceVersion: svc.ResourceVersion}})

	if !applies.unchanged("scylla/basic", inputs, svc) {
		t.Error("the Service as remembered is not unchanged")
	}
	otherInputs := []serviceInputs{
		{sdcUID: "sdc-uid", sdcResourceVersion: "4", automaticTLS: true},
		{sdcUID: "other", sdcResourceVersion: "3", automaticTLS: true},
		{sdcUID: "sdc-uid", sdcResourceVersion: "3", automaticTLS: true, decommissioned: naming.DecommissionedLabelFalse},
		{sdcUID: "sdc-uid", sdcResourceVersion: "3"},
	}
	for _, other := range otherInputs {
		if applies.unchanged("scylla/basic", other, svc) {
			t.Errorf("the Service is unchanged for inputs %+v", other)
		}
	}
	for _, mutate := range []func(*corev1.Service){
		func(s *corev1.Service) { s.ResourceVersion = "8" },
		func(s *corev1.Service) { s.UID = "new-uid" },
		func(s *corev1.Service) { s.Name = "basic-dc1-a-1" },
		func(s *corev1.Service) { s.UID, s.ResourceVersion = "", "" },
	} {
		changed := svc.DeepCopy()
		mutate(changed)
		if applies.unchanged("scylla/basic", inputs, changed) {
			t.Errorf("Service %s %s/%s is unchanged", changed.Name, changed.UID, changed.ResourceVersion)
		}
	}
	if applies.unchanged("scylla/other", inputs, svc) {
		t.Error("the Service is unchanged for another datacenter")
	}
	applies.Forget("scylla/basic")
	if applies.unchanged("scylla/basic", inputs, svc) {
		t.Error("the Service is unchanged after the datacenter was forgotten")
	}
}
