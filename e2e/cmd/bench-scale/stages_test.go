package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The benchmark's stages are the project's, every one kept, plus one that makes a Running ScyllaDB pod Ready
// readyAfter later.
func TestWriteBenchStagesAddsTheReadyStage(t *testing.T) {
	t.Parallel()
	_, file, _, _ := runtime.Caller(0)
	from := filepath.Join(filepath.Dir(file), "..", "..", "..", "hack", "kwok", "stages.yaml")
	to := filepath.Join(t.TempDir(), "stages.yaml")
	if err := writeBenchStages(from, to); err != nil {
		t.Fatal(err)
	}
	original, err := framework.DecodeManifestFile(from)
	if err != nil {
		t.Fatal(err)
	}
	written, err := framework.DecodeManifestFile(to)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(written), len(original)+1; got != want {
		t.Fatalf("%d stages written, want %d", got, want)
	}
	for i := range original {
		if written[i].GetName() != original[i].GetName() {
			t.Errorf("stage %d is %q, want %q", i, written[i].GetName(), original[i].GetName())
		}
	}
	ready := written[len(written)-1]
	if got := ready.GetName(); got != "bench-scylladb-pod-ready" {
		t.Fatalf("last stage is %q", got)
	}
	if got, _, _ := unstructured.NestedString(ready.Object, "spec", "selector", "matchLabels", naming.PodTypeLabel); got != naming.PodTypeScyllaDBNode {
		t.Errorf("the ready stage selects %s=%q", naming.PodTypeLabel, got)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(ready.Object, "spec", "delay", "durationMilliseconds"); fmt.Sprint(got) != fmt.Sprint(readyAfter.Milliseconds()) {
		t.Errorf("the ready stage waits %vms, want %dms", got, readyAfter.Milliseconds())
	}
}

// Stages without the one that runs ScyllaDB pods unready can't make them Ready.
func TestWriteBenchStagesNeedsTheScyllaDBPodRunningStage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	from := filepath.Join(dir, "in.yaml")
	if err := os.WriteFile(from, []byte("apiVersion: kwok.x-k8s.io/v1alpha1\nkind: Stage\nmetadata:\n  name: pod-running\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeBenchStages(from, filepath.Join(dir, "out.yaml")); err == nil {
		t.Error("no error without a scylladb-pod-running stage")
	}
}
