package webhook

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	admissionRequestsTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      "scylla_operator",
		Subsystem:      "webhook",
		Name:           "admission_requests_total",
		Help:           "Number of admission requests by resource, operation and whether they were allowed (true, false, or error when no AdmissionReview could be answered).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource", "operation", "allowed"})

	admissionDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      "scylla_operator",
		Subsystem:      "webhook",
		Name:           "admission_duration_seconds",
		Help:           "Time to answer an admission request, by resource and operation.",
		Buckets:        metrics.ExponentialBuckets(0.0005, 2, 14),
		StabilityLevel: metrics.ALPHA,
	}, []string{"resource", "operation"})

	registerMetricsOnce sync.Once
)

// registerMetrics registers the webhook's metrics with the registry /metrics serves, once.
func registerMetrics() {
	registerMetricsOnce.Do(func() {
		legacyregistry.MustRegister(admissionRequestsTotal, admissionDuration)
	})
}

func observeAdmission(resource, operation, allowed string, start time.Time) {
	registerMetrics()
	admissionRequestsTotal.WithLabelValues(resource, operation, allowed).Inc()
	admissionDuration.WithLabelValues(resource, operation).Observe(time.Since(start).Seconds())
}
