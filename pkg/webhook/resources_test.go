package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"
	scyllav1alpha1listers "github.com/scyllakube/client/scylla/listers/scylla/v1alpha1"
)

// fakeLookup answers from a set of "Kind/namespace/name" keys, or fails with err; it counts its calls.
type fakeLookup struct {
	existing map[string]bool
	err      error
	calls    int
}

func (l *fakeLookup) ScyllaDBManagerTaskTargetExists(_ context.Context, namespace string, ref scyllav1alpha1.LocalScyllaDBReference) (bool, error) {
	l.calls++
	if l.err != nil {
		return false, l.err
	}
	return l.existing[ref.Kind+"/"+namespace+"/"+ref.Name], nil
}

// everythingExists is a lookup for which every target exists.
type everythingExists struct{}

func (everythingExists) ScyllaDBManagerTaskTargetExists(context.Context, string, scyllav1alpha1.LocalScyllaDBReference) (bool, error) {
	return true, nil
}

func gvrOfKind(t *testing.T, resources []Resource, gvk schema.GroupVersionKind) schema.GroupVersionResource {
	t.Helper()
	for _, r := range resources {
		if r.GroupVersionKind == gvk {
			return r.GroupVersionResource
		}
	}
	t.Fatalf("no resource admits %v", gvk)
	return schema.GroupVersionResource{}
}

func TestEveryExampleIsAdmitted(t *testing.T) {
	t.Parallel()
	resources := ScyllaResources(everythingExists{})
	a := newTestAdmission(t, resources...)
	files, err := filepath.Glob("../../deploy/examples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples found: %v", err)
	}
	admitted := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			object, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s document %d: %v", file, i, err)
			}
			var typeMeta metav1.TypeMeta
			if err := json.Unmarshal(object, &typeMeta); err != nil {
				t.Fatal(err)
			}
			gvk := typeMeta.GroupVersionKind()
			if gvk.Group != scyllav1alpha1.GroupName {
				continue
			}
			got := decodeResponse(t, post(a.ServeValidate, reviewJSON(t, &admissionv1.AdmissionRequest{
				UID: "uid", Resource: metav1.GroupVersionResource(gvrOfKind(t, resources, gvk)), Operation: admissionv1.Create,
				Namespace: "scylla", Object: runtime.RawExtension{Raw: object},
			})))
			if !got.Allowed {
				t.Errorf("%s document %d (%s) refused: %s", filepath.Base(file), i, gvk.Kind, got.Result.Message)
			}
			admitted++
		}
	}
	if admitted < len(files) {
		t.Errorf("%d scylla objects in %d example files, want at least one per file", admitted, len(files))
	}
}

func TestScyllaDBManagerTaskTargetMustExist(t *testing.T) {
	t.Parallel()
	task := func(target string) []byte {
		return []byte(`{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBManagerTask","metadata":{"name":"weekly","namespace":"scylla"},` +
			`"spec":{"scyllaDBClusterRef":{"kind":"ScyllaDBCluster","name":"` + target + `"},"type":"Repair","repair":{"cron":"0 2 * * SUN"}}}`)
	}
	request := func(op admissionv1.Operation, object, old []byte) []byte {
		return reviewJSON(t, &admissionv1.AdmissionRequest{
			UID: "uid", Resource: metav1.GroupVersionResource(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks")),
			Operation: op, Name: "weekly", Namespace: "scylla",
			Object: runtime.RawExtension{Raw: object}, OldObject: runtime.RawExtension{Raw: old},
		})
	}
	lookup := &fakeLookup{existing: map[string]bool{"ScyllaDBCluster/scylla/dev": true}}
	a := newTestAdmission(t, ScyllaResources(lookup)...)

	if got := decodeResponse(t, post(a.ServeValidate, request(admissionv1.Create, task("dev"), nil))); !got.Allowed {
		t.Errorf("task of an existing cluster refused: %s", got.Result.Message)
	}
	got := decodeResponse(t, post(a.ServeValidate, request(admissionv1.Create, task("nope"), nil)))
	if got.Allowed {
		t.Fatal("task of a missing cluster allowed")
	}
	wantCauses := []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueNotFound, Message: `Not found: "nope"`, Field: "spec.scyllaDBClusterRef.name"}}
	if diff := cmp.Diff(wantCauses, got.Result.Details.Causes); diff != "" {
		t.Errorf("causes (-want +got):\n%s", diff)
	}

	// An update that keeps the reference doesn't look the target up: a task whose cluster is gone stays updatable.
	lookup.calls = 0
	if got := decodeResponse(t, post(a.ServeValidate, request(admissionv1.Update, task("nope"), task("nope")))); !got.Allowed || lookup.calls != 0 {
		t.Errorf("update keeping a dangling reference: allowed=%v after %d lookups, want allowed with none", got.Allowed, lookup.calls)
	}
	if got := decodeResponse(t, post(a.ServeValidate, request(admissionv1.Update, task("gone"), task("dev")))); got.Allowed || lookup.calls != 1 {
		t.Errorf("update pointing at a missing cluster: allowed=%v after %d lookups, want refused after one", got.Allowed, lookup.calls)
	}

	failing := newTestAdmission(t, ScyllaResources(&fakeLookup{err: errors.New("API server unreachable")})...)
	got = decodeResponse(t, post(failing.ServeValidate, request(admissionv1.Create, task("dev"), nil)))
	if got.Allowed || !strings.Contains(got.Result.Message, "API server unreachable") {
		t.Errorf("with a failing lookup: allowed=%v message %q, want refused saying why", got.Allowed, got.Result.Message)
	}
}

func TestLookupFallsBackToTheAPIServerOnACacheMiss(t *testing.T) {
	t.Parallel()
	cached := &scyllav1alpha1.ScyllaDBCluster{ObjectMeta: metav1.ObjectMeta{Name: "cached", Namespace: "scylla"}}
	live := &scyllav1alpha1.ScyllaDBDatacenter{ObjectMeta: metav1.ObjectMeta{Name: "just-created", Namespace: "scylla"}}
	clusters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := clusters.Add(cached); err != nil {
		t.Fatal(err)
	}
	datacenters := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	client := scyllafake.NewSimpleClientset(live)
	l := NewLookup(client, scyllav1alpha1listers.NewScyllaDBClusterLister(clusters), scyllav1alpha1listers.NewScyllaDBDatacenterLister(datacenters))

	for _, tc := range []struct {
		ref       scyllav1alpha1.LocalScyllaDBReference
		namespace string
		want      bool
		wantErr   string
	}{
		{ref: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBCluster", Name: "cached"}, namespace: "scylla", want: true},
		{ref: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "just-created"}, namespace: "scylla", want: true},
		{ref: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBCluster", Name: "cached"}, namespace: "other", want: false},
		{ref: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "missing"}, namespace: "scylla", want: false},
		{ref: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaCluster", Name: "x"}, namespace: "scylla", wantErr: `can't look up kind "ScyllaCluster"`},
	} {
		got, err := l.ScyllaDBManagerTaskTargetExists(context.Background(), tc.namespace, tc.ref)
		if len(tc.wantErr) != 0 {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v in %s: err = %v, want %q", tc.ref, tc.namespace, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v in %s: exists = %v, %v; want %v", tc.ref, tc.namespace, got, err, tc.want)
		}
	}
}

func TestMutateDefaultsParallelNodeOperationsOnCreate(t *testing.T) {
	t.Parallel()
	a := newTestAdmission(t, ScyllaResources(everythingExists{})...)
	scyllaCluster := func(version, enabled string) []byte {
		spec := `"version":"` + version + `","agentVersion":"3.5.0","datacenter":{"name":"dc","racks":[]}`
		if len(enabled) != 0 {
			spec += `,"enableParallelNodeOperations":` + enabled
		}
		return []byte(`{"apiVersion":"scylla.scylladb.com/v1","kind":"ScyllaCluster","metadata":{"name":"c","namespace":"scylla"},"spec":{` + spec + `}}`)
	}
	datacenter := func(image string) []byte {
		return []byte(`{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBDatacenter","metadata":{"name":"d","namespace":"scylla"},` +
			`"spec":{"clusterName":"c","datacenterName":"dc","scyllaDB":{"image":"` + image + `"},"scyllaDBManagerAgent":{"image":"docker.io/scylladb/scylla-manager-agent:3.5.0"},"racks":[]}}`)
	}
	wantPatch := `[{"op":"add","path":"/spec/enableParallelNodeOperations","value":true}]`
	for _, tc := range []struct {
		desc      string
		gvr       schema.GroupVersionResource
		op        admissionv1.Operation
		object    []byte
		wantPatch string
	}{
		{desc: "ScyllaCluster at the first version with parallel bootstrap", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Create, object: scyllaCluster("2026.2.0", ""), wantPatch: wantPatch},
		{desc: "ScyllaCluster at a later version", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Create, object: scyllaCluster("2027.1.3", ""), wantPatch: wantPatch},
		{desc: "ScyllaCluster at an older version", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Create, object: scyllaCluster("2025.1.2", "")},
		{desc: "ScyllaCluster at a release candidate of 2026.2", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Create, object: scyllaCluster("2026.2.0-rc1", "")},
		{desc: "ScyllaCluster that says false", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Create, object: scyllaCluster("2026.2.0", "false")},
		{desc: "ScyllaCluster update", gvr: scyllav1.SchemeGroupVersion.WithResource("scyllaclusters"), op: admissionv1.Update, object: scyllaCluster("2026.2.0", "")},
		{desc: "ScyllaDBDatacenter with a new enough tag", gvr: scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), op: admissionv1.Create, object: datacenter("docker.io/scylladb/scylla:2026.2.1"), wantPatch: wantPatch},
		{desc: "ScyllaDBDatacenter pinned by digest", gvr: scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), op: admissionv1.Create,
			object: datacenter("docker.io/scylladb/scylla@sha256:0123456789012345678901234567890123456789012345678901234567890123")},
		{desc: "ScyllaDBDatacenter with an old tag", gvr: scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), op: admissionv1.Create, object: datacenter("docker.io/scylladb/scylla:2025.1.2")},
		{desc: "a kind that isn't mutated", gvr: scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks"), op: admissionv1.Create, object: taskJSON("t", "dev", nil, false)},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			req := &admissionv1.AdmissionRequest{UID: "uid", Resource: metav1.GroupVersionResource(tc.gvr), Operation: tc.op, Object: runtime.RawExtension{Raw: tc.object}}
			if tc.op == admissionv1.Update {
				req.OldObject = runtime.RawExtension{Raw: tc.object}
			}
			got := decodeResponse(t, post(a.ServeMutate, reviewJSON(t, req)))
			if !got.Allowed {
				t.Fatalf("refused: %v", got.Result)
			}
			if string(got.Patch) != tc.wantPatch {
				t.Errorf("patch = %s, want %q", got.Patch, tc.wantPatch)
			}
			if (got.PatchType != nil) != (len(tc.wantPatch) != 0) || (got.PatchType != nil && *got.PatchType != admissionv1.PatchTypeJSONPatch) {
				t.Errorf("patch type = %v, want JSONPatch exactly when there is a patch", got.PatchType)
			}
		})
	}
}
