package validation

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/client/scylla/clientset/versioned/scheme"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// examplesDir holds the manifests users start from; every one of them must pass validation.
const examplesDir = "../../deploy/examples"

// example is one object of the API group decoded from a manifest in examplesDir.
type example struct {
	name string
	obj  runtime.Object
}

// loadExamples decodes every document of every manifest in examplesDir, keeping the objects of the
// scylla.scylladb.com group (the others, such as Secrets, are not validated here). Decoding is strict: an unknown
// field in an example fails the test.
func loadExamples(t testing.TB) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatalf("no manifests in %s", examplesDir)
	}
	var examples []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		reader := utilyaml.NewYAMLReader(bufioReader(data))
		for i := 0; ; i++ {
			doc, err := reader.Read()
			if err != nil {
				break
			}
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var tm metav1.TypeMeta
			if err := yaml.Unmarshal(doc, &tm); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			gvk := tm.GroupVersionKind()
			if gvk.Group != scyllav1.GroupName {
				continue
			}
			obj, err := scheme.Scheme.New(gvk)
			if err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				t.Fatalf("%s document %d: %v", f, i, err)
			}
			examples = append(examples, example{name: fmt.Sprintf("%s#%d %s", filepath.Base(f), i, gvk.Kind), obj: obj})
		}
	}
	return examples
}

// validateObject runs the static validation of obj's kind, or fails when there is none.
func validateObject(t testing.TB, obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *scyllav1.ScyllaCluster:
		return ValidateScyllaCluster(o)
	case *scyllav1alpha1.ScyllaDBDatacenter:
		return ValidateScyllaDBDatacenter(o)
	case *scyllav1alpha1.ScyllaDBCluster:
		return ValidateScyllaDBCluster(o)
	case *scyllav1alpha1.ScyllaDBManagerTask:
		return ValidateScyllaDBManagerTask(o)
	case *scyllav1alpha1.RemoteKubernetesCluster:
		return ValidateRemoteKubernetesCluster(o)
	case *scyllav1alpha1.ScyllaDBBackupBucket:
		return ValidateScyllaDBBackupBucket(o)
	case *scyllav1alpha1.ScyllaDBBackupEntry:
		return ValidateScyllaDBBackupEntry(o)
	}
	t.Fatalf("no validation for %T", obj)
	return nil
}

func TestEveryExampleIsValid(t *testing.T) {
	t.Parallel()
	examples := loadExamples(t)
	kinds := map[string]bool{}
	for _, e := range examples {
		kinds[e.obj.GetObjectKind().GroupVersionKind().Kind] = true
		if errs := validateObject(t, e.obj); len(errs) != 0 {
			t.Errorf("%s: %v", e.name, errs.ToAggregate())
		}
		if errs := validateUpdateOfItself(e.obj); len(errs) != 0 {
			t.Errorf("%s: an update that changes nothing is refused: %v", e.name, errs.ToAggregate())
		}
	}
	for _, kind := range []string{"ScyllaCluster", "ScyllaDBDatacenter", "ScyllaDBCluster", "ScyllaDBManagerTask", "RemoteKubernetesCluster", "ScyllaDBBackupBucket", "ScyllaDBBackupEntry"} {
		if !kinds[kind] {
			t.Errorf("deploy/examples has no %s: the test would not notice its validation refusing examples", kind)
		}
	}
}

// validateUpdateOfItself runs the update validation of obj against itself.
func validateUpdateOfItself(obj runtime.Object) field.ErrorList {
	switch o := obj.(type) {
	case *scyllav1.ScyllaCluster:
		return ValidateScyllaClusterUpdate(o, o)
	case *scyllav1alpha1.ScyllaDBDatacenter:
		return ValidateScyllaDBDatacenterUpdate(o, o)
	case *scyllav1alpha1.ScyllaDBCluster:
		return ValidateScyllaDBClusterUpdate(o, o)
	case *scyllav1alpha1.ScyllaDBManagerTask:
		return ValidateScyllaDBManagerTaskUpdate(o, o)
	case *scyllav1alpha1.RemoteKubernetesCluster:
		return ValidateRemoteKubernetesClusterUpdate(o, o)
	case *scyllav1alpha1.ScyllaDBBackupBucket:
		return ValidateScyllaDBBackupBucketUpdate(o, o)
	case *scyllav1alpha1.ScyllaDBBackupEntry:
		return ValidateScyllaDBBackupEntryUpdate(o, o)
	}
	return nil
}

// exampleOf returns a copy of the first example of type T whose file name is file.
func exampleOf[T runtime.Object](t testing.TB, file string) T {
	t.Helper()
	for _, e := range loadExamples(t) {
		if o, ok := e.obj.(T); ok && filepath.Base(e.name[:bytes.IndexByte([]byte(e.name), '#')]) == file {
			return o.DeepCopyObject().(T)
		}
	}
	var zero T
	t.Fatalf("no %T in %s", zero, file)
	return zero
}

func bufioReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }
