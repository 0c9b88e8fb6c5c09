package operator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
)

func TestSidecarCommandValidatesFlagsFromArgsAndEnvironment(t *testing.T) {
	t.Setenv("SCYLLA_OPERATOR_IP_FAMILY", "IPv5")
	var out bytes.Buffer
	cmd := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
	cmd.SetArgs([]string{"sidecar", "--pod-namespace=ns", "--pod-name=p", "--member-service-name=p", "--cluster-name=c", "--datacenter=dc", "--listen-nodes-type=Nowhere"})
	err := cmd.Execute()
	if err == nil {
		t.Fatal("expected a validation error")
	}
	for _, want := range []string{
		"--rack is required",
		`--ip-family must be IPv4 or IPv6, got "IPv5"`,
		`--listen-nodes-type must be Any or PodIP, got "Nowhere"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
