package framework

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

func TestLoadWebhookDeploymentReadsTheInstallManifests(t *testing.T) {
	t.Parallel()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadWebhookDeployment(root)
	if err != nil {
		t.Fatal(err)
	}
	if d.ServiceAccount.Name == "" || d.ServiceAccount.Namespace == "" || d.Replicas < 2 {
		t.Fatalf("want a ServiceAccount and at least 2 replicas, got %+v", d)
	}
}

func TestLoadWebhookDeploymentRejectsManifestsWithoutOneWebhookDeployment(t *testing.T) {
	t.Parallel()
	deployment := func(name, sa string, args ...string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: scylla-operator
spec:
  template:
    spec:
      serviceAccountName: "` + sa + `"
      containers:
      - name: c
        args: ["` + strings.Join(args, `", "`) + `"]
---
`
	}
	tt := []struct {
		name    string
		files   string
		wantErr string
	}{
		{name: "no webhook Deployment", files: deployment("op", "op", "operator"), wantErr: `no Deployment of deploy/operator runs "webhook"`},
		{name: "two webhook Deployments", files: deployment("a", "a", "webhook") + deployment("b", "b", "webhook"), wantErr: `more than one Deployment`},
		{name: "webhook Deployment without a ServiceAccount", files: deployment("a", "", "webhook"), wantErr: `needs a namespace and a serviceAccountName`},
		{name: "fractional replicas", files: strings.Replace(deployment("a", "a", "webhook"), "spec:\n  template:", "spec:\n  replicas: 1.5\n  template:", 1), wantErr: `spec.replicas 1.5 is not a whole number`},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			dir := filepath.Join(root, filepath.FromSlash(OperatorManifestsDir))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "30-deployment.yaml"), []byte(tc.files), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadWebhookDeployment(root)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestPointWebhooksAtKeepsEverythingButTheClientConfig(t *testing.T) {
	t.Parallel()
	fail := admissionregistrationv1.Fail
	applied := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "scylla-operator"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{
			{
				Name: "service.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{
					Service:  &admissionregistrationv1.ServiceReference{Namespace: "ns", Name: "svc", Path: ptr.To("/validate"), Port: ptr.To[int32](443)},
					CABundle: []byte("bundle"),
				},
				FailurePolicy:  &fail,
				TimeoutSeconds: ptr.To[int32](10),
				Rules:          []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}}},
			},
			{
				Name:         "url.example.com",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://old.example.com:8443/other")},
			},
		},
	}
	kube := fake.NewClientset(applied)
	got, err := PointWebhooksAt(t.Context(), kube, "scylla-operator", 12345)
	if err != nil {
		t.Fatal(err)
	}
	want := applied.DeepCopy()
	want.Webhooks[0].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:12345/validate"), CABundle: []byte("bundle")}
	want.Webhooks[1].ClientConfig = admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://127.0.0.1:12345/other")}
	if diff := cmp.Diff(want.Webhooks, got.Webhooks); diff != "" {
		t.Errorf("webhooks (-want +got):\n%s", diff)
	}

	if _, err := PointWebhooksAt(t.Context(), kube, "missing", 12345); err == nil {
		t.Error("pointing the webhooks of a missing configuration succeeded")
	}
}

func TestServedCertificateIsVerifiedAgainstTheCABundle(t *testing.T) {
	t.Parallel()
	now := time.Now()
	issue := func(t *testing.T, ip string) (*certs.KeyPair, []byte) {
		t.Helper()
		ca, err := certs.NewSelfSignedCA("test-ca", time.Hour, certs.ECDSAP256, now)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := ca.Sign(certs.CertificateRequest{CommonName: "webhook", IPAddresses: []net.IP{net.ParseIP(ip)}, Usage: certs.ServingUsage, Validity: time.Hour, KeyAlgorithm: certs.ECDSAP256}, now)
		if err != nil {
			t.Fatal(err)
		}
		return cert, certs.EncodeCertificatesPEM(ca.Certificate)
	}
	served, bundle := issue(t, "127.0.0.1")
	_, otherBundle := issue(t, "127.0.0.1")
	wrongHost, wrongHostBundle := issue(t, "127.0.0.2")

	server := httptest.NewUnstartedServer(http.NotFoundHandler())
	server.TLS = tlsConfigServing(served)
	server.StartTLS()
	defer server.Close()
	addr := server.Listener.Addr().String()
	got, err := ServedCertificate(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if SerialOf(got) != SerialOf(served.Certificate) {
		t.Fatalf("got certificate %s, the server serves %s", SerialOf(got), SerialOf(served.Certificate))
	}
	if err := VerifyServedCertificate(got, bundle, addr); err != nil {
		t.Errorf("the issuing CA's bundle doesn't verify the certificate: %v", err)
	}
	for name, tc := range map[string]struct {
		bundle  []byte
		cert    *certs.KeyPair
		wantErr string
	}{
		"another CA":       {bundle: otherBundle, cert: served, wantErr: "does not verify"},
		"another address":  {bundle: wrongHostBundle, cert: wrongHost, wantErr: "does not verify"},
		"empty bundle":     {bundle: nil, cert: served, wantErr: "caBundle is empty"},
		"bundle is no PEM": {bundle: []byte("not PEM"), cert: served, wantErr: "holds no PEM certificate"},
	} {
		if err := VerifyServedCertificate(tc.cert.Certificate, tc.bundle, addr); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: want an error containing %q, got %v", name, tc.wantErr, err)
		}
	}

	if _, err := ServedCertificate(t.Context(), WebhookAddress(closedPort(t))); err == nil {
		t.Error("a handshake with a closed port succeeded")
	}
}

func TestWebhookProgramRejectsIncompleteOptions(t *testing.T) {
	t.Parallel()
	complete := WebhookOptions{Name: "w", Port: 1, Namespace: "ns", Kubeconfig: "k"}
	prog, err := WebhookProgram(complete)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Args[0] != WebhookSubcommand || !strings.Contains(strings.Join(prog.Args, " "), "--extra-san=127.0.0.1") {
		t.Errorf("want the webhook subcommand serving 127.0.0.1, got %q", prog.Args)
	}
	for _, o := range []WebhookOptions{
		{Port: 1, Namespace: "ns", Kubeconfig: "k"},
		{Name: "w", Namespace: "ns", Kubeconfig: "k"},
		{Name: "w", Port: 1, Kubeconfig: "k"},
		{Name: "w", Port: 1, Namespace: "ns"},
	} {
		if _, err := WebhookProgram(o); err == nil {
			t.Errorf("options %+v were accepted", o)
		}
	}
}

func TestWarningRecorderTakesSortedWarningsOnce(t *testing.T) {
	t.Parallel()
	r := &WarningRecorder{}
	r.HandleWarningHeader(299, "", "b")
	r.HandleWarningHeader(299, "", "a")
	if diff := cmp.Diff([]string{"a", "b"}, r.Take()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	if got := r.Take(); len(got) != 0 {
		t.Errorf("want no warnings after Take, got %q", got)
	}
}

// closedPort returns a port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// tlsConfigServing serves kp.
func tlsConfigServing(kp *certs.KeyPair) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{kp.Certificate.Raw}, PrivateKey: kp.Key, Leaf: kp.Certificate}}}
}
