package genericclioptions

import (
	"math"
	"strings"
	"testing"
)

func TestClientConfigValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		qps     float32
		burst   int
		wantErr string
	}{
		{name: "the defaults", qps: 50, burst: 75},
		{name: "a fraction of a query per second", qps: 0.5, burst: 1},
		{name: "zero qps", qps: 0, burst: 75, wantErr: "--qps must be greater than 0 and finite, got 0"},
		{name: "negative qps", qps: -1, burst: 75, wantErr: "--qps must be greater than 0 and finite, got -1"},
		{name: "NaN qps", qps: float32(math.NaN()), burst: 75, wantErr: "--qps must be greater than 0 and finite, got NaN"},
		{name: "infinite qps", qps: float32(math.Inf(1)), burst: 75, wantErr: "--qps must be greater than 0 and finite, got +Inf"},
		{name: "zero burst", qps: 50, burst: 0, wantErr: "--burst must be at least 1, got 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := (&ClientConfig{QPS: tc.qps, Burst: tc.burst}).Validate()
			switch {
			case len(tc.wantErr) == 0 && err != nil:
				t.Errorf("unexpected error: %v", err)
			case len(tc.wantErr) != 0 && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
