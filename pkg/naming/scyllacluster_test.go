package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScyllaDBDatacenterNameForScyllaClusterKeepsTheScyllaClusterName(t *testing.T) {
	t.Parallel()

	for _, name := range []string{"basic", "a", strings.Repeat("x", 253)} {
		if got := ScyllaDBDatacenterNameForScyllaCluster(name); got != name {
			t.Errorf("expected %q, got %q", name, got)
		}
	}
}

func TestScyllaDBManagerTaskNamesForScyllaClusterTaskTypesAreValidAndDistinct(t *testing.T) {
	t.Parallel()

	backup := ScyllaDBManagerTaskName("basic", ScyllaDBManagerTaskTypeBackup, "daily")
	repair := ScyllaDBManagerTaskName("basic", ScyllaDBManagerTaskTypeRepair, "daily")
	if backup == repair {
		t.Errorf("expected backup and repair tasks of the same name to get distinct object names, both got %q", backup)
	}
	for _, name := range []string{backup, repair} {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) != 0 {
			t.Errorf("expected %q to be a valid object name: %v", name, errs)
		}
	}
	if !strings.HasPrefix(backup, "basic-backup-daily-") {
		t.Errorf("expected the backup task name to start with %q, got %q", "basic-backup-daily-", backup)
	}
}
