package operator

import (
	"strings"
	"testing"
	"time"
)

func TestOperatorOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*OperatorOptions)
		wantErr string
	}{
		{name: "defaults with an image are valid", mutate: func(*OperatorOptions) {}},
		{name: "missing image", mutate: func(o *OperatorOptions) { o.OperatorImage = "" }, wantErr: "--image must name the operator image"},
		{name: "no workers", mutate: func(o *OperatorOptions) { o.ConcurrentSyncs = 0 }, wantErr: "--concurrent-syncs must be at least 1, got 0"},
		{name: "resync too short", mutate: func(o *OperatorOptions) { o.ResyncPeriod = time.Second }, wantErr: "--resync-period must be at least 1m"},
		{name: "bad qps", mutate: func(o *OperatorOptions) { o.QPS = 0 }, wantErr: "--qps must be greater than 0"},
		{name: "bad serving address", mutate: func(o *OperatorOptions) { o.Serving.Address = "8080" }, wantErr: "--serving-address"},
		{name: "bad lease timing", mutate: func(o *OperatorOptions) { o.LeaderElection.LeaseDuration = time.Second }, wantErr: "--leader-election-lease-duration"},
		{name: "every error is reported at once", mutate: func(o *OperatorOptions) { o.OperatorImage = ""; o.ConcurrentSyncs = -1 }, wantErr: "--concurrent-syncs must be at least 1, got -1\n--image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := NewOperatorOptions()
			o.OperatorImage = "docker.io/scyllakube/scylla-operator:test"
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}
