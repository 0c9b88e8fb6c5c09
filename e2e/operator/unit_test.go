package operator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// inventoryFixture is a rolled-out ScyllaCluster of one rack with two nodes and, as ownedObjects, exactly what
// should be in its namespace.
func inventoryFixture() (*scyllav1.ScyllaCluster, []ownedObject) {
	sc := &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "basic", UID: "sc-uid"},
		Spec: scyllav1.ScyllaClusterSpec{Datacenter: scyllav1.DatacenterSpec{
			Name:  "dc",
			Racks: []scyllav1.RackSpec{{Name: "a", Members: 2}},
		}},
	}
	ref := func(kind, name string, uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{Kind: kind, Name: name, UID: uid, Controller: ptr.To(true)}}
	}
	bySDC := ref("ScyllaDBDatacenter", "basic", "sdc-uid")
	bySts := ref("StatefulSet", "basic-dc-a", "sts-uid")
	return sc, []ownedObject{
		{kind: kindScyllaDBDatacenter, name: "basic", uid: "sdc-uid", owners: ref("ScyllaCluster", "basic", "sc-uid")},
		{kind: kindStatefulSet, name: "basic-dc-a", uid: "sts-uid", owners: bySDC},
		{kind: kindService, name: "basic-client", owners: bySDC},
		{kind: kindService, name: "basic-dc-a-0", owners: bySDC},
		{kind: kindService, name: "basic-dc-a-1", owners: bySDC},
		{kind: kindPodDisruptionBudget, name: "basic", owners: bySDC},
		{kind: kindServiceAccount, name: "basic-member", owners: bySDC},
		{kind: kindRoleBinding, name: "basic-member", owners: bySDC},
		{kind: kindConfigMap, name: "basic-managed-config", owners: bySDC},
		{kind: kindSecret, name: "basic-auth-token", owners: bySDC},
		{kind: kindPod, name: "basic-dc-a-0", owners: bySts},
		{kind: kindPod, name: "basic-dc-a-1", owners: bySts},
		{kind: kindPersistentVolumeClaim, name: "data-basic-dc-a-0"},
		{kind: kindPersistentVolumeClaim, name: "data-basic-dc-a-1"},
		// Automatic TLS.
		{kind: kindConfigMap, name: "basic-local-serving-ca", owners: bySDC},
		{kind: kindConfigMap, name: "basic-local-client-ca", owners: bySDC},
		{kind: kindSecret, name: "basic-local-serving-ca", owners: bySDC},
		{kind: kindSecret, name: "basic-local-serving-certs", owners: bySDC},
		{kind: kindSecret, name: "basic-local-client-ca", owners: bySDC},
		{kind: kindSecret, name: "basic-local-user-admin", owners: bySDC},
		{kind: kindSecret, name: "basic-local-cql-connection-configs-admin", owners: bySDC},
	}
}

func TestInventoryProblems(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// mutate changes the fixture's objects; it returns them.
		mutate func([]ownedObject) []ownedObject
		// want holds a substring of each expected problem, in order.
		want []string
	}{
		{
			name:   "exactly the expected objects with live controllers",
			mutate: func(objs []ownedObject) []ownedObject { return objs },
		},
		{
			name: "a duplicate Service of another name",
			mutate: func(objs []ownedObject) []ownedObject {
				return append(objs, ownedObject{kind: kindService, name: "basic-dc-a-0-copy", owners: objs[2].owners})
			},
			want: []string{`"basic-dc-a-0-copy"`},
		},
		{
			name: "a missing StatefulSet orphans its pods",
			mutate: func(objs []ownedObject) []ownedObject {
				return slices.DeleteFunc(objs, func(o ownedObject) bool { return o.kind == kindStatefulSet })
			},
			want: []string{"objects differ", `Pod "basic-dc-a-0" has an owner reference to StatefulSet "basic-dc-a"`, `Pod "basic-dc-a-1" has an owner reference`},
		},
		{
			name: "an owner of the right name with another UID",
			mutate: func(objs []ownedObject) []ownedObject {
				objs[1].owners = []metav1.OwnerReference{{Kind: "ScyllaDBDatacenter", Name: "basic", UID: "old-uid", Controller: ptr.To(true)}}
				return objs
			},
			want: []string{`StatefulSet "basic-dc-a" has an owner reference to ScyllaDBDatacenter "basic" (UID old-uid)`},
		},
		{
			name: "two controllerRefs",
			mutate: func(objs []ownedObject) []ownedObject {
				objs[3].owners = append(slices.Clone(objs[3].owners), metav1.OwnerReference{Kind: "ScyllaCluster", Name: "basic", UID: "sc-uid", Controller: ptr.To(true)})
				return objs
			},
			want: []string{`Service "basic-dc-a-0" has owner references`},
		},
		{
			name: "no controllerRef",
			mutate: func(objs []ownedObject) []ownedObject {
				objs[9].owners = nil
				return objs
			},
			want: []string{`Secret "basic-auth-token" has owner references [], want exactly one, a controllerRef to a ScyllaDBDatacenter`},
		},
		{
			name: "controlled by the wrong kind",
			mutate: func(objs []ownedObject) []ownedObject {
				objs[5].owners = []metav1.OwnerReference{{Kind: "ScyllaCluster", Name: "basic", UID: "sc-uid", Controller: ptr.To(true)}}
				return objs
			},
			want: []string{`PodDisruptionBudget "basic" is controlled by ScyllaCluster "basic", want a ScyllaDBDatacenter`},
		},
		{
			name: "a data claim with an owner",
			mutate: func(objs []ownedObject) []ownedObject {
				objs[12].owners = objs[10].owners
				return objs
			},
			want: []string{`PersistentVolumeClaim "data-basic-dc-a-0" has owner references`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, objs := inventoryFixture()
			got := inventoryProblems(sc, tc.mutate(objs))
			if len(got) != len(tc.want) {
				t.Fatalf("got %d problems, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, want := range tc.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %d is %q, want it to contain %q", i, got[i], want)
				}
			}
		})
	}
}

func TestCountLinesContaining(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "operator.log")
	head := "I1 \"Finished syncing\" key=\"ns/other\"\n"
	body := "I2 \"Finished syncing\" key=\"ns/basic\"\nI3 \"Started syncing\" key=\"ns/basic\"\nI4 \"Finished syncing\" key=\"ns/basic\"\n"
	// The last line is still being written: it has no newline yet.
	partial := "I5 \"Finished syncing\" key=\"ns/basic\""
	if err := os.WriteFile(path, []byte(head+body+partial), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		offset     int64
		substrings []string
		want       int
	}{
		{name: "whole file", substrings: []string{`"Finished syncing"`}, want: 3},
		{name: "every substring must match", substrings: []string{`"Finished syncing"`, `key="ns/basic"`}, want: 2},
		{name: "from an offset", offset: int64(len(head)), substrings: []string{`"Finished syncing"`}, want: 2},
		{name: "no substring matches every line", substrings: nil, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := countLinesContaining(path, tc.offset, tc.substrings...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("count differs (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := countLinesContaining(filepath.Join(t.TempDir(), "missing.log"), 0); err == nil {
		t.Error("counting lines of a missing file succeeded, want an error")
	}
}
