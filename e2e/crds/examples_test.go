//go:build e2e

package crds

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// scyllaGroup is the API group whose objects pkg/crdvalidation defaults.
const scyllaGroup = "scylla.scylladb.com"

// exampleFile is one file of deploy/examples/ with its documents decoded.
type exampleFile struct {
	path      string
	documents [][]byte
	objects   []*unstructured.Unstructured
	// namespaces are the Namespaces the file itself declares.
	namespaces map[string]bool
}

func loadExampleFile(path string) (*exampleFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("can't read example: %w", err)
	}
	expectations, err := crdvalidation.ParseExpectations(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(expectations) != 0 {
		return nil, fmt.Errorf("%s is an example but has %q lines", path, crdvalidation.ExpectPrefix)
	}
	docs, err := crdvalidation.SplitDocuments(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ef := &exampleFile{path: path, documents: docs, namespaces: map[string]bool{}}
	for i, doc := range docs {
		obj, err := decodeDocument(doc)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", path, i, err)
		}
		if obj.GetAPIVersion() == "v1" && obj.GetKind() == "Namespace" {
			ef.namespaces[obj.GetName()] = true
		}
		ef.objects = append(ef.objects, obj)
	}
	return ef, nil
}

// TestExamplesAreAcceptedAndDefaultedLikeTheHarness applies every document of every example the way a user would
// (server-side apply with strict field validation), after a dry-run create. Namespaced objects go into the
// test's namespace, which stands for the namespace a user creates before applying an example ("scylla"), unless
// the example declares their namespace itself; cluster-scoped objects and declared namespaces are deleted after
// the test. The API server must send no warnings, and for the scylla.scylladb.com kinds the stored spec must equal
// the one pkg/crdvalidation defaults.
func TestExamplesAreAcceptedAndDefaultedLikeTheHarness(t *testing.T) {
	t.Parallel()
	parent := framework.NewFramework(t)
	harness := newHarness(t)

	paths, err := framework.ManifestFiles(repoPath(t, "deploy", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatal("deploy/examples/ has no *.yaml files")
	}
	var files []*exampleFile
	for _, path := range paths {
		ef, err := loadExampleFile(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, ef)
	}
	checkNoSharedClusterScopedObjects(t, parent.Clients(), files)

	for _, ef := range files {
		t.Run(filepath.Base(ef.path), func(t *testing.T) {
			t.Parallel()
			f := framework.NewFramework(t)
			ctx := t.Context()
			dyn, warnings, err := framework.NewWarningRecordingDynamicClient(f.Clients().Config)
			if err != nil {
				t.Fatal(err)
			}

			for i, doc := range ef.documents {
				obj := ef.objects[i].DeepCopy()
				namespace := f.Namespace()
				if ef.namespaces[obj.GetNamespace()] {
					namespace = ""
				}
				tg, err := targetFor(f.Clients(), dyn, obj, namespace)
				if err != nil {
					t.Fatalf("%s document %d: %v", ef.path, i, err)
				}
				what := fmt.Sprintf("%s document %d (%s)", ef.path, i, tg.describe)

				if _, err := strictDryRunCreate(ctx, tg, obj); err != nil {
					t.Fatalf("%s: the API server rejected a dry-run create:\n%s", what, describeError(err))
				}
				stored, err := strictApply(ctx, tg, obj)
				if err != nil {
					t.Fatalf("%s: the API server rejected a server-side apply:\n%s", what, describeError(err))
				}
				if !tg.namespaced {
					deleteAfterTest(t, tg, obj.GetName())
				}
				if w := warnings.Take(); len(w) != 0 {
					t.Errorf("%s: the API server sent warnings:\n%q", what, w)
				}

				if obj.GroupVersionKind().Group != scyllaGroup {
					continue
				}
				defaulted, errs := harness.ValidateCreate(ctx, doc)
				if len(errs) != 0 {
					t.Errorf("%s: the API server accepted it, but pkg/crdvalidation rejects it: %v", what, errs.ToAggregate())
					continue
				}
				checkSpecMatchesHarness(t, what, stored, defaulted)
			}
		})
	}
}

// checkNoSharedClusterScopedObjects fails the test when two examples declare the same cluster-scoped object (a
// Namespace, a RemoteKubernetesCluster): the examples run in parallel and each deletes what it created.
func checkNoSharedClusterScopedObjects(t *testing.T, clients *framework.Clients, files []*exampleFile) {
	t.Helper()
	declaredBy := map[string]string{}
	for _, ef := range files {
		for _, obj := range ef.objects {
			namespaced, err := isNamespaced(clients, obj)
			if err != nil {
				t.Fatalf("%s: %v", ef.path, err)
			}
			if namespaced {
				continue
			}
			key := obj.GroupVersionKind().GroupKind().String() + "/" + obj.GetName()
			if other, ok := declaredBy[key]; ok {
				t.Fatalf("%s and %s both declare the cluster-scoped %s %q; give one another name", other, ef.path, obj.GetKind(), obj.GetName())
			}
			declaredBy[key] = ef.path
		}
	}
}

// strictApply server-side applies obj as this suite's field manager with strict field validation, so that an
// unknown field fails the request instead of being dropped with a warning.
func strictApply(ctx context.Context, tg *target, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	data, err := obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("can't encode %s: %w", tg.describe, err)
	}
	force := true
	return tg.resource.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{
		FieldManager:    fieldManager,
		Force:           &force,
		FieldValidation: metav1.FieldValidationStrict,
	})
}

// deleteAfterTest deletes a cluster-scoped object when the test ends; the test's namespace takes the rest.
func deleteAfterTest(t *testing.T, tg *target, name string) {
	t.Cleanup(func() {
		// t.Context is already cancelled during cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := tg.resource.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("can't delete %s: %v", tg.describe, err)
		}
	})
}
