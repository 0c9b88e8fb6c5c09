package managerregistration

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func TestScyllaDBManagerClusterIDPrefersTheAnnotation(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name        string
		annotations map[string]string
		want        string
		wantErr     string
	}{
		{name: "derived from the UID without the annotation", want: testClusterID},
		{name: "derived from the UID when the annotation is empty", annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: ""}, want: testClusterID},
		{name: "the annotation's", annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"}, want: "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c"},
		{
			name:        "none when the annotation is not a UUID, which ScyllaDB Manager would take for a name",
			annotations: map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "scylla/basic"},
			wantErr:     `annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" holds "scylla/basic", which is not a ScyllaDB Manager cluster ID (a UUID)`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			obj := &metav1.ObjectMeta{UID: testUID, Annotations: tc.annotations}
			got, err := scyllaDBManagerClusterID("ScyllaDBDatacenter", obj)
			if (err == nil) != (len(tc.wantErr) == 0) || err != nil && err.Error() != tc.wantErr {
				t.Fatalf("expected error %q, got %v", tc.wantErr, err)
			}
			if got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestMakeManagerClusterHashesEverythingItSends(t *testing.T) {
	t.Parallel()

	base := managerClusterSpec{Name: testClusterName, Host: testHost, AuthToken: testToken}
	cluster, err := makeManagerCluster(testClusterID, testUID, &base)
	if err != nil {
		t.Fatal(err)
	}
	want := &managerclient.Cluster{
		ID:                     testClusterID,
		Name:                   testClusterName,
		Host:                   testHost,
		AuthToken:              testToken,
		WithoutRepair:          true,
		ForceTLSDisabled:       true,
		ForceNonSSLSessionPort: true,
		Labels: map[string]string{
			naming.ScyllaDBManagerOwnerUIDLabel:    string(testUID),
			naming.ScyllaDBManagerManagedHashLabel: cluster.Labels[naming.ScyllaDBManagerManagedHashLabel],
		},
	}
	if diff := cmp.Diff(want, cluster); diff != "" {
		t.Errorf("unexpected cluster (-want +got):\n%s", diff)
	}
	hash := cluster.Labels[naming.ScyllaDBManagerManagedHashLabel]
	if len(hash) == 0 || cmp.Equal(hash, testToken) {
		t.Fatalf("unexpected hash %q", hash)
	}

	again, err := makeManagerCluster(testClusterID, testUID, &base)
	if err != nil {
		t.Fatal(err)
	}
	if got := again.Labels[naming.ScyllaDBManagerManagedHashLabel]; got != hash {
		t.Errorf("the hash of one cluster changed between calls: %q, then %q", hash, got)
	}

	tt := []struct {
		name  string
		id    string
		owner types.UID
		spec  managerClusterSpec
	}{
		{name: "another token", id: testClusterID, owner: testUID, spec: managerClusterSpec{Name: base.Name, Host: base.Host, AuthToken: "other"}},
		{name: "another host", id: testClusterID, owner: testUID, spec: managerClusterSpec{Name: base.Name, Host: "other", AuthToken: base.AuthToken}},
		{name: "another name", id: testClusterID, owner: testUID, spec: managerClusterSpec{Name: "other", Host: base.Host, AuthToken: base.AuthToken}},
		{name: "another ID", id: "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c", owner: testUID, spec: base},
		{name: "another owner", id: testClusterID, owner: "other", spec: base},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			other, err := makeManagerCluster(tc.id, tc.owner, &tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if other.Labels[naming.ScyllaDBManagerManagedHashLabel] == hash {
				t.Errorf("the hash did not change")
			}
		})
	}
}

func TestIsOwnedBy(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name           string
		labels         map[string]string
		previousOwners []types.UID
		want           bool
	}{
		{name: "no owner label", want: true},
		{name: "an empty owner label", labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: ""}, want: true},
		{name: "the owner's", labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(testUID)}, want: true},
		{name: "a previous owner's", labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(testScyllaClusterUID)}, previousOwners: []types.UID{testScyllaClusterUID}, want: true},
		{name: "another object's", labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "other"}, previousOwners: []types.UID{testScyllaClusterUID}, want: false},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isOwnedBy(&managerclient.Cluster{Labels: tc.labels}, testUID, tc.previousOwners); got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}

func TestOwnershipOfClustersAnAnnotationMayHaveBeenCopiedTo(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name           string
		cluster        managerclient.Cluster
		previousOwners []types.UID
		wantAnnotated  bool
		wantProvable   bool
	}{
		{name: "unlabelled, under the name asked for", cluster: managerclient.Cluster{Name: "scylla/basic"}, wantAnnotated: true},
		{name: "unlabelled, under another name", cluster: managerclient.Cluster{Name: "other/basic"}},
		{name: "labelled with the owner", cluster: managerclient.Cluster{Name: "other/basic", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(testUID)}}, wantAnnotated: true, wantProvable: true},
		{name: "labelled with a previous owner", cluster: managerclient.Cluster{Name: "scylla/basic", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(testScyllaClusterUID)}}, previousOwners: []types.UID{testScyllaClusterUID}, wantAnnotated: true, wantProvable: true},
		{name: "labelled with another object, under the name asked for", cluster: managerclient.Cluster{Name: "scylla/basic", Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: "other"}}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isAnnotatedClusterOwnedBy(&tc.cluster, testUID, tc.previousOwners, "scylla/basic"); got != tc.wantAnnotated {
				t.Errorf("isAnnotatedClusterOwnedBy: expected %v, got %v", tc.wantAnnotated, got)
			}
			if got := isProvablyOwnedBy(&tc.cluster, testUID, tc.previousOwners); got != tc.wantProvable {
				t.Errorf("isProvablyOwnedBy: expected %v, got %v", tc.wantProvable, got)
			}
		})
	}
}

func TestIsDerivedClusterIDTellsDerivedIDsFromScyllaDBManagersRandomOnes(t *testing.T) {
	t.Parallel()

	tt := []struct {
		id   string
		want bool
	}{
		{id: testClusterID, want: true},
		{id: naming.ScyllaDBManagerClusterID("ScyllaDBCluster", "other"), want: true},
		{id: "5b0e7c4a-1d2e-4f3a-9b8c-7d6e5f4a3b2c", want: false},
		{id: "scylla/basic", want: false},
		{id: "", want: false},
	}
	for _, tc := range tt {
		if got := isDerivedClusterID(tc.id); got != tc.want {
			t.Errorf("isDerivedClusterID(%q): expected %v, got %v", tc.id, tc.want, got)
		}
	}
}

func TestDescribeManagerErrorLeavesOutTheTraceID(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		err  error
		want string
	}{
		{
			name: "an API error",
			err:  fmt.Errorf("wrapped: %w", &managerclient.APIError{Method: "POST", Path: "/api/v1/clusters", StatusCode: 500, Message: "create cluster: agents unreachable", Details: "check port 10001", TraceID: "abc"}),
			want: "ScyllaDB Manager answered 500 to POST /api/v1/clusters: create cluster: agents unreachable (check port 10001)",
		},
		{
			name: "another error",
			err:  errors.New("can't GET /api/v1/cluster/x: connection refused"),
			want: "can't GET /api/v1/cluster/x: connection refused",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := describeManagerError(tc.err); got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, got)
			}
		})
	}
}

func TestIsNameTakenError(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name string
		err  error
		want bool
	}{
		{name: "a taken name", err: &managerclient.APIError{StatusCode: 400, Message: `create cluster: name "x" is already taken`}, want: true},
		{name: "another validation error", err: &managerclient.APIError{StatusCode: 400, Message: "create cluster: invalid cluster: name cannot be an UUID"}},
		{name: "a server error mentioning it", err: &managerclient.APIError{StatusCode: 500, Message: "is already taken"}},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := isNameTakenError(tc.err); got != tc.want {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}

func TestMakeScyllaDBDatacenterClusterSpec(t *testing.T) {
	t.Parallel()

	unreadable := newAuthTokenSecret(t, testToken)
	unreadable.Data[naming.ScyllaDBManagerAgentAuthTokenKey] = []byte("auth_token: [" + testToken)

	tt := []struct {
		name        string
		sdc         func() *scyllav1alpha1.ScyllaDBDatacenter
		secret      *corev1.Secret
		wantSpec    *managerClusterSpec
		wantWaiting *progress
	}{
		{
			name:     "a datacenter of its own is registered under its namespace, kind and name",
			sdc:      newSDC,
			secret:   newAuthTokenSecret(t, testToken),
			wantSpec: &managerClusterSpec{Name: testClusterName, Host: testHost, AuthToken: testToken},
		},
		{
			name:     "a ScyllaCluster's datacenter is registered under the name the operator gives it",
			sdc:      newTranslatedSDC,
			secret:   newAuthTokenSecret(t, testToken),
			wantSpec: &managerClusterSpec{Name: "scylla/basic", Host: testHost, AuthToken: testToken},
		},
		{
			name: "the rollout comes first",
			sdc: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := newSDC()
				sdc.Generation = 3
				return sdc
			},
			wantWaiting: &progress{reason: "WaitingForRollout", message: "waiting for the operator to report generation 3 of the ScyllaDBDatacenter Available"},
		},
		{
			name:        "an unreadable token is waited for, and not quoted",
			sdc:         newSDC,
			secret:      unreadable,
			wantWaiting: &progress{reason: "WaitingForAuthToken", message: `waiting for a readable agent auth token in key "auth-token.yaml" of Secret "basic-auth-token": it is not a valid YAML agent configuration`},
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			spec, waiting := makeScyllaDBDatacenterClusterSpec(tc.sdc(), tc.secret)
			if diff := cmp.Diff(tc.wantSpec, spec); diff != "" {
				t.Errorf("unexpected spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWaiting, waiting, cmp.AllowUnexported(progress{})); diff != "" {
				t.Errorf("unexpected waiting (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScyllaDBDatacenterPreviousOwnersIsTheScyllaClusterItIsTranslatedFrom(t *testing.T) {
	t.Parallel()

	other := newSDC()
	other.OwnerReferences = []metav1.OwnerReference{{APIVersion: "scylla.scylladb.com/v1alpha1", Kind: "ScyllaDBCluster", Name: "x", UID: "x-uid", Controller: new(true)}}
	notController := newTranslatedSDC()
	notController.OwnerReferences[0].Controller = nil

	tt := []struct {
		name string
		sdc  *scyllav1alpha1.ScyllaDBDatacenter
		want []types.UID
	}{
		{name: "translated from a ScyllaCluster", sdc: newTranslatedSDC(), want: []types.UID{testScyllaClusterUID}},
		{name: "without a controller", sdc: newSDC()},
		{name: "controlled by another kind", sdc: other},
		{name: "owned but not controlled by a ScyllaCluster", sdc: notController},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, scyllaDBDatacenterPreviousOwners(tc.sdc)); diff != "" {
				t.Errorf("unexpected owners (-want +got):\n%s", diff)
			}
		})
	}
}
