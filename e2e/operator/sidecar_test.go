//go:build e2e

package operator

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// sidecars stands for the sidecars of the simulated ScyllaDB pods in the one step of a scale-down that is theirs:
// once the operator labels a node's member Service scylla/decommissioned="false", the node's sidecar decommissions
// the node and sets the label to "true".
type sidecars interface {
	// completeDecommission returns once the node behind the member Service name has finished the decommission the
	// operator asked for and its Service says so.
	completeDecommission(ctx context.Context, namespace, name string) error
}

// newSidecars is the stand-in every test uses. When the node simulator runs the real sidecar in each simulated pod,
// this becomes a sidecars that only waits for the label to turn "true".
var newSidecars func(c *framework.Cluster) sidecars = newLabelFlippingSidecars

// labelFlippingSidecars plays the sidecar's part itself: it sets the label to "true" as the sidecar does when
// ScyllaDB reports the node decommissioned.
type labelFlippingSidecars struct {
	kube kubernetes.Interface
}

var _ sidecars = &labelFlippingSidecars{}

func newLabelFlippingSidecars(c *framework.Cluster) sidecars {
	return &labelFlippingSidecars{kube: c.Clients.Kube}
}

// completeDecommission sets the label from "false" to "true". The JSON patch tests the old value, so it fails
// rather than answer a decommission nobody asked for.
func (s *labelFlippingSidecars) completeDecommission(ctx context.Context, namespace, name string) error {
	path := "/metadata/labels/" + jsonPointerEscape(naming.DecommissionedLabel)
	patch, err := json.Marshal([]map[string]string{
		{"op": "test", "path": path, "value": naming.DecommissionedLabelFalse},
		{"op": "replace", "path": path, "value": naming.DecommissionedLabelTrue},
	})
	if err != nil {
		return err
	}
	if _, err := s.kube.CoreV1().Services(namespace).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("can't mark member Service %s/%s decommissioned: %w", namespace, name, err)
	}
	return nil
}

// jsonPointerEscape escapes a map key for a JSON pointer (RFC 6901).
func jsonPointerEscape(key string) string {
	out := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		switch key[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, key[i])
		}
	}
	return string(out)
}
