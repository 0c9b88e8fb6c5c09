package scylladbdatacenter

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSyncReadsTheUsersObjectsOutsideTheCache(t *testing.T) {
	t.Parallel()

	// The caches hold only the operator's objects; the user's, which the spec names, are read where they are.
	sdc := newBasicSDC()
	sdc.Spec.Racks[1].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("tuned")}
	sdc.Spec.Racks[1].ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}
	f := newFixture(t, world{sdc: sdc})
	f.controller.recheckInterval = 0
	for _, obj := range []runtime.Object{
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "tuned"}, Data: map[string]string{"scylla.yaml": "compaction_throughput_mb_per_sec: 0\n"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "agent-config"}, Data: map[string][]byte{"scylla-manager-agent.yaml": []byte("auth_token: custom\n")}},
	} {
		if err := f.kubeClient.Tracker().Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.sync(); err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got := f.written("configmaps", "basic-managed-config").(*corev1.ConfigMap).Data["scylla-b.yaml"]; !strings.Contains(got, "compaction_throughput_mb_per_sec: 0") {
		t.Errorf("rack b's scylla.yaml lacks its custom config: %q", got)
	}
	if got, _ := scyllaagent.AuthTokenFromConfig(f.written("secrets", "basic-auth-token").(*corev1.Secret).Data["auth-token.yaml"]); got != "custom" {
		t.Errorf("expected the custom agent config's token, got %q", got)
	}
	// Their changes do not reach the caches: the datacenter is synced again later.
	if diff := cmp.Diff([]string{"scylla/basic"}, queued(f.controller)); diff != "" {
		t.Errorf("unexpected keys (-want +got):\n%s", diff)
	}
}

func TestEveryObjectTheDatacenterRunsOnIsSeenByTheOperatorsInformers(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newBasicSDC()})
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	selector := naming.ManagedObjectsSelector()
	w := f.world()
	for _, obj := range w.objects {
		accessor := obj.(metav1.Object)
		if !selector.Matches(labels.Set(accessor.GetLabels())) {
			t.Errorf("%T %s is not selected by %q: %v", obj, accessor.GetName(), selector, accessor.GetLabels())
		}
		sts, ok := obj.(*appsv1.StatefulSet)
		if !ok {
			continue
		}
		// Pods get the template's labels; claims get the selector's, which the StatefulSet controller adds.
		if !selector.Matches(labels.Set(sts.Spec.Template.Labels)) || !selector.Matches(labels.Set(sts.Spec.Selector.MatchLabels)) {
			t.Errorf("the pods or claims of StatefulSet %s are not selected by %q", sts.Name, selector)
		}
	}
}
