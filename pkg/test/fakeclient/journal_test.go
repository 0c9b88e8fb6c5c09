package fakeclient

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func TestDescribeWriteSaysWhatEachWriteCarries(t *testing.T) {
	t.Parallel()

	client := fake.NewClientset(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}})
	ctx := t.Context()
	patches := []struct {
		patchType   types.PatchType
		subresource []string
		body        string
	}{
		{types.MergePatchType, nil, `{"metadata":{"uid":"u","resourceVersion":"7","finalizers":["example.com/a","example.com/b"],"annotations":{"example.com/z":"1","example.com/y":null}}}`},
		{types.ApplyPatchType, []string{"status"}, `{"status":{"observedGeneration":2,"taskID":"t","conditions":[{"type":"Available","status":"True","reason":"Done"},{"type":"Degraded","status":"False","reason":"AsExpected"}]}}`},
		{types.ApplyPatchType, []string{"status"}, `{"status":{}}`},
		{types.MergePatchType, nil, `not json`},
		{types.JSONPatchType, nil, `[{"op":"test","path":"/metadata/uid","value":"u"},{"op":"test","path":"/metadata/finalizers","value":null},{"op":"add","path":"/metadata/finalizers","value":["example.com/a"]}]`},
		{types.JSONPatchType, nil, `[{"op":"remove","path":"/metadata/labels"}]`},
		{types.JSONPatchType, nil, `{}`},
		{types.StrategicMergePatchType, nil, `{}`},
	}
	for _, p := range patches {
		_, _ = client.CoreV1().Pods("ns").Patch(ctx, "p", p.patchType, []byte(p.body), metav1.PatchOptions{FieldManager: "m"}, p.subresource...)
	}
	_ = client.CoreV1().Pods("ns").Delete(ctx, "p", metav1.DeleteOptions{})

	var got []string
	for _, action := range client.Actions() {
		got = append(got, DescribeWrite(action))
	}
	want := []string{
		"patch pods: finalizers=[a b] -y +z",
		"apply pods/status: Available=True/Done Degraded=False/AsExpected [taskID]",
		"apply pods/status: nothing",
		"patch pods: undecodable application/merge-patch+json patch: invalid character 'o' in literal null (expecting 'u')",
		"patch pods: finalizers=[a]",
		"patch pods: remove /metadata/labels",
		"patch pods: undecodable JSON patch: json: cannot unmarshal object into Go value of type []map[string]interface {}",
		"patch pods: application/strategic-merge-patch+json",
		"delete pods",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected descriptions (-want +got):\n%s", diff)
	}
}

func TestJournalInterleavesExternalWritesAndCrashes(t *testing.T) {
	t.Parallel()

	var mu sync.Mutex
	var external []string
	journal := NewJournal(func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), external...)
	})
	server := httptest.NewServer(journal.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		external = append(external, "external "+r.URL.Path)
	})))
	t.Cleanup(server.Close)
	request := func(path string) int {
		t.Helper()
		resp, err := http.Post(server.URL+path, "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}

	client := fake.NewClientset()
	client.PrependReactor("*", "*", journal.Reactor)
	ctx := t.Context()
	create := func(name string) error {
		_, err := client.CoreV1().Secrets("ns").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		return err
	}

	if err := create("a"); err != nil {
		t.Fatal(err)
	}
	request("/one")
	_, _ = client.CoreV1().Secrets("ns").Get(ctx, "a", metav1.GetOptions{})
	if diff := cmp.Diff([]string{"create secrets", "external /one"}, journal.Take()); diff != "" {
		t.Errorf("unexpected journal (-want +got):\n%s", diff)
	}

	// The process dies after two writes: the third fails on either side, and nothing it sends arrives.
	var statusAfterCrash int
	writes, err := journal.CrashAfter(2, func() error {
		request("/two")
		if err := create("b"); err != nil {
			return err
		}
		statusAfterCrash = request("/three")
		return create("c")
	})
	if err == nil {
		t.Error("expected a write after the crash to fail")
	}
	if statusAfterCrash != http.StatusServiceUnavailable {
		t.Errorf("expected a request after the crash to fail, got %d", statusAfterCrash)
	}
	if _, err := client.CoreV1().Secrets("ns").Get(ctx, "c", metav1.GetOptions{}); err == nil {
		t.Error("the write after the crash landed")
	}
	if diff := cmp.Diff([]string{"external /two", "create secrets"}, writes); diff != "" {
		t.Errorf("unexpected writes before the crash (-want +got):\n%s", diff)
	}

	// Restarted, writes go through.
	if err := create("c"); err != nil {
		t.Fatal(err)
	}
	request("/four")
	if diff := cmp.Diff([]string{"create secrets", "external /four"}, journal.Take()); diff != "" {
		t.Errorf("unexpected journal (-want +got):\n%s", diff)
	}
}
