package resourceapply

import (
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Builders of required objects, as a controller would build them.

func testObjectMeta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:      name,
		Namespace: testNamespace,
		Labels: map[string]string{
			"app.kubernetes.io/name": "scylla",
			"scylla/cluster":         "basic",
		},
		Annotations: map[string]string{
			"example.com/managed": "yes",
		},
		OwnerReferences: []metav1.OwnerReference{*testControllerRef()},
	}
}

func testSelectorLabels() map[string]string {
	return map[string]string{"scylla/cluster": "basic"}
}

func newTestService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: testObjectMeta("basic-client"),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: testSelectorLabels(),
			Ports: []corev1.ServicePort{
				{Name: "cql", Port: 9042, TargetPort: intstr.FromInt32(9042)},
				{Name: "cql-ssl", Port: 9142, TargetPort: intstr.FromInt32(9142)},
			},
		},
	}
}

func newTestHeadlessService() *corev1.Service {
	svc := newTestService()
	svc.Name = "basic-us-east-1-us-east-1a-0"
	svc.Spec.ClusterIP = corev1.ClusterIPNone
	svc.Spec.PublishNotReadyAddresses = true
	return svc
}

func newTestLoadBalancerService() *corev1.Service {
	svc := newTestService()
	svc.Spec.Type = corev1.ServiceTypeLoadBalancer
	svc.Spec.ExternalTrafficPolicy = corev1.ServiceExternalTrafficPolicyLocal
	return svc
}

func newTestStatefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: testObjectMeta("basic-us-east-1-us-east-1a"),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            new(int32(3)),
			Selector:            &metav1.LabelSelector{MatchLabels: testSelectorLabels()},
			ServiceName:         "basic-client",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      testSelectorLabels(),
					Annotations: map[string]string{"prometheus.io/scrape": "true"},
				},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  "scylla",
						Image: "docker.io/scylladb/scylla:2025.1.0",
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("1"),
								corev1.ResourceMemory: resource.MustParse("2Gi"),
							},
						},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: testSelectorLabels()},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: new("fast"),
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
					},
				},
			}},
		},
	}
}

func newTestSecret() *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: testObjectMeta("basic-auth-token"),
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{"auth-token.yaml": []byte("auth_token: not-a-real-token\n")},
	}
}

func newTestConfigMap() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: testObjectMeta("basic-config"),
		Data:       map[string]string{"scylla.yaml": "cluster_name: basic\n"},
	}
}

func newTestServiceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta: testObjectMeta("basic-member"),
	}
}

func newTestRoleBinding() *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: testObjectMeta("basic-member"),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "scyllacluster-member"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: testNamespace, Name: "basic-member"}},
	}
}

func newTestPodDisruptionBudget() *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: testObjectMeta("basic"),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: new(intstr.FromInt32(1)),
			Selector:       &metav1.LabelSelector{MatchLabels: testSelectorLabels()},
		},
	}
}

func newTestNamespace() *corev1.Namespace {
	return &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "scylla-operator",
			Labels: map[string]string{"app.kubernetes.io/name": "scylla-operator"},
		},
	}
}

func newTestScyllaDBDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	meta := testObjectMeta("basic")
	meta.OwnerReferences = []metav1.OwnerReference{{
		APIVersion:         "scylla.scylladb.com/v1",
		Kind:               "ScyllaCluster",
		Name:               "basic",
		UID:                "scyllacluster-uid",
		Controller:         new(true),
		BlockOwnerDeletion: new(true),
	}}
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: meta,
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName:    "basic",
			DatacenterName: new("us-east-1"),
			ScyllaDB:       scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:2025.1.0"},
			Racks:          []scyllav1alpha1.RackSpec{{Name: "us-east-1a"}},
		},
	}
}

func newTestScyllaDBManagerTask() *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: testObjectMeta("repair-weekly"),
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair: &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
				Keyspace: []string{"*", "!system_*"},
			},
		},
	}
}
