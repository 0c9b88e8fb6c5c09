package crdvalidation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

const (
	crdDir      = "../../deploy/crds"
	examplesDir = "../../deploy/examples"
)

// sharedValidator builds the validator for the generated CRDs once; compiling their CEL rules takes a while.
var sharedValidator = sync.OnceValues(func() (*Validator, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, scyllav1.AddToScheme, scyllav1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return NewValidatorFromDir(context.Background(), scheme, crdDir)
})

func newTestValidator(t *testing.T) *Validator {
	t.Helper()
	v, err := sharedValidator()
	if err != nil {
		t.Fatalf("can't create validator: %v", err)
	}
	return v
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func splitDocuments(t *testing.T, data []byte) [][]byte {
	t.Helper()
	docs, err := SplitDocuments(data)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

func globFiles(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no files match %q", pattern)
	}
	return files
}

func TestGeneratedCRDsAreAcceptedByAnAPIServer(t *testing.T) {
	t.Parallel()

	crds, err := LoadCRDs(crdDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		t.Run(crd.Name, func(t *testing.T) {
			t.Parallel()
			if errs := ValidateCRD(context.Background(), crd); len(errs) != 0 {
				t.Errorf("the API server would reject the CRD: %v", errs.ToAggregate())
			}
		})
	}
}

func TestScyllaClusterCRDIsServed(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	want := scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster")
	if _, ok := v.kinds[want]; !ok {
		t.Fatalf("%s is not among the served kinds %v", want, v.Kinds())
	}
}

func TestExamplesAreValid(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	for _, path := range globFiles(t, filepath.Join(examplesDir, "*.yaml")) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			for i, doc := range splitDocuments(t, readFile(t, path)) {
				obj, errs := v.ValidateCreate(context.Background(), doc)
				if len(errs) != 0 {
					t.Errorf("document %d is invalid: %v", i, errs.ToAggregate())
				}
				if obj == nil {
					t.Errorf("document %d wasn't decoded", i)
				}
			}
		})
	}
}

// errorStrings renders errors for readable diffs.
func errorStrings(errs field.ErrorList) []string {
	var s []string
	for _, e := range errs {
		s = append(s, e.Error())
	}
	return s
}

const rulesNotCheckedMessage = "some validation rules were not checked"

// checkExpectations asserts that every expectation is met and that every error is expected.
func checkExpectations(t *testing.T, expectations []Expectation, errs field.ErrorList) {
	t.Helper()
	if len(errs) == 0 {
		t.Fatalf("the manifest was accepted; want %v", expectations)
	}
	for _, e := range expectations {
		if !e.Matches(errs) {
			t.Errorf("no error matches %q; got:\n%s", e.String(), strings.Join(errorStrings(errs), "\n"))
		}
	}
	for _, err := range errs {
		// The API server adds this after blocking schema errors; it is a consequence, not a rule.
		if strings.Contains(err.Detail, rulesNotCheckedMessage) {
			continue
		}
		expected := false
		for _, e := range expectations {
			if e.MatchesError(err.Field, err.ErrorBody()) {
				expected = true
			}
		}
		if !expected {
			t.Errorf("unexpected error: %v", err)
		}
	}
}

// runCases runs check on every case in dir, after checking the number of documents and that a case has
// expectations exactly when it must be rejected.
func runCases(t *testing.T, dir string, rejected bool, minDocs, maxDocs int, check func(t *testing.T, v *Validator, c Case)) {
	t.Helper()

	v := newTestValidator(t)
	cases, err := LoadCases(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			if n := len(c.Documents); n < minDocs || n > maxDocs {
				t.Fatalf("want %d to %d documents, got %d", minDocs, maxDocs, n)
			}
			if rejected != (len(c.Expectations) != 0) {
				t.Fatalf("a case in %q must have %q lines exactly when it is rejected", dir, ExpectPrefix)
			}
			check(t, v, c)
		})
	}
}

func TestInvalidManifestsAreRejected(t *testing.T) {
	t.Parallel()

	runCases(t, filepath.Join("testdata", "invalid"), true, 1, 1, func(t *testing.T, v *Validator, c Case) {
		_, errs := v.ValidateCreate(context.Background(), c.Documents[0])
		checkExpectations(t, c.Expectations, errs)
	})
}

func TestInvalidUpdatesAreRejected(t *testing.T) {
	t.Parallel()

	runCases(t, filepath.Join("testdata", "update", "invalid"), true, 2, 2, func(t *testing.T, v *Validator, c Case) {
		for i, doc := range c.Documents {
			if _, errs := v.ValidateCreate(context.Background(), doc); len(errs) != 0 {
				t.Fatalf("document %d is invalid on its own, so this doesn't test an update rule: %v", i, errs.ToAggregate())
			}
		}
		_, errs := v.ValidateUpdate(context.Background(), c.Documents[0], c.Documents[1])
		checkExpectations(t, c.Expectations, errs)
	})
}

func TestValidUpdatesAreAccepted(t *testing.T) {
	t.Parallel()

	runCases(t, filepath.Join("testdata", "update", "valid"), false, 2, 100, func(t *testing.T, v *Validator, c Case) {
		if _, errs := v.ValidateCreate(context.Background(), c.Documents[0]); len(errs) != 0 {
			t.Fatalf("the first object is invalid: %v", errs.ToAggregate())
		}
		for i := 1; i < len(c.Documents); i++ {
			if _, errs := v.ValidateUpdate(context.Background(), c.Documents[i-1], c.Documents[i]); len(errs) != 0 {
				t.Errorf("update %d -> %d was rejected: %v", i-1, i, errs.ToAggregate())
			}
		}
	})
}

func TestMinimalScyllaClusterGetsDocumentedDefaults(t *testing.T) {
	t.Parallel()

	v := newTestValidator(t)
	tt := []struct {
		name     string
		manifest string
		want     string
	}{
		{
			name: "top level, rack, network and genericUpgrade defaults",
			manifest: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: minimal
spec:
  version: 2025.1.2
  genericUpgrade: {}
  network: {}
  datacenter:
    name: dc1
    racks:
    - name: a
      members: 1
      storage:
        capacity: 10Gi
      resources:
        limits:
          cpu: 1
          memory: 4Gi
`,
			want: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: minimal
  namespace: default
spec:
  version: 2025.1.2
  repository: docker.io/scylladb/scylla
  agentVersion: latest
  agentRepository: docker.io/scylladb/scylla-manager-agent
  developerMode: false
  automaticOrphanedNodeCleanup: false
  genericUpgrade:
    failureStrategy: Retry
    pollInterval: 1s
  network:
    ipFamilyPolicy: SingleStack
  datacenter:
    name: dc1
    racks:
    - name: a
      members: 1
      storage:
        capacity: 10Gi
      resources:
        limits:
          cpu: 1
          memory: 4Gi
      agentResources:
        requests:
          cpu: 50m
          memory: 10M
`,
		},
		{
			name: "exposeOptions defaults",
			manifest: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: expose
  namespace: scylla
spec:
  version: 2025.1.2
  agentVersion: 3.5.0
  exposeOptions:
    broadcastOptions:
      nodes:
        type: PodIP
        podIP: {}
    listenOptions:
      clients:
        podIP: {}
  datacenter:
    name: dc1
`,
			want: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: expose
  namespace: scylla
spec:
  version: 2025.1.2
  repository: docker.io/scylladb/scylla
  agentVersion: 3.5.0
  agentRepository: docker.io/scylladb/scylla-manager-agent
  developerMode: false
  automaticOrphanedNodeCleanup: false
  exposeOptions:
    nodeService:
      type: ClusterIP
    broadcastOptions:
      nodes:
        type: PodIP
        podIP:
          source: Status
      clients:
        type: ServiceClusterIP
    listenOptions:
      nodes:
        type: Any
      clients:
        type: Any
        podIP:
          source: Status
  datacenter:
    name: dc1
`,
		},
		{
			name: "alternator and task defaults",
			manifest: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: tasks
  namespace: scylla
spec:
  version: 2025.1.2
  agentVersion: 3.5.0
  alternator: {}
  datacenter:
    name: dc1
  backups:
  - name: daily
    location:
    - s3:bucket
  repairs:
  - name: weekly
`,
			want: `
apiVersion: scylla.scylladb.com/v1
kind: ScyllaCluster
metadata:
  name: tasks
  namespace: scylla
spec:
  version: 2025.1.2
  repository: docker.io/scylladb/scylla
  agentVersion: 3.5.0
  agentRepository: docker.io/scylladb/scylla-manager-agent
  developerMode: false
  automaticOrphanedNodeCleanup: false
  alternator:
    servingCertificate:
      type: OperatorManaged
  datacenter:
    name: dc1
  backups:
  - name: daily
    location:
    - s3:bucket
    numRetries: 3
    retention: 3
  repairs:
  - name: weekly
    numRetries: 3
    intensity: "1"
    parallel: 0
    smallTableThreshold: 1GiB
`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, errs := v.Default([]byte(tc.manifest))
			if len(errs) != 0 {
				t.Fatalf("can't default: %v", errs.ToAggregate())
			}
			var want map[string]interface{}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			// Compare through JSON so that numbers have one representation on both sides.
			gotJSON, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var gotMap map[string]interface{}
			if err := yaml.Unmarshal(gotJSON, &gotMap); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, gotMap); diff != "" {
				t.Errorf("defaulted object differs (-want +got):\n%s", diff)
			}

			if _, errs := v.ValidateCreate(context.Background(), []byte(tc.manifest)); len(errs) != 0 {
				t.Errorf("the minimal manifest is invalid: %v", errs.ToAggregate())
			}
		})
	}
}
