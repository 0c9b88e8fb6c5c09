package naming

import "testing"

func TestScyllaDBManagerClusterHostIsTheClientServiceDNSName(t *testing.T) {
	t.Parallel()

	if got, want := ScyllaDBManagerClusterHost("scylla", "basic"), "basic-client.scylla.svc"; got != want {
		t.Errorf("expected %q, got %q", want, got)
	}
}
