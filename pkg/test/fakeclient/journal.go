package fakeclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
)

// Journal lists, in the order they were made, a controller's writes to Kubernetes through fake clientsets and its
// writes to an external system (ScyllaDB Manager) that logs them, each described by what it carries, so that a test
// can pin a whole write sequence: which metadata a patch sets, which conditions a status apply reports, and where the
// external writes fall between them. It can also play the controller's process dying between two writes
// (CrashAfter).
type Journal struct {
	mu sync.Mutex
	// external returns the descriptions of the external system's writes so far, oldest first; its log may be
	// cleared, which restarts it.
	external func() []string
	seen     int
	entries  []string
	// total counts the entries ever recorded; once it reaches crashAt (when crashing), every write fails.
	total    int
	crashing bool
	crashAt  int
}

// NewJournal returns a Journal that takes the external writes from external. Register its Reactor on each fake
// clientset whose writes it should list.
func NewJournal(external func() []string) *Journal {
	return &Journal{external: external}
}

// Reactor is a clientset reactor (register it with PrependReactor("*", "*", ...)) that records every write action,
// after the external writes made before it, and leaves the action to the next reactors.
func (j *Journal) Reactor(action clienttesting.Action) (bool, runtime.Object, error) {
	switch action.GetVerb() {
	case "get", "list", "watch":
		return false, nil, nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.catchUp()
	if j.crashed() {
		return true, nil, errKilled
	}
	j.entries = append(j.entries, DescribeWrite(action))
	j.total++
	return false, nil, nil
}

// errKilled is what a write made after the process's crash gets.
var errKilled = errors.New("the process was killed before this write")

// Handler passes the requests to the external system on to next, and fails them without passing them on once the
// process crashed (CrashAfter): a dead process sends nothing, reads included.
func (j *Journal) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.mu.Lock()
		j.catchUp()
		crashed := j.crashed()
		j.mu.Unlock()
		if crashed {
			http.Error(w, errKilled.Error(), http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CrashAfter runs run as a process that dies after its first n writes, Kubernetes' and the external system's
// together: every later write, and every later request to the external system, fails and changes nothing. It returns
// the writes made before the crash and run's error, and then lets writes through again, as a restarted process.
func (j *Journal) CrashAfter(n int, run func() error) ([]string, error) {
	j.mu.Lock()
	j.catchUp()
	// The writes from before stay for Take.
	before := j.entries
	j.entries = nil
	j.crashing, j.crashAt = true, j.total+n
	j.mu.Unlock()

	err := run()

	j.mu.Lock()
	defer j.mu.Unlock()
	j.catchUp()
	j.crashing = false
	writes := j.entries
	j.entries = before
	return writes, err
}

// ExpectCrashAfter runs sync with CrashAfter(n, sync) and fails t unless the writes before the crash are exactly the
// first n of full, and unless sync failed when the crash cut full short.
func (j *Journal) ExpectCrashAfter(t testing.TB, n int, full []string, sync func() error) {
	t.Helper()
	writes, err := j.CrashAfter(n, sync)
	if n < len(full) && err == nil {
		t.Errorf("expected the sync killed after %d writes to fail", n)
	}
	if diff := cmp.Diff(full[:n], writes, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("unexpected writes before the crash (-want +got):\n%s", diff)
	}
}

func (j *Journal) crashed() bool {
	return j.crashing && j.total >= j.crashAt
}

// CatchUp records the external writes made so far. Call it before clearing the external system's log, which would
// otherwise take the writes not recorded yet with it.
func (j *Journal) CatchUp() {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.catchUp()
}

// catchUp appends the external writes made since the last entry.
func (j *Journal) catchUp() {
	external := j.external()
	if len(external) < j.seen {
		// The log was cleared.
		j.seen = 0
	}
	j.entries = append(j.entries, external[j.seen:]...)
	j.total += len(external) - j.seen
	j.seen = len(external)
}

// Take returns the writes made since the previous Take and forgets them.
func (j *Journal) Take() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.catchUp()
	entries := j.entries
	j.entries = nil
	return entries
}

// DescribeWrite describes a write action by what it carries:
//   - a JSON merge patch of metadata: "patch <resource>: finalizers=[<names>] +<annotation> -<annotation>", the
//     finalizers as the patch sets them and the annotations it sets (+) or removes (-); names and keys lose their
//     prefix up to the last "/". Preconditions (uid, resourceVersion) are left out.
//   - a JSON patch (RFC 6902) that sets the finalizers: "patch <resource>: finalizers=[<names>]", as for a merge
//     patch; its tests (preconditions) are left out.
//   - a server-side apply of a status: "apply <resource>/status: <type>=<status>/<reason> ... [<field> ...]", its
//     conditions in the order sent, then the other status fields it sets but observedGeneration, sorted;
//   - anything else: "<verb> <resource>[/<subresource>]".
func DescribeWrite(action clienttesting.Action) string {
	resource := action.GetResource().Resource
	if sub := action.GetSubresource(); len(sub) != 0 {
		resource += "/" + sub
	}
	patch, ok := action.(clienttesting.PatchAction)
	if !ok {
		return action.GetVerb() + " " + resource
	}
	if patch.GetPatchType() == types.JSONPatchType {
		return "patch " + resource + ": " + describeJSONPatch(patch.GetPatch())
	}
	var body map[string]any
	if err := json.Unmarshal(patch.GetPatch(), &body); err != nil {
		return fmt.Sprintf("patch %s: undecodable %s patch: %v", resource, patch.GetPatchType(), err)
	}
	switch patch.GetPatchType() {
	case types.ApplyPatchType:
		return "apply " + resource + ": " + describeStatus(body)
	case types.MergePatchType:
		return "patch " + resource + ": " + describeMetadata(body)
	default:
		return fmt.Sprintf("patch %s: %s", resource, patch.GetPatchType())
	}
}

// describeJSONPatch describes the operations of a JSON patch other than its tests: the finalizers an add or replace
// of /metadata/finalizers sets, as describeMetadata does, any other operation by op and path.
func describeJSONPatch(data []byte) string {
	var ops []map[string]any
	if err := json.Unmarshal(data, &ops); err != nil {
		return fmt.Sprintf("undecodable JSON patch: %v", err)
	}
	var parts []string
	for _, op := range ops {
		switch {
		case op["op"] == "test":
		case (op["op"] == "add" || op["op"] == "replace") && op["path"] == "/metadata/finalizers":
			parts = append(parts, describeMetadata(map[string]any{"metadata": map[string]any{"finalizers": op["value"]}}))
		default:
			parts = append(parts, fmt.Sprintf("%v %v", op["op"], op["path"]))
		}
	}
	return strings.Join(parts, " ")
}

func describeMetadata(body map[string]any) string {
	metadata, _ := body["metadata"].(map[string]any)
	var parts []string
	if finalizers, ok := metadata["finalizers"].([]any); ok {
		names := make([]string, 0, len(finalizers))
		for _, f := range finalizers {
			names = append(names, shortName(fmt.Sprint(f)))
		}
		parts = append(parts, "finalizers=["+strings.Join(names, " ")+"]")
	}
	annotations, _ := metadata["annotations"].(map[string]any)
	keys := make([]string, 0, len(annotations))
	for key := range annotations {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		sign := "+"
		if annotations[key] == nil {
			sign = "-"
		}
		parts = append(parts, sign+shortName(key))
	}
	var others []string
	for key := range body {
		if key != "metadata" {
			others = append(others, key)
		}
	}
	slices.Sort(others)
	for _, key := range others {
		parts = append(parts, "and "+key)
	}
	return strings.Join(parts, " ")
}

func describeStatus(body map[string]any) string {
	status, _ := body["status"].(map[string]any)
	var parts []string
	conditions, _ := status["conditions"].([]any)
	for _, c := range conditions {
		condition, _ := c.(map[string]any)
		parts = append(parts, fmt.Sprintf("%v=%v/%v", condition["type"], condition["status"], condition["reason"]))
	}
	var fields []string
	for key := range status {
		if key != "conditions" && key != "observedGeneration" {
			fields = append(fields, key)
		}
	}
	slices.Sort(fields)
	if len(fields) != 0 {
		parts = append(parts, "["+strings.Join(fields, " ")+"]")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

// shortName returns name after its last "/".
func shortName(name string) string {
	return name[strings.LastIndex(name, "/")+1:]
}
