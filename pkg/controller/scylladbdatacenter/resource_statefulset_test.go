package scylladbdatacenter

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// rackLabels are the selector labels of rack a of newBasicSDC.
func rackLabels() map[string]string {
	return with(clusterLabels(),
		"scylla-operator.scylladb.com/pod-type", "scylladb-node",
		"scylla/datacenter", "dc1",
		"scylla/rack", "a",
	)
}

// expectedSidecarArgs are the sidecar arguments of rack a of newBasicSDC.
func expectedSidecarArgs() []string {
	return []string{
		"--pod-namespace=$(POD_NAMESPACE)",
		"--pod-name=$(POD_NAME)",
		"--member-service-name=$(POD_NAME)",
		"--cluster-name=cluster",
		"--datacenter=dc1",
		"--rack=a",
		"--broadcast-nodes-type=ServiceClusterIP",
		"--broadcast-clients-type=ServiceClusterIP",
		"--listen-nodes-type=Any",
		"--listen-clients-type=Any",
		"--ip-family=IPv4",
		"--cpu-count=2",
		"--scylladb-custom-config-path=/var/run/configmaps/scylla-operator.scylladb.com/scylladb/managed-config/scylla.yaml",
		"--scylladb-data-dir=/var/lib/scylla",
		"--probes-address=:8080",
	}
}

func expectedProbe(path string, period, failureThreshold int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(8080)}},
		TimeoutSeconds:   10,
		PeriodSeconds:    period,
		SuccessThreshold: 1,
		FailureThreshold: failureThreshold,
	}
}

// expectedStatefulSet is the StatefulSet of rack a of newBasicSDC, applied with 3 replicas, managed config hash
// "config-hash" and auth token hash "token-hash".
func expectedStatefulSet() *appsv1.StatefulSet {
	containerPort := func(name string, port int32) corev1.ContainerPort {
		return corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: corev1.ProtocolTCP}
	}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            "basic-dc1-a",
			Labels:          rackLabels(),
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            new(int32(3)),
			Selector:            &metav1.LabelSelector{MatchLabels: rackLabels()},
			ServiceName:         "basic-client",
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			MinReadySeconds:     5,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Gi")},
					},
				},
			}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: with(rackLabels(), "scylla/rack-ordinal", "0", "scylla/scylla-version", "2026.2.0"),
					Annotations: map[string]string{
						"scylla-operator.scylladb.com/managed-config-hash":                    "config-hash",
						"scylla-operator.scylladb.com/scylladb-manager-agent-auth-token-hash": "token-hash",
						"prometheus.io/scrape": "true",
						"prometheus.io/port":   "9180",
					},
				},
				Spec: corev1.PodSpec{
					ServiceAccountName:            "basic-member",
					TerminationGracePeriodSeconds: new(int64(900)),
					Volumes: []corev1.Volume{
						{Name: "shared", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
						{Name: "scylladb-managed-config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: "basic-managed-config"},
							Items:                []corev1.KeyToPath{{Key: "scylla-a.yaml", Path: "scylla.yaml"}},
						}}},
						{Name: "scylladb-manager-agent-auth-token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName: "basic-auth-token",
						}}},
					},
					InitContainers: []corev1.Container{{
						Name:            "sidecar-injection",
						Image:           testOperatorImage,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Command:         []string{"/bin/cp", "-a", "/usr/bin/scylla-operator", "/mnt/shared/"},
						// The ScyllaDB container's, so that the pod's QoS class is the one they give.
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
							corev1.ResourceCPU:    resource.MustParse("2"),
							corev1.ResourceMemory: resource.MustParse("8Gi"),
						}},
						VolumeMounts: []corev1.VolumeMount{{Name: "shared", MountPath: "/mnt/shared"}},
					}},
					Containers: []corev1.Container{
						{
							Name:            "scylla",
							Image:           testScyllaImage,
							ImagePullPolicy: corev1.PullIfNotPresent,
							Command:         append([]string{"/mnt/shared/scylla-operator", "sidecar"}, expectedSidecarArgs()...),
							Env: []corev1.EnvVar{
								{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
								{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}},
							},
							Ports: []corev1.ContainerPort{
								containerPort("inter-node", 7000),
								containerPort("inter-node-ssl", 7001),
								containerPort("cql", 9042),
								containerPort("cql-ssl", 9142),
								containerPort("cql-sa", 19042),
								containerPort("cql-ssl-sa", 19142),
								containerPort("prometheus", 9180),
							},
							Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("2"),
								corev1.ResourceMemory: resource.MustParse("8Gi"),
							}},
							VolumeMounts: []corev1.VolumeMount{
								{Name: "data", MountPath: "/var/lib/scylla"},
								{Name: "shared", MountPath: "/mnt/shared", ReadOnly: true},
								{Name: "scylladb-managed-config", MountPath: "/var/run/configmaps/scylla-operator.scylladb.com/scylladb/managed-config", ReadOnly: true},
							},
							StartupProbe:   expectedProbe("/healthz", 10, 360),
							LivenessProbe:  expectedProbe("/healthz", 10, 12),
							ReadinessProbe: expectedProbe("/readyz", 10, 1),
						},
						{
							Name:            "scylla-manager-agent",
							Image:           testAgentImage,
							ImagePullPolicy: corev1.PullIfNotPresent,
							Args: []string{
								"-c", "/etc/scylla-manager-agent/scylla-manager-agent.yaml",
								"-c", "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token/auth-token.yaml",
							},
							Ports: []corev1.ContainerPort{containerPort("agent-api", 10001), containerPort("agent-prom", 5090)},
							VolumeMounts: []corev1.VolumeMount{
								{Name: "data", MountPath: "/var/lib/scylla"},
								{Name: "scylladb-manager-agent-auth-token", MountPath: "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token", ReadOnly: true},
							},
						},
					},
				},
			},
		},
	}
}

func podSpec(sts *appsv1.StatefulSet) *corev1.PodSpec {
	return &sts.Spec.Template.Spec
}

func scyllaContainer(sts *appsv1.StatefulSet) *corev1.Container {
	return &sts.Spec.Template.Spec.Containers[0]
}

func agentContainer(sts *appsv1.StatefulSet) *corev1.Container {
	return &sts.Spec.Template.Spec.Containers[1]
}

// setSidecarArg replaces the sidecar argument of flag name (without its value) in sts, or adds it after the argument
// of flag after.
func setSidecarArg(sts *appsv1.StatefulSet, name, value, after string) {
	c := scyllaContainer(sts)
	for i, a := range c.Command {
		if strings.HasPrefix(a, name+"=") {
			c.Command[i] = name + "=" + value
			return
		}
	}
	for i, a := range c.Command {
		if strings.HasPrefix(a, after+"=") {
			c.Command = append(c.Command[:i+1], append([]string{name + "=" + value}, c.Command[i+1:]...)...)
			return
		}
	}
	panic("no sidecar argument " + after)
}

func TestMakeStatefulSet(t *testing.T) {
	t.Parallel()

	podIPBroadcast := &scyllav1alpha1.NodeBroadcastOptions{
		Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
		Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
	}
	toleration := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "scylla", Effect: corev1.TaintEffectNoSchedule}
	rackToleration := corev1.Toleration{Key: "rack", Operator: corev1.TolerationOpExists}

	tt := []struct {
		name    string
		modify  func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		in      func(in *statefulSetInputs)
		want    func(sts *appsv1.StatefulSet)
		wantErr string
	}{
		{
			name: "the basic rack",
		},
		{
			name: "replicas and the rack's position come from the inputs",
			in: func(in *statefulSetInputs) {
				in.replicas = 5
				in.rackOrdinal = 2
			},
			want: func(sts *appsv1.StatefulSet) {
				sts.Spec.Replicas = new(int32(5))
				sts.Spec.Template.Labels["scylla/rack-ordinal"] = "2"
			},
		},
		{
			name: "host networking uses the host network, its DNS policy and Pod IPs",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).HostNetwork = true
				podSpec(sts).DNSPolicy = corev1.DNSClusterFirstWithHostNet
				setSidecarArg(sts, "--broadcast-nodes-type", "PodIP", "")
				setSidecarArg(sts, "--broadcast-clients-type", "PodIP", "")
				setSidecarArg(sts, "--host-networking", "true", "--ip-family")
			},
		},
		{
			name: "an explicit DNS policy wins over host networking's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
				sdc.Spec.DNSPolicy = new(corev1.DNSDefault)
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{BroadcastOptions: podIPBroadcast}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).HostNetwork = true
				podSpec(sts).DNSPolicy = corev1.DNSDefault
				setSidecarArg(sts, "--broadcast-nodes-type", "PodIP", "")
				setSidecarArg(sts, "--broadcast-clients-type", "PodIP", "")
				setSidecarArg(sts, "--host-networking", "true", "--ip-family")
			},
		},
		{
			name: "without host networking a DNS policy is still honoured",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.DNSPolicy = new(corev1.DNSClusterFirstWithHostNet)
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).DNSPolicy = corev1.DNSClusterFirstWithHostNet
			},
		},
		{
			name: "storage class and claim metadata",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.Racks[0].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{
					Capacity:         "1Ti",
					StorageClassName: new("local-xfs"),
					Metadata: &scyllav1alpha1.ObjectTemplateMetadata{
						Labels:      map[string]string{"backup": "daily"},
						Annotations: map[string]string{"note": "fast"},
					},
				}}
			},
			want: func(sts *appsv1.StatefulSet) {
				claim := &sts.Spec.VolumeClaimTemplates[0]
				claim.Labels = map[string]string{"backup": "daily"}
				claim.Annotations = map[string]string{"note": "fast"}
				claim.Spec.StorageClassName = new("local-xfs")
				claim.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("1Ti")
			},
		},
		{
			name: "placement and topology label selectors of the template and the rack",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.TopologyLabelSelector = map[string]string{"node-type": "scylla", "zone": "template"}
				sdc.Spec.RackTemplate.Placement = &scyllav1alpha1.Placement{
					Tolerations: []corev1.Toleration{toleration},
					NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{
							{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme"}}}},
							{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}},
						},
					}},
					PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight:          1,
						PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"},
					}}},
				}
				sdc.Spec.Racks[0].TopologyLabelSelector = map[string]string{"zone": "a"}
				sdc.Spec.Racks[0].Placement = &scyllav1alpha1.Placement{Tolerations: []corev1.Toleration{rackToleration}}
			},
			want: func(sts *appsv1.StatefulSet) {
				topology := []corev1.NodeSelectorRequirement{
					{Key: "node-type", Operator: corev1.NodeSelectorOpIn, Values: []string{"scylla"}},
					{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}},
				}
				podSpec(sts).Tolerations = []corev1.Toleration{toleration, rackToleration}
				podSpec(sts).Affinity = &corev1.Affinity{
					NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{
							{MatchExpressions: append([]corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"nvme"}}}, topology...)},
							{MatchExpressions: append([]corev1.NodeSelectorRequirement{{Key: "disk", Operator: corev1.NodeSelectorOpIn, Values: []string{"ssd"}}}, topology...)},
						},
					}},
					PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
						Weight:          1,
						PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"},
					}}},
				}
			},
		},
		{
			name: "a topology label selector alone becomes a required node affinity",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.Racks[0].TopologyLabelSelector = map[string]string{"topology.kubernetes.io/zone": "us-east-1a"}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
					RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
						MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"us-east-1a"}}},
					}}},
				}}
			},
		},
		{
			name: "a new forceRedeploymentReason is a pod annotation",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ForceRedeploymentReason = new("rotate certificates")
			},
			want: func(sts *appsv1.StatefulSet) {
				sts.Spec.Template.Annotations["scylla-operator.scylladb.com/force-redeployment-reason"] = "rotate certificates"
			},
		},
		{
			name: "datacenter metadata goes on the pods only, under the operator's labels and annotations",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{
					Labels:      map[string]string{"team": "db", "scylla/rack": "mine"},
					Annotations: map[string]string{"owner": "db-team", "prometheus.io/port": "1"},
				}
			},
			want: func(sts *appsv1.StatefulSet) {
				sts.Spec.Template.Labels["team"] = "db"
				sts.Spec.Template.Annotations["owner"] = "db-team"
			},
		},
		{
			name: "a custom agent config is mounted and read before the auth token",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					CustomConfigSecretRef: new("agent-config"),
					Resources:             &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}},
				}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).Volumes = append(podSpec(sts).Volumes, corev1.Volume{Name: "scylladb-manager-agent-custom-config", VolumeSource: corev1.VolumeSource{
					Secret: &corev1.SecretVolumeSource{SecretName: "agent-config"},
				}})
				agent := agentContainer(sts)
				agent.Args = []string{
					"-c", "/etc/scylla-manager-agent/scylla-manager-agent.yaml",
					"-c", "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/config/scylla-manager-agent.yaml",
					"-c", "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token/auth-token.yaml",
				}
				agent.VolumeMounts = append(agent.VolumeMounts, corev1.VolumeMount{
					Name: "scylladb-manager-agent-custom-config", MountPath: "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/config", ReadOnly: true,
				})
				agent.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}
			},
		},
		{
			name: "user volumes of both containers, a shared one listed once, rack mounts replacing the template's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				shared := corev1.Volume{Name: "shared-creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}}
				sdc.Spec.RackTemplate.ScyllaDB.Volumes = []corev1.Volume{shared}
				sdc.Spec.RackTemplate.ScyllaDB.VolumeMounts = []corev1.VolumeMount{{Name: "shared-creds", MountPath: "/creds"}}
				sdc.Spec.Racks[0].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{
					VolumeMounts: []corev1.VolumeMount{{Name: "shared-creds", MountPath: "/creds", ReadOnly: true}},
				}
				sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Volumes:      []corev1.Volume{shared, {Name: "gcs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gcs"}}}},
					VolumeMounts: []corev1.VolumeMount{{Name: "gcs", MountPath: "/gcs"}},
				}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).Volumes = append(podSpec(sts).Volumes,
					corev1.Volume{Name: "shared-creds", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "creds"}}},
					corev1.Volume{Name: "gcs", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "gcs"}}},
				)
				scyllaContainer(sts).VolumeMounts = append(scyllaContainer(sts).VolumeMounts, corev1.VolumeMount{Name: "shared-creds", MountPath: "/creds", ReadOnly: true})
				agentContainer(sts).VolumeMounts = append(agentContainer(sts).VolumeMounts, corev1.VolumeMount{Name: "gcs", MountPath: "/gcs"})
			},
		},
		{
			name: "pod-level settings: pull secrets, readiness gates, grace period and min ready seconds",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				sdc.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				sdc.Spec.MinTerminationGracePeriodSeconds = new(int32(3600))
				sdc.Spec.MinReadySeconds = new(int32(0))
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry"}}
				podSpec(sts).ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
				podSpec(sts).TerminationGracePeriodSeconds = new(int64(3600))
				sts.Spec.MinReadySeconds = 0
			},
		},
		{
			name: "a grace period below the default keeps the default",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.MinTerminationGracePeriodSeconds = new(int32(30))
			},
		},
		{
			name: "a digest-pinned image has no version label",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla@sha256:" + strings.Repeat("0", 64)
			},
			want: func(sts *appsv1.StatefulSet) {
				delete(sts.Spec.Template.Labels, "scylla/scylla-version")
				scyllaContainer(sts).Image = "docker.io/scylladb/scylla@sha256:" + strings.Repeat("0", 64)
			},
		},
		{
			name: "a rack without storage",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Storage = nil
			},
			wantErr: `rack "a" has no storage: set scyllaDB.storage on the rack or in rackTemplate`,
		},
		{
			name: "a capacity that is not a quantity",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Storage.Capacity = "lots"
			},
			wantErr: `rack "a": storage capacity "lots" is not a quantity: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
		},
		{
			name: "a zero capacity",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Storage.Capacity = "0"
			},
			wantErr: `rack "a": storage capacity "0" must be positive`,
		},
		{
			name: "sysctls are set by a privileged init container before anything else runs",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/sysctls": `["fs.aio-max-nr=30000000"," net.ipv4.ip_local_port_range = 1024 65000"]`}
			},
			want: func(sts *appsv1.StatefulSet) {
				podSpec(sts).InitContainers = append([]corev1.Container{{
					Name:            "sysctl",
					Image:           testOperatorImage,
					ImagePullPolicy: corev1.PullIfNotPresent,
					Command:         []string{"/usr/bin/scylla-operator", "sysctl", "--", "fs.aio-max-nr=30000000", "net.ipv4.ip_local_port_range=1024 65000"},
					SecurityContext: &corev1.SecurityContext{Privileged: new(true), RunAsUser: new(int64(0))},
					Resources:       *podSpec(sts).InitContainers[0].Resources.DeepCopy(),
				}}, podSpec(sts).InitContainers...)
			},
		},
		{
			name: "an empty sysctls list adds no container",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/sysctls": `[]`}
			},
		},
		{
			name: "a sysctls annotation that is not a JSON list",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/sysctls": "fs.aio-max-nr=30000000"}
			},
			wantErr: `annotation "internal.scylla-operator.scylladb.com/sysctls" must be a JSON list of key=value strings: invalid character 's' in literal false (expecting 'a')`,
		},
		{
			name: "a sysctl without a value",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/sysctls": `["fs.aio-max-nr=1","vm.swappiness"]`}
			},
			wantErr: `annotation "internal.scylla-operator.scylladb.com/sysctls": sysctl 1: invalid sysctl "vm.swappiness": must be key=value, e.g. fs.aio-max-nr=30000000`,
		},
		{
			name: "no agent image",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDBManagerAgent = nil
			},
			wantErr: "spec.scyllaDBManagerAgent.image must be set",
		},
		{
			name: "a user volume named like the operator's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Volumes = []corev1.Volume{{Name: "data"}}
			},
			wantErr: `rack "a": volume name "data" is reserved by the operator`,
		},
		{
			name: "a user mount over the operator's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.VolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/var/lib/scylla"}}
			},
			wantErr: `rack "a": scyllaDB volume mount path "/var/lib/scylla" is reserved by the operator`,
		},
		{
			name: "an agent mount over the operator's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					VolumeMounts: []corev1.VolumeMount{{Name: "x", MountPath: "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token"}},
				}
			},
			wantErr: `rack "a": scyllaDBManagerAgent volume mount path "/var/run/secrets/scylla-operator.scylladb.com/scylladb-manager-agent/auth-token" is reserved by the operator`,
		},
		{
			name: "a volume defined differently for the two containers",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
				sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
					Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}},
				}
			},
			wantErr: `rack "a": volume "v" is defined differently for scyllaDB and scyllaDBManagerAgent`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc, rack := newModifiedSDC(tc.modify)
			in := statefulSetInputs{
				operatorImage:     testOperatorImage,
				replicas:          3,
				managedConfigHash: "config-hash",
				authTokenHash:     "token-hash",
			}
			if tc.in != nil {
				tc.in(&in)
			}
			got, err := makeStatefulSet(sdc, rack, in)
			if checkError(t, err, tc.wantErr, true) {
				return
			}
			want := expectedStatefulSet()
			if tc.want != nil {
				tc.want(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected StatefulSet (-want +got):\n%s", diff)
			}
			// Whatever the spec, the sidecar must accept its arguments.
			parseSidecarArgs(t, scyllaContainer(got).Command[2:])
		})
	}
}

func TestMakeStatefulSetNeedsTheOperatorImage(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	rack := effectiveRacks(sdc)[0]
	_, err := makeStatefulSet(sdc, &rack, statefulSetInputs{replicas: 1})
	if err == nil || err.Error() != "can't make a StatefulSet: the operator image is not set" || isSpecError(err) {
		t.Errorf("unexpected error %v", err)
	}
}

// TestMakeStatefulSetPodsOfEqualRequestsAndLimitsAreGuaranteed: a pod is of the Guaranteed QoS class, which CPU
// pinning needs, only when every container, init containers included, has requests equal to its limits for CPU and
// memory. With the rack's ScyllaDB and agent resources so, the operator's own containers are too.
func TestMakeStatefulSetPodsOfEqualRequestsAndLimitsAreGuaranteed(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/sysctls": `["fs.aio-max-nr=30000000"]`}
	guaranteed := func(cpu, memory string) *corev1.ResourceRequirements {
		list := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
		return &corev1.ResourceRequirements{Requests: list, Limits: list.DeepCopy()}
	}
	sdc.Spec.RackTemplate.ScyllaDB.Resources = guaranteed("4", "16Gi")
	sdc.Spec.RackTemplate.ScyllaDBManagerAgent = &scyllav1alpha1.ScyllaDBManagerAgentTemplate{Resources: guaranteed("100m", "128Mi")}
	rack := effectiveRacks(sdc)[0]
	sts, err := makeStatefulSet(sdc, &rack, statefulSetInputs{operatorImage: testOperatorImage, replicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec := podSpec(sts)
	containers := append(slices.Clone(spec.InitContainers), spec.Containers...)
	if len(spec.InitContainers) != 2 {
		t.Fatalf("expected the sysctl and sidecar-injection init containers, got %d", len(spec.InitContainers))
	}
	for _, c := range containers {
		for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			req, limit := c.Resources.Requests[name], c.Resources.Limits[name]
			if req.IsZero() || req.Cmp(limit) != 0 {
				t.Errorf("container %q: %s request %s and limit %s are not equal and set: the pod is not Guaranteed", c.Name, name, req.String(), limit.String())
			}
		}
	}
}
