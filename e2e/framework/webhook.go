package framework

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// WebhookSubcommand is the subcommand of ./cmd/scylla-operator that serves admission requests.
const WebhookSubcommand = "webhook"

// OperatorManifestsDir is the directory, relative to the repository root, of the operator's install manifests
// (namespace, CRDs, RBAC, the operator and webhook Deployments, the webhook configuration).
const OperatorManifestsDir = "deploy/operator"

// KubectlApplyServerSide runs `kubectl apply --server-side` on the manifests of dir as a user of cp with the admin
// kubeconfig, the way a user installs the project, and returns kubectl's output.
func (cp *ControlPlane) KubectlApplyServerSide(ctx context.Context, dir, fieldManager string) (string, error) {
	cmd := exec.CommandContext(ctx, "kubectl", "apply", "--server-side", "--field-manager="+fieldManager, "-f", dir)
	cmd.Env = append(childEnv(cmd.Environ()), "KUBECONFIG="+cp.KubeconfigPath)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl apply --server-side -f %s failed: %w\n%s", dir, err, out)
	}
	return string(out), nil
}

// WebhookDeployment is what the install manifests say about the webhook's Deployment.
type WebhookDeployment struct {
	// Name is the Deployment's name.
	Name string
	// ServiceAccount is who its pods run as, in the Deployment's namespace.
	ServiceAccount ServiceAccount
	// Replicas is the Deployment's replica count.
	Replicas int64
}

// LoadWebhookDeployment finds, in the manifests of OperatorManifestsDir, the one Deployment whose first container
// runs WebhookSubcommand.
func LoadWebhookDeployment(repoRoot string) (*WebhookDeployment, error) {
	dir := filepath.Join(repoRoot, filepath.FromSlash(OperatorManifestsDir))
	files, err := ManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var found *WebhookDeployment
	for _, file := range files {
		objs, err := DecodeManifestFile(file)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			if obj.GetKind() != "Deployment" {
				continue
			}
			containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
			if len(containers) == 0 {
				continue
			}
			container, _ := containers[0].(map[string]interface{})
			args, _, _ := unstructured.NestedStringSlice(container, "args")
			if len(args) == 0 || args[0] != WebhookSubcommand {
				continue
			}
			if found != nil {
				return nil, fmt.Errorf("more than one Deployment of %s runs %q (%q and %q)", OperatorManifestsDir, WebhookSubcommand, found.Name, obj.GetName())
			}
			sa, _, _ := unstructured.NestedString(obj.Object, "spec", "template", "spec", "serviceAccountName")
			if sa == "" || obj.GetNamespace() == "" {
				return nil, fmt.Errorf("Deployment %q of %s needs a namespace and a serviceAccountName", obj.GetName(), file)
			}
			replicas, err := deploymentReplicas(obj)
			if err != nil {
				return nil, fmt.Errorf("Deployment %q of %s: %w", obj.GetName(), file, err)
			}
			found = &WebhookDeployment{Name: obj.GetName(), ServiceAccount: ServiceAccount{Namespace: obj.GetNamespace(), Name: sa}, Replicas: replicas}
		}
	}
	if found == nil {
		return nil, fmt.Errorf("no Deployment of %s runs %q", OperatorManifestsDir, WebhookSubcommand)
	}
	return found, nil
}

// deploymentReplicas returns spec.replicas of a decoded Deployment, 1 when unset as the API server defaults it.
// Decoded manifests hold numbers as float64.
func deploymentReplicas(obj *unstructured.Unstructured) (int64, error) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", "replicas")
	if err != nil || !found {
		return 1, err
	}
	switch n := v.(type) {
	case int64:
		return n, nil
	case float64:
		if n == float64(int64(n)) {
			return int64(n), nil
		}
	}
	return 0, fmt.Errorf("spec.replicas %v is not a whole number", v)
}

// WebhookKubeconfig writes <cp.Dir>/<name>.kubeconfig for one webhook process, with a fresh token of the
// ServiceAccount the webhook Deployment of the install manifests runs as. Like the other programs' (ProgramKubeconfig),
// the credential is checked when the suite ends: a request RBAC refused it fails the suite.
func (s *Suite) WebhookKubeconfig(ctx context.Context, cp *ControlPlane, name string) (*ServiceAccountCredential, error) {
	d, err := LoadWebhookDeployment(s.RepoRoot)
	if err != nil {
		return nil, err
	}
	cred, err := cp.WriteServiceAccountKubeconfig(ctx, d.ServiceAccount, name)
	if err != nil {
		return nil, err
	}
	s.addCredential(cred)
	return cred, nil
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
func FreePort() (int, error) {
	ports, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// WebhookAddress is where a webhook process listening on port is reached: the loopback address, since the local
// control plane reaches no Service.
func WebhookAddress(port int) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// PointWebhooksAt rewrites the clientConfig of every webhook of the ValidatingWebhookConfiguration name to
// https://<WebhookAddress(port)><path>, where path is the one its Service reference or URL named (the admission
// endpoint). Everything else (rules, failure policy, timeout, caBundle) stays as it is.
func PointWebhooksAt(ctx context.Context, kube kubernetes.Interface, name string, port int) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	var updated *admissionregistrationv1.ValidatingWebhookConfiguration
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		vwc, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range vwc.Webhooks {
			cc := &vwc.Webhooks[i].ClientConfig
			path, err := webhookPath(cc)
			if err != nil {
				return fmt.Errorf("webhook %q of ValidatingWebhookConfiguration %q: %w", vwc.Webhooks[i].Name, name, err)
			}
			u := (&url.URL{Scheme: "https", Host: WebhookAddress(port), Path: path}).String()
			cc.Service = nil
			cc.URL = &u
		}
		updated, err = kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, vwc, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("can't point the webhooks of ValidatingWebhookConfiguration %q at port %d: %w", name, port, err)
	}
	return updated, nil
}

// webhookPath returns the path a webhook's clientConfig sends requests to.
func webhookPath(cc *admissionregistrationv1.WebhookClientConfig) (string, error) {
	switch {
	case cc.Service != nil && cc.Service.Path != nil:
		return *cc.Service.Path, nil
	case cc.Service != nil:
		return "/", nil
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return "", fmt.Errorf("can't parse URL %q: %w", *cc.URL, err)
		}
		return u.Path, nil
	}
	return "", errors.New("clientConfig names neither a Service nor a URL")
}

// WebhookCABundles returns the caBundle of every webhook of the ValidatingWebhookConfiguration name, by webhook
// name.
func WebhookCABundles(ctx context.Context, kube kubernetes.Interface, name string) (map[string][]byte, error) {
	vwc, err := kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("can't get ValidatingWebhookConfiguration %q: %w", name, err)
	}
	bundles := make(map[string][]byte, len(vwc.Webhooks))
	for _, w := range vwc.Webhooks {
		bundles[w.Name] = w.ClientConfig.CABundle
	}
	return bundles, nil
}

// ServedCertificate makes a TLS handshake with addr and returns the certificate the server presents, without
// verifying it (VerifyServedCertificate does).
func ServedCertificate(ctx context.Context, addr string) (*x509.Certificate, error) {
	dialer := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true}}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("can't make a TLS handshake with %s: %w", addr, err)
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s presented no certificate", addr)
	}
	return certs[0], nil
}

// VerifyServedCertificate checks, as the API server does, that cert is valid for addr's host now and chains up to a
// CA of caBundle (PEM).
func VerifyServedCertificate(cert *x509.Certificate, caBundle []byte, addr string) error {
	if len(bytes.TrimSpace(caBundle)) == 0 {
		return errors.New("the caBundle is empty")
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return errors.New("the caBundle holds no PEM certificate")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("can't parse address %q: %w", addr, err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("the certificate %s served at %s does not verify with the caBundle: %w", SerialOf(cert), addr, err)
	}
	return nil
}

// SerialOf returns the serial number of cert in hex, as the webhook logs it.
func SerialOf(cert *x509.Certificate) string {
	return cert.SerialNumber.Text(16)
}

// WebhookOptions configures one webhook process.
type WebhookOptions struct {
	// Name identifies the process among those of its control plane; its kubeconfig and log are named after it.
	Name string
	// Port is the --secure-port; 0 picks a free one.
	Port int
	// Namespace is the --namespace of the serving certificate Secret: the webhook Deployment's.
	Namespace string
	// Kubeconfig is the --kubeconfig: the webhook ServiceAccount's (WebhookKubeconfig).
	Kubeconfig string
	// ExtraArgs follow the others, e.g. --serving-validity.
	ExtraArgs []string
}

// WebhookProgram returns the webhook process described by opts, serving a certificate valid for 127.0.0.1 (the
// address the local control plane's API server calls), with every other setting at the program's defaults.
func WebhookProgram(opts WebhookOptions) (Program, error) {
	if opts.Name == "" || opts.Port == 0 || opts.Namespace == "" || opts.Kubeconfig == "" {
		return Program{}, fmt.Errorf("webhook options need a name, a port, a namespace and a kubeconfig, got %+v", opts)
	}
	return Program{
		Name:    opts.Name,
		Package: "./cmd/scylla-operator",
		Args: append([]string{
			WebhookSubcommand,
			"--kubeconfig=" + opts.Kubeconfig,
			"--secure-port=" + strconv.Itoa(opts.Port),
			"--namespace=" + opts.Namespace,
			"--extra-san=127.0.0.1",
			"--v=2",
		}, opts.ExtraArgs...),
	}, nil
}
