package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// tlsClient trusts the caBundle the certificate manager wrote and verifies the name the API server would.
func tlsClient(t *testing.T, bundle []byte, serverName string) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(bundle) {
		t.Fatal("caBundle holds no certificate")
	}
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: serverName, MinVersion: tls.VersionTLS12},
		DisableKeepAlives: true,
	}}
}

func TestServeTLSHotReloadsTheCertificateAndDrainsOnShutdown(t *testing.T) {
	t.Parallel()
	vwc := testValidatingConfiguration()
	f := newCertFixture(t, fake.NewClientset(vwc), false, vwc)
	f.now = time.Now()
	f.mustSync()
	bundle := f.validating().Webhooks[0].ClientConfig.CABundle

	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		<-release
		_, _ = io.WriteString(w, "finished")
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- ServeTLS(ctx, l, mux, f.manager.GetCertificate, 5*time.Second) }()
	base := "https://" + l.Addr().String()

	get := func(client *http.Client, path string) (string, *x509.Certificate, error) {
		resp, err := client.Get(base + path)
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), resp.TLS.PeerCertificates[0], err
	}

	inCluster := tlsClient(t, bundle, naming.WebhookServiceName+"."+testNamespace+".svc")
	body, first, err := get(inCluster, "/ok")
	if err != nil || body != "ok" {
		t.Fatalf("GET /ok with the Service name = %q, %v", body, err)
	}
	if _, _, err := get(tlsClient(t, bundle, "127.0.0.1"), "/ok"); err != nil {
		t.Errorf("GET /ok verifying 127.0.0.1 (the local control plane's url) = %v", err)
	}
	if _, _, err := get(tlsClient(t, bundle, "elsewhere.example.com"), "/ok"); err == nil {
		t.Error("a name outside the certificate verified")
	}

	// A reissued certificate is served from the next handshake on, with no restart.
	f.manager.options.Policy.Certificate.DNSNames = append(f.manager.options.Policy.Certificate.DNSNames, "extra.example.com")
	f.mustSync()
	_, second, err := get(inCluster, "/ok")
	if err != nil {
		t.Fatalf("GET after renewal = %v", err)
	}
	if second.Equal(first) {
		t.Error("the renewed certificate is not served")
	}

	// Shutdown waits for the request in flight.
	slow := make(chan string, 1)
	go func() {
		body, _, err := get(inCluster, "/slow")
		if err != nil {
			body = err.Error()
		}
		slow <- body
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	time.Sleep(100 * time.Millisecond)
	if _, _, err := get(inCluster, "/ok"); err == nil {
		t.Error("a new request was accepted after shutdown began")
	}
	close(release)
	if got := <-slow; got != "finished" {
		t.Errorf("request in flight at shutdown got %q, want it finished", got)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeTLS = %v, want a clean shutdown", err)
	}
}

func TestServeTLSCutsOffRequestsAfterTheGracePeriod(t *testing.T) {
	t.Parallel()
	f := newCertFixture(t, fake.NewClientset(), false)
	f.now = time.Now()
	f.mustSync()
	mux := http.NewServeMux()
	stuck := make(chan struct{})
	defer close(stuck)
	mux.HandleFunc("/stuck", func(http.ResponseWriter, *http.Request) { <-stuck })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeTLS(ctx, l, mux, f.manager.GetCertificate, 200*time.Millisecond) }()
	client := tlsClient(t, f.secret().Data[naming.WebhookCABundleKey], "127.0.0.1")
	go func() { _, _ = client.Get("https://" + l.Addr().String() + "/stuck") }()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-served:
		if err == nil {
			t.Error("ServeTLS = nil, want the cut-off requests reported")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeTLS did not return after its grace period")
	}
}
