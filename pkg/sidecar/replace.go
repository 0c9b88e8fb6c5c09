package sidecar

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// hostIDExample shows the form of a host ID in error messages.
const hostIDExample = "8d5ed9f4-7764-4dbd-bad8-43fddce94b7c"

// ParseHostID checks that s is a ScyllaDB host ID, a UUID in its 36-character form (8-4-4-4-12 hexadecimal digits,
// either case), and not the nil UUID, which no node has. It returns it in lower case, as ScyllaDB writes host IDs.
func ParseHostID(s string) (string, error) {
	id, err := uuid.Parse(s)
	// uuid.Parse also takes braced, URN and undashed forms, which ScyllaDB's host IDs never have.
	if err != nil || len(s) != len(hostIDExample) {
		return "", fmt.Errorf("%q is not a host ID: want a UUID like %s", s, hostIDExample)
	}
	if id == uuid.Nil {
		return "", fmt.Errorf("%q is the nil UUID, which is no node's host ID", s)
	}
	return strings.ToLower(s), nil
}

// ReplaceNodeHostID returns the host ID of the node that this node is to replace: the value of the member Service's
// label naming.ReplacingNodeHostIDLabel, which the operator sets before it deletes a lost node's volume and Pod.
// It is empty when the label is missing or empty. A value that is not a host ID is refused: ScyllaDB would not
// start with it, or would replace another node.
func ReplaceNodeHostID(svc *corev1.Service) (string, error) {
	v := svc.Labels[naming.ReplacingNodeHostIDLabel]
	if v == "" {
		return "", nil
	}
	id, err := ParseHostID(v)
	if err != nil {
		return "", fmt.Errorf("member Service %q has label %s: %w; ScyllaDB is not started until the label names the host ID of the node to replace or is removed",
			svc.Namespace+"/"+svc.Name, naming.ReplacingNodeHostIDLabel, err)
	}
	return id, nil
}
