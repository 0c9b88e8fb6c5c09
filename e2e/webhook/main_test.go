//go:build e2e

package webhook

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	"k8s.io/client-go/util/retry"
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
	// appliedMutating is the MutatingWebhookConfiguration as kubectl applied it.
	appliedMutating *admissionregistrationv1.MutatingWebhookConfiguration
	// configurationArgs are the Deployment's flags naming the webhook configurations whose caBundle it keeps; every
	// webhook process of the suite runs with them.
	configurationArgs []string
}

var (
	installOnce   sync.Once
	installed     *installation
	installFailed error
)

// install applies deploy/operator/ with `kubectl apply --server-side`, once per suite, and checks the webhook
// configurations it created: they fail closed and name the webhook's Service.
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
		if err := checkAppliedWebhook(w.Name, w.FailurePolicy, w.TimeoutSeconds, w.ClientConfig, deployment); err != nil {
			return nil, err
		}
	}
	mwc, err := clients.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, naming.WebhookConfigurationName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("the install manifests created no MutatingWebhookConfiguration %q: %w", naming.WebhookConfigurationName, err)
	}
	if len(mwc.Webhooks) == 0 {
		return nil, fmt.Errorf("MutatingWebhookConfiguration %q has no webhooks", mwc.Name)
	}
	for _, w := range mwc.Webhooks {
		if err := checkAppliedWebhook(w.Name, w.FailurePolicy, w.TimeoutSeconds, w.ClientConfig, deployment); err != nil {
			return nil, err
		}
		if w.ReinvocationPolicy == nil || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy {
			return nil, fmt.Errorf("mutating webhook %q must not be reinvoked, got reinvocationPolicy %v", w.Name, w.ReinvocationPolicy)
		}
	}
	configurationArgs, err := deployedConfigurationArgs(s.RepoRoot, deployment)
	if err != nil {
		return nil, err
	}
	return &installation{deployment: deployment, applied: vwc, appliedMutating: mwc, configurationArgs: configurationArgs}, nil
}

// checkAppliedWebhook returns what is wrong with a webhook of an applied configuration: it must fail closed, time
// out, and call a Service with a path in the Deployment's namespace (pointWebhooksAt keeps that path).
func checkAppliedWebhook(name string, failurePolicy *admissionregistrationv1.FailurePolicyType, timeout *int32, cc admissionregistrationv1.WebhookClientConfig, deployment *framework.WebhookDeployment) error {
	switch {
	case failurePolicy == nil || *failurePolicy != admissionregistrationv1.Fail:
		return fmt.Errorf("webhook %q must fail closed (failurePolicy Fail), got %v", name, failurePolicy)
	case timeout == nil:
		return fmt.Errorf("webhook %q has no timeout", name)
	case cc.Service == nil || cc.Service.Namespace != deployment.ServiceAccount.Namespace || cc.Service.Path == nil:
		return fmt.Errorf("webhook %q must call a path of a Service in namespace %s, got %+v", name, deployment.ServiceAccount.Namespace, cc)
	}
	return nil
}

// configurationFlags are the webhook's flags naming the configurations whose caBundle it keeps.
var configurationFlags = []string{"--validating-webhook-configuration-name=", "--mutating-webhook-configuration-name="}

// deployedConfigurationArgs returns the configurationFlags the webhook's Deployment passes, so that the suite's
// processes keep the caBundles the deployed ones would: a configuration the Deployment forgets is left without one,
// and the API server can't call its webhook. The mutating one must be named: it has no default.
func deployedConfigurationArgs(repoRoot string, d *framework.WebhookDeployment) ([]string, error) {
	files, err := framework.ManifestFiles(filepath.Join(repoRoot, filepath.FromSlash(framework.OperatorManifestsDir)))
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		objs, err := framework.DecodeManifestFile(file)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.GetKind() != "Deployment" || obj.GetNamespace() != d.ServiceAccount.Namespace || obj.GetName() != d.Name {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			var args []string
			if len(containers) != 0 {
				container, _ := containers[0].(map[string]interface{})
				args, _, _ = unstructured.NestedStringSlice(container, "args")
			}
			var kept []string
			for _, arg := range args {
				if slices.ContainsFunc(configurationFlags, func(flag string) bool { return strings.HasPrefix(arg, flag) }) {
					kept = append(kept, arg)
				}
			}
			if want := configurationFlags[1] + naming.WebhookConfigurationName; !slices.Contains(kept, want) {
				return nil, fmt.Errorf("Deployment %s/%s does not pass %s: the webhook would leave the caBundle of the MutatingWebhookConfiguration empty (args %q)",
					d.ServiceAccount.Namespace, d.Name, want, args)
			}
			return kept, nil
		}
	}
	return nil, fmt.Errorf("no manifest of %s holds Deployment %s/%s", framework.OperatorManifestsDir, d.ServiceAccount.Namespace, d.Name)
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

// pointWebhooksAt makes the API server call the webhook process listening on port, through both configurations,
// and checks that nothing else of the applied configurations changed.
func (e *env) pointWebhooksAt(port int) {
	e.t.Helper()
	vwc, err := framework.PointWebhooksAt(e.t.Context(), e.f.Clients().Kube, naming.WebhookConfigurationName, port)
	if err != nil {
		e.t.Fatal(err)
	}
	mwc, err := e.pointMutatingWebhooksAt(port)
	if err != nil {
		e.t.Fatal(err)
	}
	ignore := []cmp.Option{
		cmpopts.IgnoreFields(admissionregistrationv1.ValidatingWebhook{}, "ClientConfig"),
		cmpopts.IgnoreFields(admissionregistrationv1.ValidatingWebhookConfiguration{}, "ObjectMeta"),
		cmpopts.IgnoreFields(admissionregistrationv1.MutatingWebhook{}, "ClientConfig"),
		cmpopts.IgnoreFields(admissionregistrationv1.MutatingWebhookConfiguration{}, "ObjectMeta"),
	}
	if diff := cmp.Diff(e.applied, vwc, ignore...); diff != "" {
		e.t.Fatalf("pointing the validating webhooks at port %d changed more than their clientConfig (-applied +now):\n%s", port, diff)
	}
	if diff := cmp.Diff(e.appliedMutating, mwc, ignore...); diff != "" {
		e.t.Fatalf("pointing the mutating webhooks at port %d changed more than their clientConfig (-applied +now):\n%s", port, diff)
	}
}

// pointMutatingWebhooksAt rewrites the clientConfig of every webhook of the MutatingWebhookConfiguration to
// https://<WebhookAddress(port)><path of the applied Service reference>, keeping its caBundle.
func (e *env) pointMutatingWebhooksAt(port int) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	mwcs := e.f.Clients().Kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	var updated *admissionregistrationv1.MutatingWebhookConfiguration
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		mwc, err := mwcs.Get(e.t.Context(), e.appliedMutating.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(mwc.Webhooks) != len(e.appliedMutating.Webhooks) {
			return fmt.Errorf("MutatingWebhookConfiguration %q has %d webhooks, %d applied", mwc.Name, len(mwc.Webhooks), len(e.appliedMutating.Webhooks))
		}
		for i := range mwc.Webhooks {
			u := (&url.URL{Scheme: "https", Host: framework.WebhookAddress(port), Path: *e.appliedMutating.Webhooks[i].ClientConfig.Service.Path}).String()
			mwc.Webhooks[i].ClientConfig.Service = nil
			mwc.Webhooks[i].ClientConfig.URL = &u
		}
		updated, err = mwcs.Update(e.t.Context(), mwc, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("can't point the webhooks of MutatingWebhookConfiguration %q at port %d: %w", e.appliedMutating.Name, port, err)
	}
	return updated, nil
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
	w := &webhookProcess{name: name, port: port, args: slices.Concat(e.configurationArgs, extraArgs)}
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

// servedCertificate returns the certificate w serves now, and checks that every webhook's caBundle, of both
// configurations, verifies it.
func (e *env) servedCertificate(ctx context.Context, w *webhookProcess) (string, error) {
	cert, err := framework.ServedCertificate(ctx, w.addr())
	if err != nil {
		return "", err
	}
	bundles, err := framework.WebhookCABundles(ctx, e.f.Clients().Kube, naming.WebhookConfigurationName)
	if err != nil {
		return "", err
	}
	mwc, err := e.f.Clients().Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, e.appliedMutating.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("can't get MutatingWebhookConfiguration %q: %w", e.appliedMutating.Name, err)
	}
	for _, mw := range mwc.Webhooks {
		bundles[mw.Name] = mw.ClientConfig.CABundle
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
