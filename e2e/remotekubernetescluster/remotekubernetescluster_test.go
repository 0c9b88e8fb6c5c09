//go:build e2e

package remotekubernetescluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	scyllaclientset "github.com/scyllakube/client/scylla/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/scyllakube/scylla-operator/e2e/framework"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

const (
	// stepTimeout bounds a wait for one reaction of the operator.
	stepTimeout = time.Minute
	// probePeriodSeconds is the RemoteKubernetesClusters' probe period: the Secret is read again, and the remote
	// API server checked, that often.
	probePeriodSeconds = 2
	// settleTime is how long the steady state is watched for writes: several probe periods.
	settleTime = 5 * probePeriodSeconds * time.Second

	// operatorUserAgentPrefix selects the operator's requests in the audit log.
	operatorUserAgentPrefix = "scylla-operator-operator/"
)

func TestRemoteKubernetesClusterLifecycle(t *testing.T) {
	f := framework.NewFramework(t)
	meta0, remote := f.Clusters[metaPlane], f.Clusters[remotePlane]
	ctx := t.Context()
	scylla, err := scyllaclientset.NewForConfig(meta0.Clients.Config)
	if err != nil {
		t.Fatal(err)
	}
	metricsURL := startOperator(t, f, meta0)

	// The identity the install manifests' remote ClusterRole is for, not an admin: the operator must get by with it.
	remoteKubeconfig := f.RemoteKubeconfig(remote)
	closedPortKubeconfig := kubeconfigWithServer(t, remoteKubeconfig, "https://"+closedAddress(t))
	secrets := meta0.Clients.Kube.CoreV1().Secrets(meta0.Namespace)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "remote-kubeconfig"},
		Data:       map[string][]byte{naming.KubeconfigSecretKey: remoteKubeconfig},
	}
	if _, err := secrets.Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Cluster-scoped: named after the test's namespace, and removed after the test whatever happened.
	rkcName := meta0.Namespace
	rkcs := scylla.ScyllaV1alpha1().RemoteKubernetesClusters()
	t.Cleanup(func() { forceDelete(t, scylla, rkcName) })
	rkc := &scyllav1alpha1.RemoteKubernetesCluster{
		ObjectMeta: metav1.ObjectMeta{Name: rkcName},
		Spec: scyllav1alpha1.RemoteKubernetesClusterSpec{
			KubeconfigSecretRef:     corev1.SecretReference{Namespace: meta0.Namespace, Name: secret.Name},
			ClientHealthcheckProbes: &scyllav1alpha1.ClientHealthcheckProbes{PeriodSeconds: probePeriodSeconds},
		},
	}
	if _, err := rkcs.Create(ctx, rkc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Log("A RemoteKubernetesCluster reaching the second control plane becomes Available, with the finalizer")
	waitForConditions(t, f, scylla, rkcName, "Available", map[string]metav1.ConditionStatus{
		"Available": metav1.ConditionTrue, "Progressing": metav1.ConditionFalse, "Degraded": metav1.ConditionFalse,
	})
	got, err := rkcs.Get(ctx, rkcName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Finalizers) != 1 || got.Finalizers[0] != naming.RemoteKubernetesClusterFinalizer {
		t.Errorf("want only the finalizer %q, got %v", naming.RemoteKubernetesClusterFinalizer, got.Finalizers)
	}
	if got.Status.ObservedGeneration == nil || *got.Status.ObservedGeneration != got.Generation {
		t.Errorf("want observedGeneration %d, got %v", got.Generation, got.Status.ObservedGeneration)
	}

	waitForHealthyGauge(t, f, metricsURL, rkcName, 1)

	t.Log("Converged, it costs no write: the Secret is read and the remote API server probed, nothing written")
	events, remoteEvents := watchSteadyState(t, meta0, remote)
	onVersion := func(e *auditv1.Event) bool { return strings.HasPrefix(e.RequestURI, "/version") }
	if probes := framework.CountRequests(remoteEvents, framework.UserAgentPrefix(operatorUserAgentPrefix), onVersion); probes.Total() < 2 {
		t.Errorf("want the remote API server probed about every %ds, got %d probes in %v", probePeriodSeconds, probes.Total(), settleTime)
	}
	secretReads := framework.CountRequests(events, framework.UserAgentPrefix(operatorUserAgentPrefix), framework.InNamespace(meta0.Namespace), framework.OnResource("secrets", ""))
	if secretReads.Total() < 2 {
		t.Errorf("want the kubeconfig Secret read about every %ds, got %d reads in %v", probePeriodSeconds, secretReads.Total(), settleTime)
	}

	t.Log("A kubeconfig pointing at a closed port makes it unavailable and degraded, with a message naming the Secret")
	setKubeconfig(t, secrets, secret.Name, closedPortKubeconfig)
	unreachable := waitForConditions(t, f, scylla, rkcName, "unreachable", map[string]metav1.ConditionStatus{
		"Available": metav1.ConditionFalse, "Degraded": metav1.ConditionTrue,
	})
	degraded := meta.FindStatusCondition(unreachable.Status.Conditions, "Degraded")
	wantSecret := fmt.Sprintf("%q", meta0.Namespace+"/"+secret.Name)
	if degraded.Reason != "ProbeFailed" || !strings.Contains(degraded.Message, wantSecret) || !strings.Contains(degraded.Message, "connection refused") {
		t.Errorf("want Degraded ProbeFailed naming Secret %s and the refused connection, got %s: %q", wantSecret, degraded.Reason, degraded.Message)
	}
	t.Logf("Degraded: %s", degraded.Message)
	assertNoCredentials(t, unreachable, remoteKubeconfig)
	waitForHealthyGauge(t, f, metricsURL, rkcName, 0)
	t.Log("Unreachable for several probes, it is not written again: every failed probe says the same")
	watchSteadyState(t, meta0, remote)

	t.Log("Back to the right kubeconfig, it recovers")
	setKubeconfig(t, secrets, secret.Name, remoteKubeconfig)
	waitForConditions(t, f, scylla, rkcName, "recovered", map[string]metav1.ConditionStatus{
		"Available": metav1.ConditionTrue, "Degraded": metav1.ConditionFalse,
	})

	t.Log("Deleted while a ScyllaDBCluster uses it, it stays, and says which ScyllaDBCluster holds it")
	sc := &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{Name: "multi-dc", Namespace: meta0.Namespace},
		Spec: scyllav1alpha1.ScyllaDBClusterSpec{
			ScyllaDB:             scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:2025.1.2"},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: new("docker.io/scylladb/scylla-manager-agent:3.5.0")},
			Datacenters: []scyllav1alpha1.ScyllaDBClusterDatacenter{
				{Name: "dc2", RemoteKubernetesClusterName: rkcName},
			},
		},
	}
	scs := scylla.ScyllaV1alpha1().ScyllaDBClusters(meta0.Namespace)
	if _, err := scs.Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := rkcs.Delete(ctx, rkcName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	held := waitForConditions(t, f, scylla, rkcName, "deletion held by the ScyllaDBCluster", map[string]metav1.ConditionStatus{
		"FinalizerProgressing": metav1.ConditionTrue, "Progressing": metav1.ConditionTrue,
	})
	if held.DeletionTimestamp == nil {
		t.Error("the RemoteKubernetesCluster is not being deleted")
	}
	user := meta0.Namespace + "/" + sc.Name
	if message := meta.FindStatusCondition(held.Status.Conditions, "FinalizerProgressing").Message; !strings.Contains(message, user) {
		t.Errorf("the condition does not name the ScyllaDBCluster %s: %q", user, message)
	}
	// It stays for as long as the ScyllaDBCluster does, several probe periods on.
	time.Sleep(2 * probePeriodSeconds * time.Second)
	if _, err := rkcs.Get(ctx, rkcName, metav1.GetOptions{}); err != nil {
		t.Fatalf("the RemoteKubernetesCluster went while a ScyllaDBCluster uses it: %v", err)
	}

	t.Log("Once the ScyllaDBCluster is deleted, the RemoteKubernetesCluster goes")
	if err := scs.Delete(ctx, sc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.WaitFor(stepTimeout, "the RemoteKubernetesCluster to go", func(ctx context.Context) (bool, error) {
		_, err := rkcs.Get(ctx, rkcName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// startOperator runs the operator against c's control plane for the rest of the test, leading through a Lease named
// after the test's namespace, and returns the URL of its metrics.
func startOperator(t *testing.T, f *framework.Framework, c *framework.Cluster) string {
	t.Helper()
	// A port that was free a moment ago: the test needs to know it to read the metrics.
	servingAddress := closedAddress(t)
	credential := f.ProgramKubeconfig(c, framework.OperatorSubcommand, "operator-"+c.Namespace)
	f.StartProgram(c, framework.Program{
		Name:    "operator-" + c.Namespace,
		Package: "./cmd/scylla-operator",
		Args: []string{
			"operator",
			"--kubeconfig=" + credential.KubeconfigPath,
			"--image=localhost/scylla-operator:e2e",
			// Its Role lets the operator write Leases only in its own namespace.
			"--leader-election-namespace=" + credential.ServiceAccount.Namespace,
			"--leader-election-lease-name=" + c.Namespace,
			"--serving-address=" + servingAddress,
			"-v=2",
		},
	})
	return "http://" + servingAddress + "/metrics"
}

// waitForHealthyGauge waits until the operator's metrics say the RemoteKubernetesCluster name is healthy (want 1)
// or not (want 0).
func waitForHealthyGauge(t *testing.T, f *framework.Framework, metricsURL, name string, want int) {
	t.Helper()
	line := fmt.Sprintf(`scylla_operator_remote_kubernetes_cluster_healthy{remote_kubernetes_cluster=%q} %d`, name, want)
	f.WaitFor(stepTimeout, "the metric "+line, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return false, err
		}
		for _, l := range strings.Split(string(body), "\n") {
			if l == line {
				return true, nil
			}
		}
		return false, fmt.Errorf("no line %q in the metrics", line)
	})
}

// watchSteadyState watches the audit logs of both clusters for settleTime, fails the test if the operator wrote a
// RemoteKubernetesCluster meanwhile, and returns what each logged.
func watchSteadyState(t *testing.T, meta0, remote *framework.Cluster) (metaEvents, remoteEvents []auditv1.Event) {
	t.Helper()
	metaMark, err := meta0.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	remoteMark, err := remote.ControlPlane.Audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(settleTime)
	if metaEvents, err = meta0.ControlPlane.Audit.EventsSince(metaMark); err != nil {
		t.Fatal(err)
	}
	if remoteEvents, err = remote.ControlPlane.Audit.EventsSince(remoteMark); err != nil {
		t.Fatal(err)
	}
	onRKC := func(e *auditv1.Event) bool {
		return e.ObjectRef != nil && e.ObjectRef.Resource == "remotekubernetesclusters"
	}
	if writes := framework.CountRequests(metaEvents, framework.UserAgentPrefix(operatorUserAgentPrefix), framework.Writes(), onRKC); writes.Total() != 0 {
		t.Errorf("the operator wrote a RemoteKubernetesCluster whose state did not change:\n%s", writes)
	}
	return metaEvents, remoteEvents
}

// waitForConditions waits until the RemoteKubernetesCluster name has every condition of want in its status, and
// returns it.
func waitForConditions(t *testing.T, f *framework.Framework, scylla scyllaclientset.Interface, name, what string, want map[string]metav1.ConditionStatus) *scyllav1alpha1.RemoteKubernetesCluster {
	t.Helper()
	var rkc *scyllav1alpha1.RemoteKubernetesCluster
	f.WaitFor(stepTimeout, "RemoteKubernetesCluster "+what, func(ctx context.Context) (bool, error) {
		var err error
		rkc, err = scylla.ScyllaV1alpha1().RemoteKubernetesClusters().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for condType, status := range want {
			c := meta.FindStatusCondition(rkc.Status.Conditions, condType)
			if c == nil || c.Status != status {
				return false, fmt.Errorf("conditions are %s", describeConditions(rkc.Status.Conditions))
			}
		}
		return true, nil
	})
	return rkc
}

func describeConditions(conditions []metav1.Condition) string {
	var parts []string
	for _, c := range conditions {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	return strings.Join(parts, "; ")
}

// setKubeconfig replaces the kubeconfig in the Secret name.
func setKubeconfig(t *testing.T, secrets interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, subresources ...string) (*corev1.Secret, error)
}, name string, kubeconfig []byte) {
	t.Helper()
	patch := fmt.Sprintf(`{"data":{%q:%q}}`, naming.KubeconfigSecretKey, base64.StdEncoding.EncodeToString(kubeconfig))
	if _, err := secrets.Patch(t.Context(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// kubeconfigWithServer returns kubeconfig with every cluster's server set to server.
func kubeconfigWithServer(t *testing.T, kubeconfig []byte, server string) []byte {
	t.Helper()
	config, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range config.Clusters {
		c.Server = server
	}
	data, err := clientcmd.Write(*config)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// closedAddress returns a loopback address nothing listens on.
func closedAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return address
}

// assertNoCredentials fails when a condition of rkc quotes the client key or certificate of kubeconfig.
func assertNoCredentials(t *testing.T, rkc *scyllav1alpha1.RemoteKubernetesCluster, kubeconfig []byte) {
	t.Helper()
	config, err := clientcmd.Load(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, auth := range config.AuthInfos {
		for _, secret := range [][]byte{auth.ClientKeyData, auth.ClientCertificateData} {
			if len(secret) == 0 {
				continue
			}
			encoded := base64.StdEncoding.EncodeToString(secret)
			for _, c := range rkc.Status.Conditions {
				if strings.Contains(c.Message, string(secret[:min(len(secret), 64)])) || strings.Contains(c.Message, encoded[:min(len(encoded), 64)]) {
					t.Errorf("condition %s quotes the kubeconfig's credentials", c.Type)
				}
			}
		}
	}
}

// forceDelete deletes the RemoteKubernetesCluster name, removing its finalizer first, whatever state the test left
// it in.
func forceDelete(t *testing.T, scylla scyllaclientset.Interface, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rkcs := scylla.ScyllaV1alpha1().RemoteKubernetesClusters()
	// Deleted first: the operator adds no finalizer to an object being deleted.
	if err := rkcs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("can't delete RemoteKubernetesCluster %q: %v", name, err)
	}
	if _, err := rkcs.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("can't remove the finalizers of RemoteKubernetesCluster %q: %v", name, err)
	}
}
