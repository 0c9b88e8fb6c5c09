package controllerhelpers

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/test/heap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// conditionsFieldsV1 is the FieldsV1 of a status apply entry that owns the conditions of the given types.
func conditionsFieldsV1(conditionTypes []string) string {
	var b strings.Builder
	b.WriteString(`{"f:status":{"f:conditions":{`)
	for i, t := range conditionTypes {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k:{\"type\":\"%s\"}":{".":{},"f:lastTransitionTime":{},"f:message":{},"f:observedGeneration":{},"f:reason":{},"f:status":{},"f:type":{}}`, t)
	}
	b.WriteString(`},"f:observedGeneration":{},"f:racks":{}}}`)
	return b.String()
}

// appliedScyllaDBDatacenter is a ScyllaDBDatacenter of 3 racks as a status apply of the operator returns it, with the
// managedFields the API server records for the programs that write it: the ScyllaCluster controller's apply of the
// metadata and spec, the operator's status apply and the manager-controller's.
func appliedScyllaDBDatacenter(i int, resourceVersion string) *scyllav1alpha1.ScyllaDBDatacenter {
	name := fmt.Sprintf("cluster-%03d", i)
	var operatorConditions, rackFields []string
	status := scyllav1alpha1.ScyllaDBDatacenterStatus{ObservedGeneration: new(int64(2))}
	for _, c := range []string{"StatefulSetController", "ServiceController", "ConfigMapController", "SecretController",
		"PodDisruptionBudgetController", "CertificateController", "ServiceAccountController", "RoleBindingController",
		"IngressController", "JobController", "NodeReplacementController"} {
		operatorConditions = append(operatorConditions, c+"Progressing", c+"Degraded")
	}
	operatorConditions = append(operatorConditions, "Available", "Progressing", "Degraded")
	for _, t := range operatorConditions {
		status.Conditions = append(status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, ObservedGeneration: 2, Reason: "AsExpected", Message: ""})
	}
	managerConditions := []string{"ScyllaDBManagerRegistrationProgressing", "ScyllaDBManagerRegistrationDegraded"}
	for _, t := range managerConditions {
		status.Conditions = append(status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionFalse, ObservedGeneration: 2, Reason: "AsExpected"})
	}
	var racks []scyllav1alpha1.RackSpec
	for _, rack := range []string{"a", "b", "c"} {
		racks = append(racks, scyllav1alpha1.RackSpec{Name: rack, RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1))}})
		rackFields = append(rackFields, fmt.Sprintf(`"k:{\"name\":\"%s\"}":{".":{},"f:name":{},"f:nodes":{},"f:scyllaDB":{"f:resources":{"f:limits":{"f:cpu":{},"f:memory":{}}},"f:storage":{"f:capacity":{}}},"f:scyllaDBManagerAgent":{"f:resources":{}}}`, rack))
	}
	specFields := `{"f:metadata":{"f:annotations":{"f:internal.scylla-operator.scylladb.com/scylladb-manager-clusterid":{}},"f:labels":{"f:scylla/cluster":{}},"f:ownerReferences":{"k:{\"uid\":\"uid\"}":{}}},` +
		`"f:spec":{"f:clusterName":{},"f:datacenterName":{},"f:exposeOptions":{"f:broadcastOptions":{"f:clients":{"f:type":{}},"f:nodes":{"f:type":{}}},"f:nodeService":{"f:type":{}}},` +
		`"f:racks":{` + strings.Join(rackFields, ",") + `},"f:scyllaDB":{"f:image":{}},"f:scyllaDBManagerAgent":{"f:image":{}}}}`
	fieldsEntry := func(manager string, op metav1.ManagedFieldsOperationType, subresource, fields string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "scylla.scylladb.com/v1alpha1", Time: new(metav1.NewTime(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC))),
			FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}, Subresource: subresource}
	}
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: name, Name: name, UID: types.UID("uid-" + name), ResourceVersion: resourceVersion, Generation: 2,
			Labels:      map[string]string{"scylla/cluster": name},
			Annotations: map[string]string{"internal.scylla-operator.scylladb.com/scylladb-manager-clusterid": "3f0d2c1e-6a4b-4a39-9c62-1f3e4d5c6b7a"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				fieldsEntry(naming.OperatorFieldManager, metav1.ManagedFieldsOperationApply, "", specFields),
				fieldsEntry(naming.OperatorFieldManager, metav1.ManagedFieldsOperationApply, "status", conditionsFieldsV1(operatorConditions)),
				fieldsEntry(naming.ManagerControllerFieldManager, metav1.ManagedFieldsOperationApply, "status", conditionsFieldsV1(managerConditions)),
			},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName: name, DatacenterName: new("dc1"), Racks: racks,
			ScyllaDB: scyllav1alpha1.ScyllaDB{Image: "scylladb/scylla:2025.1.0"},
		},
		Status: status,
	}
}

// BenchmarkScyllaDBDatacenterCacheRetainedBytes reports the heap the operator keeps per ScyllaDBDatacenter, of 100
// with 3 racks: in its informer's store, which holds them as TrimForInformerCache leaves them (informer-B/dc), and in a
// MutationCache once their status applies were recorded (Written) while the store still holds older copies
// (written-B/dc), and in the MutationCache once the store caught up with them and one more write was recorded, with no
// Get in between (caught-up-B/dc, negative when that frees more than the last write keeps).
func BenchmarkScyllaDBDatacenterCacheRetainedBytes(b *testing.B) {
	const datacenters = 100
	applied := make([]*scyllav1alpha1.ScyllaDBDatacenter, 0, datacenters)
	for i := range datacenters {
		applied = append(applied, appliedScyllaDBDatacenter(i, "11"))
	}
	var informerRetained, writtenRetained uint64
	var caughtUpRetained int64
	for b.Loop() {
		before := heap.Live()
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		for i := range datacenters {
			// As an informer receives it: decoded afresh, then trimmed.
			cached, err := TrimForInformerCache(appliedScyllaDBDatacenter(i, "10"))
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Add(cached); err != nil {
				b.Fatal(err)
			}
		}
		filled := heap.Live()
		c := NewMutationCache[*scyllav1alpha1.ScyllaDBDatacenter](store, schema.GroupResource{Group: "scylla.scylladb.com", Resource: "scylladbdatacenters"})
		for _, sdc := range applied {
			// An apply response is decoded afresh: the cache is its only holder.
			c.Written(sdc.DeepCopy())
		}
		informerRetained, writtenRetained = filled-before, heap.Live()-filled
		for i, sdc := range applied {
			got, err := c.Get(sdc.Namespace, sdc.Name)
			if err != nil || got.ResourceVersion != "11" {
				b.Fatalf("datacenter %d: got resource version %q, %v; want the written one", i, got.ResourceVersion, err)
			}
		}

		// The informer catches up with every write but no sync reads the datacenters again; one more write comes.
		for i := range datacenters {
			cached, err := TrimForInformerCache(appliedScyllaDBDatacenter(i, "11"))
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Update(cached); err != nil {
				b.Fatal(err)
			}
		}
		caughtUp := heap.Live()
		c.Written(appliedScyllaDBDatacenter(0, "12"))
		caughtUpRetained = int64(heap.Live()) - int64(caughtUp)
		runtime.KeepAlive(c)
		runtime.KeepAlive(store)
	}
	b.ReportMetric(float64(informerRetained)/datacenters, "informer-B/dc")
	b.ReportMetric(float64(writtenRetained)/datacenters, "written-B/dc")
	b.ReportMetric(float64(caughtUpRetained)/datacenters, "caught-up-B/dc")
}

// BenchmarkTrimScyllaDBDatacenter measures what TrimForInformerCache costs per ScyllaDBDatacenter an informer
// receives (appliedScyllaDBDatacenter): most of it is decoding and encoding the operator's status apply entry.
func BenchmarkTrimScyllaDBDatacenter(b *testing.B) {
	objects := make([]*scyllav1alpha1.ScyllaDBDatacenter, b.N)
	for i := range objects {
		objects[i] = appliedScyllaDBDatacenter(i, "10")
	}
	b.ResetTimer()
	for i := range b.N {
		if _, err := TrimForInformerCache(objects[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// runningPod is a ScyllaDB Pod as the API server sends it once it runs: a sidecar injection init container that
// completed, the ScyllaDB and agent containers running, with the statuses the kubelet reports.
func runningPod(i int) *corev1.Pod {
	pod := cachedPod()
	pod.Name = fmt.Sprintf("cluster-%03d-dc1-a-0", i)
	pod.Namespace = fmt.Sprintf("cluster-%03d", i)
	status := func(name, image string, running bool) corev1.ContainerStatus {
		s := corev1.ContainerStatus{
			Name: name, Image: image, ImageID: "docker.io/" + image + "@sha256:9b2f5c7e0d1a4e8f3c6b5a2d1e0f9c8b7a6d5e4f3c2b1a0f9e8d7c6b5a4f3e2d",
			ContainerID: "containerd://4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e", Ready: running, Started: new(running),
			VolumeMounts: []corev1.VolumeMountStatus{{Name: "data", MountPath: "/var/lib/scylla"}, {Name: "shared", MountPath: "/mnt/shared", ReadOnly: true},
				{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
		}
		if running {
			s.State.Running = &corev1.ContainerStateRunning{StartedAt: started}
		} else {
			s.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Completed", StartedAt: started, FinishedAt: started, ContainerID: s.ContainerID}
		}
		return s
	}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{status("sidecar-injection", "scylladb/scylla-operator:1.0", false)}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{status("scylla", "scylladb/scylla:2025.1.0", true), status("scylladb-manager-agent", "scylladb/scylla-manager-agent:3.5.0", true)}
	pod.Status.EphemeralContainerStatuses, pod.Status.ResourceClaimStatuses = nil, nil
	return pod
}

// BenchmarkPodCacheRetainedBytes reports the heap an informer's store keeps per running ScyllaDB Pod (runningPod), of
// 300, as TrimForInformerCache leaves them.
func BenchmarkPodCacheRetainedBytes(b *testing.B) {
	const pods = 300
	var retained uint64
	for b.Loop() {
		before := heap.Live()
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		for i := range pods {
			cached, err := TrimForInformerCache(runningPod(i))
			if err != nil {
				b.Fatal(err)
			}
			if err := store.Add(cached); err != nil {
				b.Fatal(err)
			}
		}
		retained = heap.Live() - before
		if len(store.List()) != pods {
			b.Fatalf("the store holds %d pods, want %d", len(store.List()), pods)
		}
	}
	b.ReportMetric(float64(retained)/pods, "informer-B/pod")
}
