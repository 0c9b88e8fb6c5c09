package naming

import "fmt"

// Names of the admission webhook program and of the objects it manages.
const (
	// WebhookProgramName names the webhook program in its User-Agent.
	WebhookProgramName = "webhook"

	// WebhookServiceName is the default Service in front of the webhook's pods.
	WebhookServiceName = "scylla-operator-webhook"
	// WebhookServingCertSecretName is the default Secret holding the webhook's CA and serving certificate.
	WebhookServingCertSecretName = "scylla-operator-webhook-serving-cert"
	// WebhookConfigurationName is the default ValidatingWebhookConfiguration (and MutatingWebhookConfiguration)
	// whose webhooks' caBundle the webhook keeps current.
	WebhookConfigurationName = "scylla-operator"
	// WebhookValidatingName and WebhookMutatingName name the one webhook of the ValidatingWebhookConfiguration
	// and of the MutatingWebhookConfiguration the install manifests deploy; the API server names them in its
	// errors about calling them.
	WebhookValidatingName = "validate.scylla.scylladb.com"
	WebhookMutatingName   = "mutate.scylla.scylladb.com"
	// WebhookSecurePort is the webhook's default TLS port.
	WebhookSecurePort = 9443

	// WebhookValidatePath and WebhookMutatePath are the webhook's admission endpoints.
	WebhookValidatePath = "/validate"
	WebhookMutatePath   = "/mutate"

	// WebhookCACommonNamePrefix starts the common name of every CA the webhook generates; the generation time
	// follows, so that a rolled-over CA is told apart from its predecessor in the trust bundle.
	WebhookCACommonNamePrefix = "scylla-operator-webhook-ca"

	// WebhookCABundleKey is the key of the serving certificate Secret holding the PEM trust bundle: the current CA
	// and the CAs it replaced while a served certificate may still be signed by them. The Secret's type is
	// kubernetes.io/tls, so the serving certificate and key are under tls.crt and tls.key.
	WebhookCABundleKey = "ca.crt"
	// WebhookCAKeyKey is the key of the serving certificate Secret holding the current CA's PEM private key.
	WebhookCAKeyKey = "ca.key"
)

// WebhookServiceDNSNames returns the DNS names a Service is reached by from inside the cluster: "<svc>",
// "<svc>.<ns>", "<svc>.<ns>.svc" and "<svc>.<ns>.svc.cluster.local".
func WebhookServiceDNSNames(service, namespace string) []string {
	return []string{
		service,
		fmt.Sprintf("%s.%s", service, namespace),
		fmt.Sprintf("%s.%s.svc", service, namespace),
		fmt.Sprintf("%s.%s.svc.cluster.local", service, namespace),
	}
}
