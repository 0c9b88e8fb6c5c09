package scylladbcluster

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/merge"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// newBasicScyllaDBCluster returns a two-datacenter ScyllaDBCluster whose racks all come from the template.
func newBasicScyllaDBCluster() *scyllav1alpha1.ScyllaDBCluster {
	return &scyllav1alpha1.ScyllaDBCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      "basic",
			Labels:    map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true", "team": "storage"},
		},
		Spec: scyllav1alpha1.ScyllaDBClusterSpec{
			ScyllaDB:             scyllav1alpha1.ScyllaDB{Image: "docker.io/scylladb/scylla:2025.1.2"},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: new("docker.io/scylladb/scylla-manager-agent:3.5.0")},
			DatacenterTemplate: &scyllav1alpha1.ScyllaDBClusterDatacenterTemplate{
				// Every rack needs storage (validation.ValidateScyllaDBCluster).
				Racks: []scyllav1alpha1.RackSpec{{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(3)), ScyllaDB: withStorage()}}},
			},
			Datacenters: []scyllav1alpha1.ScyllaDBClusterDatacenter{
				{Name: "dc1", RemoteKubernetesClusterName: "worker-1"},
				{Name: "dc2", RemoteKubernetesClusterName: "worker-2"},
			},
		},
	}
}

// withStorage returns the scyllaDB settings of a rack with the storage every rack needs.
func withStorage() *scyllav1alpha1.ScyllaDBTemplate {
	return &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "1Gi"}}
}

func remoteNamespace(dc string) string {
	return naming.ScyllaDBClusterRemoteNamespaceName(testNamespace, dc)
}

func remoteLabels(dc string) map[string]string {
	return map[string]string{
		"scylla-operator.scylladb.com/parent-scylladbcluster-name":            "basic",
		"scylla-operator.scylladb.com/parent-scylladbcluster-namespace":       testNamespace,
		"scylla-operator.scylladb.com/parent-scylladbcluster-datacenter-name": dc,
		"app.kubernetes.io/managed-by":                                        "remote.scylla-operator.scylladb.com",
	}
}

func TestMakeScyllaDBDatacenterOfABasicCluster(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	got, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[1], datacenterInputs{externalSeeds: []string{"basic-dc1-seed.ns.svc"}})
	if err != nil {
		t.Fatal(err)
	}
	want := &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: remoteNamespace("dc2"),
			Name:      "basic-dc2",
			Labels:    remoteLabels("dc2"),
			Annotations: map[string]string{
				"internal.scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-override-secret-ref": naming.ScyllaDBClusterAuthTokenSecretName("basic"),
			},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName:    "basic",
			DatacenterName: new("dc2"),
			ScyllaDB: scyllav1alpha1.ScyllaDB{
				Image:         "docker.io/scylladb/scylla:2025.1.2",
				ExternalSeeds: []string{"basic-dc1-seed.ns.svc"},
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{Image: new("docker.io/scylladb/scylla-manager-agent:3.5.0")},
			ExposeOptions: &scyllav1alpha1.ExposeOptions{
				NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless},
				BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
					Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
					Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
				},
			},
			Racks:                                   []scyllav1alpha1.RackSpec{{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(3)), ScyllaDB: withStorage()}}},
			DisableAutomaticOrphanedNodeReplacement: new(false),
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ScyllaDBDatacenter differs (-want +got):\n%s", diff)
	}
}

func resources(cpu string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}
}

func TestMakeScyllaDBDatacenterMergesLevels(t *testing.T) {
	t.Parallel()
	sdcOf := func(t *testing.T, sc *scyllav1alpha1.ScyllaDBCluster, inputs datacenterInputs) *scyllav1alpha1.ScyllaDBDatacenter {
		t.Helper()
		sdc, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[0], inputs)
		if err != nil {
			t.Fatal(err)
		}
		return sdc
	}
	tmpl := func(sc *scyllav1alpha1.ScyllaDBCluster) *scyllav1alpha1.ScyllaDBClusterDatacenterTemplate {
		return sc.Spec.DatacenterTemplate
	}
	dc := func(sc *scyllav1alpha1.ScyllaDBCluster) *scyllav1alpha1.ScyllaDBClusterDatacenterTemplate {
		return &sc.Spec.Datacenters[0].ScyllaDBClusterDatacenterTemplate
	}
	rackTemplateOf := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.RackTemplate }
	resourcesOf := func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any {
		if sdc.Spec.RackTemplate == nil || sdc.Spec.RackTemplate.ScyllaDB == nil {
			return nil
		}
		return sdc.Spec.RackTemplate.ScyllaDB.Resources
	}

	for _, tc := range []struct {
		name   string
		modify func(sc *scyllav1alpha1.ScyllaDBCluster)
		inputs datacenterInputs
		get    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any
		want   any
	}{
		{
			name:   "no settings at the template or datacenter level leave the rack template empty",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {},
			get:    rackTemplateOf,
			want:   (*scyllav1alpha1.RackTemplate)(nil),
		},
		{
			name: "the template's datacenter-wide scyllaDB becomes the rack template",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("1")}
			},
			get:  resourcesOf,
			want: resources("1"),
		},
		{
			name: "the template's rackTemplate wins over its datacenter-wide settings",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("1")}
				tmpl(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("2")}}
			},
			get:  resourcesOf,
			want: resources("2"),
		},
		{
			name: "the datacenter's datacenter-wide settings win over the template's rackTemplate",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("2")}}
				dc(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("3")}
			},
			get:  resourcesOf,
			want: resources("3"),
		},
		{
			name: "the datacenter's rackTemplate wins over everything",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("1")}
				tmpl(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("2")}}
				dc(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("3")}
				dc(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("4")}}
			},
			get:  resourcesOf,
			want: resources("4"),
		},
		{
			name: "scalars set only at a less specific level are kept",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("tmpl-config")}
				dc(sc).ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("3")}
			},
			get:  rackTemplateOf,
			want: &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("3"), CustomConfigMapRef: new("tmpl-config")}},
		},
		{
			name: "topology label selectors merge key by key, the datacenter winning",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).TopologyLabelSelector = map[string]string{"region": "tmpl", "pool": "scylla"}
				dc(sc).TopologyLabelSelector = map[string]string{"region": "us-east-1"}
			},
			get:  func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.RackTemplate.TopologyLabelSelector },
			want: map[string]string{"region": "us-east-1", "pool": "scylla"},
		},
		{
			name: "tolerations append and affinities are replaced",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).Placement = &scyllav1alpha1.Placement{
					Tolerations:  []corev1.Toleration{{Key: "tmpl"}},
					NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}},
				}
				dc(sc).Placement = &scyllav1alpha1.Placement{
					Tolerations:  []corev1.Toleration{{Key: "dc"}},
					NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 2}}},
				}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.RackTemplate.Placement },
			want: &scyllav1alpha1.Placement{
				Tolerations:  []corev1.Toleration{{Key: "tmpl"}, {Key: "dc"}},
				NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 2}}},
			},
		},
		{
			name: "agent volumes append, one of the same name replaced by the datacenter's",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Volumes:      []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tmpl"}}}, {Name: "shared"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}},
				}
				dc(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Volumes:      []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "dc"}}}, {Name: "extra"}},
					VolumeMounts: []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}},
				}}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.RackTemplate.ScyllaDBManagerAgent },
			want: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
				Volumes:      []corev1.Volume{{Name: "creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "dc"}}}, {Name: "shared"}, {Name: "extra"}},
				VolumeMounts: []corev1.VolumeMount{{Name: "creds", MountPath: "/creds"}, {Name: "extra", MountPath: "/extra"}},
			},
		},
		{
			name: "rack node Service metadata merges, the datacenter winning",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ExposeOptions: &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"a": "tmpl", "b": "tmpl"}},
				}}}
				dc(sc).RackTemplate = &scyllav1alpha1.RackTemplate{ExposeOptions: &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"a": "dc"}, Annotations: map[string]string{"c": "dc"}},
				}}}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.RackTemplate.ExposeOptions },
			want: &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
				ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"a": "dc", "b": "tmpl"}, Annotations: map[string]string{"c": "dc"}},
			}},
		},
		{
			name: "racks of the same name merge, the datacenter's settings winning, and the datacenter's other racks follow",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				tmpl(sc).Racks = []scyllav1alpha1.RackSpec{
					{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(3)), TopologyLabelSelector: map[string]string{"zone": "a", "disk": "ssd"}, ScyllaDB: withStorage()}},
					{Name: "b", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(3)), ScyllaDB: withStorage()}},
				}
				dc(sc).Racks = []scyllav1alpha1.RackSpec{
					{Name: "c", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1)), ScyllaDB: withStorage()}},
					{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(5)), TopologyLabelSelector: map[string]string{"zone": "us-east-1a"}}},
				}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.Racks },
			want: []scyllav1alpha1.RackSpec{
				{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(5)), TopologyLabelSelector: map[string]string{"zone": "us-east-1a", "disk": "ssd"}, ScyllaDB: withStorage()}},
				{Name: "b", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(3)), ScyllaDB: withStorage()}},
				{Name: "c", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1)), ScyllaDB: withStorage()}},
			},
		},
		{
			name: "racks only the datacenter lists are used when the template has none",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate = nil
				for i := range sc.Spec.Datacenters {
					sc.Spec.Datacenters[i].Racks = []scyllav1alpha1.RackSpec{{Name: "x", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1)), ScyllaDB: withStorage()}}}
				}
			},
			get:  func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.Racks },
			want: []scyllav1alpha1.RackSpec{{Name: "x", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1)), ScyllaDB: withStorage()}}},
		},
		{
			name: "metadata merges over cluster, template and datacenter, the most specific winning",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"l": "cluster", "c": "cluster"}, Annotations: map[string]string{"a": "cluster"}}
				tmpl(sc).Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"l": "tmpl", "t": "tmpl"}}
				dc(sc).Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"l": "dc"}, Annotations: map[string]string{"a": "dc"}}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.Metadata },
			want: &scyllav1alpha1.ObjectTemplateMetadata{
				Labels:      map[string]string{"l": "dc", "c": "cluster", "t": "tmpl"},
				Annotations: map[string]string{"a": "dc"},
			},
		},
		{
			name: "the ScyllaDBDatacenter's labels are the merged metadata's with the parent labels on top",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"l": "cluster", naming.ManagedByLabel: "someone"}}
			},
			get:  func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Labels },
			want: merge.Maps(map[string]string{"l": "cluster"}, remoteLabels("dc1")),
		},
		{
			name: "the registration label is never propagated, from the object or from any metadata level",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Labels[naming.RegisterWithScyllaDBManagerLabel] = "true"
				sc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"}}
				tmpl(sc).Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"}}
				dc(sc).Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{naming.RegisterWithScyllaDBManagerLabel: "true"}}
			},
			get:  func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return []any{sdc.Labels, sdc.Spec.Metadata} },
			want: []any{remoteLabels("dc1"), (*scyllav1alpha1.ObjectTemplateMetadata)(nil)},
		},
		{
			name: "the auth-token override annotation wins over a user annotation of the same key",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				dc(sc).Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Annotations: map[string]string{naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot: "mine", "x": "y"}}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Annotations },
			want: map[string]string{
				naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot: naming.ScyllaDBClusterAuthTokenSecretName("basic"),
				"x": "y",
			},
		},
		{
			name:   "clusterName comes from spec.clusterName when set",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.ClusterName = new("prod") },
			get:    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.ClusterName },
			want:   "prod",
		},
		{
			name: "force redeployment reasons of the cluster and the datacenter combine",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ForceRedeploymentReason = new("c1")
				sc.Spec.Datacenters[0].ForceRedeploymentReason = new("d1")
			},
			get:  func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.ForceRedeploymentReason },
			want: new("c1,d1"),
		},
		{
			name:   "a force redeployment reason of the datacenter alone is used",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[0].ForceRedeploymentReason = new("d1") },
			get:    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.ForceRedeploymentReason },
			want:   new("d1"),
		},
		{
			name: "cluster-level scalars and lists are copied",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.MinReadySeconds = new(int32(10))
				sc.Spec.MinTerminationGracePeriodSeconds = new(int32(20))
				sc.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				sc.Spec.DisableAutomaticOrphanedNodeReplacement = true
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any {
				return []any{sdc.Spec.MinReadySeconds, sdc.Spec.MinTerminationGracePeriodSeconds, sdc.Spec.ReadinessGates, sdc.Spec.DisableAutomaticOrphanedNodeReplacement}
			},
			want: []any{new(int32(10)), new(int32(20)), []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}, new(true)},
		},
		{
			name: "the user's external seeds come first, then the computed ones not already listed",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ScyllaDB.ExternalSeeds = []string{"10.0.0.1", "seed.example.com"}
			},
			inputs: datacenterInputs{externalSeeds: []string{"seed.example.com", "basic-dc0-seed.ns.svc"}},
			get:    func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.ScyllaDB.ExternalSeeds },
			want:   []string{"10.0.0.1", "seed.example.com", "basic-dc0-seed.ns.svc"},
		},
		{
			name: "explicit expose options are kept and missing broadcast entries default to PodIP",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ExposeOptions = &scyllav1alpha1.ScyllaDBClusterExposeOptions{
					NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
					BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
						Nodes: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP},
					},
				}
			},
			get: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) any { return sdc.Spec.ExposeOptions },
			want: &scyllav1alpha1.ExposeOptions{
				NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
				BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
					Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP},
					Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newBasicScyllaDBCluster()
			tc.modify(sc)
			original := sc.DeepCopy()
			got := tc.get(sdcOf(t, sc, tc.inputs))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("differs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(original, sc); diff != "" {
				t.Errorf("the ScyllaDBCluster was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMakeScyllaDBDatacenterSetsParallelNodeOperationsAsTheRemoteWebhookWouldOnCreation(t *testing.T) {
	t.Parallel()
	// The remote cluster's mutating webhook defaults the field on creation only: an update that leaves it out
	// turns parallel node operations off.
	for _, tc := range []struct {
		version string
		want    *bool
	}{
		{version: "2026.2.0", want: new(true)},
		{version: "2026.3.1", want: new(true)},
		{version: "2026.1.4", want: nil},
		{version: "2025.1.2", want: nil},
	} {
		t.Run(tc.version, func(t *testing.T) {
			t.Parallel()
			sc := newBasicScyllaDBCluster()
			sc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:" + tc.version
			sdc, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[0], datacenterInputs{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sdc.Spec.EnableParallelNodeOperations); diff != "" {
				t.Errorf("enableParallelNodeOperations (-want +got):\n%s", diff)
			}
			if errs := validation.ValidateScyllaDBDatacenter(sdc); len(errs) != 0 {
				t.Errorf("the remote cluster would refuse the ScyllaDBDatacenter: %v", errs)
			}
		})
	}
}

func TestMakeScyllaDBDatacenterOutputDoesNotAliasInput(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	sc.Spec.DatacenterTemplate.ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Resources: resources("1")}
	sc.Spec.ScyllaDB.ExternalSeeds = []string{"10.0.0.1"}
	original := sc.DeepCopy()
	sdc, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[0], datacenterInputs{})
	if err != nil {
		t.Fatal(err)
	}
	sdc.Spec.RackTemplate.ScyllaDB.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("9")
	sdc.Spec.Racks[0].Nodes = new(int32(9))
	sdc.Spec.ScyllaDB.ExternalSeeds[0] = "changed"
	if diff := cmp.Diff(original, sc); diff != "" {
		t.Errorf("changing the ScyllaDBDatacenter changed the ScyllaDBCluster (-before +after):\n%s", diff)
	}
}

func TestMakeRemoteNamespace(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	sc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{
		Labels:      map[string]string{"team": "storage", naming.RegisterWithScyllaDBManagerLabel: "true"},
		Annotations: map[string]string{"owner": "storage@example.com"},
	}
	got, err := makeRemoteNamespace(sc, &sc.Spec.Datacenters[0])
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:        remoteNamespace("dc1"),
		Labels:      merge.Maps(map[string]string{"team": "storage"}, remoteLabels("dc1")),
		Annotations: map[string]string{"owner": "storage@example.com"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("namespace differs (-want +got):\n%s", diff)
	}
	other, err := makeRemoteNamespace(sc, &sc.Spec.Datacenters[1])
	if err != nil {
		t.Fatal(err)
	}
	if other.Name == got.Name {
		t.Errorf("two datacenters got the same remote namespace %q", got.Name)
	}
}

func TestMakeRemoteAuthTokenSecret(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	secret, err := makeRemoteAuthTokenSecret(sc, &sc.Spec.Datacenters[1], "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	sdc, err := makeScyllaDBDatacenter(sc, &sc.Spec.Datacenters[1], datacenterInputs{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := []string{secret.Namespace, secret.Name}, []string{sdc.Namespace, sdc.Annotations[naming.ScyllaDBManagerAgentAuthTokenOverrideSecretRefAnnot]}; !cmp.Equal(got, want) {
		t.Errorf("the Secret is %v, but the ScyllaDBDatacenter's annotation points at %v", got, want)
	}
	if diff := cmp.Diff(remoteLabels("dc2"), secret.Labels); diff != "" {
		t.Errorf("labels differ (-want +got):\n%s", diff)
	}
	// The ScyllaDBDatacenter controller reads the token back this way (sync_secrets.go).
	token, err := scyllaagent.AuthTokenFromConfig(secret.Data[naming.ScyllaDBManagerAgentAuthTokenKey])
	if err != nil || token != "s3cr3t" {
		t.Errorf("the Secret holds token %q (error %v), want the cluster's", token, err)
	}
	if len(secret.Data) != 1 {
		t.Errorf("the Secret holds keys %v, want only %q", secret.Data, naming.ScyllaDBManagerAgentAuthTokenKey)
	}

	if _, err := makeRemoteAuthTokenSecret(sc, &sc.Spec.Datacenters[1], ""); err == nil {
		t.Error("an empty token was accepted")
	}
}

func TestMakeAuthTokenSecretInTheMetaCluster(t *testing.T) {
	t.Parallel()
	sc := newBasicScyllaDBCluster()
	local, err := makeAuthTokenSecret(sc, "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := makeRemoteAuthTokenSecret(sc, &sc.Spec.Datacenters[0], "s3cr3t")
	if err != nil {
		t.Fatal(err)
	}
	wantMeta := metav1.ObjectMeta{
		Namespace: testNamespace,
		Name:      naming.ScyllaDBClusterAuthTokenSecretName("basic"),
		Labels: map[string]string{
			"scylla-operator.scylladb.com/scylladbcluster-name": "basic",
			"app.kubernetes.io/managed-by":                      "scylla-operator",
		},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "scylla.scylladb.com/v1alpha1", Kind: "ScyllaDBCluster", Name: "basic", UID: sc.UID,
			Controller: new(true), BlockOwnerDeletion: new(true),
		}},
	}
	if diff := cmp.Diff(wantMeta, local.ObjectMeta); diff != "" {
		t.Errorf("metadata differs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(remote.Data, local.Data); diff != "" {
		t.Errorf("the remote copy holds other data than the meta cluster's Secret (-remote +local):\n%s", diff)
	}
	if _, err := makeAuthTokenSecret(sc, ""); err == nil {
		t.Error("an empty token was accepted")
	}
}

func TestBuildersRejectBadSpecs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		modify    func(sc *scyllav1alpha1.ScyllaDBCluster)
		dc        int
		wantInErr []string
	}{
		{
			name:      "an empty datacenter name",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[1].Name = "" },
			dc:        1,
			wantInErr: []string{"spec.datacenters[1].name: Required value"},
		},
		{
			name:      "a datacenter name that is not a DNS label",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[1].Name = "DC_2" },
			dc:        1,
			wantInErr: []string{"spec.datacenters[1].name: Invalid value"},
		},
		{
			name:      "a duplicate datacenter name, reported on the later one",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[1].Name = "dc1" },
			dc:        0,
			wantInErr: []string{`spec.datacenters[1].name: Duplicate value: "dc1"`},
		},
		{
			name:      "a duplicate datacenter name, building the later one",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[1].Name = "dc1" },
			dc:        1,
			wantInErr: []string{`spec.datacenters[1].name: Duplicate value: "dc1"`},
		},
		{
			name: "a remoteKubernetesClusterName that is not a DNS subdomain",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Datacenters[0].RemoteKubernetesClusterName = "Worker_1"
			},
			wantInErr: []string{"spec.datacenters[0].remoteKubernetesClusterName: Invalid value"},
		},
		{
			name:      "an empty remoteKubernetesClusterName",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[0].RemoteKubernetesClusterName = "" },
			wantInErr: []string{"spec.datacenters[0].remoteKubernetesClusterName: Required value"},
		},
		{
			name:      "a datacenter whose merged racks are empty",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.DatacenterTemplate.Racks = nil },
			wantInErr: []string{"spec.datacenters[0].racks: Required value"},
		},
		{
			name: "duplicate and empty rack names at both levels",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate.Racks = append(sc.Spec.DatacenterTemplate.Racks, scyllav1alpha1.RackSpec{Name: "a"})
				sc.Spec.Datacenters[0].Racks = []scyllav1alpha1.RackSpec{{Name: ""}}
			},
			wantInErr: []string{`spec.datacenterTemplate.racks[1].name: Duplicate value: "a"`, "spec.datacenters[0].racks[0].name: Required value"},
		},
		{
			name: "missing images",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ScyllaDB.Image = ""
				sc.Spec.ScyllaDBManagerAgent = nil
			},
			wantInErr: []string{"spec.scyllaDB.image: Required value", "spec.scyllaDBManagerAgent.image: Required value"},
		},
		{
			name:      "a name too long for a label value",
			modify:    func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Name = strings.Repeat("a", 64) },
			wantInErr: []string{"metadata.name: Invalid value"},
		},
		{
			name: "a datacenter that is not in the cluster",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
			},
			dc:        1,
			wantInErr: []string{`spec.datacenters: Not found: "dc2"`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc := newBasicScyllaDBCluster()
			dc := sc.Spec.Datacenters[tc.dc].DeepCopy()
			tc.modify(sc)
			if tc.dc < len(sc.Spec.Datacenters) {
				dc = &sc.Spec.Datacenters[tc.dc]
			}
			_, sdcErr := makeScyllaDBDatacenter(sc, dc, datacenterInputs{})
			_, nsErr := makeRemoteNamespace(sc, dc)
			_, secretErr := makeRemoteAuthTokenSecret(sc, dc, "token")
			for builder, err := range map[string]error{"makeScyllaDBDatacenter": sdcErr, "makeRemoteNamespace": nsErr, "makeRemoteAuthTokenSecret": secretErr} {
				if err == nil {
					t.Errorf("%s accepted the spec", builder)
					continue
				}
				for _, want := range tc.wantInErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s error %q does not say %q", builder, err, want)
					}
				}
			}
			if err := validation.ValidateScyllaDBCluster(sc).ToAggregate(); tc.name != "a datacenter that is not in the cluster" && err == nil {
				t.Error("validation.ValidateScyllaDBCluster accepted the spec")
			}
		})
	}
}

func TestValidateScyllaDBClusterAcceptsAGoodSpec(t *testing.T) {
	t.Parallel()
	if err := validation.ValidateScyllaDBCluster(newBasicScyllaDBCluster()).ToAggregate(); err != nil {
		t.Error(err)
	}
}
