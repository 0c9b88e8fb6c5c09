package framework

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TestAPIServerGateForwardsAProgramsOwnCredentials runs a client built from a gated kubeconfig, through the gate over
// HTTPS, against an HTTPS server standing in for the API server: the request arrives over TLS with the credential's
// token and no client certificate of the gate's, and the answer comes back.
func TestAPIServerGateForwardsAProgramsOwnCredentials(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" tlsWithoutClientCert="+boolString(r.TLS != nil && len(r.TLS.PeerCertificates) == 0))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&corev1.Namespace{TypeMeta: metav1.TypeMeta{Kind: "Namespace", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "answered"}})
	}))
	defer ts.Close()
	caData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
	cp := &ControlPlane{Name: "kcp", adminConfig: &rest.Config{Host: ts.URL, TLSClientConfig: rest.TLSClientConfig{CAData: caData}}}

	gate, err := StartAPIServerGate(cp)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()

	config := clientcmdapi.NewConfig()
	config.Clusters["kcp"] = &clientcmdapi.Cluster{Server: ts.URL, CertificateAuthorityData: caData}
	config.AuthInfos["program"] = &clientcmdapi.AuthInfo{Token: "the-programs-token"}
	config.Contexts["kcp"] = &clientcmdapi.Context{Cluster: "kcp", AuthInfo: "program"}
	config.CurrentContext = "kcp"
	cred := &ServiceAccountCredential{ServiceAccount: ServiceAccount{Namespace: "ns", Name: "program"}, Kubeconfig: config}
	path := filepath.Join(t.TempDir(), "gated.kubeconfig")
	if err := WriteGatedKubeconfig(cred, gate, path); err != nil {
		t.Fatal(err)
	}
	if got := cred.Kubeconfig.Clusters["kcp"].Server; got != ts.URL {
		t.Errorf("writing the gated kubeconfig changed the credential's server to %q", got)
	}

	restConfig, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	if restConfig.Host != gate.URL {
		t.Errorf("the gated kubeconfig reaches %q, want the gate %q", restConfig.Host, gate.URL)
	}
	kube, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(t.Context(), "asked", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("a request through the gate failed: %v", err)
	}
	if ns.Name != "answered" {
		t.Errorf("the answer through the gate names %q, want %q", ns.Name, "answered")
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"GET /api/v1/namespaces/asked Bearer the-programs-token tlsWithoutClientCert=true"}, seen); diff != "" {
		t.Errorf("the server saw other requests (-want +got):\n%s", diff)
	}
}

func TestAPIServerGateRefusesBadInput(t *testing.T) {
	if _, err := StartAPIServerGate(&ControlPlane{Name: "kcp", adminConfig: &rest.Config{Host: "https://127.0.0.1:1"}}); err == nil {
		t.Error("a gate started for a control plane without a CA certificate")
	}
	gate := &APIServerGate{HTTPGate: &HTTPGate{URL: "https://127.0.0.1:1"}}
	for name, cred := range map[string]*ServiceAccountCredential{
		"no kubeconfig": {},
		"no cluster":    {Kubeconfig: clientcmdapi.NewConfig()},
	} {
		if err := WriteGatedKubeconfig(cred, gate, filepath.Join(t.TempDir(), "gated.kubeconfig")); err == nil {
			t.Errorf("%s: a gated kubeconfig was written", name)
		}
	}
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
