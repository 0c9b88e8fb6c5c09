package scyllacluster

import (
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const testNamespace = "scylla"

// testControllerRef is the controllerRef every object translated from newBasicScyllaCluster carries.
func testControllerRef() metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         "scylla.scylladb.com/v1",
		Kind:               "ScyllaCluster",
		Name:               "basic",
		UID:                "basic-uid",
		Controller:         new(true),
		BlockOwnerDeletion: new(true),
	}
}

// newBasicScyllaCluster returns a ScyllaCluster with one rack, as the API server would store a minimal manifest
// (CRD defaults applied).
func newBasicScyllaCluster() *scyllav1.ScyllaCluster {
	return &scyllav1.ScyllaCluster{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            "basic",
			UID:             "basic-uid",
			Generation:      1,
			ResourceVersion: "1",
		},
		Spec: scyllav1.ScyllaClusterSpec{
			Version:         "2025.1.2",
			Repository:      "docker.io/scylladb/scylla",
			AgentVersion:    "3.5.0",
			AgentRepository: "docker.io/scylladb/scylla-manager-agent",
			Datacenter: scyllav1.DatacenterSpec{
				Name: "us-east-1",
				Racks: []scyllav1.RackSpec{{
					Name:    "a",
					Members: 3,
					Storage: scyllav1.Storage{Capacity: "10Gi"},
					Resources: corev1.ResourceRequirements{
						Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")},
					},
					AgentResources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("10M")},
					},
				}},
			},
		},
	}
}

// newFullScyllaCluster returns a ScyllaCluster that sets every field the translation reads.
func newFullScyllaCluster() *scyllav1.ScyllaCluster {
	sc := newBasicScyllaCluster()
	sc.Labels = map[string]string{"team": "storage"}
	sc.Annotations = map[string]string{"note": "not propagated"}
	spec := &sc.Spec
	spec.PodMetadata = &scyllav1.ObjectTemplateMetadata{
		Labels:      map[string]string{"pod-label": "x"},
		Annotations: map[string]string{"pod-annotation": "y"},
	}
	spec.Repository = "registry.example.com/scylla"
	spec.Version = "2025.1.2@sha256:0123456789abcdef0123456789abcdef"
	spec.AgentRepository = "registry.example.com/agent"
	spec.AgentVersion = "3.5.0"
	spec.Alternator = &scyllav1.AlternatorSpec{
		Port:                         8000,
		WriteIsolation:               scyllav1.AlternatorWriteIsolationOnlyRMWUsesLWT,
		InsecureEnableHTTP:           new(false),
		InsecureDisableAuthorization: new(true),
		ServingCertificate: &scyllav1.TLSCertificate{
			Type:                   scyllav1.UserManagedTLSCertificateType,
			UserManagedOptions:     &scyllav1.UserManagedTLSCertificateOptions{SecretName: "alternator-tls"},
			OperatorManagedOptions: &scyllav1.OperatorManagedTLSCertificateOptions{AdditionalDNSNames: []string{"alternator.example.com"}, AdditionalIPAddresses: []string{"10.0.0.1"}},
		},
	}
	spec.DeveloperMode = true
	spec.CpuSet = true
	spec.AutomaticOrphanedNodeCleanup = true
	spec.GenericUpgrade = &scyllav1.GenericUpgradeSpec{FailureStrategy: scyllav1.GenericUpgradeFailureStrategyRetry, PollInterval: metav1.Duration{Duration: 1}}
	spec.Sysctls = []string{"fs.aio-max-nr=2097152", "net.ipv4.ip_local_port_range=1024 65535"}
	spec.ScyllaArgs = `--blocked-reactor-notify-ms 100 --abort-on-seastar-bad-alloc --log-to-stdout='1' "--name=a b"`
	spec.Network = scyllav1.Network{
		HostNetworking: true,
		DNSPolicy:      corev1.DNSDefault,
		IPFamilyPolicy: new(corev1.IPFamilyPolicyPreferDualStack),
		IPFamilies:     []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol},
	}
	spec.ForceRedeploymentReason = "rotate"
	spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "pull-secret"}}
	spec.DNSDomains = []string{"cluster.example.com"}
	spec.ExposeOptions = &scyllav1.ExposeOptions{
		CQL: &scyllav1.CQLExposeOptions{Ingress: &scyllav1.CQLExposeIngressOptions{
			ObjectTemplateMetadata: scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"ingress-label": "l"}, Annotations: map[string]string{"ingress-annotation": "a"}},
			Disabled:               new(false),
			IngressClassName:       "haproxy",
		}},
		NodeService: &scyllav1.NodeServiceTemplate{
			ObjectTemplateMetadata:        scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"svc-label": "l"}, Annotations: map[string]string{"svc-annotation": "a"}},
			Type:                          scyllav1.LoadBalancerServiceType,
			ExternalTrafficPolicy:         new(corev1.ServiceExternalTrafficPolicyLocal),
			InternalTrafficPolicy:         new(corev1.ServiceInternalTrafficPolicyCluster),
			AllocateLoadBalancerNodePorts: new(false),
			LoadBalancerClass:             new("example.com/lb"),
		},
		BroadcastOptions: &scyllav1.NodeBroadcastOptions{
			Nodes: &scyllav1.BroadcastOptions{
				Type:  scyllav1.PodIPBroadcastAddressType,
				PodIP: &scyllav1.PodIPAddressOptions{Source: scyllav1.InterfacePodIPSource, InterfaceOptions: &scyllav1.PodIPInterfaceOptions{InterfaceName: "eth1"}},
			},
			Clients: &scyllav1.BroadcastOptions{Type: scyllav1.ServiceLoadBalancerIngressIPBroadcastAddressType},
		},
		ListenOptions: &scyllav1.NodeListenOptions{
			Nodes:   scyllav1.ListenOptions{Type: scyllav1.PodIPListenAddressType, PodIP: &scyllav1.PodIPAddressOptions{Source: scyllav1.StatusPodIPSource}},
			Clients: scyllav1.ListenOptions{Type: scyllav1.AnyListenAddressType},
		},
	}
	spec.ExternalSeeds = []string{"10.0.0.10", "seed.example.com"}
	spec.MinTerminationGracePeriodSeconds = new(int32(900))
	spec.MinReadySeconds = new(int32(10))
	spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}}
	spec.EnableParallelNodeOperations = new(true)

	rack := &spec.Datacenter.Racks[0]
	rack.Storage = scyllav1.Storage{
		Metadata:         &scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"pvc-label": "l"}, Annotations: map[string]string{"pvc-annotation": "a"}},
		Capacity:         "100Gi",
		StorageClassName: new("local-ssd"),
	}
	rack.Placement = &scyllav1.PlacementSpec{
		NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}},
		}},
		PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 1, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"},
		}}},
		PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}}},
		Tolerations:     []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "scylla", Effect: corev1.TaintEffectNoSchedule}},
	}
	rack.Volumes = []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	rack.VolumeMounts = []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}}
	rack.AgentVolumeMounts = []corev1.VolumeMount{{Name: "extra", MountPath: "/agent-extra"}}
	rack.ScyllaConfig = "scylla-config"
	rack.ScyllaAgentConfig = "agent-config"
	rack.ExposeOptions = &scyllav1.RackExposeOptions{NodeService: &scyllav1.RackNodeServiceTemplate{
		ObjectTemplateMetadata: scyllav1.ObjectTemplateMetadata{Labels: map[string]string{"rack-svc-label": "l"}, Annotations: map[string]string{"rack-svc-annotation": "a"}},
	}}
	spec.Datacenter.Racks = append(spec.Datacenter.Racks, scyllav1.RackSpec{
		Name:    "b",
		Members: 0,
		Storage: scyllav1.Storage{Capacity: "100Gi"},
	})

	spec.Backups = []scyllav1.BackupTaskSpec{newFullBackupTask()}
	spec.Repairs = []scyllav1.RepairTaskSpec{newFullRepairTask()}
	return sc
}

// newFullBackupTask returns a backup task that sets every field.
func newFullBackupTask() scyllav1.BackupTaskSpec {
	return scyllav1.BackupTaskSpec{
		TaskSpec: scyllav1.TaskSpec{
			Name: "daily",
			SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{
				StartDate:  new("2025-01-02T03:04:05+02:00"),
				Interval:   new("0"),
				NumRetries: new(int64(5)),
				RetryWait:  &metav1.Duration{Duration: 600_000_000_000},
				Cron:       new("0 1 * * *"),
				Timezone:   new("Europe/Warsaw"),
			},
		},
		DC:               []string{"us-east-1", "!us-west-*"},
		Keyspace:         []string{"ks1,!ks1.skip", "ks2"},
		Location:         []string{"s3:backups", "us-east-1:gcs:backups-east"},
		RateLimit:        []string{"100", "us-east-1:50"},
		Retention:        7,
		SnapshotParallel: []string{"2"},
		UploadParallel:   []string{"us-east-1:3"},
	}
}

// newFullRepairTask returns a repair task that sets every field.
func newFullRepairTask() scyllav1.RepairTaskSpec {
	return scyllav1.RepairTaskSpec{
		TaskSpec: scyllav1.TaskSpec{
			Name: "weekly",
			SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{
				StartDate:  new("now+1d2h"),
				Interval:   new("7d"),
				NumRetries: new(int64(2)),
				RetryWait:  &metav1.Duration{Duration: 60_000_000_000},
				Cron:       new("@weekly"),
				Timezone:   new("UTC"),
			},
		},
		DC:                  []string{"us-east-1"},
		FailFast:            false,
		Intensity:           "2",
		Parallel:            4,
		Keyspace:            []string{"ks1"},
		SmallTableThreshold: "512MiB",
		Host:                new("10.0.0.5"),
		IgnoreDownHosts:     new(true),
	}
}
