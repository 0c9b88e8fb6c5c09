package operator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeinformers "k8s.io/client-go/informers"
	admissionregistrationv1informers "k8s.io/client-go/informers/admissionregistration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	scyllainformers "github.com/scyllakube/client/scylla/informers/externalversions"

	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/serving"
	"github.com/scyllakube/scylla-operator/pkg/webhook"
)

const (
	// podNamespaceEnv is set from the pod's metadata.namespace by the Deployment; it is --namespace's default.
	podNamespaceEnv = "POD_NAMESPACE"
	// webhookTrustPropagationDelay is how long a changed caBundle takes to reach every API server: a new CA signs
	// nothing, and a replaced one stays trusted, for this long (certs.Policy).
	webhookTrustPropagationDelay = 2 * time.Minute
	// maxShutdownGracePeriod bounds --shutdown-grace-period: admission requests time out after at most 30s.
	maxShutdownGracePeriod = 10 * time.Minute
)

// WebhookOptions are the options of the webhook program.
type WebhookOptions struct {
	genericclioptions.ClientConfig

	SecurePort                         int
	Namespace                          string
	TLSSecretName                      string
	ValidatingWebhookConfigurationName string
	MutatingWebhookConfigurationName   string
	ServiceName                        string
	ExtraSANs                          []string
	CAValidity                         time.Duration
	ServingValidity                    time.Duration
	RefreshFraction                    float64
	ShutdownGracePeriod                time.Duration

	// Set by Complete.
	kubeClient   kubernetes.Interface
	scyllaClient scyllaclientset.Interface
}

// NewWebhookOptions returns WebhookOptions with their defaults; the namespace defaults to $POD_NAMESPACE.
func NewWebhookOptions() *WebhookOptions {
	return &WebhookOptions{
		ClientConfig:                       genericclioptions.NewClientConfig(naming.WebhookProgramName),
		SecurePort:                         naming.WebhookSecurePort,
		Namespace:                          os.Getenv(podNamespaceEnv),
		TLSSecretName:                      naming.WebhookServingCertSecretName,
		ValidatingWebhookConfigurationName: naming.WebhookConfigurationName,
		ServiceName:                        naming.WebhookServiceName,
		CAValidity:                         365 * 24 * time.Hour,
		ServingValidity:                    30 * 24 * time.Hour,
		RefreshFraction:                    0.8,
		ShutdownGracePeriod:                25 * time.Second,
	}
}

// NewWebhookCommand returns the webhook subcommand.
func NewWebhookCommand() *cobra.Command {
	return newControllerProgramCommand(NewWebhookOptions(), "webhook",
		"Run the admission webhook of the scylla.scylladb.com API.",
		"webhook serves the validating (and mutating) admission webhook of the scylla.scylladb.com API over TLS, with "+
			"/healthz, /readyz and /metrics on the same port. It keeps its own CA and serving certificate in a Secret, "+
			"renews them before they expire and keeps the caBundle of its webhook configurations current.")
}

// AddFlags registers the webhook's flags.
func (o *WebhookOptions) AddFlags(cmd *cobra.Command) {
	o.ClientConfig.AddFlags(cmd)
	fs := cmd.Flags()
	fs.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "TLS port of /validate, /mutate, /healthz, /readyz and /metrics, on every interface.")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "Namespace of the serving certificate Secret. Defaults to $"+podNamespaceEnv+".")
	fs.StringVar(&o.TLSSecretName, "tls-secret-name", o.TLSSecretName, "Name of the kubernetes.io/tls Secret holding the webhook's CA and serving certificate; created if absent.")
	fs.StringVar(&o.ValidatingWebhookConfigurationName, "validating-webhook-configuration-name", o.ValidatingWebhookConfigurationName, "ValidatingWebhookConfiguration whose webhooks' caBundle is kept current.")
	fs.StringVar(&o.MutatingWebhookConfigurationName, "mutating-webhook-configuration-name", o.MutatingWebhookConfigurationName, "MutatingWebhookConfiguration whose webhooks' caBundle is kept current. Empty manages none.")
	fs.StringVar(&o.ServiceName, "service-name", o.ServiceName, "Service in front of the webhook; the serving certificate is valid for its in-cluster DNS names.")
	fs.StringArrayVar(&o.ExtraSANs, "extra-san", o.ExtraSANs, "Another DNS name or IP address the serving certificate is valid for, e.g. 127.0.0.1 when the API server calls a url; repeatable.")
	fs.DurationVar(&o.CAValidity, "ca-validity", o.CAValidity, "How long a generated CA is valid.")
	fs.DurationVar(&o.ServingValidity, "serving-validity", o.ServingValidity, "How long a serving certificate is valid.")
	fs.Float64Var(&o.RefreshFraction, "refresh-fraction", o.RefreshFraction, "Fraction of a certificate's (and the CA's) validity after which it is renewed, between 0 and 1.")
	fs.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", o.ShutdownGracePeriod, "How long requests in flight may take to finish once SIGTERM stopped accepting new ones.")
}

// Validate returns every problem with the webhook's flags.
func (o *WebhookOptions) Validate() error {
	errs := []error{o.ClientConfig.Validate()}
	if o.SecurePort < 1 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port must be between 1 and 65535, got %d", o.SecurePort))
	}
	if len(o.Namespace) == 0 {
		errs = append(errs, fmt.Errorf("--namespace must be set (or $%s)", podNamespaceEnv))
	} else {
		errs = append(errs, nameError("--namespace", o.Namespace, validation.IsDNS1123Label))
	}
	errs = append(errs,
		nameError("--tls-secret-name", o.TLSSecretName, validation.IsDNS1123Subdomain),
		nameError("--validating-webhook-configuration-name", o.ValidatingWebhookConfigurationName, validation.IsDNS1123Subdomain),
		nameError("--service-name", o.ServiceName, validation.IsDNS1123Label),
	)
	if len(o.MutatingWebhookConfigurationName) != 0 {
		errs = append(errs, nameError("--mutating-webhook-configuration-name", o.MutatingWebhookConfigurationName, validation.IsDNS1123Subdomain))
	}
	for _, san := range o.ExtraSANs {
		if net.ParseIP(san) == nil {
			if msgs := validation.IsDNS1123Subdomain(san); len(msgs) != 0 {
				errs = append(errs, fmt.Errorf("--extra-san %q is neither an IP address nor a DNS name: %s", san, msgs[0]))
			}
		}
	}
	if o.CAValidity <= 0 {
		errs = append(errs, fmt.Errorf("--ca-validity must be positive, got %v", o.CAValidity))
	}
	if o.ServingValidity <= 0 {
		errs = append(errs, fmt.Errorf("--serving-validity must be positive, got %v", o.ServingValidity))
	}
	if !(o.RefreshFraction > 0 && o.RefreshFraction < 1) {
		errs = append(errs, fmt.Errorf("--refresh-fraction must be greater than 0 and less than 1, got %v", o.RefreshFraction))
	}
	if o.ShutdownGracePeriod < 0 || o.ShutdownGracePeriod > maxShutdownGracePeriod {
		errs = append(errs, fmt.Errorf("--shutdown-grace-period must be between 0s and %v, got %v", maxShutdownGracePeriod, o.ShutdownGracePeriod))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := o.certificatePolicy().Validate(); err != nil {
		return fmt.Errorf("--ca-validity %v, --serving-validity %v and --refresh-fraction %v can't keep a certificate served: %w", o.CAValidity, o.ServingValidity, o.RefreshFraction, err)
	}
	return nil
}

// nameError returns an error naming flag when validate refuses value, or nil.
func nameError(flag, value string, validate func(string) []string) error {
	if msgs := validate(value); len(msgs) != 0 {
		return fmt.Errorf("%s %q is not a valid name: %s", flag, value, msgs[0])
	}
	return nil
}

// certificatePolicy is the CA and serving certificate the flags ask for.
func (o *WebhookOptions) certificatePolicy() *certs.Policy {
	req := certs.CertificateRequest{
		CommonName: o.ServiceName,
		DNSNames:   naming.WebhookServiceDNSNames(o.ServiceName, o.Namespace),
		Usage:      certs.ServingUsage,
		Validity:   o.ServingValidity,
	}
	for _, san := range o.ExtraSANs {
		if ip := net.ParseIP(san); ip != nil {
			req.IPAddresses = append(req.IPAddresses, ip)
		} else {
			req.DNSNames = append(req.DNSNames, san)
		}
	}
	return &certs.Policy{
		CACommonNamePrefix:    naming.WebhookCACommonNamePrefix,
		CAValidity:            o.CAValidity,
		Certificate:           req,
		RefreshFraction:       o.RefreshFraction,
		TrustPropagationDelay: webhookTrustPropagationDelay,
	}
}

// Complete loads the client configuration and builds the clients.
func (o *WebhookOptions) Complete() error {
	if err := o.ClientConfig.Complete(); err != nil {
		return err
	}
	var err error
	o.kubeClient, o.scyllaClient, err = newClients(o.RestConfig)
	return err
}

// webhookProgram is what the webhook runs: its informer factories, the certificate manager and the HTTP handler.
type webhookProgram struct {
	informerFactories []informerFactory
	certificates      *webhook.CertificateManager
	handler           http.Handler
	// lookupSynced is set once the caches of the objects rules look up are synced.
	lookupSynced *atomic.Bool
	// shuttingDown is set when the server stops accepting requests; the replica is no longer ready.
	shuttingDown *atomic.Bool
}

// newProgram builds the webhook's informers, certificate manager and handler on the completed clients.
func (o *WebhookOptions) newProgram() (*webhookProgram, error) {
	p := &webhookProgram{lookupSynced: &atomic.Bool{}, shuttingDown: &atomic.Bool{}}

	// The Secret and the webhook configurations are watched by name only.
	secretFactory := kubeinformers.NewSharedInformerFactoryWithOptions(o.kubeClient, 0, kubeinformers.WithNamespace(o.Namespace), byName(o.TLSSecretName))
	validatingFactory := kubeinformers.NewSharedInformerFactoryWithOptions(o.kubeClient, 0, byName(o.ValidatingWebhookConfigurationName))
	p.informerFactories = append(p.informerFactories, secretFactory, validatingFactory)
	mutating := o.mutatingInformer(&p.informerFactories)

	certificates, err := webhook.NewCertificateManager(o.kubeClient,
		secretFactory.Core().V1().Secrets(),
		validatingFactory.Admissionregistration().V1().ValidatingWebhookConfigurations(), o.ValidatingWebhookConfigurationName,
		mutating, o.MutatingWebhookConfigurationName,
		webhook.CertificateManagerOptions{Namespace: o.Namespace, SecretName: o.TLSSecretName, Policy: o.certificatePolicy()},
	)
	if err != nil {
		return nil, err
	}
	p.certificates = certificates

	// Rules only ask whether an object exists, so the caches keep metadata only.
	scyllaFactory := scyllainformers.NewSharedInformerFactoryWithOptions(o.scyllaClient, 0, scyllainformers.WithTransform(keepMetadataOnly))
	p.informerFactories = append(p.informerFactories, scyllaFactory)
	clusters := scyllaFactory.Scylla().V1alpha1().ScyllaDBClusters()
	datacenters := scyllaFactory.Scylla().V1alpha1().ScyllaDBDatacenters()
	lookup := webhook.NewLookup(o.scyllaClient, clusters.Lister(), datacenters.Lister())
	// Informers are created on first use; they must exist before the factory starts.
	clusters.Informer()
	datacenters.Informer()

	scheme, err := webhook.NewScheme()
	if err != nil {
		return nil, err
	}
	admission, err := webhook.NewAdmission(scheme, webhook.ScyllaResources(lookup)...)
	if err != nil {
		return nil, err
	}
	// Liveness is answering at all: /healthz has no check that can fail while the server serves.
	var healthz []serving.Checker
	readyz := []serving.Checker{
		serving.CheckFunc{CheckName: "serving-certificate", F: certificates.Ready},
		serving.CheckFunc{CheckName: "informers-synced", F: func() error {
			if !p.lookupSynced.Load() {
				return errors.New("the ScyllaDBCluster and ScyllaDBDatacenter caches are not synced yet")
			}
			return nil
		}},
		serving.CheckFunc{CheckName: "shutting-down", F: func() error {
			if p.shuttingDown.Load() {
				return errors.New("the webhook is shutting down")
			}
			return nil
		}},
	}
	p.handler = webhook.NewHandler(admission, (&serving.Options{}).Handler(healthz, readyz))
	return p, nil
}

// Run serves the webhook on --secure-port until ctx is done, then drains the requests in flight.
func (o *WebhookOptions) Run(ctx context.Context) error {
	klog.InfoS("Starting the webhook", "securePort", o.SecurePort, "namespace", o.Namespace, "secret", o.TLSSecretName,
		"validatingWebhookConfiguration", o.ValidatingWebhookConfigurationName, "mutatingWebhookConfiguration", o.MutatingWebhookConfigurationName,
		"service", o.ServiceName, "extraSANs", o.ExtraSANs)
	p, err := o.newProgram()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", net.JoinHostPort("", strconv.Itoa(o.SecurePort)))
	if err != nil {
		return fmt.Errorf("can't listen on --secure-port %d: %w", o.SecurePort, err)
	}
	return p.run(ctx, l, o.ShutdownGracePeriod)
}

// run serves on l until ctx is done. The certificate keeps being renewed and served until the last request in
// flight finished.
func (p *webhookProgram) run(ctx context.Context, l net.Listener, gracePeriod time.Duration) error {
	backgroundCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() {
		stopBackground()
		for _, f := range p.informerFactories {
			f.Shutdown()
		}
		wg.Wait()
	}()
	for _, f := range p.informerFactories {
		f.Start(backgroundCtx.Done())
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.certificates.Run(backgroundCtx)
	}()
	go func() {
		defer wg.Done()
		for _, f := range p.informerFactories {
			for typ, ok := range f.WaitForCacheSync(backgroundCtx.Done()) {
				if !ok {
					klog.InfoS("Stopped before the cache synced", "type", typ)
					return
				}
			}
		}
		p.lookupSynced.Store(true)
	}()

	go func() {
		<-ctx.Done()
		p.shuttingDown.Store(true)
	}()
	return webhook.ServeTLS(ctx, l, p.handler, p.certificates.GetCertificate, gracePeriod)
}

// mutatingInformer returns the informer of the MutatingWebhookConfiguration to keep the caBundle of, adding its
// factory to factories, or nil when there is none.
func (o *WebhookOptions) mutatingInformer(factories *[]informerFactory) admissionregistrationv1informers.MutatingWebhookConfigurationInformer {
	if len(o.MutatingWebhookConfigurationName) == 0 {
		return nil
	}
	f := kubeinformers.NewSharedInformerFactoryWithOptions(o.kubeClient, 0, byName(o.MutatingWebhookConfigurationName))
	*factories = append(*factories, f)
	return f.Admissionregistration().V1().MutatingWebhookConfigurations()
}

// byName makes an informer factory list and watch only the objects of that name. RBAC authorizes such a list or
// watch by the name, so the webhook's role can be limited to its own objects.
func byName(name string) kubeinformers.SharedInformerOption {
	return kubeinformers.WithTweakListOptions(func(opts *metav1.ListOptions) {
		opts.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
}

// keepMetadataOnly drops all but the metadata of cached ScyllaDBClusters and ScyllaDBDatacenters.
func keepMetadataOnly(obj any) (any, error) {
	switch o := obj.(type) {
	case *scyllav1alpha1.ScyllaDBCluster:
		return &scyllav1alpha1.ScyllaDBCluster{TypeMeta: o.TypeMeta, ObjectMeta: trimmedMeta(o.ObjectMeta)}, nil
	case *scyllav1alpha1.ScyllaDBDatacenter:
		return &scyllav1alpha1.ScyllaDBDatacenter{TypeMeta: o.TypeMeta, ObjectMeta: trimmedMeta(o.ObjectMeta)}, nil
	}
	return obj, nil
}

func trimmedMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion}
}
