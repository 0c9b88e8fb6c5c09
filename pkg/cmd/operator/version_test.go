package operator

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/version"
)

func TestVersionCommand(t *testing.T) {
	t.Parallel()

	t.Run("text output names the Go version", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		cmd := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"version"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), runtime.Version()) {
			t.Errorf("output %q does not contain %q", out.String(), runtime.Version())
		}
	})

	t.Run("json output decodes to the version info", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		cmd := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"version", "-o", "json"})
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		var got version.Info
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("can't decode %q: %v", out.String(), err)
		}
		if got != version.Get() {
			t.Errorf("got %+v, want %+v", got, version.Get())
		}
	})

	t.Run("an unknown output format is rejected", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		cmd := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"version", "-o", "yaml"})
		err := cmd.Execute()
		if err == nil || !strings.Contains(err.Error(), `got "yaml"`) {
			t.Fatalf("want a rejection of yaml, got %v", err)
		}
	})
}
