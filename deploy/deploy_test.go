// Package deploy holds the manifests that install the operator; its tests keep them in step with the code.
package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/scyllakube/scylla-operator/pkg/controller/scylladbdatacenter"
)

// decodeStrict decodes every document of a manifest file with the Kubernetes scheme, rejecting unknown fields.
func decodeStrict(t *testing.T, path string) []runtime.Object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	decoder := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	var objs []runtime.Object
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

func TestOperatorManifestsDecodeStrictly(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("operator/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in operator/: %v", err)
	}
	for _, f := range files {
		if objs := decodeStrict(t, f); len(objs) == 0 {
			t.Errorf("%s has no objects", f)
		}
	}
}

// The ClusterRole users install must grant exactly what the operator's builder says the sidecar needs.
func TestMemberClusterRoleMatchesTheOperator(t *testing.T) {
	t.Parallel()
	objs := decodeStrict(t, "operator/20-member-clusterrole.yaml")
	if len(objs) != 1 {
		t.Fatalf("want one object, got %d", len(objs))
	}
	got, ok := objs[0].(*rbacv1.ClusterRole)
	if !ok {
		t.Fatalf("want a ClusterRole, got %T", objs[0])
	}
	want := scylladbdatacenter.MakeMemberClusterRole()
	// Compare what matters for access: name, labels and rules.
	if diff := cmp.Diff(want.Name, got.Name); diff != "" {
		t.Errorf("name differs (-builder +manifest):\n%s", diff)
	}
	if diff := cmp.Diff(want.Labels, got.Labels); diff != "" {
		t.Errorf("labels differ (-builder +manifest):\n%s", diff)
	}
	if diff := cmp.Diff(want.Rules, got.Rules); diff != "" {
		wantYAML, _ := yaml.Marshal(want.Rules)
		t.Errorf("rules differ (-builder +manifest):\n%s\nthe manifest's rules should be:\n%s", diff, wantYAML)
	}
}
