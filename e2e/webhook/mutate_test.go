//go:build e2e

package webhook

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// scyllaDBDatacenterManifest is a valid ScyllaDBDatacenter of one rack of three nodes; IMAGE is its ScyllaDB image.
const scyllaDBDatacenterManifest = `
apiVersion: scylla.scylladb.com/v1alpha1
kind: ScyllaDBDatacenter
metadata:
  name: NAME
spec:
  clusterName: mutated
  datacenterName: dc1
  scyllaDB:
    image: IMAGE
  scyllaDBManagerAgent:
    image: docker.io/scylladb/scylla-manager-agent:3.5.0
  rackTemplate:
    nodes: 3
    scyllaDB:
      resources:
        limits:
          cpu: "2"
          memory: 8Gi
      storage:
        capacity: 100Gi
  racks:
  - name: a
`

// pinnedScyllaDBImage is a ScyllaDB image pinned by digest: its version is unknown, so parallel node operations
// count as unsupported.
const pinnedScyllaDBImage = "docker.io/scylladb/scylla@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// scyllaClusterAt returns a valid ScyllaCluster named name at ScyllaDB version, with
// spec.enableParallelNodeOperations set to enabled unless it is nil.
func scyllaClusterAt(name, version string, enabled *bool) *unstructured.Unstructured {
	obj := validScyllaCluster(name)
	if err := unstructured.SetNestedField(obj.Object, version, "spec", "version"); err != nil {
		panic(err)
	}
	if enabled != nil {
		if err := unstructured.SetNestedField(obj.Object, *enabled, "spec", "enableParallelNodeOperations"); err != nil {
			panic(err)
		}
	}
	return obj
}

// scyllaDBDatacenterWithImage returns a valid ScyllaDBDatacenter named name running the ScyllaDB image.
func scyllaDBDatacenterWithImage(name, image string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(scyllaDBDatacenterManifest), &obj.Object); err != nil {
		panic(fmt.Sprintf("can't decode the ScyllaDBDatacenter manifest: %v", err))
	}
	obj.SetName(name)
	if err := unstructured.SetNestedField(obj.Object, image, "spec", "scyllaDB", "image"); err != nil {
		panic(err)
	}
	return obj
}

// parallelNodeOperations returns obj's spec.enableParallelNodeOperations, nil when unset.
func parallelNodeOperations(t *testing.T, obj *unstructured.Unstructured) *bool {
	t.Helper()
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "enableParallelNodeOperations")
	if err != nil || !found {
		if err != nil {
			t.Fatalf("%s %q: %v", obj.GetKind(), obj.GetName(), err)
		}
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		t.Fatalf("%s %q: spec.enableParallelNodeOperations is %T %v, not a bool", obj.GetKind(), obj.GetName(), v, v)
	}
	return &b
}

// checkStoredParallelNodeOperations checks that the write's answer and the object the API server stored (read back)
// both have spec.enableParallelNodeOperations want (nil: unset).
func checkStoredParallelNodeOperations(t *testing.T, e *env, answer *unstructured.Unstructured, want *bool) {
	t.Helper()
	ri, _, err := e.resource(answer.GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	stored, err := ri.Get(t.Context(), answer.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("can't read %s %q back: %v", answer.GetKind(), answer.GetName(), err)
	}
	for what, obj := range map[string]*unstructured.Unstructured{"the API server's answer": answer, "the stored object": stored} {
		if got := parallelNodeOperations(t, obj); !ptr.Equal(got, want) {
			t.Errorf("%s: spec.enableParallelNodeOperations of %s %q is %s, want %s", what, obj.GetKind(), obj.GetName(), describeBool(got), describeBool(want))
		}
	}
}

// describeBool says what an optional bool holds.
func describeBool(b *bool) string {
	if b == nil {
		return "unset"
	}
	return fmt.Sprint(*b)
}

// checkParallelNodeOperationsDefaulted creates objects through the API server, with the mutating webhook
// configuration as installed: spec.enableParallelNodeOperations becomes true exactly on creates that leave it unset
// at a ScyllaDB version with parallel node operations (a ScyllaCluster's spec.version, a ScyllaDBDatacenter's image
// tag); an update is never defaulted.
func checkParallelNodeOperationsDefaulted(t *testing.T, e *env) {
	t.Helper()
	t.Run("creates", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			obj  *unstructured.Unstructured
			want *bool
		}{
			{name: "a ScyllaCluster of 2026.2 without the field gets true", obj: scyllaClusterAt("parallel-2026-2", "2026.2.1", nil), want: ptr.To(true)},
			{name: "a ScyllaCluster of 2025.1 without the field stays unset", obj: scyllaClusterAt("serial-2025-1", "2025.1.2", nil)},
			{name: "a ScyllaCluster of 2026.2 that says false keeps false", obj: scyllaClusterAt("serial-2026-2", "2026.2.1", ptr.To(false)), want: ptr.To(false)},
			{name: "a ScyllaDBDatacenter tagged 2026.2 gets true", obj: scyllaDBDatacenterWithImage("parallel-tag", "docker.io/scylladb/scylla:2026.2.1"), want: ptr.To(true)},
			{name: "a ScyllaDBDatacenter pinned by digest stays unset", obj: scyllaDBDatacenterWithImage("pinned-digest", pinnedScyllaDBImage)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				created, err := e.create(t.Context(), tc.obj, nil)
				if err != nil {
					t.Fatalf("can't create %s %q: %v", tc.obj.GetKind(), tc.obj.GetName(), err)
				}
				checkStoredParallelNodeOperations(t, e, created, tc.want)
			})
		}
	})

	// Upgrading a cluster to a version with parallel node operations leaves them as they were: the default is the
	// creator's, not a change behind an existing cluster's back.
	t.Run("an update to 2026.2 is not defaulted", func(t *testing.T) {
		sc, err := e.create(t.Context(), scyllaClusterAt("upgraded", "2025.1.2", nil), nil)
		if err != nil {
			t.Fatalf("can't create the ScyllaCluster: %v", err)
		}
		if err := unstructured.SetNestedField(sc.Object, "2026.2.1", "spec", "version"); err != nil {
			t.Fatal(err)
		}
		updated, err := e.scyllaClusters().Update(t.Context(), sc, metav1.UpdateOptions{FieldManager: fieldManager})
		if err != nil {
			t.Fatalf("can't upgrade the ScyllaCluster to 2026.2.1: %v", err)
		}
		checkStoredParallelNodeOperations(t, e, updated, nil)
	})
}
