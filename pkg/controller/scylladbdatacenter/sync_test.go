package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
)

// basicCreates are the writes of the first sync of newBasicSDC, in order.
var basicCreates = []string{
	"create serviceaccounts basic-member",
	"create rolebindings basic-member",
	"create configmaps basic-managed-config",
	"create secrets basic-auth-token",
	"create services basic-client",
	"create services basic-dc1-a-0",
	"create services basic-dc1-a-1",
	"create services basic-dc1-a-2",
	"create services basic-dc1-b-0",
	"create services basic-dc1-b-1",
	"create services basic-dc1-b-2",
	"create statefulsets basic-dc1-a",
	"create statefulsets basic-dc1-b",
	"create poddisruptionbudgets basic",
	"update scylladbdatacenters/status basic",
}

// convergedWorld returns the world after newBasicSDC's first sync.
func convergedWorld(t *testing.T) world {
	t.Helper()
	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	return f.world()
}

func TestSyncCreatesEverythingThenWritesNothing(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff(basicCreates, f.writes()); diff != "" {
		t.Errorf("unexpected writes of the first sync (-want +got):\n%s", diff)
	}

	second := newFixture(t, f.world())
	if err := second.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string(nil), second.writes()); diff != "" {
		t.Errorf("the second sync wrote (-want +got):\n%s", diff)
	}
	if events := second.events(); len(events) != 0 {
		t.Errorf("the second sync recorded events: %q", events)
	}
}

func TestSyncIgnoresMissingAndDeletedDatacenters(t *testing.T) {
	t.Parallel()

	deleting := newBasicSDC()
	deleting.DeletionTimestamp = new(testNow)
	f := newFixture(t, world{sdc: deleting})
	if err := f.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("a datacenter being deleted got writes (-want +got):\n%s", diff)
	}

	if err := f.controller.sync(t.Context(), testNamespace+"/gone"); err != nil {
		t.Fatalf("unexpected error for a missing datacenter: %v", err)
	}
	if err := f.controller.sync(t.Context(), "a/b/c"); err != nil {
		t.Fatalf("unexpected error for an invalid key: %v", err)
	}
}

var _ = runtime.Object(&scyllav1alpha1.ScyllaDBDatacenter{})
