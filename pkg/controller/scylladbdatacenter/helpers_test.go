package scylladbdatacenter

import (
	"errors"
	"testing"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	testNamespace     = "scylla"
	testOperatorImage = "docker.io/scylladb/scylla-operator:1.20.0"
	testScyllaImage   = "docker.io/scylladb/scylla:2026.2.0"
	testAgentImage    = "docker.io/scylladb/scylla-manager-agent:3.5.0"
	testToken         = "generated-token"
)

// newBasicSDC returns a datacenter "basic" (DC "dc1", cluster "cluster") of two racks, "a" and "b", with three
// nodes each from the rack template. It allows parallel node operations, so one sync creates both racks at full
// size; tests of scaling up one rack at a time turn them off (newSequentialSDC).
func newBasicSDC() *scyllav1alpha1.ScyllaDBDatacenter {
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:  testNamespace,
			Name:       "basic",
			UID:        "sdc-uid",
			Generation: 2,
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName:                  "cluster",
			DatacenterName:               new("dc1"),
			EnableParallelNodeOperations: new(true),
			ScyllaDB: scyllav1alpha1.ScyllaDB{
				Image: testScyllaImage,
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{
				Image: new(testAgentImage),
			},
			RackTemplate: &scyllav1alpha1.RackTemplate{
				Nodes: new(int32(3)),
				ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
					Resources: &corev1.ResourceRequirements{
						Limits: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("2"),
							corev1.ResourceMemory: resource.MustParse("8Gi"),
						},
					},
					Storage: &scyllav1alpha1.StorageOptions{Capacity: "10Gi"},
				},
			},
			Racks: []scyllav1alpha1.RackSpec{{Name: "a"}, {Name: "b"}},
		},
	}
}

// testControllerRef is the controllerRef of the objects newBasicSDC owns.
func testControllerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         "scylla.scylladb.com/v1alpha1",
		Kind:               "ScyllaDBDatacenter",
		Name:               "basic",
		UID:                "sdc-uid",
		Controller:         new(true),
		BlockOwnerDeletion: new(true),
	}
}

// clusterLabels are the labels every object of newBasicSDC carries.
func clusterLabels() map[string]string {
	return map[string]string{
		"app":                          "scylla",
		"app.kubernetes.io/name":       "scylla",
		"app.kubernetes.io/managed-by": "scylla-operator",
		"scylla/cluster":               "basic",
	}
}

// with returns a copy of m with the extra key-value pairs (k1, v1, k2, v2, ...).
func with(m map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// checkError fails t unless err is the error wantErr reads ("" for none) and, when there is one, is a spec error
// exactly when wantSpecErr. It returns whether an error was expected, after which a test case has nothing more to
// check.
func checkError(t *testing.T, err error, wantErr string, wantSpecErr bool) bool {
	t.Helper()
	if len(wantErr) == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return false
	}
	if err == nil || err.Error() != wantErr {
		t.Fatalf("expected error %q, got %v", wantErr, err)
	}
	if isSpecError(err) != wantSpecErr {
		t.Errorf("expected a spec error: %v, got one: %v", wantSpecErr, isSpecError(err))
	}
	return true
}

// newModifiedSDC returns newBasicSDC changed by modify (when not nil) and its first rack merged with the template.
func newModifiedSDC(modify func(sdc *scyllav1alpha1.ScyllaDBDatacenter)) (*scyllav1alpha1.ScyllaDBDatacenter, *scyllav1alpha1.RackSpec) {
	sdc := newBasicSDC()
	if modify != nil {
		modify(sdc)
	}
	return sdc, &effectiveRacks(sdc)[0]
}

// isSpecError tells whether err is, or wraps, a specError.
func isSpecError(err error) bool {
	var se *specError
	return errors.As(err, &se)
}
