package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScyllaDBManagedConfigKeyIsAValidKeyForEveryRackName(t *testing.T) {
	t.Parallel()
	for _, rack := range []string{"a", "us-east-1a", strings.Repeat("r", 63)} {
		key := ScyllaDBManagedConfigKey(rack)
		if errs := validation.IsConfigMapKey(key); len(errs) != 0 {
			t.Errorf("key %q of rack %q is invalid: %v", key, rack, errs)
		}
		if other := ScyllaDBManagedConfigKey(rack + "x"); other == key {
			t.Errorf("racks %q and %q share key %q", rack, rack+"x", key)
		}
	}
}

func TestMemberRoleBindingIsNamedLikeItsServiceAccount(t *testing.T) {
	t.Parallel()
	for _, sdc := range []string{"basic", strings.Repeat("s", 253)} {
		if got, want := MemberRoleBindingName(sdc), MemberServiceAccountName(sdc); got != want {
			t.Errorf("RoleBinding %q, ServiceAccount %q", got, want)
		}
		if errs := validation.IsDNS1123Subdomain(MemberRoleBindingName(sdc)); len(errs) != 0 {
			t.Errorf("invalid name for %q: %v", sdc, errs)
		}
	}
}

func TestManagedObjectsSelectorSelectsEveryDatacenterObject(t *testing.T) {
	t.Parallel()
	selector := ManagedObjectsSelector()
	for _, set := range []map[string]string{ClusterLabels("basic"), NodePodLabels("basic"), RackLabels("basic", "dc1", "a")} {
		if !selector.Matches(labels.Set(set)) {
			t.Errorf("%q does not select %v", selector, set)
		}
	}
	if selector.Matches(labels.Set{ClusterNameLabel: "basic"}) {
		t.Errorf("%q selects objects the operator does not manage", selector)
	}
}
