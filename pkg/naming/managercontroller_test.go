package naming

import "testing"

func TestDefaultScyllaDBManagerURLNamesTheServiceOfDeployManager(t *testing.T) {
	t.Parallel()
	if want := "http://scylla-manager.scylla-manager.svc/api/v1"; DefaultScyllaDBManagerURL != want {
		t.Errorf("DefaultScyllaDBManagerURL = %q, want %q", DefaultScyllaDBManagerURL, want)
	}
}

func TestManagerControllerUserAgentNamesTheProgramAndVersion(t *testing.T) {
	t.Parallel()
	if got, want := ManagerControllerUserAgent("v1.2.3"), "scylla-manager-controller/v1.2.3"; got != want {
		t.Errorf("ManagerControllerUserAgent = %q, want %q", got, want)
	}
}
