package scylladbdatacenter

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestMergeRack(t *testing.T) {
	t.Parallel()

	templateResources := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}
	rackResources := &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}
	templateAffinity := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 1}}}
	rackAffinity := &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 2}}}
	podAffinity := &corev1.PodAffinity{}
	volume := func(name, secret string) corev1.Volume {
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}
	}
	nodeService := func(labels, annotations map[string]string) *scyllav1alpha1.RackExposeOptions {
		return &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
			ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: labels, Annotations: annotations},
		}}
	}

	tt := []struct {
		name     string
		template *scyllav1alpha1.RackTemplate
		rack     scyllav1alpha1.RackSpec
		want     scyllav1alpha1.RackSpec
	}{
		{
			name: "no template leaves the rack as it is",
			rack: scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1))}},
			want: scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{Nodes: new(int32(1))}},
		},
		{
			name: "an empty rack inherits everything",
			template: &scyllav1alpha1.RackTemplate{
				Nodes:                 new(int32(3)),
				Placement:             &scyllav1alpha1.Placement{NodeAffinity: templateAffinity},
				TopologyLabelSelector: map[string]string{"zone": "a"},
				ScyllaDB:              &scyllav1alpha1.ScyllaDBTemplate{Resources: templateResources},
				ScyllaDBManagerAgent:  &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent")},
				ExposeOptions:         nodeService(map[string]string{"l": "t"}, nil),
			},
			rack: scyllav1alpha1.RackSpec{Name: "a"},
			want: scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{
				Nodes:                 new(int32(3)),
				Placement:             &scyllav1alpha1.Placement{NodeAffinity: templateAffinity},
				TopologyLabelSelector: map[string]string{"zone": "a"},
				ScyllaDB:              &scyllav1alpha1.ScyllaDBTemplate{Resources: templateResources},
				ScyllaDBManagerAgent:  &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("agent")},
				ExposeOptions:         nodeService(map[string]string{"l": "t"}, nil),
			}},
		},
		{
			name: "rack values win: scalars and pointers replaced, maps merged, tolerations appended, volumes and mounts merged by key",
			template: &scyllav1alpha1.RackTemplate{
				Nodes: new(int32(3)),
				Placement: &scyllav1alpha1.Placement{
					NodeAffinity: templateAffinity,
					PodAffinity:  podAffinity,
					Tolerations:  []corev1.Toleration{{Key: "t"}},
				},
				TopologyLabelSelector: map[string]string{"zone": "template", "type": "scylla"},
				ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
					Resources:          templateResources,
					Storage:            &scyllav1alpha1.StorageOptions{Capacity: "1Gi"},
					CustomConfigMapRef: new("template-config"),
					Volumes:            []corev1.Volume{volume("v1", "template"), volume("v2", "template")},
					VolumeMounts:       []corev1.VolumeMount{{Name: "v1", MountPath: "/v1"}, {Name: "v2", MountPath: "/v2"}},
				},
				ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Resources:             templateResources,
					CustomConfigSecretRef: new("template-agent"),
					Volumes:               []corev1.Volume{volume("gcs", "template")},
					VolumeMounts:          []corev1.VolumeMount{{Name: "gcs", MountPath: "/gcs"}},
				},
				ExposeOptions: nodeService(map[string]string{"l": "t", "only-t": "t"}, map[string]string{"a": "t"}),
			},
			rack: scyllav1alpha1.RackSpec{Name: "b", RackTemplate: scyllav1alpha1.RackTemplate{
				Nodes: new(int32(0)),
				Placement: &scyllav1alpha1.Placement{
					NodeAffinity: rackAffinity,
					Tolerations:  []corev1.Toleration{{Key: "r"}},
				},
				TopologyLabelSelector: map[string]string{"zone": "b"},
				ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
					Resources:    rackResources,
					Volumes:      []corev1.Volume{volume("v2", "rack"), volume("v3", "rack")},
					VolumeMounts: []corev1.VolumeMount{{Name: "v2", MountPath: "/v2", ReadOnly: true}},
				},
				ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: new("rack-agent")},
				ExposeOptions:        nodeService(map[string]string{"l": "r"}, nil),
			}},
			want: scyllav1alpha1.RackSpec{Name: "b", RackTemplate: scyllav1alpha1.RackTemplate{
				Nodes: new(int32(0)),
				Placement: &scyllav1alpha1.Placement{
					NodeAffinity: rackAffinity,
					PodAffinity:  podAffinity,
					Tolerations:  []corev1.Toleration{{Key: "t"}, {Key: "r"}},
				},
				TopologyLabelSelector: map[string]string{"zone": "b", "type": "scylla"},
				ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
					Resources:          rackResources,
					Storage:            &scyllav1alpha1.StorageOptions{Capacity: "1Gi"},
					CustomConfigMapRef: new("template-config"),
					Volumes:            []corev1.Volume{volume("v1", "template"), volume("v2", "rack"), volume("v3", "rack")},
					VolumeMounts:       []corev1.VolumeMount{{Name: "v1", MountPath: "/v1"}, {Name: "v2", MountPath: "/v2", ReadOnly: true}},
				},
				ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Resources:             templateResources,
					CustomConfigSecretRef: new("rack-agent"),
					Volumes:               []corev1.Volume{volume("gcs", "template")},
					VolumeMounts:          []corev1.VolumeMount{{Name: "gcs", MountPath: "/gcs"}},
				},
				ExposeOptions: nodeService(map[string]string{"l": "r", "only-t": "t"}, map[string]string{"a": "t"}),
			}},
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			templateBefore := tc.template.DeepCopy()
			rackBefore := tc.rack.DeepCopy()

			got := mergeRack(tc.template, tc.rack)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected rack (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(templateBefore, tc.template); diff != "" {
				t.Errorf("the template was modified (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(rackBefore, &tc.rack); diff != "" {
				t.Errorf("the rack was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMergeRackResultDoesNotAliasTheSpec(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	racks := effectiveRacks(sdc)
	racks[0].ScyllaDB.Storage.Capacity = "changed"
	*racks[1].Nodes = 42
	if sdc.Spec.RackTemplate.ScyllaDB.Storage.Capacity != "10Gi" || *sdc.Spec.RackTemplate.Nodes != 3 {
		t.Errorf("changing a merged rack changed the spec: %+v", sdc.Spec.RackTemplate)
	}
}

// The event handlers' partial merge names the same user objects as the whole one, whichever side sets them.
func TestRackReferencesNameWhatTheMergedRackReads(t *testing.T) {
	t.Parallel()

	scylla := func(ref string) *scyllav1alpha1.ScyllaDBTemplate {
		return &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: &ref}
	}
	agent := func(ref string) *scyllav1alpha1.ScyllaDBManagerAgentTemplate {
		return &scyllav1alpha1.ScyllaDBManagerAgentTemplate{CustomConfigSecretRef: &ref}
	}
	tt := []struct {
		name                      string
		template                  *scyllav1alpha1.RackTemplate
		rack                      scyllav1alpha1.RackSpec
		wantConfigMap, wantSecret string
	}{
		{name: "no template, no references", rack: scyllav1alpha1.RackSpec{Name: "a"}},
		{
			name:          "no template, the rack's own",
			rack:          scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{ScyllaDB: scylla("cm"), ScyllaDBManagerAgent: agent("s")}},
			wantConfigMap: "cm", wantSecret: "s",
		},
		{
			name:          "the template's, for a rack that sets neither",
			template:      &scyllav1alpha1.RackTemplate{ScyllaDB: scylla("t-cm"), ScyllaDBManagerAgent: agent("t-s")},
			rack:          scyllav1alpha1.RackSpec{Name: "a"},
			wantConfigMap: "t-cm", wantSecret: "t-s",
		},
		{
			name:          "the rack's win over the template's",
			template:      &scyllav1alpha1.RackTemplate{ScyllaDB: scylla("t-cm"), ScyllaDBManagerAgent: agent("t-s")},
			rack:          scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{ScyllaDB: scylla("cm"), ScyllaDBManagerAgent: agent("s")}},
			wantConfigMap: "cm", wantSecret: "s",
		},
		{
			name:     "a rack's ScyllaDB template without a reference keeps the template's",
			template: &scyllav1alpha1.RackTemplate{ScyllaDB: scylla("t-cm")},
			rack: scyllav1alpha1.RackSpec{Name: "a", RackTemplate: scyllav1alpha1.RackTemplate{
				ScyllaDB:             &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "1Gi"}},
				ScyllaDBManagerAgent: agent("s"),
			}},
			wantConfigMap: "t-cm", wantSecret: "s",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			merged := mergeRack(tc.template, tc.rack)
			refs := rackReferences(tc.template, &tc.rack)
			got := []string{customConfigMapRef(refs), agentCustomConfigSecretRef(refs)}
			if diff := cmp.Diff([]string{tc.wantConfigMap, tc.wantSecret}, got); diff != "" {
				t.Errorf("unexpected references (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{customConfigMapRef(&merged), agentCustomConfigSecretRef(&merged)}, got); diff != "" {
				t.Errorf("the references differ from the merged rack's (-merged +partial):\n%s", diff)
			}
		})
	}
}
