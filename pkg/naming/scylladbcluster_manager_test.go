package naming

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestScyllaDBClusterManagerNames(t *testing.T) {
	t.Parallel()

	long := strings.Repeat("a", 250)
	tt := []struct {
		name     string
		got      string
		want     string
		validate func(string) []string
	}{
		{
			name:     "client Service of a short cluster",
			got:      ScyllaDBClusterClientServiceName("basic"),
			want:     "basic-client-" + Hash5("basic"),
			validate: validation.IsDNS1035Label,
		},
		{
			name:     "client Service of a long cluster is truncated to a Service name",
			got:      ScyllaDBClusterClientServiceName(long),
			want:     strings.Repeat("a", 63-len("-client-")-5) + "-client-" + Hash5(long),
			validate: validation.IsDNS1035Label,
		},
		{
			name:     "auth-token Secret of a short cluster",
			got:      ScyllaDBClusterAuthTokenSecretName("basic"),
			want:     "basic-auth-token-" + Hash5("basic"),
			validate: validation.IsDNS1123Subdomain,
		},
		{
			name:     "auth-token Secret of a long cluster is truncated to an object name",
			got:      ScyllaDBClusterAuthTokenSecretName(long),
			want:     strings.Repeat("a", 253-len("-auth-token-")-5) + "-auth-token-" + Hash5(long),
			validate: validation.IsDNS1123Subdomain,
		},
		{
			name:     "truncation leaves no dash before the suffix",
			got:      ScyllaDBClusterClientServiceName(strings.Repeat("a", 49) + "-b"),
			want:     strings.Repeat("a", 49) + "-client-" + Hash5(strings.Repeat("a", 49)+"-b"),
			validate: validation.IsDNS1035Label,
		},
		{
			name:     "host is the client Service's DNS name",
			got:      ScyllaDBManagerClusterHostForScyllaDBCluster("ns", "basic"),
			want:     "basic-client-" + Hash5("basic") + ".ns.svc",
			validate: validation.IsDNS1123Subdomain,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.got != tc.want {
				t.Errorf("expected %q, got %q", tc.want, tc.got)
			}
			if errs := tc.validate(tc.got); len(errs) != 0 {
				t.Errorf("%q is not valid: %v", tc.got, errs)
			}
		})
	}
}
