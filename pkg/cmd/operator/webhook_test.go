package operator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllafake "github.com/scyllakube/client/scylla/clientset/versioned/fake"

	"github.com/scyllakube/scylla-operator/pkg/genericclioptions"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

func validWebhookOptions() *WebhookOptions {
	o := NewWebhookOptions()
	o.Namespace = "scylla-operator"
	return o
}

func TestWebhookOptionsValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		mutate  func(*WebhookOptions)
		wantErr string
	}{
		{name: "defaults are valid", mutate: func(*WebhookOptions) {}},
		{name: "extra SANs of both kinds are valid", mutate: func(o *WebhookOptions) { o.ExtraSANs = []string{"127.0.0.1", "::1", "webhook.example.com"} }},
		{name: "a mutating configuration is valid", mutate: func(o *WebhookOptions) { o.MutatingWebhookConfigurationName = "scylla-operator" }},
		{name: "port 0", mutate: func(o *WebhookOptions) { o.SecurePort = 0 }, wantErr: "--secure-port must be between 1 and 65535, got 0"},
		{name: "port too high", mutate: func(o *WebhookOptions) { o.SecurePort = 70000 }, wantErr: "--secure-port must be between 1 and 65535, got 70000"},
		{name: "no namespace", mutate: func(o *WebhookOptions) { o.Namespace = "" }, wantErr: "--namespace must be set (or $POD_NAMESPACE)"},
		{name: "bad namespace", mutate: func(o *WebhookOptions) { o.Namespace = "Scylla_Operator" }, wantErr: `--namespace "Scylla_Operator" is not a valid name`},
		{name: "bad secret name", mutate: func(o *WebhookOptions) { o.TLSSecretName = "" }, wantErr: `--tls-secret-name "" is not a valid name`},
		{name: "bad validating configuration name", mutate: func(o *WebhookOptions) { o.ValidatingWebhookConfigurationName = "a/b" }, wantErr: `--validating-webhook-configuration-name "a/b" is not a valid name`},
		{name: "bad mutating configuration name", mutate: func(o *WebhookOptions) { o.MutatingWebhookConfigurationName = "UPPER" }, wantErr: `--mutating-webhook-configuration-name "UPPER" is not a valid name`},
		{name: "bad service name", mutate: func(o *WebhookOptions) { o.ServiceName = "svc.with.dots" }, wantErr: `--service-name "svc.with.dots" is not a valid name`},
		{name: "bad extra SAN", mutate: func(o *WebhookOptions) { o.ExtraSANs = []string{"127.0.0.1", "not a name"} }, wantErr: `--extra-san "not a name" is neither an IP address nor a DNS name`},
		{name: "empty extra SAN", mutate: func(o *WebhookOptions) { o.ExtraSANs = []string{""} }, wantErr: `--extra-san "" is neither an IP address nor a DNS name`},
		{name: "no CA validity", mutate: func(o *WebhookOptions) { o.CAValidity = 0 }, wantErr: "--ca-validity must be positive, got 0s"},
		{name: "negative serving validity", mutate: func(o *WebhookOptions) { o.ServingValidity = -time.Hour }, wantErr: "--serving-validity must be positive, got -1h0m0s"},
		{name: "refresh fraction 0", mutate: func(o *WebhookOptions) { o.RefreshFraction = 0 }, wantErr: "--refresh-fraction must be greater than 0 and less than 1, got 0"},
		{name: "refresh fraction 1.5", mutate: func(o *WebhookOptions) { o.RefreshFraction = 1.5 }, wantErr: "--refresh-fraction must be greater than 0 and less than 1, got 1.5"},
		{name: "negative grace period", mutate: func(o *WebhookOptions) { o.ShutdownGracePeriod = -time.Second }, wantErr: "--shutdown-grace-period must be between 0s and 10m0s, got -1s"},
		{name: "grace period too long", mutate: func(o *WebhookOptions) { o.ShutdownGracePeriod = time.Hour }, wantErr: "--shutdown-grace-period must be between 0s and 10m0s, got 1h0m0s"},
		{name: "a CA that can't outlive the certificates it signs", mutate: func(o *WebhookOptions) { o.CAValidity = 60 * 24 * time.Hour },
			wantErr: "--ca-validity 1440h0m0s, --serving-validity 720h0m0s and --refresh-fraction 0.8 can't keep a certificate served: the CA's validity left at renewal"},
		{name: "a certificate renewed too close to its expiry", mutate: func(o *WebhookOptions) { o.ServingValidity = 10 * time.Minute; o.RefreshFraction = 0.9 },
			wantErr: "can't keep a certificate served: the certificate's validity left at renewal"},
		{name: "a CA renewed before the API servers trust it", mutate: func(o *WebhookOptions) {
			o.CAValidity, o.ServingValidity, o.RefreshFraction = 10*time.Minute, 5*time.Minute, 0.2
		}, wantErr: "can't keep a certificate served: the CA's validity before renewal (2m0s = CA validity 10m0s × refresh fraction 0.2) must be at least twice the trust propagation delay 2m0s"},
		{name: "bad qps", mutate: func(o *WebhookOptions) { o.QPS = 0 }, wantErr: "--qps must be greater than 0"},
		{name: "every error is reported at once", mutate: func(o *WebhookOptions) { o.SecurePort = 0; o.RefreshFraction = 2 },
			wantErr: "--secure-port must be between 1 and 65535, got 0\n--refresh-fraction must be greater than 0 and less than 1, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := validWebhookOptions()
			tc.mutate(o)
			err := o.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestWebhookCertificateCoversTheServiceAndTheExtraSANs(t *testing.T) {
	t.Parallel()
	o := validWebhookOptions()
	o.ExtraSANs = []string{"127.0.0.1", "webhook.example.com"}
	req := o.certificatePolicy().Certificate
	wantDNS := []string{
		"scylla-operator-webhook", "scylla-operator-webhook.scylla-operator", "scylla-operator-webhook.scylla-operator.svc",
		"scylla-operator-webhook.scylla-operator.svc.cluster.local", "webhook.example.com",
	}
	if !slices.Equal(req.DNSNames, wantDNS) || len(req.IPAddresses) != 1 || req.IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("DNS names %v and IPs %v, want %v and 127.0.0.1", req.DNSNames, req.IPAddresses, wantDNS)
	}
}

// The namespace comes from the pod's own unless given, and every flag can come from a SCYLLA_OPERATOR_* variable.
func TestWebhookCommandReadsItsNamespaceAndFlagsFromTheEnvironment(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "from-pod")
	if got := NewWebhookOptions().Namespace; got != "from-pod" {
		t.Errorf("namespace = %q, want $POD_NAMESPACE", got)
	}
	t.Setenv("SCYLLA_OPERATOR_SECURE_PORT", "0")
	t.Setenv("SCYLLA_OPERATOR_REFRESH_FRACTION", "1")
	var out bytes.Buffer
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{Out: &out, ErrOut: &out})
	root.SetArgs([]string{"webhook", "--kubeconfig=/nonexistent"})
	err := root.Execute()
	for _, want := range []string{"--secure-port must be between 1 and 65535, got 0", "--refresh-fraction must be greater than 0 and less than 1, got 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("want an error containing %q, got %v", want, err)
		}
	}
}

func TestWebhookCommandIsRegisteredWithItsContractFlags(t *testing.T) {
	t.Parallel()
	root := NewScyllaOperatorCommand(genericclioptions.IOStreams{})
	cmd, _, err := root.Find([]string{"webhook"})
	if err != nil || cmd == root {
		t.Fatalf("the root command has no webhook subcommand: %v", err)
	}
	for flag, def := range map[string]string{
		"kubeconfig":                            "",
		"secure-port":                           "9443",
		"tls-secret-name":                       "scylla-operator-webhook-serving-cert",
		"validating-webhook-configuration-name": "scylla-operator",
		"mutating-webhook-configuration-name":   "",
		"service-name":                          "scylla-operator-webhook",
		"extra-san":                             "[]",
		"ca-validity":                           "8760h0m0s",
		"serving-validity":                      "720h0m0s",
		"refresh-fraction":                      "0.8",
		"shutdown-grace-period":                 "25s",
	} {
		f := cmd.Flags().Lookup(flag)
		if f == nil {
			t.Errorf("webhook has no flag --%s", flag)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s defaults to %q, want %q", flag, f.DefValue, def)
		}
	}
	if cmd.Flags().Lookup("namespace") == nil {
		t.Error("webhook has no flag --namespace")
	}
}

// webhookTestServer runs the webhook program on fake API servers until the test ends.
type webhookTestServer struct {
	kubeClient   *kubefake.Clientset
	scyllaClient *scyllafake.Clientset
	base         string
	client       *http.Client
	stop         func() error
}

func startWebhook(t *testing.T) *webhookTestServer {
	t.Helper()
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: naming.WebhookConfigurationName},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{Name: "validate.scylla.scylladb.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{
			URL: ptr.To("https://127.0.0.1/validate"),
		}}},
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: naming.WebhookConfigurationName},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "mutate.scylla.scylladb.com", ClientConfig: admissionregistrationv1.WebhookClientConfig{
			URL: ptr.To("https://127.0.0.1/mutate"),
		}}},
	}
	s := &webhookTestServer{
		kubeClient:   kubefake.NewClientset(vwc, mwc),
		scyllaClient: scyllafake.NewClientset(&scyllav1alpha1.ScyllaDBCluster{ObjectMeta: metav1.ObjectMeta{Name: "dev", Namespace: "scylla"}}),
	}
	o := validWebhookOptions()
	o.ExtraSANs = []string{"127.0.0.1"}
	o.MutatingWebhookConfigurationName = naming.WebhookConfigurationName
	o.kubeClient, o.scyllaClient = s.kubeClient, s.scyllaClient
	p, err := o.newProgram()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.base = "https://" + l.Addr().String()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.run(ctx, l, 5*time.Second) }()
	var stopOnce sync.Once
	var stopErr error
	s.stop = func() error {
		stopOnce.Do(func() {
			cancel()
			stopErr = <-done
		})
		return stopErr
	}
	t.Cleanup(func() { _ = s.stop() })

	var bundle []byte
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		// Read through the tracker, which records no action: the test's reads are not the webhook's.
		obj, err := s.kubeClient.Tracker().Get(admissionregistrationv1.SchemeGroupVersion.WithResource("validatingwebhookconfigurations"), "", naming.WebhookConfigurationName)
		if err != nil {
			return false, err
		}
		bundle = obj.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks[0].ClientConfig.CABundle
		obj, err = s.kubeClient.Tracker().Get(admissionregistrationv1.SchemeGroupVersion.WithResource("mutatingwebhookconfigurations"), "", naming.WebhookConfigurationName)
		if err != nil {
			return false, err
		}
		mutatingBundle := obj.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks[0].ClientConfig.CABundle
		return len(bundle) != 0 && bytes.Equal(bundle, mutatingBundle), nil
	}); err != nil {
		t.Fatalf("the caBundles of both webhook configurations were never set: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	s.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		code, _ := s.get(t, "/readyz")
		return code == http.StatusOK, nil
	}); err != nil {
		code, body := s.get(t, "/readyz")
		t.Fatalf("never ready: %d %s", code, body)
	}
	return s
}

func (s *webhookTestServer) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := s.client.Get(s.base + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func (s *webhookTestServer) admit(t *testing.T, path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(&admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.Post(s.base+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(resp.Body).Decode(review); err != nil || review.Response == nil {
		t.Fatalf("HTTP %d: can't decode the AdmissionReview: %v", resp.StatusCode, err)
	}
	return review.Response
}

func taskRequest(kind, target string) *admissionv1.AdmissionRequest {
	task := `{"apiVersion":"scylla.scylladb.com/v1alpha1","kind":"ScyllaDBManagerTask","metadata":{"name":"weekly","namespace":"scylla"},` +
		`"spec":{"scyllaDBClusterRef":{"kind":"` + kind + `","name":"` + target + `"},"type":"Repair","repair":{"cron":"0 2 * * SUN"}}}`
	return &admissionv1.AdmissionRequest{
		UID: "uid", Resource: metav1.GroupVersionResource(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbmanagertasks")),
		Operation: admissionv1.Create, Name: "weekly", Namespace: "scylla", Object: runtime.RawExtension{Raw: []byte(task)},
	}
}

func TestWebhookServesAdmissionHealthAndMetricsOverTLS(t *testing.T) {
	t.Parallel()
	s := startWebhook(t)
	if code, body := s.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %s", code, body)
	}
	if got := s.admit(t, naming.WebhookValidatePath, taskRequest("ScyllaDBCluster", "dev")); !got.Allowed {
		t.Errorf("task of an existing cluster refused: %v", got.Result)
	}
	got := s.admit(t, naming.WebhookValidatePath, taskRequest("ScyllaDBCluster", "missing"))
	if got.Allowed || !strings.Contains(got.Result.Message, `spec.scyllaDBClusterRef.name: Not found: "missing"`) {
		t.Errorf("task of a missing cluster: allowed=%v result=%v", got.Allowed, got.Result)
	}
	if got := s.admit(t, naming.WebhookMutatePath, taskRequest("ScyllaDBCluster", "dev")); !got.Allowed || len(got.Patch) != 0 {
		t.Errorf("/mutate of a task: allowed=%v patch=%s, want allowed unchanged", got.Allowed, got.Patch)
	}
	code, body := s.get(t, "/metrics")
	if code != http.StatusOK || !strings.Contains(body, `scylla_operator_webhook_admission_requests_total{allowed="false",operation="CREATE",resource="scylladbmanagertasks"}`) {
		t.Errorf("/metrics = %d without the refused admission counted", code)
	}
	if err := s.stop(); err != nil {
		t.Errorf("run = %v, want a clean shutdown", err)
	}
}

// actionName returns the object name an action is authorized by: its name, or the metadata.name its list or watch
// is restricted to; "" for a create or an unrestricted list.
func actionName(a clienttesting.Action) string {
	switch a := a.(type) {
	case clienttesting.GetAction:
		return a.GetName()
	case clienttesting.UpdateAction:
		return a.GetObject().(metav1.Object).GetName()
	case clienttesting.ListAction:
		return exactName(a.GetListRestrictions().Fields)
	case clienttesting.WatchAction:
		return exactName(a.GetWatchRestrictions().Fields)
	}
	return ""
}

func exactName(s fields.Selector) string {
	if s == nil {
		return ""
	}
	name, _ := s.RequiresExactMatch("metadata.name")
	return name
}

// rulesAllowNamed reports whether rules grant a with name, honouring resource names as RBAC does.
func rulesAllowNamed(rules []rbacv1.PolicyRule, a clienttesting.Action, name string) bool {
	p := permissionOf(a)
	for _, r := range rules {
		if slices.Contains(r.APIGroups, p.group) && slices.Contains(r.Resources, p.resource) && slices.Contains(r.Verbs, p.verb) &&
			(len(r.ResourceNames) == 0 || (len(name) != 0 && slices.Contains(r.ResourceNames, name))) {
			return true
		}
	}
	return false
}

// The webhook, started on fake API servers and asked about a task whose target is not cached, makes only requests
// its ClusterRole and Role allow, by name where they name objects, and uses every permission but the ones only a
// lost create race shows.
func TestWebhookNeedsExactlyItsRoles(t *testing.T) {
	t.Parallel()
	s := startWebhook(t)
	s.admit(t, naming.WebhookValidatePath, taskRequest("ScyllaDBCluster", "just-created"))
	s.admit(t, naming.WebhookValidatePath, taskRequest("ScyllaDBDatacenter", "just-created"))
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	clusterRules := WebhookClusterRoleRules(naming.WebhookConfigurationName, naming.WebhookConfigurationName)
	namespaceRules := WebhookNamespaceRules(naming.WebhookServingCertSecretName)
	used := map[permission]bool{}
	for _, a := range slices.Concat(s.kubeClient.Actions(), s.scyllaClient.Actions()) {
		p := permissionOf(a)
		rules := clusterRules
		if a.GetNamespace() == "scylla-operator" {
			rules = namespaceRules
		}
		if !rulesAllowNamed(rules, a, actionName(a)) {
			t.Errorf("%v of %q in namespace %q is not allowed", p, actionName(a), a.GetNamespace())
		}
		used[p] = true
	}
	unexercised := []permission{{group: "", resource: "secrets", verb: "get"}, {group: "", resource: "secrets", verb: "update"}}
	for _, p := range permissionsOf(slices.Concat(clusterRules, namespaceRules)) {
		if strings.Contains(p.group+p.resource+p.verb, "*") {
			t.Errorf("%v is a wildcard", p)
		}
		if !used[p] && !slices.Contains(unexercised, p) {
			t.Errorf("%v is granted but not used", p)
		}
	}
}
