package naming

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWebhookServiceDNSNamesCoverEveryInClusterForm(t *testing.T) {
	t.Parallel()
	want := []string{
		"scylla-operator-webhook",
		"scylla-operator-webhook.scylla-operator",
		"scylla-operator-webhook.scylla-operator.svc",
		"scylla-operator-webhook.scylla-operator.svc.cluster.local",
	}
	if diff := cmp.Diff(want, WebhookServiceDNSNames(WebhookServiceName, "scylla-operator")); diff != "" {
		t.Errorf("DNS names (-want +got):\n%s", diff)
	}
}
