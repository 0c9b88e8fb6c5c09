package metrics

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/component-base/metrics/testutil"
)

// remoteKubernetesClusterGauges returns the gauges of the RemoteKubernetesCluster name, by metric name, as /metrics
// serves them.
func remoteKubernetesClusterGauges(t *testing.T, name string) map[string]float64 {
	t.Helper()
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if testutil.LabelsMatch(m, map[string]string{"remote_kubernetes_cluster": name}) {
				got[f.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return got
}

func TestRemoteKubernetesClusterGaugesFollowTheLastProbe(t *testing.T) {
	t.Parallel()
	const name = "metrics-test-dc2"

	ObserveRemoteKubernetesClusterProbe(name, true, 250*time.Millisecond)
	want := map[string]float64{
		"scylla_operator_remote_kubernetes_cluster_healthy":                1,
		"scylla_operator_remote_kubernetes_cluster_probe_duration_seconds": 0.25,
	}
	if diff := cmp.Diff(want, remoteKubernetesClusterGauges(t, name)); diff != "" {
		t.Errorf("after a good probe (-want +got):\n%s", diff)
	}

	ObserveRemoteKubernetesClusterProbe(name, false, 2*time.Second)
	want = map[string]float64{
		"scylla_operator_remote_kubernetes_cluster_healthy":                0,
		"scylla_operator_remote_kubernetes_cluster_probe_duration_seconds": 2,
	}
	if diff := cmp.Diff(want, remoteKubernetesClusterGauges(t, name)); diff != "" {
		t.Errorf("after a failed probe (-want +got):\n%s", diff)
	}

	SetRemoteKubernetesClusterUnusable(name)
	want = map[string]float64{"scylla_operator_remote_kubernetes_cluster_healthy": 0}
	if diff := cmp.Diff(want, remoteKubernetesClusterGauges(t, name)); diff != "" {
		t.Errorf("without a usable kubeconfig (-want +got):\n%s", diff)
	}

	ForgetRemoteKubernetesCluster(name)
	if diff := cmp.Diff(map[string]float64{}, remoteKubernetesClusterGauges(t, name)); diff != "" {
		t.Errorf("once forgotten (-want +got):\n%s", diff)
	}
}
