package fakeclient

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/record"
)

func TestWritesLeavesOutReadsAndNamesApplies(t *testing.T) {
	t.Parallel()

	client := fake.NewClientset()
	ctx := t.Context()
	_, _ = client.CoreV1().Secrets("ns").Get(ctx, "s", metav1.GetOptions{})
	_, _ = client.CoreV1().Secrets("ns").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{})
	_, _ = client.CoreV1().Secrets("ns").List(ctx, metav1.ListOptions{})
	_, _ = client.CoreV1().Pods("ns").UpdateStatus(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, metav1.UpdateOptions{})
	_, _ = client.CoreV1().Pods("ns").Patch(ctx, "p", types.ApplyPatchType, []byte(`{}`), metav1.PatchOptions{FieldManager: "m"})
	_, _ = client.CoreV1().Pods("ns").Patch(ctx, "p", types.MergePatchType, []byte(`{}`), metav1.PatchOptions{})

	want := []string{"create secrets", "update pods/status", "apply pods", "patch pods"}
	if diff := cmp.Diff(want, Writes(client.Actions())); diff != "" {
		t.Errorf("unexpected writes (-want +got):\n%s", diff)
	}
}

func TestEventsDrainsTheRecorder(t *testing.T) {
	t.Parallel()

	recorder := record.NewFakeRecorder(10)
	recorder.Event(&corev1.Pod{}, corev1.EventTypeNormal, "One", "first")
	recorder.Event(&corev1.Pod{}, corev1.EventTypeWarning, "Two", "second")
	if diff := cmp.Diff([]string{"Normal One first", "Warning Two second"}, Events(recorder)); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
	if events := Events(recorder); len(events) != 0 {
		t.Errorf("expected the recorder drained, got %q", events)
	}
}
