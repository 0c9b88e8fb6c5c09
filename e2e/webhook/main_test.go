//go:build e2e

package webhook

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// fieldManager names the suite's own writes, the install included.
const fieldManager = "e2e-webhook"

// crdGVR is the resource of CustomResourceDefinitions.
var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "webhook"}))
}

// installation is the result of applying deploy/operator/ once for the whole suite.
type installation struct {
	// deployment is the webhook's Deployment as the manifests declare it.
	deployment *framework.WebhookDeployment
	// applied is the ValidatingWebhookConfiguration as kubectl applied it, before any test pointed it at a process.
	applied *admissionregistrationv1.ValidatingWebhookConfiguration
}

var (
	installOnce   sync.Once
	installed     *installation
	installFailed error
)

// install applies deploy/operator/ with `kubectl apply --server-side`, once per suite, and checks the webhook
// configuration it created: it fails closed and names the webhook's Service.
func install(t *testing.T) *installation {
	t.Helper()
	installOnce.Do(func() {
		installed, installFailed = doInstall(framework.CurrentSuite(t))
	})
	if installFailed != nil {
		t.Fatalf("can't install %s: %v", framework.OperatorManifestsDir, installFailed)
	}
	return installed
}

func doInstall(s *framework.Suite) (*installation, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := s.ControlPlanes[0]
	deployment, err := framework.LoadWebhookDeployment(s.RepoRoot)
	if err != nil {
		return nil, err
	}
	if _, err := cp.KubectlApplyServerSide(ctx, filepath.Join(s.RepoRoot, framework.OperatorManifestsDir), fieldManager); err != nil {
		return nil, err
	}
	clients, err := cp.Clients(fieldManager)
	if err != nil {
		return nil, err
	}
	if err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		crds, err := clients.Dynamic.Resource(crdGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		names := make([]string, 0, len(crds.Items))
		for _, crd := range crds.Items {
			names = append(names, crd.GetName())
		}
		return true, clients.WaitForCRDsEstablished(ctx, names)
	}); err != nil {
		return nil, fmt.Errorf("the CRDs of %s are not Established: %w", framework.OperatorManifestsDir, err)
	}
	clients.Mapper.Reset()
	vwc, err := clients.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, naming.WebhookConfigurationName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the install manifests created no ValidatingWebhookConfiguration %q: %w", naming.WebhookConfigurationName, err)
	}
	if len(vwc.Webhooks) == 0 {
		return nil, fmt.Errorf("ValidatingWebhookConfiguration %q has no webhooks", vwc.Name)
	}
	for _, w := range vwc.Webhooks {
		switch {
		case w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail:
			return nil, fmt.Errorf("webhook %q must fail closed (failurePolicy Fail), got %v", w.Name, w.FailurePolicy)
		case w.TimeoutSeconds == nil:
			return nil, fmt.Errorf("webhook %q has no timeout", w.Name)
		case w.ClientConfig.Service == nil || w.ClientConfig.Service.Namespace != deployment.ServiceAccount.Namespace:
			return nil, fmt.Errorf("webhook %q must call a Service in namespace %s, got %+v", w.Name, deployment.ServiceAccount.Namespace, w.ClientConfig)
		}
	}
	return &installation{deployment: deployment, applied: vwc}, nil
}

// env is one test's view of the installation: its framework, the webhook processes it runs and clients.
type env struct {
	t *testing.T
	f *framework.Framework
	*installation
	cluster *framework.Cluster
	// warnings receives the admission warnings of requests made with dynamic.
	warnings *framework.WarningRecorder
	dynamic  dynamic.Interface
}

// newEnv installs deploy/operator/ if no test did yet and starts the test from a clean slate: no serving certificate
// Secret, so the test's first webhook process generates a new CA.
func newEnv(t *testing.T) *env {
	t.Helper()
	in := install(t)
	f := framework.NewFramework(t)
	dyn, warnings, err := framework.NewWarningRecordingDynamicClient(f.Clients().Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, f: f, installation: in, cluster: f.Cluster(), warnings: warnings, dynamic: dyn}
	e.deleteServingCertSecret()
	return e
}

// deleteServingCertSecret deletes the webhook's Secret; no webhook process may run.
func (e *env) deleteServingCertSecret() {
	e.t.Helper()
	err := e.f.Clients().Kube.CoreV1().Secrets(e.deployment.ServiceAccount.Namespace).Delete(e.t.Context(), naming.WebhookServingCertSecretName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		e.t.Fatalf("can't delete the webhook's Secret: %v", err)
	}
}

// seedServingCertificate writes the webhook's Secret as a webhook started age ago with the rotation flags would
// have: a CA and a serving certificate issued then.
func (e *env) seedServingCertificate(age time.Duration) {
	e.t.Helper()
	namespace := e.deployment.ServiceAccount.Namespace
	policy := &certs.Policy{
		CACommonNamePrefix: naming.WebhookCACommonNamePrefix,
		CAValidity:         365 * 24 * time.Hour,
		Certificate: certs.CertificateRequest{
			CommonName:  naming.WebhookServiceName,
			DNSNames:    naming.WebhookServiceDNSNames(naming.WebhookServiceName, namespace),
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			Usage:       certs.ServingUsage,
			Validity:    rotationValidity,
		},
		RefreshFraction: rotationRefreshFraction,
	}
	state, _, _, err := certs.Reconcile(nil, policy, time.Now().Add(-age))
	if err != nil {
		e.t.Fatalf("can't generate a CA and certificate: %v", err)
	}
	bundle, caKey, cert, key, err := certs.EncodeStatePEM(state)
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.f.Clients().Kube.CoreV1().Secrets(namespace).Create(e.t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: naming.WebhookServingCertSecretName, Namespace: namespace},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			naming.WebhookCABundleKey: bundle,
			naming.WebhookCAKeyKey:    caKey,
			corev1.TLSCertKey:         cert,
			corev1.TLSPrivateKeyKey:   key,
		},
	}, metav1.CreateOptions{FieldManager: fieldManager})
	if err != nil {
		e.t.Fatalf("can't seed the webhook's Secret: %v", err)
	}
}

// pointWebhooksAt makes the API server call the webhook process listening on port, and checks that nothing else
// of the applied configuration changed.
func (e *env) pointWebhooksAt(port int) {
	e.t.Helper()
	vwc, err := framework.PointWebhooksAt(e.t.Context(), e.f.Clients().Kube, naming.WebhookConfigurationName, port)
	if err != nil {
		e.t.Fatal(err)
	}
	ignore := []cmp.Option{
		cmpopts.IgnoreFields(admissionregistrationv1.ValidatingWebhook{}, "ClientConfig"),
		cmpopts.IgnoreFields(admissionregistrationv1.ValidatingWebhookConfiguration{}, "ObjectMeta"),
	}
	if diff := cmp.Diff(e.applied, vwc, ignore...); diff != "" {
		e.t.Fatalf("pointing the webhooks at port %d changed more than their clientConfig (-applied +now):\n%s", port, diff)
	}
}

// webhookProcess is one webhook replica run as a local process.
type webhookProcess struct {
	name string
	port int
	args []string
	cred *framework.ServiceAccountCredential
	proc *framework.Process
}

// addr is where the process serves.
func (w *webhookProcess) addr() string {
	return framework.WebhookAddress(w.port)
}

// newWebhook describes a webhook process on a free port, with extraArgs after the suite's; start runs it, and it is
// stopped when the test ends.
func (e *env) newWebhook(name string, extraArgs ...string) *webhookProcess {
	e.t.Helper()
	port, err := framework.FreePort()
	if err != nil {
		e.t.Fatal(err)
	}
	w := &webhookProcess{name: name, port: port, args: extraArgs}
	e.t.Cleanup(func() { e.stop(w) })
	return w
}

// start starts w's process as the webhook's ServiceAccount, with a fresh token; the suite fails if RBAC refuses it
// anything.
func (e *env) start(w *webhookProcess) {
	e.t.Helper()
	cp := e.cluster.ControlPlane
	cred, err := e.f.Suite().WebhookKubeconfig(e.t.Context(), cp, w.name)
	if err != nil {
		e.t.Fatal(err)
	}
	prog, err := framework.WebhookProgram(framework.WebhookOptions{
		Name:       w.name,
		Port:       w.port,
		Namespace:  e.deployment.ServiceAccount.Namespace,
		Kubeconfig: cred.KubeconfigPath,
		ExtraArgs:  w.args,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	proc, err := e.f.Suite().StartProgram(e.t.Context(), cp, prog)
	if err != nil {
		e.t.Fatalf("can't start webhook %s: %v", w.name, err)
	}
	w.cred, w.proc = cred, proc
}

// stop stops w's process if it runs.
func (e *env) stop(w *webhookProcess) {
	e.t.Helper()
	cp := e.cluster.ControlPlane
	if cp.Process(w.name) == nil {
		return
	}
	if err := cp.StopProcess(w.name); err != nil {
		e.t.Errorf("can't stop webhook %s: %v", w.name, err)
	}
}

// servedCertificate returns the certificate w serves now, and checks that every webhook's caBundle verifies it.
func (e *env) servedCertificate(ctx context.Context, w *webhookProcess) (string, error) {
	cert, err := framework.ServedCertificate(ctx, w.addr())
	if err != nil {
		return "", err
	}
	bundles, err := framework.WebhookCABundles(ctx, e.f.Clients().Kube, naming.WebhookConfigurationName)
	if err != nil {
		return "", err
	}
	for name, bundle := range bundles {
		if err := framework.VerifyServedCertificate(cert, bundle, w.addr()); err != nil {
			return "", fmt.Errorf("webhook %q: %w", name, err)
		}
	}
	return framework.SerialOf(cert), nil
}

// waitUntilAdmitting waits until w serves a certificate the caBundle verifies and the API server admits a valid
// ScyllaCluster through it.
func (e *env) waitUntilAdmitting(w *webhookProcess) {
	e.t.Helper()
	e.f.WaitFor(time.Minute, fmt.Sprintf("webhook %s to serve a certificate its caBundle verifies", w.name), func(ctx context.Context) (bool, error) {
		_, err := e.servedCertificate(ctx, w)
		return err == nil, err
	})
	e.f.WaitFor(time.Minute, fmt.Sprintf("the API server to admit a valid ScyllaCluster through webhook %s", w.name), func(ctx context.Context) (bool, error) {
		_, err := e.dryRunCreate(ctx, validScyllaCluster("probe"))
		return err == nil, err
	})
}

// dryRunCreate sends obj as a dry-run create (see create): the API server admits it exactly as a real create,
// webhook included, and stores nothing.
func (e *env) dryRunCreate(ctx context.Context, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	return e.create(ctx, obj, []string{metav1.DryRunAll})
}

// create creates obj with strict field validation, in the test's namespace if its kind is namespaced.
func (e *env) create(ctx context.Context, obj *unstructured.Unstructured, dryRun []string) (*unstructured.Unstructured, error) {
	obj = obj.DeepCopy()
	ri, namespaced, err := e.resource(obj.GroupVersionKind())
	if err != nil {
		return nil, err
	}
	if namespaced {
		obj.SetNamespace(e.f.Namespace())
	}
	return ri.Create(ctx, obj, metav1.CreateOptions{
		DryRun:          dryRun,
		FieldManager:    fieldManager,
		FieldValidation: metav1.FieldValidationStrict,
	})
}

// resource returns the client of a kind, in the test's namespace if the kind is namespaced.
func (e *env) resource(gvk schema.GroupVersionKind) (dynamic.ResourceInterface, bool, error) {
	mapping, err := e.f.Clients().Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, false, fmt.Errorf("can't map kind %s: %w", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return e.dynamic.Resource(mapping.Resource), false, nil
	}
	return e.dynamic.Resource(mapping.Resource).Namespace(e.f.Namespace()), true, nil
}

// scyllaClusters returns the client of ScyllaClusters in the test's namespace.
func (e *env) scyllaClusters() dynamic.ResourceInterface {
	e.t.Helper()
	ri, _, err := e.resource(scyllav1.SchemeGroupVersion.WithKind("ScyllaCluster"))
	if err != nil {
		e.t.Fatal(err)
	}
	return ri
}
