//go:build e2e

package crds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/crdvalidation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// fieldManager names this suite's writes.
const fieldManager = "e2e-crds"

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "crds", InstallCRDs: true}))
}

// harnessValidator is pkg/crdvalidation's validator for deploy/crds/, built once: compiling the CEL rules takes a
// few seconds.
var harnessValidator = sync.OnceValues(func() (*crdvalidation.Validator, error) {
	root, err := framework.RepoRoot()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, scyllav1.AddToScheme, scyllav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return crdvalidation.NewValidatorFromDir(context.Background(), scheme, filepath.Join(root, "deploy", "crds"))
})

func newHarness(t *testing.T) *crdvalidation.Validator {
	t.Helper()
	v, err := harnessValidator()
	if err != nil {
		t.Fatalf("can't create the pkg/crdvalidation validator: %v", err)
	}
	return v
}

// repoPath joins path elements to the repository root.
func repoPath(t *testing.T, elem ...string) string {
	t.Helper()
	return filepath.Join(append([]string{framework.CurrentSuite(t).RepoRoot}, elem...)...)
}

// decodeDocument parses one YAML document into the object a client would send, failing on duplicate keys. Numbers
// stay int64 where they are whole, as the API server decodes them.
func decodeDocument(doc []byte) (*unstructured.Unstructured, error) {
	data, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, fmt.Errorf("can't parse YAML: %w", err)
	}
	content := map[string]interface{}{}
	if err := utiljson.Unmarshal(data, &content); err != nil {
		return nil, fmt.Errorf("can't parse the document as a JSON object: %w", err)
	}
	obj := &unstructured.Unstructured{Object: content}
	if obj.GetAPIVersion() == "" || obj.GetKind() == "" {
		return nil, fmt.Errorf("the document has no apiVersion or kind")
	}
	return obj, nil
}

// target is where requests for one object go.
type target struct {
	resource dynamic.ResourceInterface
	// namespaced tells whether the object's kind is namespaced.
	namespaced bool
	// describe names the object in messages, e.g. `ScyllaCluster "basic" in namespace e2e-x`.
	describe string
}

// restMapping maps obj's kind to its resource, refreshing the discovery cache once if the kind is unknown.
func restMapping(clients *framework.Clients, obj *unstructured.Unstructured) (*meta.RESTMapping, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		clients.Mapper.Reset()
		mapping, err = clients.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, fmt.Errorf("can't map kind %s: %w", gvk, err)
	}
	return mapping, nil
}

// isNamespaced tells whether obj's kind is namespaced.
func isNamespaced(clients *framework.Clients, obj *unstructured.Unstructured) (bool, error) {
	mapping, err := restMapping(clients, obj)
	if err != nil {
		return false, err
	}
	return mapping.Scope.Name() == meta.RESTScopeNameNamespace, nil
}

// targetFor maps obj's kind to its resource. A namespaced object is put into namespace (its own namespace is
// replaced) unless namespace is empty, in which case it keeps the one it names.
func targetFor(clients *framework.Clients, dyn dynamic.Interface, obj *unstructured.Unstructured, namespace string) (*target, error) {
	mapping, err := restMapping(clients, obj)
	if err != nil {
		return nil, err
	}
	kind := obj.GetKind()
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return &target{resource: dyn.Resource(mapping.Resource), describe: fmt.Sprintf("%s %q", kind, obj.GetName())}, nil
	}
	if namespace != "" {
		obj.SetNamespace(namespace)
	}
	if obj.GetNamespace() == "" {
		return nil, fmt.Errorf("%s %q is namespaced but names no namespace", kind, obj.GetName())
	}
	return &target{
		resource:   dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace()),
		namespaced: true,
		describe:   fmt.Sprintf("%s %q in namespace %s", kind, obj.GetName(), obj.GetNamespace()),
	}, nil
}

// strictDryRunCreate sends obj as a dry-run create with strict field validation: the API server decodes, defaults
// and validates it exactly as for a real create, and stores nothing.
func strictDryRunCreate(ctx context.Context, tg *target, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return tg.resource.Create(ctx, obj, metav1.CreateOptions{
		DryRun:          []string{metav1.DryRunAll},
		FieldManager:    fieldManager,
		FieldValidation: metav1.FieldValidationStrict,
	})
}

// describeError renders an API error with its causes, one per line, for failure messages.
func describeError(err error) string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return err.Error()
	}
	s := status.Status()
	var b strings.Builder
	fmt.Fprintf(&b, "%s (reason %s, code %d)", s.Message, s.Reason, s.Code)
	if s.Details != nil {
		for _, c := range s.Details.Causes {
			fmt.Fprintf(&b, "\n  %s: %s", c.Field, c.Message)
		}
	}
	return b.String()
}

// normalizeJSON round-trips a value through JSON so that numbers and nested maps compare equal whatever decoded
// them.
func normalizeJSON(t *testing.T, v interface{}) interface{} {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("can't encode %v: %v", v, err)
	}
	var out interface{}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("can't decode %s: %v", data, err)
	}
	return out
}

// checkSpecMatchesHarness compares the spec the API server stored with the spec pkg/crdvalidation defaulted for
// the same manifest: their defaulting must agree.
func checkSpecMatchesHarness(t *testing.T, what string, stored, harness *unstructured.Unstructured) {
	t.Helper()
	if diff := cmp.Diff(normalizeJSON(t, stored.Object["spec"]), normalizeJSON(t, harness.Object["spec"])); diff != "" {
		t.Errorf("%s: the spec the API server stored differs from the one pkg/crdvalidation defaulted (-apiserver +crdvalidation):\n%s", what, diff)
	}
}
