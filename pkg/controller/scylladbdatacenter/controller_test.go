package scylladbdatacenter

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/controllerhelpers"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// queued drains c's queue and returns its keys.
func queued(c *Controller) []string {
	var keys []string
	for c.queue.Len() != 0 {
		key, _ := c.queue.Get()
		c.queue.Done(key)
		c.queue.Forget(key)
		keys = append(keys, key)
	}
	return keys
}

func TestHandlersEnqueueTheDatacenter(t *testing.T) {
	t.Parallel()

	sdc := newBasicSDC()
	sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref": "cluster-token"}
	sdc.Spec.Racks[1].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("tuned")}
	sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent-config")}

	owned := metav1.ObjectMeta{Namespace: testNamespace, Name: "basic-dc1-a", ResourceVersion: "1", OwnerReferences: []metav1.OwnerReference{testControllerRef()}}
	ownedChanged := *owned.DeepCopy()
	ownedChanged.ResourceVersion = "2"
	node := metav1.ObjectMeta{Namespace: testNamespace, Name: "basic-dc1-a-0", Labels: clusterLabels()}
	foreignNode := metav1.ObjectMeta{Namespace: testNamespace, Name: "other-0", Labels: map[string]string{"scylla/cluster": "basic"}}
	named := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: testNamespace, Name: name, ResourceVersion: "1"}
	}
	// A node's data claim bound to a volume pinned to Kubernetes node k1, and a volume on k1 of a claim of no
	// datacenter.
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "data-basic-dc1-a-0", UID: "claim-uid", Labels: clusterLabels()}}
	foreignClaim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: "other", UID: "other-uid"}}
	objects := []runtime.Object{claim, pinnedVolume("pv-1", claim, hostnameTerm("k1")), pinnedVolume("pv-2", foreignClaim, hostnameTerm("k1", "k2"))}
	// nodePod returns the node's pod, Ready or not, with ips.
	nodePod := func(ready corev1.ConditionStatus, ips ...string) *corev1.Pod {
		pod := &corev1.Pod{ObjectMeta: node, Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		for _, ip := range ips {
			pod.Status.PodIPs = append(pod.Status.PodIPs, corev1.PodIP{IP: ip})
		}
		return pod
	}

	tt := []struct {
		name string
		// tls turns automatic TLS on.
		tls  bool
		fire func(c *Controller, handlers map[string]cache.ResourceEventHandler)
		want []string
	}{
		{
			name: "the datacenter itself",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["sdc"].OnUpdate(sdc, sdc)
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a change of an owned StatefulSet",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["owned"].OnUpdate(&appsv1.StatefulSet{ObjectMeta: owned}, &appsv1.StatefulSet{ObjectMeta: ownedChanged})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a resync of an owned StatefulSet",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["owned"].OnUpdate(&appsv1.StatefulSet{ObjectMeta: owned}, &appsv1.StatefulSet{ObjectMeta: owned})
			},
		},
		{
			name: "the custom agent config Secret it reads",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["secrets"].OnAdd(&corev1.Secret{ObjectMeta: named("agent-config")}, false)
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "the auth-token override Secret it reads, deleted",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["secrets"].OnDelete(cache.DeletedFinalStateUnknown{Key: "scylla/cluster-token", Obj: &corev1.Secret{ObjectMeta: named("cluster-token")}})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "the custom config ConfigMap it reads, changed",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				changed := named("tuned")
				changed.ResourceVersion = "2"
				h["configmaps"].OnUpdate(&corev1.ConfigMap{ObjectMeta: named("tuned")}, &corev1.ConfigMap{ObjectMeta: changed})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "Secrets and ConfigMaps it does not read",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["secrets"].OnAdd(&corev1.Secret{ObjectMeta: named("tuned")}, false)
				h["configmaps"].OnAdd(&corev1.ConfigMap{ObjectMeta: named("agent-config")}, false)
			},
		},
		{
			name: "the deletion of a node's pod",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnDelete(&corev1.Pod{ObjectMeta: node})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a node's pod becoming Ready",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnUpdate(nodePod(corev1.ConditionFalse, "10.0.0.1"), nodePod(corev1.ConditionTrue, "10.0.0.1"))
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a node's pod ceasing to be Ready",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnUpdate(nodePod(corev1.ConditionTrue, "10.0.0.1"), nodePod(corev1.ConditionUnknown, "10.0.0.1"))
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a node's pod getting its IPs, with automatic TLS",
			tls:  true,
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnUpdate(nodePod(corev1.ConditionFalse), nodePod(corev1.ConditionFalse, "10.0.0.1"))
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a node's pod getting its IPs, without automatic TLS",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnUpdate(nodePod(corev1.ConditionFalse), nodePod(corev1.ConditionFalse, "10.0.0.1"))
			},
		},
		{
			name: "any other change of a node's pod, or its resync",
			tls:  true,
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				changed := nodePod(corev1.ConditionTrue, "10.0.0.1")
				changed.ResourceVersion = "2"
				changed.Labels = clusterLabels()
				changed.Labels["extra"] = "label"
				h["pods"].OnUpdate(nodePod(corev1.ConditionTrue, "10.0.0.1"), changed)
				h["pods"].OnUpdate(changed, changed)
			},
		},
		{
			name: "the deletion of a node's claim, seen late",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pvcs"].OnDelete(cache.DeletedFinalStateUnknown{Obj: &corev1.PersistentVolumeClaim{ObjectMeta: node}})
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "the deletion of the Kubernetes node a node's data volume is pinned to",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["nodes"].OnDelete(kubeNode("k1", "k1"))
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "a Kubernetes node whose hostname label a node's data volume is pinned by comes back",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["nodes"].OnAdd(kubeNode("vm-17", "k1"), false)
			},
			want: []string{"scylla/basic"},
		},
		{
			name: "Kubernetes nodes no datacenter's volume is pinned to",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["nodes"].OnDelete(kubeNode("k2", "k2"))
				h["nodes"].OnAdd(kubeNode("k3", "k3"), false)
			},
		},
		{
			name: "a pod labelled with the datacenter but not managed by the operator",
			fire: func(c *Controller, h map[string]cache.ResourceEventHandler) {
				h["pods"].OnDelete(&corev1.Pod{ObjectMeta: foreignNode})
			},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, world{sdc: sdc, objects: objects})
			c := f.controller
			if tc.tls {
				if err := c.SetCertificateOptions(testCertOptions()); err != nil {
					t.Fatal(err)
				}
			}
			handlers := map[string]cache.ResourceEventHandler{
				"nodes":      c.nodeHandlerFuncs(),
				"sdc":        c.handlers.ControllerHandlerFuncs(),
				"owned":      c.handlers.OwnedHandlerFuncs(),
				"secrets":    c.readerHandlerFuncs(readsSecret),
				"configmaps": c.readerHandlerFuncs(readsConfigMap),
				"pods":       cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueByClusterLabel, UpdateFunc: c.enqueueOnPodChange},
				"pvcs":       cache.ResourceEventHandlerFuncs{DeleteFunc: c.enqueueByClusterLabel},
			}
			tc.fire(c, handlers)
			if diff := cmp.Diff(tc.want, queued(c)); diff != "" {
				t.Errorf("unexpected keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewControllerNeedsTheOperatorImage(t *testing.T) {
	t.Parallel()
	f := newFixture(t, world{sdc: newBasicSDC()})
	c := f.controller
	_, err := NewController(c.kubeClient, c.scyllaClient, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, "")
	if err == nil || err.Error() != "can't create the ScyllaDBDatacenter controller: the operator image is empty" {
		t.Errorf("unexpected error %v", err)
	}
}

func TestProcessNextWorkItemRequeuesOnlyFailures(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name         string
		failCreates  bool
		wantRequeues int
	}{
		{name: "a successful sync is forgotten"},
		{name: "a failed sync is requeued with backoff", failCreates: true, wantRequeues: 1},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, world{sdc: newBasicSDC()})
			if tc.failCreates {
				f.kubeClient.PrependReactor("create", "statefulsets", func(action clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("etcd is down")
				})
			}
			c := f.controller
			c.queue.Add("scylla/basic")
			if !controllerhelpers.ProcessNextWorkItem(t.Context(), ControllerName, c.queue, c.sync) {
				t.Fatal("the queue shut down")
			}
			if got := c.queue.NumRequeues("scylla/basic"); got != tc.wantRequeues {
				t.Errorf("expected %d requeues, got %d", tc.wantRequeues, got)
			}
		})
	}
}

func TestWorkersTakeNoNewItemAfterShutdown(t *testing.T) {
	t.Parallel()

	f := newFixture(t, world{sdc: newBasicSDC()})
	c := f.controller
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	c.queue.Add("scylla/basic")

	if controllerhelpers.ProcessNextWorkItem(ctx, ControllerName, c.queue, c.sync) {
		t.Error("a worker asked for more work after its context was done")
	}
	if diff := cmp.Diff([]string(nil), f.writes()); diff != "" {
		t.Errorf("a key was synced after the context was done (-want +got):\n%s", diff)
	}
}
