package operator

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestTLSFlagsAreValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults"},
		{name: "RSA keys", args: []string{"--tls-key-algorithm=RSA-2048"}},
		{name: "short-lived certificates for tests", args: []string{"--tls-certificate-validity=1h", "--tls-ca-validity=24h", "--tls-trust-propagation-delay=10s"}},
		{name: "e2e/operator's 3-minute certificates", args: []string{"--tls-certificate-validity=3m", "--tls-ca-validity=1h", "--tls-refresh-fraction=0.5", "--tls-trust-propagation-delay=20s"}},
		{name: "off: nothing is checked", args: []string{"--automatic-tls=false", "--tls-refresh-fraction=2"}},
		{name: "an unknown algorithm", args: []string{"--tls-key-algorithm=DSA"}, wantErr: `--tls-key-algorithm: unknown key algorithm "DSA"`},
		{name: "an empty algorithm", args: []string{"--tls-key-algorithm="}, wantErr: "--tls-key-algorithm must not be empty"},
		{name: "a refresh fraction of 1", args: []string{"--tls-refresh-fraction=1"}, wantErr: "refresh fraction must be greater than 0 and less than 1"},
		{name: "a CA shorter than its certificates", args: []string{"--tls-ca-validity=24h", "--tls-certificate-validity=48h"}, wantErr: "the CA's validity left at renewal"},
		{name: "a negative propagation delay", args: []string{"--tls-trust-propagation-delay=-1s"}, wantErr: "trust propagation delay must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := NewTLSOptions()
			cmd := &cobra.Command{}
			o.AddFlags(cmd)
			if err := cmd.ParseFlags(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			switch {
			case len(tt.wantErr) == 0 && err != nil:
				t.Errorf("unexpected error: %v", err)
			case len(tt.wantErr) != 0 && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("want an error containing %q, got %v", tt.wantErr, err)
			}
		})
	}
}
