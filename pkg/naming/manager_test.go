package naming

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestScyllaDBManagerClusterIDIsAStableUUIDPerKindAndUID(t *testing.T) {
	t.Parallel()

	uid := types.UID("0d9c5f2e-7a7b-4a39-9d0e-5c1f1a2b3c4d")
	id := ScyllaDBManagerClusterID("ScyllaDBDatacenter", uid)
	if id != ScyllaDBManagerClusterID("ScyllaDBDatacenter", uid) {
		t.Errorf("the ID of one object changed between calls")
	}
	if len(id) != 36 || id[14] != '5' {
		t.Errorf("expected a version 5 UUID, got %q", id)
	}
	for _, other := range []string{
		ScyllaDBManagerClusterID("ScyllaDBCluster", uid),
		ScyllaDBManagerClusterID("ScyllaDBDatacenter", types.UID("1d9c5f2e-7a7b-4a39-9d0e-5c1f1a2b3c4d")),
	} {
		if other == id {
			t.Errorf("two objects got the same ID %q", id)
		}
	}
	// The value is part of the contract: a changed derivation would register every cluster anew.
	if want := "3a3ecfeb-afc8-55e6-8e13-17e2a28789c2"; id != want {
		t.Errorf("expected %q, got %q", want, id)
	}
}

func TestScyllaDBManagerClusterNameForObjectNeverEqualsAScyllaClusterName(t *testing.T) {
	t.Parallel()

	if got, want := ScyllaDBManagerClusterNameForObject("ns", "ScyllaDBDatacenter", "dc"), "ns/ScyllaDBDatacenter/dc"; got != want {
		t.Errorf("expected %q, got %q", want, got)
	}
	if ScyllaDBManagerClusterNameForObject("ns", "ScyllaDBDatacenter", "dc") == ScyllaDBManagerClusterName("ns", "dc") {
		t.Errorf("a standalone ScyllaDBDatacenter and a ScyllaCluster of the same name got one Manager name")
	}
}
