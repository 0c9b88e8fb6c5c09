package metrics

import (
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

func TestCertificateExpiryIsExportedPerSecretAndForgotten(t *testing.T) {
	SetCertificateExpiry("ns", "basic-local-serving-certs", time.Unix(1800000000, 0))
	want := `
# HELP scylla_operator_certificate_expiration_timestamp_seconds [ALPHA] When the certificate the operator keeps in a Secret expires (its NotAfter), in seconds since the Unix epoch, by namespace and Secret.
# TYPE scylla_operator_certificate_expiration_timestamp_seconds gauge
scylla_operator_certificate_expiration_timestamp_seconds{namespace="ns",secret="basic-local-serving-certs"} 1.8e+09
`
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(want), "scylla_operator_certificate_expiration_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	DeleteCertificateExpiry("ns", "basic-local-serving-certs")
	if err := testutil.GatherAndCompare(legacyregistry.DefaultGatherer, strings.NewReader(""), "scylla_operator_certificate_expiration_timestamp_seconds"); err != nil {
		t.Error(err)
	}
}
