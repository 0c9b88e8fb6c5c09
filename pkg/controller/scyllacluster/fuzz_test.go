package scyllacluster

import (
	"encoding/json"
	"strings"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/pkg/validation"
)

// FuzzTranslateScyllaCluster decodes JSON into a ScyllaCluster and translates it. Translating never panics, and a
// ScyllaCluster validation accepts translates into a ScyllaDBDatacenter and ScyllaDBManagerTasks validation accepts
// too: otherwise the admission webhook would let in ScyllaClusters the operator can't run. The same holds for the
// datacenter and the other tasks of a ScyllaCluster whose only errors are inside some backups or repairs, which the
// sync keeps applying; those tasks are not translated, and their error names the task.
func FuzzTranslateScyllaCluster(f *testing.F) {
	for _, sc := range []*scyllav1.ScyllaCluster{newBasicScyllaCluster(), newScyllaClusterWithTasks()} {
		data, err := json.Marshal(sc)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := newScyllaClusterWithTasks()
		if err := json.Unmarshal(data, sc); err != nil {
			return
		}
		sdc, sdcErr := makeScyllaDBDatacenter(sc)
		invalidTasks, specErrs := splitTaskErrors(sc, validation.ValidateScyllaCluster(sc))
		tasks := makeScyllaDBManagerTasks(sc, invalidTasks)
		if len(specErrs) != 0 {
			return
		}
		if sdcErr != nil {
			t.Fatalf("a valid ScyllaCluster can't be translated: %v", sdcErr)
		}
		if errs := validation.ValidateScyllaDBDatacenter(sdc); len(errs) != 0 {
			t.Fatalf("a valid ScyllaCluster translates into an invalid ScyllaDBDatacenter: %v", errs.ToAggregate())
		}
		for _, task := range tasks {
			if len(invalidTasks[task.entry]) != 0 {
				if task.err == nil || task.task != nil || !strings.Contains(task.err.Error(), task.entry) {
					t.Fatalf("the invalid task %s was translated or its error does not name it: %v", task.entry, task.err)
				}
				continue
			}
			if task.err != nil {
				t.Fatalf("a valid ScyllaCluster's task %q can't be translated: %v", task.name, task.err)
			}
			if errs := validation.ValidateScyllaDBManagerTask(task.task); len(errs) != 0 {
				t.Fatalf("a valid ScyllaCluster translates into an invalid ScyllaDBManagerTask %q: %v", task.name, errs.ToAggregate())
			}
		}
	})
}
