// Package metrics defines the Prometheus metrics the controllers export beside client-go's.
package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

const namespace = "scylla_operator"

var (
	syncTotal = metrics.NewCounterVec(&metrics.CounterOpts{
		Namespace:      namespace,
		Subsystem:      "controller",
		Name:           "syncs_total",
		Help:           "Number of syncs per controller and result (success or error).",
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller", "result"})

	syncDuration = metrics.NewHistogramVec(&metrics.HistogramOpts{
		Namespace:      namespace,
		Subsystem:      "controller",
		Name:           "sync_duration_seconds",
		Help:           "Duration of syncs per controller.",
		Buckets:        metrics.ExponentialBuckets(0.001, 2, 15),
		StabilityLevel: metrics.ALPHA,
	}, []string{"controller"})

	registerOnce sync.Once
)

func register() {
	registerOnce.Do(func() {
		legacyregistry.MustRegister(syncTotal, syncDuration)
	})
}

// ObserveSync records one finished sync of a controller.
func ObserveSync(controller string, start time.Time, err error) {
	register()
	result := "success"
	if err != nil {
		result = "error"
	}
	syncTotal.WithLabelValues(controller, result).Inc()
	syncDuration.WithLabelValues(controller).Observe(time.Since(start).Seconds())
}
