//go:build e2e

package crds

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// testdataDir is pkg/crdvalidation's directory of cases.
var testdataDir = []string{"pkg", "crdvalidation", "testdata"}

// loadCases loads the cases of a testdata subdirectory and checks their shape: the number of documents, and
// expectations exactly when the case must be rejected.
func loadCases(t *testing.T, rejected bool, minDocs, maxDocs int, subdir ...string) (string, []crdvalidation.Case) {
	t.Helper()
	dir := repoPath(t, append(append([]string(nil), testdataDir...), subdir...)...)
	cases, err := crdvalidation.LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		path := filepath.Join(dir, c.Name+".yaml")
		if n := len(c.Documents); n < minDocs || n > maxDocs {
			t.Fatalf("%s: want %d to %d documents, got %d", path, minDocs, maxDocs, n)
		}
		if rejected != (len(c.Expectations) != 0) {
			t.Fatalf("%s: a case in %s must have %q lines exactly when it is rejected", path, dir, crdvalidation.ExpectPrefix)
		}
	}
	return dir, cases
}

// checkRejection asserts that the API server rejected a request with exactly the expected causes, and with the
// same causes pkg/crdvalidation gives for it.
func checkRejection(t *testing.T, what string, err error, expectations []crdvalidation.Expectation, harnessErrs field.ErrorList) {
	t.Helper()
	var want []string
	for _, e := range expectations {
		want = append(want, "  "+e.String())
	}
	rejection, rerr := RejectionOf(err)
	if rerr != nil {
		t.Fatalf("%s: %v\nwant a rejection with:\n%s\npkg/crdvalidation gives:\n%s", what, rerr, strings.Join(want, "\n"), formatFieldErrors(harnessErrs))
	}
	if problems := rejection.Unmet(expectations); len(problems) != 0 {
		t.Errorf("%s: the API server's causes differ from the expected ones:\n  %s\nwant:\n%s\ngot:\n%s", what, strings.Join(problems, "\n  "), strings.Join(want, "\n"), rejection)
	}
	if diff := rejection.DiffWithHarness(harnessErrs); diff != "" {
		t.Errorf("%s: the API server and pkg/crdvalidation disagree (-apiserver +crdvalidation):\n%s", what, diff)
	}
}

func formatFieldErrors(errs field.ErrorList) string {
	if len(errs) == 0 {
		return "  (no errors: it accepts the manifest)"
	}
	var lines []string
	for _, err := range errs {
		lines = append(lines, "  "+err.Error())
	}
	return strings.Join(lines, "\n")
}

// caseObject decodes a document of a case for the test's namespace.
func caseObject(t *testing.T, f *framework.Framework, what string, doc []byte) (*unstructured.Unstructured, *target) {
	t.Helper()
	obj, err := decodeDocument(doc)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	tg, err := targetFor(f.Clients(), f.Clients().Dynamic, obj, f.Namespace())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return obj, tg
}

// runCases runs every case as a parallel subtest with the case file's path. f is the framework of the cases'
// shared namespace, or nil for a namespace per case.
func runCases(t *testing.T, f *framework.Framework, dir string, cases []crdvalidation.Case, run func(t *testing.T, f *framework.Framework, path string, c crdvalidation.Case)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			caseFramework := f
			if caseFramework == nil {
				caseFramework = framework.NewFramework(t)
			}
			run(t, caseFramework, filepath.Join(dir, c.Name+".yaml"), c)
		})
	}
}

// createObject creates the object of doc in the test's namespace for real.
func createObject(t *testing.T, f *framework.Framework, path string, doc []byte) (*target, *unstructured.Unstructured) {
	t.Helper()
	obj, tg := caseObject(t, f, path, doc)
	stored, err := tg.resource.Create(t.Context(), obj, metav1.CreateOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict})
	if err != nil {
		t.Fatalf("%s: can't create %s:\n%s", path, tg.describe, describeError(err))
	}
	return tg, stored
}

// updateObject replaces the stored object with the one of doc.
func updateObject(t *testing.T, f *framework.Framework, path string, doc []byte, tg *target, stored *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	t.Helper()
	updated, _ := caseObject(t, f, path, doc)
	updated.SetResourceVersion(stored.GetResourceVersion())
	return tg.resource.Update(t.Context(), updated, metav1.UpdateOptions{FieldManager: fieldManager, FieldValidation: metav1.FieldValidationStrict})
}

// TestInvalidManifestsAreRejected sends every manifest of testdata/invalid/ as a dry-run create: nothing is
// stored, so the cases share one namespace.
func TestInvalidManifestsAreRejected(t *testing.T) {
	t.Parallel()
	harness := newHarness(t)
	dir, cases := loadCases(t, true, 1, 1, "invalid")

	runCases(t, framework.NewFramework(t), dir, cases, func(t *testing.T, f *framework.Framework, path string, c crdvalidation.Case) {
		obj, tg := caseObject(t, f, path, c.Documents[0])
		_, err := strictDryRunCreate(t.Context(), tg, obj)
		_, harnessErrs := harness.ValidateCreate(t.Context(), c.Documents[0])
		checkRejection(t, fmt.Sprintf("%s (%s)", path, tg.describe), err, c.Expectations, harnessErrs)
	})
}

// TestInvalidUpdatesAreRejected creates the first object of every case of testdata/update/invalid/ and updates it
// to the second, which the API server must reject; each case has its own namespace.
func TestInvalidUpdatesAreRejected(t *testing.T) {
	t.Parallel()
	harness := newHarness(t)
	dir, cases := loadCases(t, true, 2, 2, "update", "invalid")

	runCases(t, nil, dir, cases, func(t *testing.T, f *framework.Framework, path string, c crdvalidation.Case) {
		// Each object must be valid on its own, or the case doesn't test an update rule.
		for i, doc := range c.Documents {
			obj, tg := caseObject(t, f, path, doc)
			if _, err := strictDryRunCreate(t.Context(), tg, obj); err != nil {
				t.Fatalf("%s: document %d is rejected on its own, so the case doesn't test an update rule:\n%s", path, i, describeError(err))
			}
		}
		tg, stored := createObject(t, f, path, c.Documents[0])
		_, err := updateObject(t, f, path, c.Documents[1], tg, stored)
		_, harnessErrs := harness.ValidateUpdate(t.Context(), c.Documents[0], c.Documents[1])
		checkRejection(t, fmt.Sprintf("%s (update of %s)", path, tg.describe), err, c.Expectations, harnessErrs)
	})
}

// TestValidUpdatesAreAccepted creates the first object of every case of testdata/update/valid/ and updates it to
// each following one in turn; every update must be accepted and stored with the spec pkg/crdvalidation defaults.
func TestValidUpdatesAreAccepted(t *testing.T) {
	t.Parallel()
	harness := newHarness(t)
	dir, cases := loadCases(t, false, 2, 100, "update", "valid")

	runCases(t, nil, dir, cases, func(t *testing.T, f *framework.Framework, path string, c crdvalidation.Case) {
		tg, stored := createObject(t, f, path, c.Documents[0])
		for i := 1; i < len(c.Documents); i++ {
			what := fmt.Sprintf("%s: update %d -> %d of %s", path, i-1, i, tg.describe)
			var err error
			stored, err = updateObject(t, f, path, c.Documents[i], tg, stored)
			harnessObj, harnessErrs := harness.ValidateUpdate(t.Context(), c.Documents[i-1], c.Documents[i])
			if err != nil {
				t.Fatalf("%s: the API server rejected it:\n%s\npkg/crdvalidation gives:\n%s", what, describeError(err), formatFieldErrors(harnessErrs))
			}
			if len(harnessErrs) != 0 {
				t.Fatalf("%s: the API server accepted it, but pkg/crdvalidation rejects it:\n%s", what, formatFieldErrors(harnessErrs))
			}
			checkSpecMatchesHarness(t, what, stored, harnessObj)
		}
	})
}
