//go:build e2e

package scylladbcluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

// probePeriodSeconds is the RemoteKubernetesClusters' probe period, short so that an unreachable worker shows soon.
const probePeriodSeconds = 2

// tcpProxy forwards loopback TCP connections to a target address until it is cut: then it closes every open
// connection and every new one at once, as a worker whose API server went away would look to its clients, until
// it is restored. It keeps its address all along, so the kubeconfig pointing at it stays valid.
type tcpProxy struct {
	t        testing.TB
	listener net.Listener
	target   string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// startTCPProxy starts a proxy to target on a free loopback port, stopped when the test ends.
func startTCPProxy(t testing.TB, target string) *tcpProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("can't listen for the proxy to %s: %v", target, err)
	}
	p := &tcpProxy{t: t, listener: l, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// address is where clients connect, such as 127.0.0.1:41234.
func (p *tcpProxy) address() string {
	return p.listener.Addr().String()
}

func (p *tcpProxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		if !p.track(conn) {
			_ = conn.Close()
			continue
		}
		go p.forward(conn)
	}
}

// track records conn as open, unless the proxy is cut.
func (p *tcpProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *tcpProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

func (p *tcpProxy) forward(client net.Conn) {
	defer p.untrack(client)
	defer client.Close()
	upstream, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(upstream) {
		_ = upstream.Close()
		return
	}
	defer p.untrack(upstream)
	defer upstream.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(upstream, client)
	go pipe(client, upstream)
	// One direction ending ends the connection: the deferred closes stop the other.
	<-done
}

// cutOff closes every connection through the proxy and refuses new ones until restore.
func (p *tcpProxy) cutOff() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]struct{}{}
}

// restore lets connections through again.
func (p *tcpProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}

func (p *tcpProxy) close() {
	_ = p.listener.Close()
	p.cutOff()
}

// remote is a RemoteKubernetesCluster of the meta plane that reaches a worker through a proxy the test controls.
type remote struct {
	name   string
	worker *plane
	proxy  *tcpProxy
}

// createRemoteKubernetesCluster creates, in the meta plane, a RemoteKubernetesCluster named name whose kubeconfig
// reaches worker w through a tcpProxy, and waits until it is Available. It is deleted when the test ends, whatever
// state the test left it in.
func (e *env) createRemoteKubernetesCluster(name string, w *plane) *remote {
	e.t.Helper()
	ctx := e.t.Context()
	proxy := startTCPProxy(e.t, "127.0.0.1:"+strconv.Itoa(w.c.ControlPlane.Ports.APIServer))
	// The identity the install manifests' remote ClusterRole is for, not an admin: the operator must get by with it.
	kubeconfig := e.f.RemoteKubeconfig(w.c)
	config, err := clientcmd.Load(kubeconfig)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, c := range config.Clusters {
		// The API server's certificate names 127.0.0.1, which the proxy listens on too.
		c.Server = "https://" + proxy.address()
	}
	if kubeconfig, err = clientcmd.Write(*config); err != nil {
		e.t.Fatal(err)
	}

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-kubeconfig", Namespace: e.meta.c.Namespace},
		Data:       map[string][]byte{naming.KubeconfigSecretKey: kubeconfig},
	}
	if _, err := e.meta.c.Clients.Kube.CoreV1().Secrets(secret.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	rkcs := e.meta.scylla.ScyllaV1alpha1().RemoteKubernetesClusters()
	e.t.Cleanup(func() { e.forceDeleteRemoteKubernetesCluster(name) })
	rkc := &scyllav1alpha1.RemoteKubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: scyllav1alpha1.RemoteKubernetesClusterSpec{
			KubeconfigSecretRef:     corev1.SecretReference{Namespace: secret.Namespace, Name: secret.Name},
			ClientHealthcheckProbes: &scyllav1alpha1.ClientHealthcheckProbes{PeriodSeconds: probePeriodSeconds},
		},
	}
	if _, err := rkcs.Create(ctx, rkc, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor(stepTimeout, fmt.Sprintf("RemoteKubernetesCluster %q reaching %s to be Available", name, w.name()), func(ctx context.Context) (bool, error) {
		got, err := rkcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return conditionsProblem(got.Status.Conditions, got.Generation, rolledOut) == nil, conditionsProblem(got.Status.Conditions, got.Generation, rolledOut)
	})
	return &remote{name: name, worker: w, proxy: proxy}
}

// forceDeleteRemoteKubernetesCluster deletes the RemoteKubernetesCluster name, removing its finalizer first, however
// the test left it.
func (e *env) forceDeleteRemoteKubernetesCluster(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rkcs := e.meta.scylla.ScyllaV1alpha1().RemoteKubernetesClusters()
	// Deleted first: the operator adds no finalizer to an object being deleted.
	if err := rkcs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("can't delete RemoteKubernetesCluster %q: %v", name, err)
	}
	if _, err := rkcs.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		e.t.Errorf("can't remove the finalizers of RemoteKubernetesCluster %q: %v", name, err)
	}
}
