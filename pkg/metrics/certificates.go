package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	certificateExpiry = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "certificate",
		Name:           "expiration_timestamp_seconds",
		Help:           "When the certificate the operator keeps in a Secret expires (its NotAfter), in seconds since the Unix epoch, by namespace and Secret.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"namespace", "secret"})

	registerCertificatesOnce sync.Once
)

func registerCertificates() {
	registerCertificatesOnce.Do(func() {
		legacyregistry.MustRegister(certificateExpiry)
	})
}

// SetCertificateExpiry records when the certificate in Secret namespace/secret expires.
func SetCertificateExpiry(namespace, secret string, notAfter time.Time) {
	registerCertificates()
	certificateExpiry.WithLabelValues(namespace, secret).Set(float64(notAfter.Unix()))
}

// DeleteCertificateExpiry forgets the certificate of Secret namespace/secret, once the operator no longer keeps it.
func DeleteCertificateExpiry(namespace, secret string) {
	registerCertificates()
	certificateExpiry.DeleteLabelValues(namespace, secret)
}
