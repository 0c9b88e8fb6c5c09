package metrics

import (
	"sync"
	"time"

	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
)

var (
	remoteKubernetesClusterHealthy = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "remote_kubernetes_cluster",
		Name:           "healthy",
		Help:           "1 when the last health check of the client of a RemoteKubernetesCluster succeeded, 0 when it failed or the cluster has no usable kubeconfig.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"remote_kubernetes_cluster"})

	remoteKubernetesClusterProbeDuration = metrics.NewGaugeVec(&metrics.GaugeOpts{
		Namespace:      namespace,
		Subsystem:      "remote_kubernetes_cluster",
		Name:           "probe_duration_seconds",
		Help:           "How long the last health check of the client of a RemoteKubernetesCluster took, failed or not.",
		StabilityLevel: metrics.ALPHA,
	}, []string{"remote_kubernetes_cluster"})

	registerRemoteKubernetesClusterOnce sync.Once
)

func registerRemoteKubernetesCluster() {
	registerRemoteKubernetesClusterOnce.Do(func() {
		legacyregistry.MustRegister(remoteKubernetesClusterHealthy, remoteKubernetesClusterProbeDuration)
	})
}

// ObserveRemoteKubernetesClusterProbe records a health check of the client of the RemoteKubernetesCluster name that
// took duration.
func ObserveRemoteKubernetesClusterProbe(name string, healthy bool, duration time.Duration) {
	registerRemoteKubernetesCluster()
	remoteKubernetesClusterHealthy.WithLabelValues(name).Set(boolGauge(healthy))
	remoteKubernetesClusterProbeDuration.WithLabelValues(name).Set(duration.Seconds())
}

// SetRemoteKubernetesClusterUnusable records that the RemoteKubernetesCluster name has no client to check (its
// kubeconfig is missing or invalid): it is not healthy, and no probe ran.
func SetRemoteKubernetesClusterUnusable(name string) {
	registerRemoteKubernetesCluster()
	remoteKubernetesClusterHealthy.WithLabelValues(name).Set(0)
	remoteKubernetesClusterProbeDuration.DeleteLabelValues(name)
}

// ForgetRemoteKubernetesCluster drops the series of the RemoteKubernetesCluster name, once it is gone.
func ForgetRemoteKubernetesCluster(name string) {
	registerRemoteKubernetesCluster()
	remoteKubernetesClusterHealthy.DeleteLabelValues(name)
	remoteKubernetesClusterProbeDuration.DeleteLabelValues(name)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
