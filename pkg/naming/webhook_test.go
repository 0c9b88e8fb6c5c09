package naming

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
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

// The API server refuses a webhook configuration whose webhook names are not fully qualified (at least three
// DNS labels), and the two names must differ for errors to say which webhook failed.
func TestWebhookNamesAreDistinctFullyQualifiedNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{WebhookValidatingName, WebhookMutatingName} {
		if errs := validation.IsFullyQualifiedName(nil, name); len(errs) != 0 {
			t.Errorf("webhook name %q is not fully qualified: %v", name, errs.ToAggregate())
		}
	}
	if WebhookValidatingName == WebhookMutatingName {
		t.Errorf("the validating and mutating webhooks share the name %q", WebhookValidatingName)
	}
}
