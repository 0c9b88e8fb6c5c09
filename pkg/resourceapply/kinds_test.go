package resourceapply

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/kubeinterfaces"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// stored returns obj as the API server would hold it after an earlier Apply: with bookkeeping, a resourceVersion and
// a UID. mutate, when set, then plays the API server's defaulting and allocation.
func stored[T kubeinterfaces.ObjectInterface](t *testing.T, obj T, mutate func(T)) T {
	t.Helper()

	obj = withBookkeeping(t, obj, testLabelKeys, testAnnotationKeys)
	obj.SetResourceVersion("7")
	obj.SetUID("existing-uid")
	if mutate != nil {
		mutate(obj)
	}
	return obj
}

// updateOrRecreateCase applies required over existing and expects either an update whose stored result passes
// checkUpdated, or, when wantPropagation is set, a delete with that propagation and preconditions on existing.
type updateOrRecreateCase[T kubeinterfaces.ObjectInterface] struct {
	name            string
	existing        T
	required        T
	checkUpdated    func(t *testing.T, updated T)
	wantPropagation metav1.DeletionPropagation
	wantEvent       string
}

func (tc updateOrRecreateCase[T]) run(kind kindClient[T]) func(t *testing.T) {
	return func(t *testing.T) {
		t.Parallel()

		f := newApplyFixture(kind, tc.existing)
		actual, changed, err := f.apply(t, tc.required, ApplyOptions{})
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		if !changed {
			t.Error("expected a change")
		}
		actions := f.takeRawActions()
		if diff := cmp.Diff([]string{tc.wantEvent}, f.takeEvents()); diff != "" {
			t.Errorf("unexpected events (-want +got):\n%s", diff)
		}

		if len(tc.wantPropagation) == 0 {
			if len(actions) != 1 || actions[0].GetVerb() != "update" {
				t.Fatalf("expected one update, got %v", actions)
			}
			tc.checkUpdated(t, f.get(t, tc.required.GetName()))
			return
		}

		if !reflect.ValueOf(actual).IsNil() {
			t.Errorf("expected no object after a delete, got %v", actual)
		}
		uid, resourceVersion := tc.existing.GetUID(), tc.existing.GetResourceVersion()
		want := []metav1.DeleteOptions{{
			Preconditions:     &metav1.Preconditions{UID: &uid, ResourceVersion: &resourceVersion},
			PropagationPolicy: &tc.wantPropagation,
		}}
		if diff := cmp.Diff(want, deleteOptions(actions)); diff != "" {
			t.Errorf("unexpected deletes (-want +got):\n%s", diff)
		}
		if len(actions) != 1 {
			t.Errorf("expected only the delete, got %v", actions)
		}
	}
}

func TestApplyKeepsServiceFieldsTheAPIServerAllocated(t *testing.T) {
	t.Parallel()

	allocate := func(svc *corev1.Service) {
		if svc.Spec.ClusterIP != corev1.ClusterIPNone {
			svc.Spec.ClusterIP = "10.0.0.10"
			svc.Spec.ClusterIPs = []string{"10.0.0.10"}
		} else {
			svc.Spec.ClusterIPs = []string{corev1.ClusterIPNone}
		}
		svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
		if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			for i := range svc.Spec.Ports {
				svc.Spec.Ports[i].NodePort = int32(30000 + i)
			}
		}
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
			svc.Spec.HealthCheckNodePort = 31000
		}
	}
	withPort := func(svc *corev1.Service) *corev1.Service {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "alternator", Port: 8000})
		return svc
	}
	wantSpec := func(want corev1.ServiceSpec) func(t *testing.T, updated *corev1.Service) {
		return func(t *testing.T, updated *corev1.Service) {
			t.Helper()
			if diff := cmp.Diff(want, updated.Spec); diff != "" {
				t.Errorf("unexpected spec (-want +got):\n%s", diff)
			}
		}
	}
	allocatedClusterIP := func(spec corev1.ServiceSpec) corev1.ServiceSpec {
		spec.ClusterIP = "10.0.0.10"
		spec.ClusterIPs = []string{"10.0.0.10"}
		spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
		spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
		return spec
	}
	updatedEvent := "Normal ServiceUpdated Service scylla/basic-client updated"

	nodePortService := func() *corev1.Service {
		svc := newTestService()
		svc.Spec.Type = corev1.ServiceTypeNodePort
		return svc
	}
	noNodePortsLoadBalancer := func() *corev1.Service {
		svc := newTestLoadBalancerService()
		svc.Spec.AllocateLoadBalancerNodePorts = new(false)
		return svc
	}
	explicitNodePort := withPort(nodePortService())
	explicitNodePort.Spec.Ports[0].NodePort = 32000

	tt := []updateOrRecreateCase[*corev1.Service]{
		{
			name:     "ClusterIP keeps its cluster IPs and IP families",
			existing: stored(t, newTestService(), allocate),
			required: withPort(newTestService()),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				return allocatedClusterIP(withPort(newTestService()).Spec)
			}()),
			wantEvent: updatedEvent,
		},
		{
			name:     "headless stays headless and keeps its IP families",
			existing: stored(t, newTestHeadlessService(), allocate),
			required: withPort(newTestHeadlessService()),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				spec := withPort(newTestHeadlessService()).Spec
				spec.ClusterIPs = []string{corev1.ClusterIPNone}
				spec.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
				spec.IPFamilyPolicy = new(corev1.IPFamilyPolicySingleStack)
				return spec
			}()),
			wantEvent: "Normal ServiceUpdated Service scylla/basic-us-east-1-us-east-1a-0 updated",
		},
		{
			name:     "NodePort keeps the node ports of existing ports; a new port gets one allocated",
			existing: stored(t, nodePortService(), allocate),
			required: withPort(nodePortService()),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				spec := allocatedClusterIP(withPort(nodePortService()).Spec)
				spec.Ports[0].NodePort = 30000
				spec.Ports[1].NodePort = 30001
				return spec
			}()),
			wantEvent: updatedEvent,
		},
		{
			name:     "a node port required explicitly wins over the allocated one",
			existing: stored(t, nodePortService(), allocate),
			required: explicitNodePort.DeepCopy(),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				spec := allocatedClusterIP(explicitNodePort.Spec)
				spec.Ports[1].NodePort = 30001
				return spec
			}()),
			wantEvent: updatedEvent,
		},
		{
			name:     "LoadBalancer with local traffic policy keeps node ports and health check node port",
			existing: stored(t, newTestLoadBalancerService(), allocate),
			required: withPort(newTestLoadBalancerService()),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				spec := allocatedClusterIP(withPort(newTestLoadBalancerService()).Spec)
				spec.Ports[0].NodePort = 30000
				spec.Ports[1].NodePort = 30001
				spec.HealthCheckNodePort = 31000
				return spec
			}()),
			wantEvent: updatedEvent,
		},
		{
			name:     "LoadBalancer without node ports does not get them back",
			existing: stored(t, nodePortService(), allocate),
			required: withPort(noNodePortsLoadBalancer()),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				return allocatedClusterIP(withPort(noNodePortsLoadBalancer()).Spec)
			}()),
			wantEvent: updatedEvent,
		},
		{
			name:     "NodePort turned into ClusterIP drops its node ports",
			existing: stored(t, nodePortService(), allocate),
			required: newTestService(),
			checkUpdated: wantSpec(func() corev1.ServiceSpec {
				return allocatedClusterIP(newTestService().Spec)
			}()),
			wantEvent: updatedEvent,
		},
		{
			name: "ClusterIP turned headless is recreated",
			existing: stored(t, newTestService(), func(svc *corev1.Service) {
				allocate(svc)
				svc.Name = newTestHeadlessService().Name
			}),
			required:        newTestHeadlessService(),
			wantPropagation: metav1.DeletePropagationBackground,
			wantEvent: "Normal ServiceDeleted Service scylla/basic-us-east-1-us-east-1a-0 deleted to recreate it " +
				"because immutable field spec.clusterIP changed (propagation Background)",
		},
		{
			name: "headless turned ClusterIP is recreated",
			existing: stored(t, newTestHeadlessService(), func(svc *corev1.Service) {
				allocate(svc)
				svc.Name = newTestService().Name
			}),
			required:        newTestService(),
			wantPropagation: metav1.DeletePropagationBackground,
			wantEvent: "Normal ServiceDeleted Service scylla/basic-client deleted to recreate it " +
				"because immutable field spec.clusterIP changed (propagation Background)",
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, tc.run(serviceKind))
	}
}

// defaultStatefulSet plays the API server's defaulting of the fields Apply compares to decide on a recreation.
func defaultStatefulSet(sts *appsv1.StatefulSet) {
	sts.Spec.RevisionHistoryLimit = new(int32(10))
	if len(sts.Spec.PodManagementPolicy) == 0 {
		sts.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	for i := range sts.Spec.VolumeClaimTemplates {
		vct := &sts.Spec.VolumeClaimTemplates[i]
		vct.APIVersion, vct.Kind = "v1", "PersistentVolumeClaim"
		if vct.Spec.VolumeMode == nil {
			vct.Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
		}
		vct.Status.Phase = corev1.ClaimPending
	}
}

func TestApplyRecreatesStatefulSetsOnlyForImmutableChanges(t *testing.T) {
	t.Parallel()

	recreated := func(field string) string {
		return fmt.Sprintf("Normal StatefulSetDeleted StatefulSet scylla/basic-us-east-1-us-east-1a deleted to recreate it "+
			"because immutable field %s changed (propagation Orphan)", field)
	}
	updated := "Normal StatefulSetUpdated StatefulSet scylla/basic-us-east-1-us-east-1a updated"

	tt := []struct {
		name            string
		mutate          func(*appsv1.StatefulSet)
		wantPropagation metav1.DeletionPropagation
		wantEvent       string
	}{
		{
			name:      "replicas",
			mutate:    func(sts *appsv1.StatefulSet) { sts.Spec.Replicas = new(int32(5)) },
			wantEvent: updated,
		},
		{
			name: "pod template",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.Template.Spec.Containers[0].Image = "docker.io/scylladb/scylla:2025.2.0"
			},
			wantEvent: updated,
		},
		{
			name: "update strategy, minReadySeconds and PVC retention policy",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
				sts.Spec.MinReadySeconds = 10
				sts.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
					WhenScaled: appsv1.DeletePersistentVolumeClaimRetentionPolicyType,
				}
			},
			wantEvent: updated,
		},
		{
			name: "unset fields the API server defaults are not changes",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.PodManagementPolicy = ""
				sts.Spec.Replicas = new(int32(4))
			},
			wantEvent: updated,
		},
		{
			name: "an equal storage quantity written differently is not a change",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("10240Mi")
				sts.Spec.VolumeClaimTemplates[0].Spec.VolumeMode = new(corev1.PersistentVolumeFilesystem)
			},
			wantEvent: updated,
		},
		{
			// The API server updates revisionHistoryLimit in place: deleting the StatefulSet for it would be a
			// needless outage of its status and rollouts.
			name:      "revisionHistoryLimit is updated in place",
			mutate:    func(sts *appsv1.StatefulSet) { sts.Spec.RevisionHistoryLimit = new(int32(3)) },
			wantEvent: updated,
		},
		{
			name:            "selector",
			mutate:          func(sts *appsv1.StatefulSet) { sts.Spec.Selector.MatchLabels["scylla/rack"] = "a" },
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.selector"),
		},
		{
			name:            "serviceName",
			mutate:          func(sts *appsv1.StatefulSet) { sts.Spec.ServiceName = "other" },
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.serviceName"),
		},
		{
			name:            "podManagementPolicy",
			mutate:          func(sts *appsv1.StatefulSet) { sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.podManagementPolicy"),
		},
		{
			name: "volume claim template capacity",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("20Gi")
			},
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.volumeClaimTemplates"),
		},
		{
			name:            "volume claim template labels",
			mutate:          func(sts *appsv1.StatefulSet) { sts.Spec.VolumeClaimTemplates[0].Labels["extra"] = "x" },
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.volumeClaimTemplates"),
		},
		{
			name: "volume claim template added",
			mutate: func(sts *appsv1.StatefulSet) {
				sts.Spec.VolumeClaimTemplates = append(sts.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{
					ObjectMeta: metav1.ObjectMeta{Name: "logs"},
				})
			},
			wantPropagation: metav1.DeletePropagationOrphan,
			wantEvent:       recreated("spec.volumeClaimTemplates"),
		},
	}

	for _, tc := range tt {
		required := newTestStatefulSet()
		tc.mutate(required)
		t.Run(tc.name, updateOrRecreateCase[*appsv1.StatefulSet]{
			existing: stored(t, newTestStatefulSet(), defaultStatefulSet),
			required: required,
			checkUpdated: func(t *testing.T, updated *appsv1.StatefulSet) {
				if diff := cmp.Diff(required.Spec, updated.Spec); diff != "" {
					t.Errorf("unexpected spec (-want +got):\n%s", diff)
				}
			},
			wantPropagation: tc.wantPropagation,
			wantEvent:       tc.wantEvent,
		}.run(statefulSetKind))
	}
}

func TestApplyRecreatesOtherKindsOnImmutableChanges(t *testing.T) {
	t.Parallel()

	immutableSecret := func() *corev1.Secret {
		secret := newTestSecret()
		secret.Immutable = new(true)
		return secret
	}
	changedData := func(secret *corev1.Secret) *corev1.Secret {
		secret.Data = map[string][]byte{"auth-token.yaml": []byte("auth_token: another-token\n")}
		return secret
	}
	immutableConfigMap := func() *corev1.ConfigMap {
		cm := newTestConfigMap()
		cm.Immutable = new(true)
		return cm
	}

	t.Run("Secret", func(t *testing.T) {
		t.Parallel()

		tt := []updateOrRecreateCase[*corev1.Secret]{
			{
				name:     "mutable data",
				existing: stored(t, newTestSecret(), nil),
				required: changedData(newTestSecret()),
				checkUpdated: func(t *testing.T, updated *corev1.Secret) {
					if diff := cmp.Diff(changedData(newTestSecret()).Data, updated.Data); diff != "" {
						t.Errorf("unexpected data (-want +got):\n%s", diff)
					}
				},
				wantEvent: "Normal SecretUpdated Secret scylla/basic-auth-token updated",
			},
			{
				name:            "immutable data",
				existing:        stored(t, immutableSecret(), nil),
				required:        changedData(immutableSecret()),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal SecretDeleted Secret scylla/basic-auth-token deleted to recreate it because immutable field data changed (propagation Background)",
			},
			{
				name:     "immutable data given as stringData",
				existing: stored(t, immutableSecret(), nil),
				required: func() *corev1.Secret {
					secret := immutableSecret()
					secret.Data = nil
					secret.StringData = map[string]string{"auth-token.yaml": "auth_token: another-token\n"}
					return secret
				}(),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal SecretDeleted Secret scylla/basic-auth-token deleted to recreate it because immutable field data changed (propagation Background)",
			},
			{
				name:     "immutable Secret made mutable",
				existing: stored(t, immutableSecret(), nil),
				required: newTestSecret(),
				// The hash differs because Immutable changed; the data alone would not.
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal SecretDeleted Secret scylla/basic-auth-token deleted to recreate it because immutable field immutable changed (propagation Background)",
			},
			{
				name:     "immutable Secret gets a label",
				existing: stored(t, immutableSecret(), nil),
				required: func() *corev1.Secret {
					secret := immutableSecret()
					secret.Labels["extra"] = "x"
					return secret
				}(),
				checkUpdated: func(t *testing.T, updated *corev1.Secret) {
					if updated.Labels["extra"] != "x" {
						t.Errorf("expected the new label, got %v", updated.Labels)
					}
				},
				wantEvent: "Normal SecretUpdated Secret scylla/basic-auth-token updated",
			},
			{
				name:     "type",
				existing: stored(t, newTestSecret(), nil),
				required: func() *corev1.Secret {
					secret := newTestSecret()
					secret.Type = "example.com/token"
					return secret
				}(),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal SecretDeleted Secret scylla/basic-auth-token deleted to recreate it because immutable field type changed (propagation Background)",
			},
		}
		for _, tc := range tt {
			t.Run(tc.name, tc.run(secretKind))
		}
	})

	t.Run("ConfigMap", func(t *testing.T) {
		t.Parallel()

		tt := []updateOrRecreateCase[*corev1.ConfigMap]{
			{
				name:     "immutable data",
				existing: stored(t, immutableConfigMap(), nil),
				required: func() *corev1.ConfigMap {
					cm := immutableConfigMap()
					cm.Data["scylla.yaml"] = "cluster_name: other\n"
					return cm
				}(),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal ConfigMapDeleted ConfigMap scylla/basic-config deleted to recreate it because immutable field data changed (propagation Background)",
			},
			{
				name:     "immutable binary data",
				existing: stored(t, immutableConfigMap(), nil),
				required: func() *corev1.ConfigMap {
					cm := immutableConfigMap()
					cm.BinaryData = map[string][]byte{"blob": {1}}
					return cm
				}(),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal ConfigMapDeleted ConfigMap scylla/basic-config deleted to recreate it because immutable field binaryData changed (propagation Background)",
			},
			{
				name:     "mutable data",
				existing: stored(t, newTestConfigMap(), nil),
				required: func() *corev1.ConfigMap {
					cm := newTestConfigMap()
					cm.Data["scylla.yaml"] = "cluster_name: other\n"
					return cm
				}(),
				checkUpdated: func(t *testing.T, updated *corev1.ConfigMap) {
					if got := updated.Data["scylla.yaml"]; got != "cluster_name: other\n" {
						t.Errorf("unexpected data %q", got)
					}
				},
				wantEvent: "Normal ConfigMapUpdated ConfigMap scylla/basic-config updated",
			},
		}
		for _, tc := range tt {
			t.Run(tc.name, tc.run(configMapKind))
		}
	})

	t.Run("RoleBinding", func(t *testing.T) {
		t.Parallel()

		tt := []updateOrRecreateCase[*rbacv1.RoleBinding]{
			{
				name:     "roleRef",
				existing: stored(t, newTestRoleBinding(), nil),
				required: func() *rbacv1.RoleBinding {
					rb := newTestRoleBinding()
					rb.RoleRef.Name = "other"
					return rb
				}(),
				wantPropagation: metav1.DeletePropagationBackground,
				wantEvent:       "Normal RoleBindingDeleted RoleBinding scylla/basic-member deleted to recreate it because immutable field roleRef changed (propagation Background)",
			},
			{
				name:     "roleRef with the API group the API server defaults left unset is not a change",
				existing: stored(t, newTestRoleBinding(), nil),
				required: func() *rbacv1.RoleBinding {
					rb := newTestRoleBinding()
					rb.RoleRef.APIGroup = ""
					rb.Subjects[0].Name = "other"
					return rb
				}(),
				checkUpdated: func(t *testing.T, updated *rbacv1.RoleBinding) {
					if got := updated.Subjects[0].Name; got != "other" {
						t.Errorf("unexpected subject %q", got)
					}
				},
				wantEvent: "Normal RoleBindingUpdated RoleBinding scylla/basic-member updated",
			},
			{
				name:     "subjects",
				existing: stored(t, newTestRoleBinding(), nil),
				required: func() *rbacv1.RoleBinding {
					rb := newTestRoleBinding()
					rb.Subjects[0].Name = "other"
					return rb
				}(),
				checkUpdated: func(t *testing.T, updated *rbacv1.RoleBinding) {
					if diff := cmp.Diff(newTestRoleBinding().RoleRef, updated.RoleRef); diff != "" {
						t.Errorf("unexpected roleRef (-want +got):\n%s", diff)
					}
					if got := updated.Subjects[0].Name; got != "other" {
						t.Errorf("unexpected subject %q", got)
					}
				},
				wantEvent: "Normal RoleBindingUpdated RoleBinding scylla/basic-member updated",
			},
		}
		for _, tc := range tt {
			t.Run(tc.name, tc.run(roleBindingKind))
		}
	})
}

func TestApplyRestoresStatefulSetReplicasScaledBehindItsBack(t *testing.T) {
	t.Parallel()

	// kubectl scale writes the scale subresource: the replica count changes, the bookkeeping does not.
	required := newTestStatefulSet()
	t.Run("replicas scaled down", updateOrRecreateCase[*appsv1.StatefulSet]{
		existing: stored(t, newTestStatefulSet(), func(sts *appsv1.StatefulSet) {
			defaultStatefulSet(sts)
			sts.Spec.Replicas = new(*required.Spec.Replicas - 1)
		}),
		required: required,
		checkUpdated: func(t *testing.T, updated *appsv1.StatefulSet) {
			if *updated.Spec.Replicas != *required.Spec.Replicas {
				t.Errorf("expected %d replicas, got %d", *required.Spec.Replicas, *updated.Spec.Replicas)
			}
		},
		wantEvent: "Normal StatefulSetUpdated StatefulSet scylla/basic-us-east-1-us-east-1a updated",
	}.run(statefulSetKind))
}
