package controllerhelpers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
)

func TestSameController(t *testing.T) {
	t.Parallel()

	ref := func(apiVersion, kind, uid string) *metav1.OwnerReference {
		return &metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: "basic", UID: k8stypes.UID("uid-" + uid)}
	}

	tt := []struct {
		name string
		a, b *metav1.OwnerReference
		want bool
	}{
		{name: "same", a: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), b: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), want: true},
		{name: "other version", a: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), b: ref("scylla.scylladb.com/v1alpha1", "ScyllaCluster", "1"), want: true},
		{name: "other UID", a: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), b: ref("scylla.scylladb.com/v1", "ScyllaCluster", "2")},
		{name: "other kind", a: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), b: ref("scylla.scylladb.com/v1", "ScyllaDBDatacenter", "1")},
		{name: "other group", a: ref("scylla.scylladb.com/v1", "ScyllaCluster", "1"), b: ref("example.com/v1", "ScyllaCluster", "1")},
		{name: "core group", a: ref("v1", "ConfigMap", "1"), b: ref("v1", "ConfigMap", "1"), want: true},
		{name: "unparsable apiVersions", a: ref("a/b/c", "ConfigMap", "1"), b: ref("a/b/d", "ConfigMap", "1")},
		{name: "nil", a: nil, b: ref("v1", "ConfigMap", "1")},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			if got := SameController(tc.a, tc.b); got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
			if got := SameController(tc.b, tc.a); got != tc.want {
				t.Errorf("expected %v with the arguments swapped, got %v", tc.want, got)
			}
		})
	}
}
