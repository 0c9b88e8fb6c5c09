package webhook

import (
	"bytes"
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

const (
	testNamespace = "scylla-operator"
	testSecret    = naming.WebhookServingCertSecretName
	testConfig    = naming.WebhookConfigurationName
)

var testStart = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func testCertificatePolicy() *certs.Policy {
	return &certs.Policy{
		CACommonNamePrefix: naming.WebhookCACommonNamePrefix,
		CAValidity:         365 * 24 * time.Hour,
		Certificate: certs.CertificateRequest{
			CommonName:  naming.WebhookServiceName,
			DNSNames:    naming.WebhookServiceDNSNames(naming.WebhookServiceName, testNamespace),
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			Usage:       certs.ServingUsage,
			Validity:    30 * 24 * time.Hour,
		},
		RefreshFraction:       0.8,
		TrustPropagationDelay: 2 * time.Minute,
	}
}

func testValidatingConfiguration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: testConfig, ResourceVersion: "1"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{Name: "in-cluster.scylla.scylladb.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{
				Service: &admissionregistrationv1.ServiceReference{Namespace: testNamespace, Name: naming.WebhookServiceName, Path: ptr.To(naming.WebhookValidatePath)},
			}},
			{Name: "local.scylla.scylladb.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To("https://127.0.0.1:9443/validate"), CABundle: []byte("stale"),
			}},
		},
	}
}

func testMutatingConfiguration() *admissionregistrationv1.MutatingWebhookConfiguration {
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: testConfig, ResourceVersion: "1"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "defaults.scylla.scylladb.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{
			Service: &admissionregistrationv1.ServiceReference{Namespace: testNamespace, Name: naming.WebhookServiceName, Path: ptr.To(naming.WebhookMutatePath)},
		}}},
	}
}

// certFixture is one replica's certificate manager over a fake API server; the informer caches hold what the test
// seeds, as if they had synced.
type certFixture struct {
	t       *testing.T
	client  *fake.Clientset
	factory informers.SharedInformerFactory
	manager *CertificateManager
	now     time.Time
}

func newCertFixture(t *testing.T, client *fake.Clientset, mutating bool, cached ...runtime.Object) *certFixture {
	t.Helper()
	factory := informers.NewSharedInformerFactory(client, 0)
	f := &certFixture{t: t, client: client, factory: factory, now: testStart}
	secrets := factory.Core().V1().Secrets()
	validating := factory.Admissionregistration().V1().ValidatingWebhookConfigurations()
	var mutatingInformer = factory.Admissionregistration().V1().MutatingWebhookConfigurations()
	f.cache(cached...)
	if !mutating {
		mutatingInformer = nil
	}
	m, err := NewCertificateManager(client, secrets, validating, testConfig, mutatingInformer, testConfig, CertificateManagerOptions{
		Namespace:  testNamespace,
		SecretName: testSecret,
		Policy:     testCertificatePolicy(),
		Now:        func() time.Time { return f.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	m.synced.Store(true)
	f.manager = m
	return f
}

// cache puts objects into the informer caches, as if the informers had received them.
func (f *certFixture) cache(objects ...runtime.Object) {
	f.t.Helper()
	for _, obj := range objects {
		var err error
		switch obj.(type) {
		case *corev1.Secret:
			err = f.factory.Core().V1().Secrets().Informer().GetIndexer().Update(obj)
		case *admissionregistrationv1.ValidatingWebhookConfiguration:
			err = f.factory.Admissionregistration().V1().ValidatingWebhookConfigurations().Informer().GetIndexer().Update(obj)
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			err = f.factory.Admissionregistration().V1().MutatingWebhookConfigurations().Informer().GetIndexer().Update(obj)
		default:
			f.t.Fatalf("can't cache a %T", obj)
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// sync runs one sync and returns the write actions it made.
func (f *certFixture) sync() ([]k8stesting.Action, error) {
	f.t.Helper()
	before := len(f.client.Actions())
	_, err := f.manager.sync(context.Background())
	var writes []k8stesting.Action
	for _, a := range f.client.Actions()[before:] {
		if a.GetVerb() != "get" && a.GetVerb() != "list" && a.GetVerb() != "watch" {
			writes = append(writes, a)
		}
	}
	return writes, err
}

func (f *certFixture) mustSync() []k8stesting.Action {
	f.t.Helper()
	writes, err := f.sync()
	if err != nil {
		f.t.Fatal(err)
	}
	return writes
}

func (f *certFixture) secret() *corev1.Secret {
	f.t.Helper()
	s, err := f.client.CoreV1().Secrets(testNamespace).Get(context.Background(), testSecret, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *certFixture) validating() *admissionregistrationv1.ValidatingWebhookConfiguration {
	f.t.Helper()
	c, err := f.client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(context.Background(), testConfig, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *certFixture) served() *x509.Certificate {
	f.t.Helper()
	c, err := f.manager.GetCertificate(nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return c.Leaf
}

func describeActions(actions []k8stesting.Action) []string {
	var out []string
	for _, a := range actions {
		out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
	}
	return out
}

func TestFirstStartCreatesTheSecretAndSetsEveryCABundle(t *testing.T) {
	t.Parallel()
	vwc := testValidatingConfiguration()
	mwc := testMutatingConfiguration()
	f := newCertFixture(t, fake.NewClientset(vwc, mwc), true, vwc, mwc)
	if err := f.manager.Ready(); err == nil || !strings.Contains(err.Error(), "no serving certificate yet") {
		t.Errorf("Ready before the first sync = %v, want not ready", err)
	}

	writes := f.mustSync()
	if got, want := strings.Join(describeActions(writes), ", "), "create secrets, update validatingwebhookconfigurations, update mutatingwebhookconfigurations"; got != want {
		t.Errorf("writes = %s, want %s", got, want)
	}
	secret := f.secret()
	if secret.Type != corev1.SecretTypeTLS || secret.Labels[naming.ManagedByLabel] != naming.ManagedByLabelValue {
		t.Errorf("Secret type %q labels %v, want kubernetes.io/tls managed by the operator", secret.Type, secret.Labels)
	}
	bundle := secret.Data[naming.WebhookCABundleKey]
	for _, wh := range f.validating().Webhooks {
		if !bytes.Equal(wh.ClientConfig.CABundle, bundle) {
			t.Errorf("webhook %s caBundle differs from the Secret's %s", wh.Name, naming.WebhookCABundleKey)
		}
	}
	mutating, err := f.client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), testConfig, metav1.GetOptions{})
	if err != nil || !bytes.Equal(mutating.Webhooks[0].ClientConfig.CABundle, bundle) {
		t.Errorf("MutatingWebhookConfiguration caBundle not set (err %v)", err)
	}

	roots, err := certs.DecodeCertificatesPEM(bundle)
	if err != nil {
		t.Fatal(err)
	}
	served := f.served()
	if !bytes.Equal(served.Raw, mustDecodeCert(t, secret.Data[corev1.TLSCertKey]).Raw) {
		t.Error("the served certificate is not the Secret's")
	}
	for _, name := range []string{"scylla-operator-webhook.scylla-operator.svc", "127.0.0.1"} {
		if err := certs.Verify(served, roots, certs.ServingUsage, name, testStart); err != nil {
			t.Errorf("served certificate does not verify for %s with the caBundle: %v", name, err)
		}
	}
	if err := f.manager.Ready(); err != nil {
		t.Errorf("Ready after the first sync = %v", err)
	}
}

func mustDecodeCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	c, err := certs.DecodeCertificatesPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return c[0]
}

// settled returns a fixture whose API server holds what a first start wrote, cached as well.
func settled(t *testing.T) (*certFixture, *corev1.Secret, *admissionregistrationv1.ValidatingWebhookConfiguration) {
	t.Helper()
	vwc := testValidatingConfiguration()
	first := newCertFixture(t, fake.NewClientset(vwc), false, vwc)
	first.mustSync()
	return first, first.secret(), first.validating()
}

func TestASecondStartWritesNothing(t *testing.T) {
	t.Parallel()
	first, secret, vwc := settled(t)
	second := newCertFixture(t, first.client, false, secret, vwc)
	second.now = testStart.Add(time.Hour)
	if writes := second.mustSync(); len(writes) != 0 {
		t.Errorf("second start wrote %v, want nothing", describeActions(writes))
	}
	if !bytes.Equal(second.served().Raw, first.served().Raw) {
		t.Error("second start serves another certificate than the Secret's")
	}
	// And again, at rest.
	if writes := second.mustSync(); len(writes) != 0 {
		t.Errorf("sync at rest wrote %v, want nothing", describeActions(writes))
	}
}

func TestNearExpiryRenewsTheServingCertificateOnly(t *testing.T) {
	t.Parallel()
	first, secret, vwc := settled(t)
	f := newCertFixture(t, first.client, false, secret, vwc)
	old := first.served()
	f.now = certs.RenewalTime(old, 0.8)

	writes := f.mustSync()
	if got := describeActions(writes); len(got) != 1 || got[0] != "update secrets" {
		t.Fatalf("writes = %v, want only the Secret updated (the CA bundle is unchanged)", got)
	}
	renewed := f.served()
	if bytes.Equal(renewed.Raw, old.Raw) || renewed.Issuer.CommonName != old.Issuer.CommonName {
		t.Errorf("served certificate renewed=%v issuer %q (was %q); want a new certificate from the same CA", !bytes.Equal(renewed.Raw, old.Raw), renewed.Issuer.CommonName, old.Issuer.CommonName)
	}
	if !bytes.Equal(f.secret().Data[naming.WebhookCABundleKey], secret.Data[naming.WebhookCABundleKey]) {
		t.Error("the trust bundle changed on a serving certificate renewal")
	}
}

func TestCARolloverTrustsBothCAsWhileTheyOverlap(t *testing.T) {
	t.Parallel()
	first, secret, vwc := settled(t)
	oldCA := mustDecodeCert(t, secret.Data[naming.WebhookCABundleKey])
	oldLeaf := first.served()

	f := newCertFixture(t, first.client, false, secret, vwc)
	f.now = certs.RenewalTime(oldCA, 0.8)
	writes := f.mustSync()
	if len(writes) == 0 {
		t.Fatal("nothing written at the CA's renewal time")
	}
	bundle, err := certs.DecodeCertificatesPEM(f.secret().Data[naming.WebhookCABundleKey])
	if err != nil {
		t.Fatal(err)
	}
	if len(bundle) != 2 || !bytes.Equal(bundle[1].Raw, oldCA.Raw) {
		t.Fatalf("trust bundle has %d CAs, want the new CA and the old one", len(bundle))
	}
	for _, wh := range f.validating().Webhooks {
		got, err := certs.DecodeCertificatesPEM(wh.ClientConfig.CABundle)
		if err != nil || len(got) != 2 {
			t.Errorf("webhook %s trusts %d CAs (%v), want both", wh.Name, len(got), err)
		}
	}
	// The old certificate expired long ago, so a new one was issued by the new CA at once, and verifies with the
	// bundle; a peer holding only the old CA would refuse it, which is why the old CA is kept for the overlap.
	served := f.served()
	if bytes.Equal(served.Raw, oldLeaf.Raw) {
		t.Fatal("an expired certificate is still served")
	}
	if err := certs.Verify(served, bundle, certs.ServingUsage, "127.0.0.1", f.now); err != nil {
		t.Errorf("served certificate does not verify with the bundle: %v", err)
	}
	if err := f.manager.Ready(); err != nil {
		t.Errorf("Ready = %v", err)
	}
}

func TestAReplicaLosingTheCreateRaceAdoptsTheOthersSecret(t *testing.T) {
	t.Parallel()
	first, secret, _ := settled(t)
	// This replica's cache has seen neither object yet.
	late := newCertFixture(t, first.client, false)
	late.now = testStart.Add(time.Minute)
	writes, err := late.sync()
	if err != nil {
		t.Fatal(err)
	}
	if got := describeActions(writes); len(got) != 1 || got[0] != "create secrets" {
		t.Errorf("writes = %v, want only the refused create", got)
	}
	if !bytes.Equal(late.served().Raw, mustDecodeCert(t, secret.Data[corev1.TLSCertKey]).Raw) {
		t.Error("the late replica serves its own certificate, not the one in the Secret")
	}
	if !bytes.Equal(late.secret().Data[naming.WebhookCAKeyKey], secret.Data[naming.WebhookCAKeyKey]) {
		t.Error("the late replica replaced the CA")
	}
}

func TestAConflictingUpdateIsRetriedNotForced(t *testing.T) {
	t.Parallel()
	first, secret, vwc := settled(t)
	f := newCertFixture(t, first.client, false, secret, vwc)
	f.client.PrependReactor("update", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(corev1.Resource("secrets"), testSecret, nil)
	})
	old := first.served()
	f.now = certs.RenewalTime(old, 0.8)
	if _, err := f.sync(); err == nil || !strings.Contains(err.Error(), "can't update Secret") {
		t.Errorf("err = %v, want the conflict returned for a retry", err)
	}
	if _, err := f.manager.GetCertificate(nil); err == nil {
		t.Error("a certificate that was never stored is served")
	}
}

func TestABrokenSecretIsRegeneratedAndAForeignOneRefused(t *testing.T) {
	t.Parallel()
	vwc := testValidatingConfiguration()
	broken := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: testSecret, Namespace: testNamespace, ResourceVersion: "1"},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: []byte("garbage"), corev1.TLSPrivateKeyKey: []byte("garbage"), naming.WebhookCABundleKey: []byte("x"), naming.WebhookCAKeyKey: []byte("y")},
	}
	f := newCertFixture(t, fake.NewClientset(broken, vwc), false, broken, vwc)
	writes := f.mustSync()
	if got := strings.Join(describeActions(writes), ", "); got != "update secrets, update validatingwebhookconfigurations" {
		t.Errorf("writes = %s, want the Secret regenerated and the caBundle set", got)
	}
	if _, err := certs.DecodeStatePEM(f.secret().Data[naming.WebhookCABundleKey], f.secret().Data[naming.WebhookCAKeyKey], f.secret().Data[corev1.TLSCertKey], f.secret().Data[corev1.TLSPrivateKeyKey]); err != nil {
		t.Errorf("regenerated Secret doesn't parse: %v", err)
	}

	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: testSecret, Namespace: testNamespace}, Type: corev1.SecretTypeOpaque}
	g := newCertFixture(t, fake.NewClientset(opaque), false, opaque)
	writes, err := g.sync()
	if err == nil || !strings.Contains(err.Error(), `has type "Opaque", want "kubernetes.io/tls"`) || len(writes) != 0 {
		t.Errorf("err = %v after writes %v, want the foreign Secret refused untouched", err, describeActions(writes))
	}
}

func TestAMissingWebhookConfigurationIsNotAnError(t *testing.T) {
	t.Parallel()
	f := newCertFixture(t, fake.NewClientset(), false)
	writes := f.mustSync()
	if got := describeActions(writes); len(got) != 1 || got[0] != "create secrets" {
		t.Errorf("writes = %v, want only the Secret created", got)
	}
	if err := f.manager.Ready(); err != nil {
		t.Errorf("Ready = %v; the configuration is not needed to serve", err)
	}
}

func TestASyncRightAfterACABundleUpdateDoesNotWriteItAgain(t *testing.T) {
	t.Parallel()
	vwc := testValidatingConfiguration()
	mwc := testMutatingConfiguration()
	vwc.ResourceVersion, mwc.ResourceVersion = "1", "1"
	client := fake.NewClientset(vwc, mwc)
	// Updates of the webhook configurations behave as on an API server: the resourceVersion is a precondition and
	// goes up by one.
	for _, resource := range []string{"validatingwebhookconfigurations", "mutatingwebhookconfigurations"} {
		client.PrependReactor("update", resource, func(action k8stesting.Action) (bool, runtime.Object, error) {
			obj := action.(k8stesting.UpdateAction).GetObject().(metav1.Object)
			current, err := client.Tracker().Get(action.GetResource(), "", obj.GetName())
			if err != nil {
				return true, nil, err
			}
			if rv := current.(metav1.Object).GetResourceVersion(); rv != obj.GetResourceVersion() {
				return true, nil, apierrors.NewConflict(action.GetResource().GroupResource(), obj.GetName(), fmt.Errorf("resourceVersion %s is not %s", obj.GetResourceVersion(), rv))
			}
			version, _ := strconv.Atoi(obj.GetResourceVersion())
			obj.SetResourceVersion(strconv.Itoa(version + 1))
			updated := obj.(runtime.Object)
			return true, updated, client.Tracker().Update(action.GetResource(), updated, "")
		})
	}
	f := newCertFixture(t, client, true, vwc, mwc)
	if got, want := strings.Join(describeActions(f.mustSync()), ", "), "create secrets, update validatingwebhookconfigurations, update mutatingwebhookconfigurations"; got != want {
		t.Fatalf("first sync wrote %s, want %s", got, want)
	}

	// The Secret's informer has caught up, the webhook configurations' not yet, when the event of one of the updates
	// syncs the manager again: it must neither write the caBundles again over the older copies (a 409 each) nor fail.
	f.cache(f.secret())
	if writes := f.mustSync(); len(writes) != 0 {
		t.Errorf("a sync over stale webhook configuration caches wrote %v, want nothing", describeActions(writes))
	}
	// Once the informers caught up, still nothing.
	f.cache(f.validating())
	mutating, err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(context.Background(), testConfig, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.cache(mutating)
	if writes := f.mustSync(); len(writes) != 0 {
		t.Errorf("a sync at rest wrote %v, want nothing", describeActions(writes))
	}
}
