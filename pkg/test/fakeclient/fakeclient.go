// Package fakeclient reads what controllers did through client-go's fake clientsets and fake event recorder, the
// same way in every controller's tests.
package fakeclient

import (
	"k8s.io/apimachinery/pkg/types"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/record"
)

// Writes returns the actions that are not reads (get, list, watch) as "<verb> <resource>[/<subresource>]", a
// server-side apply patch with verb "apply".
func Writes(actions []clienttesting.Action) []string {
	var writes []string
	for _, action := range actions {
		switch action.GetVerb() {
		case "get", "list", "watch":
			continue
		}
		resource := action.GetResource().Resource
		if sub := action.GetSubresource(); len(sub) != 0 {
			resource += "/" + sub
		}
		verb := action.GetVerb()
		if patch, ok := action.(clienttesting.PatchAction); ok && patch.GetPatchType() == types.ApplyPatchType {
			verb = "apply"
		}
		writes = append(writes, verb+" "+resource)
	}
	return writes
}

// Events returns, in order, the events recorder holds, and takes them out of it.
func Events(recorder *record.FakeRecorder) []string {
	var events []string
	for {
		select {
		case e := <-recorder.Events:
			events = append(events, e)
		default:
			return events
		}
	}
}
