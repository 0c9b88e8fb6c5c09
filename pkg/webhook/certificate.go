package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	admissionregistrationv1informers "k8s.io/client-go/informers/admissionregistration/v1"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

const (
	// certificateKey is the only key of the certificate manager's queue: it manages one Secret and the webhook
	// configurations that trust it.
	certificateKey = "serving-certificate"
	// recheckInterval bounds how long the certificate manager goes without looking at its objects.
	recheckInterval = 5 * time.Minute
)

// CertificateManagerOptions say which objects the certificate manager keeps and what certificate it keeps in them.
type CertificateManagerOptions struct {
	// Namespace and SecretName name the kubernetes.io/tls Secret holding the CA and the serving certificate.
	Namespace  string
	SecretName string
	// Policy is the CA and serving certificate the Secret holds.
	Policy *certs.Policy
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// CertificateManager keeps the webhook's CA and serving certificate in a Secret, renews them (certs.Reconcile),
// serves the current certificate through GetCertificate, and keeps the caBundle of every webhook of its
// ValidatingWebhookConfiguration (and MutatingWebhookConfiguration, if given) equal to the Secret's trust bundle.
// Several replicas share the Secret: whoever creates it first wins and the others adopt it; an update is guarded by
// the resourceVersion read, so a replica that lost the race reads the winner's certificate again.
type CertificateManager struct {
	kubeClient kubernetes.Interface
	options    CertificateManagerOptions
	now        func() time.Time

	secretLister corev1listers.SecretLister
	// validating and mutating serve the webhook configurations from their informers, or as the manager's own last
	// update returned them while an informer is older: a sync that another event triggers right after an update
	// must not write the same caBundle again over the older copy (a 409).
	validating     *controllerhelpers.MutationCache[*admissionregistrationv1.ValidatingWebhookConfiguration]
	validatingName string
	mutating       *controllerhelpers.MutationCache[*admissionregistrationv1.MutatingWebhookConfiguration]
	mutatingName   string
	cachesSynced   []cache.InformerSynced

	queue workqueue.TypedRateLimitingInterface[string]

	synced  atomic.Bool
	serving atomic.Pointer[tls.Certificate]
}

// NewCertificateManager returns a CertificateManager. The informers should watch only the objects it manages (a
// field selector on their names): the Secret in options.Namespace, the ValidatingWebhookConfiguration named
// validatingName and, when mutatingInformer is not nil, the MutatingWebhookConfiguration named mutatingName.
func NewCertificateManager(
	kubeClient kubernetes.Interface,
	secretInformer corev1informers.SecretInformer,
	validatingInformer admissionregistrationv1informers.ValidatingWebhookConfigurationInformer,
	validatingName string,
	mutatingInformer admissionregistrationv1informers.MutatingWebhookConfigurationInformer,
	mutatingName string,
	options CertificateManagerOptions,
) (*CertificateManager, error) {
	if err := options.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("invalid certificate policy: %w", err)
	}
	m := &CertificateManager{
		kubeClient:   kubeClient,
		options:      options,
		now:          options.Now,
		secretLister: secretInformer.Lister(),
		validating: controllerhelpers.NewMutationCache[*admissionregistrationv1.ValidatingWebhookConfiguration](
			validatingInformer.Informer().GetStore(), admissionregistrationv1.Resource("validatingwebhookconfigurations")),
		validatingName: validatingName,
		cachesSynced:   []cache.InformerSynced{secretInformer.Informer().HasSynced, validatingInformer.Informer().HasSynced},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "webhook-certificate"},
		),
	}
	if m.now == nil {
		m.now = time.Now
	}
	enqueue := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { m.queue.Add(certificateKey) },
		UpdateFunc: func(any, any) { m.queue.Add(certificateKey) },
		DeleteFunc: func(any) { m.queue.Add(certificateKey) },
	}
	informers := []cache.SharedIndexInformer{secretInformer.Informer(), validatingInformer.Informer()}
	if mutatingInformer != nil {
		m.mutating = controllerhelpers.NewMutationCache[*admissionregistrationv1.MutatingWebhookConfiguration](
			mutatingInformer.Informer().GetStore(), admissionregistrationv1.Resource("mutatingwebhookconfigurations"))
		m.mutatingName = mutatingName
		m.cachesSynced = append(m.cachesSynced, mutatingInformer.Informer().HasSynced)
		informers = append(informers, mutatingInformer.Informer())
	}
	for _, informer := range informers {
		if _, err := informer.AddEventHandler(enqueue); err != nil {
			return nil, fmt.Errorf("can't add an event handler: %w", err)
		}
	}
	return m, nil
}

// GetCertificate returns the certificate to serve; it is tls.Config's GetCertificate, so a renewed certificate is
// served from the next handshake on.
func (m *CertificateManager) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c := m.serving.Load()
	if c == nil {
		return nil, errors.New("no serving certificate yet")
	}
	return c, nil
}

// Ready returns an error until the caches are synced and a certificate valid now is served.
func (m *CertificateManager) Ready() error {
	if !m.synced.Load() {
		return errors.New("the Secret and webhook configuration caches are not synced yet")
	}
	c := m.serving.Load()
	if c == nil {
		return errors.New("no serving certificate yet")
	}
	if now := m.now(); !now.Before(c.Leaf.NotAfter) {
		return fmt.Errorf("the serving certificate expired at %v", c.Leaf.NotAfter)
	}
	return nil
}

// Run syncs until ctx is done.
func (m *CertificateManager) Run(ctx context.Context) {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer m.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting the serving certificate manager", "namespace", m.options.Namespace, "secret", m.options.SecretName, "validatingWebhookConfiguration", m.validatingName)
	if !cache.WaitForNamedCacheSync("webhook-certificate", ctx.Done(), m.cachesSynced...) {
		return
	}
	m.synced.Store(true)
	m.queue.Add(certificateKey)
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		for m.processNextWorkItem(ctx) {
		}
	}, time.Second)
	<-ctx.Done()
	logger.Info("Stopping the serving certificate manager")
}

func (m *CertificateManager) processNextWorkItem(ctx context.Context) bool {
	key, quit := m.queue.Get()
	if quit {
		return false
	}
	defer m.queue.Done(key)
	recheckIn, err := m.sync(ctx)
	switch {
	case apierrors.IsConflict(err):
		// Another replica, or this one just before, changed the object since the cache saw it.
		klog.FromContext(ctx).V(2).Info("The cache is behind the API server; syncing the serving certificate again", "err", err)
		m.queue.AddRateLimited(key)
		return true
	case err != nil:
		klog.FromContext(ctx).Error(err, "Can't sync the serving certificate; retrying")
		m.queue.AddRateLimited(key)
		return true
	}
	m.queue.Forget(key)
	m.queue.AddAfter(key, min(recheckIn, recheckInterval))
	return true
}

// sync brings the Secret, the served certificate and the caBundles up to date, and returns when to look again.
func (m *CertificateManager) sync(ctx context.Context) (time.Duration, error) {
	now := m.now()
	secret, err := m.secretLister.Secrets(m.options.Namespace).Get(m.options.SecretName)
	switch {
	case apierrors.IsNotFound(err):
		secret = nil
	case err != nil:
		return 0, fmt.Errorf("can't get Secret %q: %w", m.secretKey(), err)
	}
	state, recheck, err := m.syncSecret(ctx, secret, now)
	if err != nil {
		return 0, err
	}
	m.serve(ctx, state)
	if err := m.syncCABundles(ctx, certs.EncodeCertificatesPEM(state.TrustBundle...)); err != nil {
		return 0, err
	}
	return recheck.Sub(now), nil
}

func (m *CertificateManager) secretKey() string {
	return m.options.Namespace + "/" + m.options.SecretName
}

// syncSecret returns the certificate state of secret (nil when it doesn't exist) after renewing what is due, having
// written any change to the Secret.
func (m *CertificateManager) syncSecret(ctx context.Context, secret *corev1.Secret, now time.Time) (*certs.State, time.Time, error) {
	current, err := m.stateFromSecret(ctx, secret)
	if err != nil {
		return nil, time.Time{}, err
	}
	next, changed, recheck, err := certs.Reconcile(current, m.options.Policy, now)
	if err != nil {
		return nil, time.Time{}, err
	}
	if !changed {
		return next, recheck, nil
	}
	data, err := secretData(next)
	if err != nil {
		return nil, time.Time{}, err
	}
	secrets := m.kubeClient.CoreV1().Secrets(m.options.Namespace)
	if secret == nil {
		required := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      m.options.SecretName,
				Namespace: m.options.Namespace,
				Labels:    map[string]string{naming.ManagedByLabel: naming.ManagedByLabelValue},
			},
			Type: corev1.SecretTypeTLS,
			Data: data,
		}
		_, err := secrets.Create(ctx, required, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// Another replica created it first: adopt its certificate rather than replace it.
			existing, err := secrets.Get(ctx, m.options.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, time.Time{}, fmt.Errorf("can't get Secret %q another replica created: %w", m.secretKey(), err)
			}
			klog.FromContext(ctx).Info("Adopting the serving certificate Secret another replica created", "secret", m.secretKey())
			return m.syncSecret(ctx, existing, now)
		}
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("can't create Secret %q: %w", m.secretKey(), err)
		}
		klog.FromContext(ctx).Info("Created the serving certificate Secret", "secret", m.secretKey(), "ca", next.CA.Certificate.Subject.CommonName)
		return next, recheck, nil
	}

	updated := secret.DeepCopy()
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	updated.Labels[naming.ManagedByLabel] = naming.ManagedByLabelValue
	if updated.Data == nil {
		updated.Data = map[string][]byte{}
	}
	for k, v := range data {
		updated.Data[k] = v
	}
	// The update carries the resourceVersion read, so a replica that renewed from an older Secret gets a conflict
	// and reads the other replica's certificate on its retry.
	if _, err := secrets.Update(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return nil, time.Time{}, fmt.Errorf("can't update Secret %q: %w", m.secretKey(), err)
	}
	klog.FromContext(ctx).Info("Renewed the serving certificate", "secret", m.secretKey(),
		"ca", next.CA.Certificate.Subject.CommonName, "trustedCAs", len(next.TrustBundle), "notAfter", next.Certificate.Certificate.NotAfter)
	return next, recheck, nil
}

// stateFromSecret returns the certificate state secret holds. A Secret of another type is an error, as its type
// can't be changed; content that doesn't parse is logged and regenerated, as nothing else can use it either.
func (m *CertificateManager) stateFromSecret(ctx context.Context, secret *corev1.Secret) (*certs.State, error) {
	if secret == nil {
		return nil, nil
	}
	if secret.Type != corev1.SecretTypeTLS {
		return nil, fmt.Errorf("Secret %q has type %q, want %q; delete it and the webhook creates it again", m.secretKey(), secret.Type, corev1.SecretTypeTLS)
	}
	var missing []string
	for _, k := range []string{naming.WebhookCABundleKey, naming.WebhookCAKeyKey, corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
		if len(secret.Data[k]) == 0 {
			missing = append(missing, k)
		}
	}
	if len(missing) != 0 {
		klog.FromContext(ctx).Info("The serving certificate Secret lacks keys; generating a new CA and certificate", "secret", m.secretKey(), "missing", missing)
		return nil, nil
	}
	state, err := certs.DecodeStatePEM(secret.Data[naming.WebhookCABundleKey], secret.Data[naming.WebhookCAKeyKey], secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		klog.FromContext(ctx).Info("The serving certificate Secret can't be parsed; generating a new CA and certificate", "secret", m.secretKey(), "reason", err.Error())
		return nil, nil
	}
	return state, nil
}

func secretData(s *certs.State) (map[string][]byte, error) {
	bundle, caKey, cert, key, err := certs.EncodeStatePEM(s)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		naming.WebhookCABundleKey: bundle,
		naming.WebhookCAKeyKey:    caKey,
		corev1.TLSCertKey:         cert,
		corev1.TLSPrivateKeyKey:   key,
	}, nil
}

// serve makes GetCertificate return state's certificate, unless it already does.
func (m *CertificateManager) serve(ctx context.Context, state *certs.State) {
	leaf := state.Certificate
	if c := m.serving.Load(); c != nil && bytes.Equal(c.Leaf.Raw, leaf.Certificate.Raw) {
		return
	}
	m.serving.Store(&tls.Certificate{
		Certificate: [][]byte{leaf.Certificate.Raw},
		PrivateKey:  leaf.Key,
		Leaf:        leaf.Certificate,
	})
	klog.FromContext(ctx).Info("Serving a new certificate", "serial", leaf.Certificate.SerialNumber.Text(16),
		"issuer", leaf.Certificate.Issuer.CommonName, "notAfter", leaf.Certificate.NotAfter, "dnsNames", leaf.Certificate.DNSNames, "ipAddresses", leaf.Certificate.IPAddresses)
}

// syncCABundles sets the caBundle of every webhook of the managed webhook configurations to bundle, writing only a
// configuration where some webhook differs. A configuration that doesn't exist (yet) is skipped: its informer
// triggers a sync when it appears.
func (m *CertificateManager) syncCABundles(ctx context.Context, bundle []byte) error {
	err := syncCABundle(ctx, "ValidatingWebhookConfiguration", m.validatingName, bundle,
		func(name string) ([]*admissionregistrationv1.WebhookClientConfig, func(context.Context) error, error) {
			vwc, err := m.validating.Get("", name)
			if err != nil {
				return nil, nil, err
			}
			vwc = vwc.DeepCopy()
			configs := make([]*admissionregistrationv1.WebhookClientConfig, 0, len(vwc.Webhooks))
			for i := range vwc.Webhooks {
				configs = append(configs, &vwc.Webhooks[i].ClientConfig)
			}
			return configs, func(ctx context.Context) error {
				updated, err := m.kubeClient.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, vwc, metav1.UpdateOptions{})
				if err == nil {
					m.validating.Written(updated)
				}
				return err
			}, nil
		})
	if err != nil || m.mutating == nil {
		return err
	}
	return syncCABundle(ctx, "MutatingWebhookConfiguration", m.mutatingName, bundle,
		func(name string) ([]*admissionregistrationv1.WebhookClientConfig, func(context.Context) error, error) {
			mwc, err := m.mutating.Get("", name)
			if err != nil {
				return nil, nil, err
			}
			mwc = mwc.DeepCopy()
			configs := make([]*admissionregistrationv1.WebhookClientConfig, 0, len(mwc.Webhooks))
			for i := range mwc.Webhooks {
				configs = append(configs, &mwc.Webhooks[i].ClientConfig)
			}
			return configs, func(ctx context.Context) error {
				updated, err := m.kubeClient.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, mwc, metav1.UpdateOptions{})
				if err == nil {
					m.mutating.Written(updated)
				}
				return err
			}, nil
		})
}

// syncCABundle sets the caBundle of every webhook of the configuration of kind named name to bundle. get returns a
// copy's client configs and the update that writes the copy; it is called only when some caBundle differs.
func syncCABundle(ctx context.Context, kind, name string, bundle []byte,
	get func(name string) ([]*admissionregistrationv1.WebhookClientConfig, func(context.Context) error, error)) error {
	configs, update, err := get(name)
	switch {
	case apierrors.IsNotFound(err):
		klog.FromContext(ctx).V(2).Info("No webhook configuration to keep the caBundle of", "kind", kind, "name", name)
		return nil
	case err != nil:
		return fmt.Errorf("can't get %s %q: %w", kind, name, err)
	}
	if !setCABundles(configs, bundle) {
		return nil
	}
	if err := update(ctx); err != nil {
		return fmt.Errorf("can't update the caBundle of %s %q: %w", kind, name, err)
	}
	klog.FromContext(ctx).Info("Updated the caBundle of a webhook configuration", "kind", kind, "name", name, "webhooks", len(configs))
	return nil
}

// setCABundles sets every config's caBundle to bundle, whether it names a Service or a URL, and reports whether any
// was different.
func setCABundles(configs []*admissionregistrationv1.WebhookClientConfig, bundle []byte) bool {
	changed := false
	for _, c := range configs {
		if !bytes.Equal(c.CABundle, bundle) {
			c.CABundle = bytes.Clone(bundle)
			changed = true
		}
	}
	return changed
}
