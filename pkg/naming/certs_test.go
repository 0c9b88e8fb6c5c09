package naming

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestCertificateNamesFollowTheAPIReference(t *testing.T) {
	t.Parallel()
	want := []string{
		"basic-local-serving-ca", "basic-local-serving-certs", "basic-local-client-ca", "basic-local-user-admin",
		"basic-local-cql-connection-configs-admin", "basic-alternator-local-serving-ca", "basic-alternator-local-serving-certs",
	}
	if diff := cmp.Diff(want, CertificateNames("basic")); diff != "" {
		t.Errorf("names differ (-want +got):\n%s", diff)
	}
}

func TestCertificateNamesOfALongDatacenterStayValidAndDistinct(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 250)
	seen := map[string]bool{}
	for _, name := range CertificateNames(long) {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) != 0 {
			t.Errorf("name %q is invalid: %v", name, errs)
		}
		if seen[name] {
			t.Errorf("name %q is used twice", name)
		}
		seen[name] = true
	}
}
