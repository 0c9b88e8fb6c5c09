package controllerhelpers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// cachedMeta is the metadata of an object as the API server sends it: with the managedFields of two writers.
func cachedMeta(name string) metav1.ObjectMeta {
	deleted := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return metav1.ObjectMeta{
		Namespace:         "scylla",
		Name:              name,
		UID:               types.UID("uid-" + name),
		ResourceVersion:   "42",
		Generation:        3,
		Labels:            map[string]string{"scylla/cluster": "basic", "controller-revision-hash": "basic-dc1-a-7d"},
		Annotations:       map[string]string{"scylla-operator.scylladb.com/managed-hash": "abc"},
		OwnerReferences:   []metav1.OwnerReference{{APIVersion: "scylla.scylladb.com/v1alpha1", Kind: "ScyllaDBDatacenter", Name: "basic", UID: "uid-basic", Controller: ptr.To(true)}},
		Finalizers:        []string{"scylla-operator.scylladb.com/finalizer"},
		DeletionTimestamp: &deleted,
		ManagedFields: []metav1.ManagedFieldsEntry{
			{Manager: "scylla-operator", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{}}}`)}},
			{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
		},
	}
}

// trimmedMeta is cachedMeta without its managedFields.
func trimmedMeta(name string) metav1.ObjectMeta {
	m := cachedMeta(name)
	m.ManagedFields = nil
	return m
}

var started = metav1.NewTime(time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC))

func cachedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: cachedMeta("basic-dc1-a-0"),
		Spec: corev1.PodSpec{
			NodeName: "node-1",
			InitContainers: []corev1.Container{{
				Name: "sidecar-injection", Image: "scylladb/scylla-operator:1.0",
				Command:      []string{"/bin/cp", "/usr/bin/scylla-operator", "/mnt/shared"},
				VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/mnt/shared"}},
			}},
			Containers: []corev1.Container{{
				Name: "scylla", Image: "scylladb/scylla:2025.1.0",
				Command:        []string{"/mnt/shared/scylla-operator", "sidecar"},
				Env:            []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Ports:          []corev1.ContainerPort{{Name: "cql", ContainerPort: 9042}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz"}}},
			}, {
				Name: "scylladb-manager-agent", Image: "scylladb/scylla-manager-agent:3.5.0",
				Args: []string{"-c", "/etc/scylla-manager-agent/scylla-manager-agent.yaml"},
			}},
			Volumes:     []corev1.Volume{{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Affinity:    &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}},
			Tolerations: []corev1.Toleration{{Key: "role", Value: "scylla", Effect: corev1.TaintEffectNoSchedule}},
			Hostname:    "basic-dc1-a-0",
			Subdomain:   "basic-client",
		},
		Status: corev1.PodStatus{
			Phase:             corev1.PodRunning,
			Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "scylla", Ready: true, Image: "scylladb/scylla:2025.1.0"}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar-injection", Image: "scylladb/scylla-operator:1.0",
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}},
			EphemeralContainerStatuses: []corev1.ContainerStatus{{Name: "debugger"}},
			ResourceClaimStatuses:      []corev1.PodResourceClaimStatus{{Name: "gpu"}},
			PodIP:                      "10.0.0.1",
			PodIPs:                     []corev1.PodIP{{IP: "10.0.0.1"}},
			HostIP:                     "192.168.0.1",
			StartTime:                  &started,
		},
	}
}

// trimmedPodSpec is the spec of cachedPod as the informer caches it.
func trimmedPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		NodeName:       "node-1",
		InitContainers: []corev1.Container{{Name: "sidecar-injection", Image: "scylladb/scylla-operator:1.0"}},
		Containers: []corev1.Container{
			{Name: "scylla", Image: "scylladb/scylla:2025.1.0"},
			{Name: "scylladb-manager-agent", Image: "scylladb/scylla-manager-agent:3.5.0"},
		},
	}
}

func TestTrimForInformerCache(t *testing.T) {
	t.Parallel()

	operatorStatusApply := metav1.ManagedFieldsEntry{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{}}}}`)}}
	otherStatusApplies := []metav1.ManagedFieldsEntry{
		{Manager: naming.ManagerControllerFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}},
		{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{}}`)}},
	}
	cachedSDC := func(extra ...metav1.ManagedFieldsEntry) *scyllav1alpha1.ScyllaDBDatacenter {
		sdc := &scyllav1alpha1.ScyllaDBDatacenter{
			ObjectMeta: cachedMeta("basic"),
			Status:     scyllav1alpha1.ScyllaDBDatacenterStatus{Conditions: []metav1.Condition{{Type: "Available", Status: metav1.ConditionTrue}}},
		}
		sdc.ManagedFields = append(append(sdc.ManagedFields, otherStatusApplies...), extra...)
		return sdc
	}
	legacyStatusUpdate := func(manager string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{}}`)}}
	}
	cachedStatefulSet := func() *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: cachedMeta("basic-dc1-a"),
			Spec: appsv1.StatefulSetSpec{
				Replicas:    ptr.To[int32](3),
				ServiceName: "basic-client",
				Selector:    &metav1.LabelSelector{MatchLabels: map[string]string{"scylla/cluster": "basic"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{
						Labels:      map[string]string{"scylla/cluster": "basic"},
						Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"},
					},
					Spec: cachedPod().Spec,
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}},
				UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptr.To[int32](3)}},
			},
			Status: appsv1.StatefulSetStatus{ReadyReplicas: 3, CurrentRevision: "basic-dc1-a-7d"},
		}
	}
	cachedSecret := func() *corev1.Secret {
		return &corev1.Secret{ObjectMeta: cachedMeta("basic-auth-token"), Data: map[string][]byte{"auth-token.yaml": []byte("auth_token: t")}}
	}
	cachedConfigMap := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: cachedMeta("basic-config"), Data: map[string]string{"scylla-a.yaml": "cluster_name: basic"}}
	}
	cachedScyllaCluster := func() *scyllav1.ScyllaCluster {
		return &scyllav1.ScyllaCluster{ObjectMeta: cachedMeta("basic"), Spec: scyllav1.ScyllaClusterSpec{Version: "2025.1.0"}}
	}
	cachedTask := func() *scyllav1alpha1.ScyllaDBManagerTask {
		return &scyllav1alpha1.ScyllaDBManagerTask{ObjectMeta: cachedMeta("basic-backup"), Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{Type: "Backup"}}
	}
	tombstone := func() cache.DeletedFinalStateUnknown {
		return cache.DeletedFinalStateUnknown{Key: "scylla/basic-dc1-a-0", Obj: cachedPod()}
	}

	tt := []struct {
		name string
		obj  any
		want any
	}{
		{
			name: "a ScyllaDBDatacenter keeps of its managedFields only the operator's status apply entry, which its status write reads",
			obj:  cachedSDC(operatorStatusApply),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := cachedSDC()
				sdc.ManagedFields = []metav1.ManagedFieldsEntry{operatorStatusApply}
				return sdc
			}(),
		},
		{
			name: "a ScyllaDBDatacenter keeps of the operator's status apply entry the keys of the conditions it owns alone",
			obj: cachedSDC(metav1.ManagedFieldsEntry{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{".":{},"f:message":{},"f:status":{},"f:type":{}},` +
					`"k:{\"type\":\"Progressing\"}":{".":{},"f:reason":{}}},"f:observedGeneration":{},"f:racks":{"k:{\"name\":\"a\"}":{"f:nodes":{}}}}}`)}}),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := cachedSDC()
				sdc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":{"f:conditions":{"k:{\"type\":\"Available\"}":{},"k:{\"type\":\"Progressing\"}":{}}}}`)}}}
				return sdc
			}(),
		},
		{
			name: "a ScyllaDBDatacenter keeps an operator's status apply entry it can't decode as it is",
			obj: cachedSDC(metav1.ManagedFieldsEntry{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
				FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":`)}}),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := cachedSDC()
				sdc.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: naming.OperatorFieldManager, Operation: metav1.ManagedFieldsOperationApply, Subresource: "status", FieldsType: "FieldsV1",
					FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:status":`)}}}
				return sdc
			}(),
		},
		{
			name: "a ScyllaDBDatacenter the operator never applied the status of keeps no managedFields",
			obj:  cachedSDC(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := cachedSDC()
				sdc.ManagedFields = nil
				return sdc
			}(),
		},
		{
			name: "a ScyllaDBDatacenter with a status Update entry of the established operator keeps every entry, which handing it over rewrites",
			obj:  cachedSDC(operatorStatusApply, legacyStatusUpdate(naming.EstablishedOperatorStatusUpdateManager)),
			want: cachedSDC(operatorStatusApply, legacyStatusUpdate(naming.EstablishedOperatorStatusUpdateManager)),
		},
		{
			name: "a ScyllaDBDatacenter with a status Update entry of an earlier version of this operator keeps every entry",
			obj:  cachedSDC(legacyStatusUpdate(naming.OperatorStatusUpdateManager)),
			want: cachedSDC(legacyStatusUpdate(naming.OperatorStatusUpdateManager)),
		},
		{
			name: "a Pod keeps its metadata but managedFields, its node, its containers' names and images and its status but its containers' and claims' statuses",
			obj:  cachedPod(),
			want: &corev1.Pod{
				ObjectMeta: trimmedMeta("basic-dc1-a-0"),
				Spec:       trimmedPodSpec(),
				Status: corev1.PodStatus{
					Phase:      corev1.PodRunning,
					Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
					PodIP:      "10.0.0.1",
					PodIPs:     []corev1.PodIP{{IP: "10.0.0.1"}},
					HostIP:     "192.168.0.1",
					StartTime:  &started,
				},
			},
		},
		{
			name: "a StatefulSet loses its managedFields and, of its pod template, all but the metadata, node and containers' names and images",
			obj:  cachedStatefulSet(),
			want: func() *appsv1.StatefulSet {
				sts := cachedStatefulSet()
				sts.ManagedFields = nil
				sts.Spec.Template.Spec = trimmedPodSpec()
				return sts
			}(),
		},
		{
			name: "a Secret loses only its managedFields, its data stays",
			obj:  cachedSecret(),
			want: func() *corev1.Secret {
				s := cachedSecret()
				s.ManagedFields = nil
				return s
			}(),
		},
		{
			name: "a ConfigMap loses only its managedFields, its data stays",
			obj:  cachedConfigMap(),
			want: func() *corev1.ConfigMap {
				cm := cachedConfigMap()
				cm.ManagedFields = nil
				return cm
			}(),
		},
		{
			name: "a ScyllaCluster loses only its managedFields",
			obj:  cachedScyllaCluster(),
			want: func() *scyllav1.ScyllaCluster {
				sc := cachedScyllaCluster()
				sc.ManagedFields = nil
				return sc
			}(),
		},
		{
			name: "a ScyllaDBManagerTask loses only its managedFields",
			obj:  cachedTask(),
			want: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := cachedTask()
				task.ManagedFields = nil
				return task
			}(),
		},
		{
			name: "a tombstone is passed through: its object was trimmed when it was cached",
			obj:  tombstone(),
			want: tombstone(),
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := TrimForInformerCache(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected object (-want +got):\n%s", diff)
			}

			// A transform may see an object again (an informer's Replace of what it already holds).
			again, err := TrimForInformerCache(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, again); diff != "" {
				t.Errorf("trimming twice differs from trimming once (-want +got):\n%s", diff)
			}
		})
	}
}

// The transform must be safe to run on whatever the informers of both programs receive.
func TestTrimForInformerCacheReturnsTheObjectItWasGiven(t *testing.T) {
	t.Parallel()

	for _, obj := range []runtime.Object{cachedPod(), &appsv1.StatefulSet{}, &scyllav1alpha1.ScyllaDBDatacenter{}} {
		got, err := TrimForInformerCache(obj)
		if err != nil {
			t.Fatal(err)
		}
		if got != any(obj) {
			t.Errorf("%T: got another object than the one given", obj)
		}
	}
}

// What the operator's status write reads of a ScyllaDBDatacenter's managedFields is the same trimmed or not.
func TestTrimmedScyllaDBDatacenterKeepsTheConditionsTheOperatorOwns(t *testing.T) {
	t.Parallel()

	full := appliedScyllaDBDatacenter(0, "10")
	want := AppliedStatusConditionTypes(full.ManagedFields, naming.OperatorFieldManager)
	if want.Len() < 10 {
		t.Fatalf("the fixture owns too few conditions to tell: %v", sets.List(want))
	}
	trimmed, err := TrimForInformerCache(appliedScyllaDBDatacenter(0, "10"))
	if err != nil {
		t.Fatal(err)
	}
	got := AppliedStatusConditionTypes(trimmed.(*scyllav1alpha1.ScyllaDBDatacenter).ManagedFields, naming.OperatorFieldManager)
	if diff := cmp.Diff(sets.List(want), sets.List(got)); diff != "" {
		t.Errorf("the trimmed object owns other conditions (-want +got):\n%s", diff)
	}
}
