//go:build e2e

// Package smoke proves the e2e framework against a real control plane: CRDs install, kwok runs pods,
// cluster-fakes hands out load balancer addresses and volumes, and the audit log counts requests.
//
// Extension point: tests of deploy/examples/ (every example accepted by the real API server, every invalid one
// rejected with its expected message) belong in this package, in examples_test.go; they can read manifests with
// framework.ManifestFiles and framework.DecodeManifestFile and send them with Clients.Create (a dry run is
// enough) or Clients.Apply, inspecting the returned API errors.
package smoke

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	auditv1 "k8s.io/apiserver/pkg/apis/audit/v1"
	"k8s.io/utils/ptr"
)

// waitTimeout bounds every wait; kwok makes pods Ready in well under a second.
const waitTimeout = 2 * time.Minute

func TestMain(m *testing.M) {
	os.Exit(framework.RunSuite(m, framework.SuiteOptions{Name: "smoke", InstallCRDs: true}))
}

func TestCRDsFromDeployAreEstablished(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	suite := f.Suite()

	files, err := framework.ManifestFiles(filepath.Join(suite.RepoRoot, "deploy", "crds"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, file := range files {
		objs, err := framework.DecodeManifestFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if obj.GetKind() == "CustomResourceDefinition" {
				want = append(want, obj.GetName())
			}
		}
	}
	got := append([]string(nil), suite.CRDs...)
	sort.Strings(want)
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("installed CRDs differ from deploy/crds (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	if err := f.Clients().WaitForCRDsEstablished(ctx, want); err != nil {
		t.Fatal(err)
	}
}

func newStatefulSet(name string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			ServiceName:         name,
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "scylla",
						Image: "docker.io/scylladb/scylla:2025.1",
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("4"),
							corev1.ResourceMemory: resource.MustParse("16Gi"),
						}},
					}},
				},
			},
		},
	}
}

// podsRunningAndReady lists the pods of a StatefulSet and reports whether all replicas run, are Ready and have
// a pod IP, saying which one is not.
func podsRunningAndReady(ctx context.Context, c *framework.Cluster, sts *appsv1.StatefulSet) ([]corev1.Pod, bool, error) {
	pods, err := c.Clients.Kube.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: metav1.FormatLabelSelector(sts.Spec.Selector),
	})
	if err != nil {
		return nil, false, err
	}
	if int32(len(pods.Items)) != *sts.Spec.Replicas {
		return nil, false, fmt.Errorf("%d of %d pods exist", len(pods.Items), *sts.Spec.Replicas)
	}
	for _, pod := range pods.Items {
		if pod.Status.Phase != corev1.PodRunning || !podReady(&pod) || pod.Status.PodIP == "" {
			return nil, false, fmt.Errorf("pod %s: phase %s, ready %v, IP %q, node %q", pod.Name, pod.Status.Phase, podReady(&pod), pod.Status.PodIP, pod.Spec.NodeName)
		}
	}
	return pods.Items, true, nil
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func TestStatefulSetPodsRunReadyWithIPsOnZonedNodes(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()
	ctx := t.Context()

	sts, err := c.Clients.Kube.AppsV1().StatefulSets(c.Namespace).Create(ctx, newStatefulSet("plain", 3), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	f.WaitFor(waitTimeout, "3 pods Running and Ready with IPs", func(ctx context.Context) (bool, error) {
		var ok bool
		pods, ok, err = podsRunningAndReady(ctx, c, sts)
		return ok, err
	})

	podCIDR := c.ControlPlane.Options.PodCIDR
	_, podNet, err := net.ParseCIDR(podCIDR)
	if err != nil {
		t.Fatal(err)
	}
	seenIPs := map[string]string{}
	for _, pod := range pods {
		if !podNet.Contains(net.ParseIP(pod.Status.PodIP)) {
			t.Errorf("pod %s has IP %s outside the pod range %s", pod.Name, pod.Status.PodIP, podCIDR)
		}
		if other, dup := seenIPs[pod.Status.PodIP]; dup {
			t.Errorf("pods %s and %s share IP %s", other, pod.Name, pod.Status.PodIP)
		}
		seenIPs[pod.Status.PodIP] = pod.Name
		node, err := c.Clients.Kube.CoreV1().Nodes().Get(ctx, pod.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Labels[corev1.LabelTopologyZone] == "" || node.Labels[corev1.LabelTopologyRegion] == "" {
			t.Errorf("pod %s runs on node %s without zone and region labels: %v", pod.Name, node.Name, node.Labels)
		}
	}
	f.WaitFor(waitTimeout, "the StatefulSet to report 3 ready replicas", func(ctx context.Context) (bool, error) {
		got, err := c.Clients.Kube.AppsV1().StatefulSets(c.Namespace).Get(ctx, sts.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.ReadyReplicas == 3, fmt.Errorf("ready replicas: %d", got.Status.ReadyReplicas)
	})
}

func TestHostNetworkPodsGetTheDistinctAddressesOfTheirNodes(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()
	ctx := t.Context()

	nodes, err := c.Clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeIPs := map[string]string{}
	seen := map[string]string{}
	for _, node := range nodes.Items {
		for _, a := range node.Status.Addresses {
			if a.Type != corev1.NodeInternalIP {
				continue
			}
			if other, dup := seen[a.Address]; dup {
				t.Errorf("nodes %s and %s share InternalIP %s", other, node.Name, a.Address)
			}
			seen[a.Address], nodeIPs[node.Name] = node.Name, a.Address
		}
	}

	sts := newStatefulSet("host", 3)
	spec := &sts.Spec.Template.Spec
	spec.HostNetwork = true
	spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: sts.Spec.Selector,
			TopologyKey:   corev1.LabelHostname,
		}},
	}}
	if sts, err = c.Clients.Kube.AppsV1().StatefulSets(c.Namespace).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	f.WaitFor(waitTimeout, "3 host-network pods Running and Ready with IPs", func(ctx context.Context) (bool, error) {
		var ok bool
		pods, ok, err = podsRunningAndReady(ctx, c, sts)
		return ok, err
	})
	podIPs := map[string]bool{}
	for _, pod := range pods {
		if want := nodeIPs[pod.Spec.NodeName]; pod.Status.PodIP != want || want == "" {
			t.Errorf("host-network pod %s on node %s has IP %q, want the node's InternalIP %q", pod.Name, pod.Spec.NodeName, pod.Status.PodIP, want)
		}
		podIPs[pod.Status.PodIP] = true
	}
	if len(podIPs) != 3 {
		t.Errorf("expected 3 distinct pod IPs on 3 nodes, got %v", podIPs)
	}
}

func TestLoadBalancerServiceGetsIngressAddress(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()

	svc, err := c.Clients.Kube.CoreV1().Services(c.Namespace).Create(t.Context(), &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "lb"},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeLoadBalancer,
			Selector: map[string]string{"app": "lb"},
			Ports:    []corev1.ServicePort{{Name: "cql", Port: 9042}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ingress []corev1.LoadBalancerIngress
	f.WaitFor(waitTimeout, "the LoadBalancer Service to get an ingress address", func(ctx context.Context) (bool, error) {
		got, err := c.Clients.Kube.CoreV1().Services(c.Namespace).Get(ctx, svc.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ingress = got.Status.LoadBalancer.Ingress
		return len(ingress) > 0, fmt.Errorf("no ingress yet")
	})
	lbCIDR := c.ControlPlane.Options.LoadBalancerCIDR
	_, lbNet, err := net.ParseCIDR(lbCIDR)
	if err != nil {
		t.Fatal(err)
	}
	if len(ingress) != 1 || !lbNet.Contains(net.ParseIP(ingress[0].IP)) {
		t.Fatalf("expected one ingress address in %s, got %+v", lbCIDR, ingress)
	}
}

func TestStatefulSetClaimsAreBoundToVolumesOnThePodsNodes(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()
	ctx := t.Context()

	sts := newStatefulSet("with-data", 2)
	sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
			},
		},
	}}
	sts.Spec.Template.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/scylla"}}
	sts, err := c.Clients.Kube.AppsV1().StatefulSets(c.Namespace).Create(ctx, sts, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	f.WaitFor(waitTimeout, "2 pods with volumes Running and Ready", func(ctx context.Context) (bool, error) {
		var ok bool
		pods, ok, err = podsRunningAndReady(ctx, c, sts)
		return ok, err
	})
	for _, pod := range pods {
		claimName := "data-" + pod.Name
		claim, err := c.Clients.Kube.CoreV1().PersistentVolumeClaims(c.Namespace).Get(ctx, claimName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" {
			t.Errorf("claim %s is %s (volume %q), expected Bound", claimName, claim.Status.Phase, claim.Spec.VolumeName)
			continue
		}
		pv, err := c.Clients.Kube.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wantAffinity := []string{pod.Spec.NodeName}
		var gotAffinity []string
		if pv.Spec.NodeAffinity != nil && pv.Spec.NodeAffinity.Required != nil {
			for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
				for _, expr := range term.MatchExpressions {
					gotAffinity = append(gotAffinity, expr.Values...)
				}
			}
		}
		if diff := cmp.Diff(wantAffinity, gotAffinity); diff != "" {
			t.Errorf("volume %s of pod %s is not pinned to the pod's node (-want +got):\n%s", pv.Name, pod.Name, diff)
		}
	}
}

func TestAuditLogCountsRequestsByUserAgent(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	c := f.Cluster()
	ctx := t.Context()
	audit := c.ControlPlane.Audit

	mark, err := audit.Mark()
	if err != nil {
		t.Fatal(err)
	}
	// A second identity that only reads: its writes over the window must be zero.
	readerAgent := "e2e-reader/" + t.Name()
	reader, err := c.ControlPlane.Clients(readerAgent)
	if err != nil {
		t.Fatal(err)
	}

	cms := c.Clients.Kube.CoreV1().ConfigMaps(c.Namespace)
	for i := range 3 {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cms.Patch(ctx, "cm-0", types.MergePatchType, []byte(`{"data":{"k":"v"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, "cm-1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Kube.CoreV1().ConfigMaps(c.Namespace).List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}

	wantWrites := framework.RequestCounts{
		{UserAgent: f.UserAgent, Verb: "create"}: 3,
		{UserAgent: f.UserAgent, Verb: "patch"}:  1,
		{UserAgent: f.UserAgent, Verb: "delete"}: 1,
	}
	// Audit events are written as requests finish, so the last may land a moment after the client returned.
	var events []auditv1.Event
	f.WaitFor(waitTimeout, "the audit log to show the test's writes", func(context.Context) (bool, error) {
		evs, err := audit.EventsSince(mark)
		if err != nil {
			return false, err
		}
		events = evs
		got := framework.CountRequests(evs, framework.UserAgent(f.UserAgent), framework.Writes(), framework.InNamespace(c.Namespace))
		if diff := cmp.Diff(wantWrites, got); diff != "" {
			return false, fmt.Errorf("writes differ (-want +got):\n%s", diff)
		}
		reads := framework.CountRequests(evs, framework.UserAgent(readerAgent))
		want := framework.RequestCounts{{UserAgent: readerAgent, Verb: "list"}: 1}
		return cmp.Equal(want, reads), fmt.Errorf("reader's requests: %v", reads)
	})
	if writes := framework.CountRequests(events, framework.UserAgent(readerAgent), framework.Writes()); writes.Total() != 0 {
		t.Errorf("expected no writes by %s, got:\n%s", readerAgent, writes)
	}
}
