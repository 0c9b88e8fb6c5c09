//go:build e2e

package operator

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/e2e/nodesim"
	"github.com/scyllakube/scylla-operator/pkg/certs"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/fakescylladb"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tlsArgs make certificates short-lived, so that the test sees a renewal: a certificate lives 3 minutes and is
// renewed after half of it.
var tlsArgs = []string{
	"--tls-certificate-validity=3m",
	"--tls-ca-validity=1h",
	"--tls-refresh-fraction=0.5",
	"--tls-trust-propagation-delay=20s",
}

// startTLSTestEnv creates the test's namespace, starts the node simulator for it and an operator named name with
// automatic TLS on (the default) and extraArgs.
func startTLSTestEnv(t *testing.T, name string, extraArgs []string) (*testEnv, *nodesim.Simulator) {
	t.Helper()
	f := framework.NewFramework(t)
	c := f.Cluster()
	sim := startNodeSimulator(t, f, c)
	scylla, err := scyllaclientset.NewForConfig(c.Clients.Config)
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{t: t, f: f, c: c, ns: c.Namespace, kube: c.Clients.Kube, scylla: scylla}
	startOperator(t, f, c, name, operatorOptions{leaseName: e.ns, verbosity: 2, extraArgs: extraArgs})
	return e, sim
}

// TestAutomaticTLS checks that a ScyllaCluster gets its CAs, certificates and admin connection config; that its
// ScyllaDB is started with CQL over TLS configured from the mounted files; that a Go TLS client holding the published
// CA and admin certificate completes a handshake with a server configured from those mounted files, and a client
// without a certificate does not; and that a certificate near expiry is renewed without replacing any pod.
func TestAutomaticTLS(t *testing.T) {
	e, sim := startTLSTestEnv(t, "operator-tls", tlsArgs)

	sc := e.createScyllaCluster(e.newScyllaCluster(1, 2))
	sc = e.waitForRollout(sc.Name, "the cluster with automatic TLS")
	sdcName := naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)
	ctx := t.Context()

	secrets := map[string]*corev1.Secret{}
	for _, name := range []string{naming.ServingCAName(sdcName), naming.ServingCertsName(sdcName), naming.ClientCAName(sdcName),
		naming.AdminClientCertName(sdcName), naming.AdminCQLConnectionConfigsName(sdcName)} {
		s, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("can't get Secret %q: %v", name, err)
		}
		secrets[name] = s
	}
	for _, name := range []string{naming.ServingCAName(sdcName), naming.ClientCAName(sdcName)} {
		if _, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("can't get ConfigMap %q: %v", name, err)
		}
	}
	for _, name := range []string{naming.AlternatorServingCAName(sdcName), naming.AlternatorServingCertsName(sdcName)} {
		if _, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("Secret %q exists without Alternator: %v", name, err)
		}
	}

	pod := memberName(sc, sc.Spec.Datacenter.Racks[0].Name, 0)
	server := mountedServerConfig(t, sim, e.ns, pod)
	config := secrets[naming.AdminCQLConnectionConfigsName(sdcName)]
	serverName := cqlshrcValue(t, string(config.Data[naming.CQLConnectionConfigKey]), "hostname")
	if want := naming.ClientServiceName(sdcName) + "." + e.ns + ".svc"; serverName != want {
		t.Errorf("the cqlshrc connects to %q, want %q", serverName, want)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(config.Data[naming.CQLConnectionConfigCAKey]) {
		t.Fatalf("key %q of the connection config holds no certificate", naming.CQLConnectionConfigCAKey)
	}
	admin, err := tls.X509KeyPair(config.Data[naming.CQLConnectionConfigCertKey], config.Data[naming.CQLConnectionConfigKeyKey])
	if err != nil {
		t.Fatalf("the admin key pair of the connection config is unusable: %v", err)
	}
	if err := handshake(server, &tls.Config{RootCAs: roots, ServerName: serverName, Certificates: []tls.Certificate{admin}, MinVersion: tls.VersionTLS12}); err != nil {
		t.Errorf("the admin can't complete a TLS handshake with the node's mounted certificate: %v", err)
	}
	if err := handshake(server, &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}); err == nil {
		t.Errorf("a client without a certificate completed a TLS handshake, but client certificates are required")
	}

	// Near expiry: the serving certificate is renewed in place; no pod is replaced.
	pods := e.podUIDs(ctx, sc.Name)
	servingName := naming.ServingCertsName(sdcName)
	issued := secrets[servingName].Data[corev1.TLSCertKey]
	var renewed *corev1.Secret
	e.f.WaitFor(4*time.Minute, "the serving certificate to be renewed", func(ctx context.Context) (bool, error) {
		s, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, servingName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		renewed = s
		return !bytes.Equal(s.Data[corev1.TLSCertKey], issued), nil
	})
	bundle, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, naming.ServingCAName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trusted, err := certs.DecodeCertificatesPEM([]byte(bundle.Data[naming.CABundleKey]))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := certs.DecodeCertificatesPEM(renewed.Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	if err := certs.Verify(leaf[0], trusted, certs.ServingUsage, serverName, time.Now()); err != nil {
		t.Errorf("the renewed certificate does not verify against the published bundle: %v", err)
	}
	if after := e.podUIDs(ctx, sc.Name); !maps.Equal(pods, after) {
		t.Errorf("pods were replaced by the renewal: before %v, after %v", pods, after)
	}
}

// TestAlternatorOverTLSAlone checks that a ScyllaCluster with Alternator and no insecureEnableHTTP gets the
// Alternator CA and certificate; that its ScyllaDB is started by a sidecar given the Alternator TLS flags, with
// Alternator over HTTPS on 8043 and no plain port; that a Go client trusting the published Alternator CA bundle
// completes a handshake with a server configured from the mounted files; and that the client and member Services
// expose alternator-tls 8043 and no plain Alternator port.
func TestAlternatorOverTLSAlone(t *testing.T) {
	e, sim := startTLSTestEnv(t, "operator-alternator-tls", nil)

	sc := e.newScyllaCluster(1, 1)
	sc.Spec.Alternator = &scyllav1.AlternatorSpec{WriteIsolation: scyllav1.AlternatorWriteIsolationAlways}
	sc = e.createScyllaCluster(sc)
	sc = e.waitForRollout(sc.Name, "the cluster with Alternator over HTTPS alone")
	sdcName := naming.ScyllaDBDatacenterNameForScyllaCluster(sc.Name)
	ctx := t.Context()

	for _, name := range []string{naming.AlternatorServingCAName(sdcName), naming.AlternatorServingCertsName(sdcName)} {
		if _, err := e.kube.CoreV1().Secrets(e.ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("can't get Secret %q: %v", name, err)
		}
	}
	bundle, err := e.kube.CoreV1().ConfigMaps(e.ns).Get(ctx, naming.AlternatorServingCAName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("can't get ConfigMap %q: %v", naming.AlternatorServingCAName(sdcName), err)
	}

	podName := memberName(sc, sc.Spec.Datacenter.Racks[0].Name, 0)
	pod, err := e.kube.CoreV1().Pods(e.ns).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, container := range pod.Spec.Containers {
		for _, arg := range append(slices.Clone(container.Command), container.Args...) {
			if strings.HasPrefix(arg, "--alternator-tls-") {
				flags = append(flags, arg)
			}
		}
	}
	wantFlags := []string{
		"--alternator-tls-certificate-file=" + naming.AlternatorServingCertsDir + "/" + corev1.TLSCertKey,
		"--alternator-tls-key-file=" + naming.AlternatorServingCertsDir + "/" + corev1.TLSPrivateKeyKey,
	}
	if !slices.Equal(wantFlags, flags) {
		t.Errorf("the sidecar is started with %q, want %q", flags, wantFlags)
	}

	inv, err := sim.LastInvocation(e.ns, podName)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(inv.Config["alternator_https_port"]); got != "8043" {
		t.Errorf("alternator_https_port is %s, want 8043", got)
	}
	if port, ok := inv.Config["alternator_port"]; ok {
		t.Errorf("ScyllaDB serves plain HTTP on alternator_port %v without insecureEnableHTTP", port)
	}
	if _, ok := inv.Config["alternator_encryption_options"].(map[string]any); !ok {
		t.Fatalf("ScyllaDB was started without alternator_encryption_options: %v", inv.Config)
	}
	node, ok := sim.Node(e.ns, podName)
	if !ok {
		t.Fatalf("no simulated node for Pod %s", podName)
	}
	cert, err := tls.X509KeyPair(mountedFile(t, node.Dir, inv, "alternator_encryption_options", "certificate"),
		mountedFile(t, node.Dir, inv, "alternator_encryption_options", "keyfile"))
	if err != nil {
		t.Fatalf("the mounted Alternator certificate is unusable: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(bundle.Data[naming.CABundleKey])) {
		t.Fatalf("ConfigMap %q holds no CA certificate", bundle.Name)
	}
	server := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	serverName := naming.ClientServiceName(sdcName) + "." + e.ns + ".svc"
	if err := handshake(server, &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}); err != nil {
		t.Errorf("a client trusting the Alternator CA bundle can't complete a TLS handshake with the node's mounted certificate: %v", err)
	}

	services, err := e.memberServices(ctx, sc.Name)
	if err != nil {
		t.Fatal(err)
	}
	client, err := e.kube.CoreV1().Services(e.ns).Get(ctx, naming.ClientServiceName(sdcName), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	services[client.Name] = client
	if _, ok := services[podName]; !ok {
		t.Errorf("no member Service %q among %v", podName, slices.Collect(maps.Keys(services)))
	}
	for name, svc := range services {
		var alternator []string
		for _, p := range svc.Spec.Ports {
			if strings.HasPrefix(p.Name, "alternator") {
				alternator = append(alternator, fmt.Sprintf("%s/%d->%s", p.Name, p.Port, p.TargetPort.String()))
			}
		}
		if want := []string{"alternator-tls/8043->8043"}; !slices.Equal(want, alternator) {
			t.Errorf("Service %s exposes Alternator on %q, want %q", name, alternator, want)
		}
	}
}

// mountedFile returns the content of the file that key of a TLS section (client_encryption_options,
// alternator_encryption_options) of the scylla.yaml of inv names, as the node simulator wrote it for the pod whose
// directory is podDir.
func mountedFile(t *testing.T, podDir string, inv *fakescylladb.Invocation, section, key string) []byte {
	t.Helper()
	options, _ := inv.Config[section].(map[string]any)
	path, _ := options[key].(string)
	host, err := hostPath(podDir, path)
	if err != nil {
		t.Fatalf("%s.%s: %v", section, key, err)
	}
	data, err := os.ReadFile(host)
	if err != nil {
		t.Fatalf("%s.%s: %v", section, key, err)
	}
	return data
}

// mountedServerConfig returns a TLS server configuration made the way the node's ScyllaDB is configured: from
// client_encryption_options of its last start, with the files of the pod's volumes they name.
func mountedServerConfig(t *testing.T, sim *nodesim.Simulator, namespace, pod string) *tls.Config {
	t.Helper()
	inv, err := sim.LastInvocation(namespace, pod)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(inv.Config["native_transport_port_ssl"]); got != "9142" {
		t.Errorf("native_transport_port_ssl is %s, want 9142", got)
	}
	options, ok := inv.Config["client_encryption_options"].(map[string]any)
	if !ok {
		t.Fatalf("ScyllaDB was started without client_encryption_options: %v", inv.Config)
	}
	if options["enabled"] != true || options["require_client_auth"] != true {
		t.Errorf("client_encryption_options are %v, want enabled with required client certificates", options)
	}
	node, ok := sim.Node(namespace, pod)
	if !ok {
		t.Fatalf("no simulated node for Pod %s", pod)
	}
	file := func(key string) []byte {
		return mountedFile(t, node.Dir, inv, "client_encryption_options", key)
	}
	cert, err := tls.X509KeyPair(file("certificate"), file("keyfile"))
	if err != nil {
		t.Fatalf("the mounted serving certificate is unusable: %v", err)
	}
	clientCAs := x509.NewCertPool()
	if !clientCAs.AppendCertsFromPEM(file("truststore")) {
		t.Fatal("the mounted client CA bundle holds no certificate")
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

// hostPath maps a file of a TLS volume in the ScyllaDB container to where the node simulator wrote it.
func hostPath(podDir, containerPath string) (string, error) {
	for dir, volume := range map[string]string{
		naming.ScyllaDBServingCertsDir:   naming.ScyllaDBServingCertsVolumeName,
		naming.ScyllaDBClientCADir:       naming.ScyllaDBClientCAVolumeName,
		naming.AlternatorServingCertsDir: naming.AlternatorServingCertsVolumeName,
	} {
		if rel, ok := strings.CutPrefix(containerPath, dir+"/"); ok {
			return filepath.Join(podDir, "volumes", volume, rel), nil
		}
	}
	return "", fmt.Errorf("%q is on none of the TLS volumes", containerPath)
}

// handshake runs a TLS handshake between a server with config server and a client with config client over
// loopback, and returns the server's error, else the client's.
func handshake(server, client *tls.Config) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	serverErr := make(chan error, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			serverErr <- err
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		serverErr <- tls.Server(conn, server).Handshake()
	}()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", l.Addr().String(), client)
	var clientErr error
	if err != nil {
		clientErr = err
	} else {
		// With TLS 1.3 the client is done before the server checked its certificate: a read sees the verdict, an
		// alert, or the end of a connection the server closed after a successful handshake.
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := conn.Read(make([]byte, 1)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, io.EOF) {
			clientErr = err
		}
		conn.Close()
	}
	if err := <-serverErr; err != nil {
		return fmt.Errorf("server: %w", err)
	}
	return clientErr
}

// cqlshrcValue returns the value of key in a cqlshrc.
func cqlshrcValue(t *testing.T, cqlshrc, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + ` = (.*)$`).FindStringSubmatch(cqlshrc)
	if m == nil {
		t.Fatalf("the cqlshrc sets no %s:\n%s", key, cqlshrc)
	}
	return m[1]
}
