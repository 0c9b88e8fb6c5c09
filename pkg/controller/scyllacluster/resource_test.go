package scyllacluster

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	"github.com/scyllakube/scylla-operator/pkg/validation"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expectedBasicScyllaDBDatacenter is the translation of newBasicScyllaCluster.
func expectedBasicScyllaDBDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	sc := newBasicScyllaCluster()
	rack := &sc.Spec.Datacenter.Racks[0]
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      "basic",
			Labels:    map[string]string{"scylla-operator.scylladb.com/register-with-scylladb-manager": "true"},
			Annotations: map[string]string{
				"internal.scylla-operator.scylladb.com/scylladb-manager-cluster-name-override": "scylla/basic",
			},
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			ClusterName:    "basic",
			DatacenterName: new("us-east-1"),
			ScyllaDB: scyllav1alpha1.ScyllaDB{
				Image: "docker.io/scylladb/scylla:2025.1.2",
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{
				Image: new("docker.io/scylladb/scylla-manager-agent:3.5.0"),
			},
			DNSPolicy: new(corev1.DNSClusterFirstWithHostNet),
			Racks: []scyllav1alpha1.RackSpec{{
				Name: "a",
				RackTemplate: scyllav1alpha1.RackTemplate{
					Nodes: new(int32(3)),
					ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
						Resources: &rack.Resources,
						Storage:   &scyllav1alpha1.StorageOptions{Capacity: "10Gi"},
					},
					ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
						Resources: &rack.AgentResources,
					},
				},
			}},
			DisableAutomaticOrphanedNodeReplacement: new(true),
		},
	}
}

// expectedFullScyllaDBDatacenter is the translation of newFullScyllaCluster.
func expectedFullScyllaDBDatacenter() *scyllav1alpha1.ScyllaDBDatacenter {
	sc := newFullScyllaCluster()
	rackA := &sc.Spec.Datacenter.Racks[0]
	rackB := &sc.Spec.Datacenter.Racks[1]
	return &scyllav1alpha1.ScyllaDBDatacenter{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      "basic",
			Labels: map[string]string{
				"team": "storage",
				"scylla-operator.scylladb.com/register-with-scylladb-manager": "true",
			},
			Annotations: map[string]string{
				"internal.scylla-operator.scylladb.com/scylladb-manager-cluster-name-override":    "scylla/basic",
				"internal.scylla-operator.scylladb.com/host-networking":                           "true",
				"internal.scylla-operator.scylladb.com/alternator-port":                           "8000",
				"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http":           "false",
				"internal.scylla-operator.scylladb.com/alternator-insecure-disable-authorization": "true",
				"internal.scylla-operator.scylladb.com/sysctls":                                   `["fs.aio-max-nr=2097152","net.ipv4.ip_local_port_range=1024 65535"]`,
			},
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: scyllav1alpha1.ScyllaDBDatacenterSpec{
			Metadata: &scyllav1alpha1.ObjectTemplateMetadata{
				Labels:      map[string]string{"pod-label": "x"},
				Annotations: map[string]string{"pod-annotation": "y"},
			},
			ClusterName:    "basic",
			DatacenterName: new("us-east-1"),
			ScyllaDB: scyllav1alpha1.ScyllaDB{
				Image:         "registry.example.com/scylla:2025.1.2@sha256:0123456789abcdef0123456789abcdef",
				ExternalSeeds: []string{"10.0.0.10", "seed.example.com"},
				AlternatorOptions: &scyllav1alpha1.AlternatorOptions{
					WriteIsolation: scyllav1alpha1.AlternatorWriteIsolationOnlyRMWUsesLWT,
					ServingCertificate: &scyllav1alpha1.TLSCertificate{
						Type:                   scyllav1alpha1.TLSCertificateTypeUserManaged,
						UserManagedOptions:     &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "alternator-tls"},
						OperatorManagedOptions: &scyllav1alpha1.OperatorManagedTLSCertificateOptions{AdditionalDNSNames: []string{"alternator.example.com"}, AdditionalIPAddresses: []string{"10.0.0.1"}},
					},
				},
				AdditionalScyllaDBArguments: []string{"--blocked-reactor-notify-ms", "100", "--abort-on-seastar-bad-alloc", "--log-to-stdout=1", "--name=a b"},
				EnableDeveloperMode:         new(true),
			},
			ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgent{
				Image: new("registry.example.com/agent:3.5.0"),
			},
			ImagePullSecrets:        []corev1.LocalObjectReference{{Name: "pull-secret"}},
			DNSPolicy:               new(corev1.DNSDefault),
			DNSDomains:              []string{"cluster.example.com"},
			ForceRedeploymentReason: new("rotate"),
			IPFamilyPolicy:          new(corev1.IPFamilyPolicyPreferDualStack),
			IPFamilies:              []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol},
			ExposeOptions: &scyllav1alpha1.ExposeOptions{
				CQL: &scyllav1alpha1.CQLExposeOptions{Ingress: &scyllav1alpha1.IngressOptions{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"ingress-label": "l"}, Annotations: map[string]string{"ingress-annotation": "a"}},
					IngressClassName:       "haproxy",
				}},
				NodeService: &scyllav1alpha1.NodeServiceTemplate{
					ObjectTemplateMetadata:        scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"svc-label": "l"}, Annotations: map[string]string{"svc-annotation": "a"}},
					Type:                          scyllav1alpha1.NodeServiceTypeLoadBalancer,
					ExternalTrafficPolicy:         new(corev1.ServiceExternalTrafficPolicyLocal),
					AllocateLoadBalancerNodePorts: new(false),
					LoadBalancerClass:             new("example.com/lb"),
					InternalTrafficPolicy:         new(corev1.ServiceInternalTrafficPolicyCluster),
				},
				BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
					Nodes: &scyllav1alpha1.BroadcastOptions{
						Type: scyllav1alpha1.BroadcastAddressTypePodIP,
						PodIP: &scyllav1alpha1.PodIPAddressOptions{
							Source:           scyllav1alpha1.PodIPSourceInterface,
							InterfaceOptions: &scyllav1alpha1.PodIPInterfaceOptions{InterfaceName: "eth1"},
						},
					},
					Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP},
				},
				ListenOptions: &scyllav1alpha1.NodeListenOptions{
					Nodes: &scyllav1alpha1.ListenOptions{
						Type:  scyllav1alpha1.ListenAddressTypePodIP,
						PodIP: &scyllav1alpha1.PodIPAddressOptions{Source: scyllav1alpha1.PodIPSourceStatus},
					},
					Clients: &scyllav1alpha1.ListenOptions{Type: scyllav1alpha1.ListenAddressTypeAny},
				},
			},
			Racks: []scyllav1alpha1.RackSpec{
				{
					Name: "a",
					RackTemplate: scyllav1alpha1.RackTemplate{
						Nodes: new(int32(3)),
						Placement: &scyllav1alpha1.Placement{
							NodeAffinity:    rackA.Placement.NodeAffinity,
							PodAffinity:     rackA.Placement.PodAffinity,
							PodAntiAffinity: rackA.Placement.PodAntiAffinity,
							Tolerations:     rackA.Placement.Tolerations,
						},
						ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
							Resources: &rackA.Resources,
							Storage: &scyllav1alpha1.StorageOptions{
								Metadata:         &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"pvc-label": "l"}, Annotations: map[string]string{"pvc-annotation": "a"}},
								Capacity:         "100Gi",
								StorageClassName: new("local-ssd"),
							},
							CustomConfigMapRef: new("scylla-config"),
							Volumes:            []corev1.Volume{{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
							VolumeMounts:       []corev1.VolumeMount{{Name: "extra", MountPath: "/extra"}},
						},
						ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
							Resources:             &rackA.AgentResources,
							CustomConfigSecretRef: new("agent-config"),
							VolumeMounts:          []corev1.VolumeMount{{Name: "extra", MountPath: "/agent-extra"}},
						},
						ExposeOptions: &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
							ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"rack-svc-label": "l"}, Annotations: map[string]string{"rack-svc-annotation": "a"}},
						}},
					},
				},
				{
					Name: "b",
					RackTemplate: scyllav1alpha1.RackTemplate{
						Nodes: new(int32(0)),
						ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
							Resources: &rackB.Resources,
							Storage:   &scyllav1alpha1.StorageOptions{Capacity: "100Gi"},
						},
						ScyllaDBManagerAgent: &scyllav1alpha1.ScyllaDBManagerAgentTemplate{
							Resources: &rackB.AgentResources,
						},
					},
				},
			},
			DisableAutomaticOrphanedNodeReplacement: new(false),
			MinTerminationGracePeriodSeconds:        new(int32(900)),
			MinReadySeconds:                         new(int32(10)),
			ReadinessGates:                          []corev1.PodReadinessGate{{ConditionType: "example.com/ready"}},
			EnableParallelNodeOperations:            new(true),
		},
	}
}

func TestMakeScyllaDBDatacenter(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		sc        *scyllav1.ScyllaCluster
		want      *scyllav1alpha1.ScyllaDBDatacenter
		wantError string
	}{
		{
			name: "every field of a ScyllaCluster lands in its v1alpha1 home or an internal annotation",
			sc:   newFullScyllaCluster(),
			want: expectedFullScyllaDBDatacenter(),
		},
		{
			name: "a minimal ScyllaCluster translates with only what it sets",
			sc:   newBasicScyllaCluster(),
			want: expectedBasicScyllaDBDatacenter(),
		},
		{
			name: "the established operator's opt-out annotation keeps the datacenter out of ScyllaDB Manager, even with the label copied from the ScyllaCluster",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "true")
				metav1.SetMetaDataLabel(&sc.ObjectMeta, naming.RegisterWithScyllaDBManagerLabel, "true")
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				delete(sdc.Labels, naming.RegisterWithScyllaDBManagerLabel)
				return sdc
			}(),
		},
		{
			name: "the opt-out annotation at false registers the datacenter",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				metav1.SetMetaDataAnnotation(&sc.ObjectMeta, naming.DisableGlobalScyllaDBManagerIntegrationAnnotation, "false")
				return sc
			}(),
			want: expectedBasicScyllaDBDatacenter(),
		},
		{
			name: "empty repositories and agent version get the ScyllaCluster API defaults",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.Repository = ""
				sc.Spec.AgentRepository = ""
				sc.Spec.AgentVersion = ""
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				sdc.Spec.ScyllaDBManagerAgent.Image = new("docker.io/scylladb/scylla-manager-agent:latest")
				return sdc
			}(),
		},
		{
			name: "the established operator's ServiceLoadBalancerIngress is normalized and an absent broadcast side is ServiceClusterIP",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{
					NodeService:      &scyllav1.NodeServiceTemplate{Type: scyllav1.LoadBalancerServiceType},
					BroadcastOptions: &scyllav1.NodeBroadcastOptions{Clients: &scyllav1.BroadcastOptions{Type: scyllav1.ServiceLoadBalancerIngressBroadcastAddressType}},
				}
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
					BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
						Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceClusterIP},
						Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceLoadBalancerIngressIP},
					},
				}
				return sdc
			}(),
		},
		{
			name: "a disabled CQL ingress is no ingress",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{
					CQL: &scyllav1.CQLExposeOptions{Ingress: &scyllav1.CQLExposeIngressOptions{Disabled: new(true), IngressClassName: "haproxy"}},
				}
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{}
				return sdc
			}(),
		},
		{
			name: "alternator without deprecated options gets no annotations",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.Alternator = &scyllav1.AlternatorSpec{}
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
				return sdc
			}(),
		},
		{
			name: "alternator over HTTPS alone keeps its user-managed certificate and turns plain HTTP off",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.Alternator = &scyllav1.AlternatorSpec{
					InsecureEnableHTTP: new(false),
					ServingCertificate: &scyllav1.TLSCertificate{
						Type:               scyllav1.UserManagedTLSCertificateType,
						UserManagedOptions: &scyllav1.UserManagedTLSCertificateOptions{SecretName: "alternator-tls"},
					},
				}
				return sc
			}(),
			want: func() *scyllav1alpha1.ScyllaDBDatacenter {
				sdc := expectedBasicScyllaDBDatacenter()
				sdc.Annotations["internal.scylla-operator.scylladb.com/alternator-insecure-enable-http"] = "false"
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{ServingCertificate: &scyllav1alpha1.TLSCertificate{
					Type:               scyllav1alpha1.TLSCertificateTypeUserManaged,
					UserManagedOptions: &scyllav1alpha1.UserManagedTLSCertificateOptions{SecretName: "alternator-tls"},
				}}
				return sdc
			}(),
		},
		{
			name: "user labels can't opt a ScyllaCluster out of ScyllaDB Manager registration",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Labels = map[string]string{"scylla-operator.scylladb.com/register-with-scylladb-manager": "false"}
				return sc
			}(),
			want: expectedBasicScyllaDBDatacenter(),
		},
		{
			name: "a managerId in the status is not a required annotation: the manager-controller owns the annotation",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Status.ManagerID = new("5f1c3b8e-2a47-4d6b-9c0e-7d8f9a1b2c3d")
				return sc
			}(),
			want: expectedBasicScyllaDBDatacenter(),
		},
		{
			name: "an empty version and unsplittable arguments are reported together",
			sc: func() *scyllav1.ScyllaCluster {
				sc := newBasicScyllaCluster()
				sc.Spec.Version = ""
				sc.Spec.ScyllaArgs = `--foo "bar`
				return sc
			}(),
			wantError: `[spec.version must not be empty, can't split spec.scyllaArgs into arguments: "--foo \"bar" has an unterminated quote]`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			original := tc.sc.DeepCopy()
			got, err := makeScyllaDBDatacenter(tc.sc)
			if (err == nil) != (len(tc.wantError) == 0) || (err != nil && err.Error() != tc.wantError) {
				t.Fatalf("expected error %q, got %v", tc.wantError, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected ScyllaDBDatacenter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(original, tc.sc); diff != "" {
				t.Errorf("the ScyllaCluster was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestMakeBackupTask(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		backup    scyllav1.BackupTaskSpec
		want      *scyllav1alpha1.ScyllaDBManagerTask
		wantError string
	}{
		{
			name:   "every field of a backup task lands in the spec or an override annotation",
			backup: newFullBackupTask(),
			want: &scyllav1alpha1.ScyllaDBManagerTask{
				ObjectMeta: taskObjectMeta("Backup", "daily", map[string]string{
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-interval-override": "0",
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-timezone-override": "Europe/Warsaw",
				}),
				Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
					ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
					Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
					Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
						ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{
							Cron:       new("0 1 * * *"),
							NumRetries: new(int64(5)),
							RetryWait:  &metav1.Duration{Duration: 10 * time.Minute},
							StartDate:  new(metav1.NewTime(time.Date(2025, 1, 2, 1, 4, 5, 0, time.UTC))),
						},
						DC:               []string{"us-east-1", "!us-west-*"},
						Keyspace:         []string{"ks1", "!ks1.skip", "ks2"},
						Location:         []string{"s3:backups", "us-east-1:gcs:backups-east"},
						RateLimit:        []string{"100", "us-east-1:50"},
						Retention:        new(int64(7)),
						SnapshotParallel: []string{"2"},
						UploadParallel:   []string{"us-east-1:3"},
					},
				},
			},
		},
		{
			name: "unset numRetries and retention get the ScyllaCluster API defaults",
			backup: scyllav1.BackupTaskSpec{
				TaskSpec: scyllav1.TaskSpec{Name: "daily"},
				Location: []string{"s3:backups"},
			},
			want: &scyllav1alpha1.ScyllaDBManagerTask{
				ObjectMeta: taskObjectMeta("Backup", "daily", nil),
				Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
					ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
					Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
					Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
						ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{NumRetries: new(int64(3))},
						Location:                    []string{"s3:backups"},
						Retention:                   new(int64(3)),
					},
				},
			},
		},
		{
			name: "a start date relative to now travels in the override annotation",
			backup: scyllav1.BackupTaskSpec{
				TaskSpec: scyllav1.TaskSpec{Name: "daily", SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{StartDate: new("now")}},
				Location: []string{"s3:backups"},
			},
			want: &scyllav1alpha1.ScyllaDBManagerTask{
				ObjectMeta: taskObjectMeta("Backup", "daily", map[string]string{
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-start-date-override": "now",
				}),
				Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
					ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
					Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeBackup,
					Backup: &scyllav1alpha1.ScyllaDBManagerBackupTaskOptions{
						ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{NumRetries: new(int64(3))},
						Location:                    []string{"s3:backups"},
						Retention:                   new(int64(3)),
					},
				},
			},
		},
		{
			name: "a backup without a location and with a malformed start date is refused with both reasons",
			backup: scyllav1.BackupTaskSpec{
				TaskSpec: scyllav1.TaskSpec{Name: "daily", SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{StartDate: new("tomorrow")}},
			},
			wantError: `can't translate backup task "daily": [startDate "tomorrow" must be an RFC 3339 time or now, optionally followed by an offset such as now+3d2h: parsing time "tomorrow" as "2006-01-02T15:04:05Z07:00": cannot parse "tomorrow" as "2006", location must not be empty: a backup needs at least one [<dc>:]<provider>:<bucket>]`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := makeBackupTask(newBasicScyllaCluster(), &tc.backup)
			if (err == nil) != (len(tc.wantError) == 0) || (err != nil && err.Error() != tc.wantError) {
				t.Fatalf("expected error %q, got %v", tc.wantError, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected ScyllaDBManagerTask (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMakeRepairTask(t *testing.T) {
	t.Parallel()

	repairSpec := func(options scyllav1alpha1.ScyllaDBManagerRepairTaskOptions) scyllav1alpha1.ScyllaDBManagerTaskSpec {
		return scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair:             &options,
		}
	}

	tt := []struct {
		name      string
		repair    scyllav1.RepairTaskSpec
		want      *scyllav1alpha1.ScyllaDBManagerTask
		wantError string
	}{
		{
			name:   "every field of a repair task lands in the spec or an override annotation",
			repair: newFullRepairTask(),
			want: &scyllav1alpha1.ScyllaDBManagerTask{
				ObjectMeta: taskObjectMeta("Repair", "weekly", map[string]string{
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-start-date-override":          "now+1d2h",
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-interval-override":            "7d",
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-schedule-timezone-override":            "UTC",
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-intensity-override":             "2",
					"internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override": "512MiB",
				}),
				Spec: repairSpec(scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
					ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{
						Cron:       new("@weekly"),
						NumRetries: new(int64(2)),
						RetryWait:  &metav1.Duration{Duration: time.Minute},
					},
					DC:                  []string{"us-east-1"},
					Keyspace:            []string{"ks1"},
					FailFast:            new(false),
					Host:                new("10.0.0.5"),
					IgnoreDownHosts:     new(true),
					Intensity:           new(int64(2)),
					Parallel:            new(int64(4)),
					SmallTableThreshold: new(resource.MustParse("512Mi")),
				}),
			},
		},
		{
			name:   "unset fields get the ScyllaCluster API defaults",
			repair: scyllav1.RepairTaskSpec{TaskSpec: scyllav1.TaskSpec{Name: "weekly"}},
			want:   defaultRepairTask(),
		},
		{
			// The ScyllaDBManagerTask API takes only a positive threshold; the annotation, which the task controller
			// prefers, carries the 0 to ScyllaDB Manager as the established operator sent it.
			name:   "a zero small table threshold travels in the annotation only",
			repair: scyllav1.RepairTaskSpec{TaskSpec: scyllav1.TaskSpec{Name: "weekly"}, SmallTableThreshold: "0"},
			want: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := defaultRepairTask()
				task.Annotations["internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override"] = "0"
				task.Spec.Repair.SmallTableThreshold = nil
				return task
			}(),
		},
		{
			name: "failFast means no retries whatever numRetries says",
			repair: scyllav1.RepairTaskSpec{
				TaskSpec: scyllav1.TaskSpec{Name: "weekly", SchedulerTaskSpec: scyllav1.SchedulerTaskSpec{NumRetries: new(int64(5))}},
				FailFast: true,
			},
			want: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := defaultRepairTask()
				task.Spec.Repair.NumRetries = new(int64(0))
				task.Spec.Repair.FailFast = new(true)
				return task
			}(),
		},
		{
			name: "a fractional intensity and an unknown size unit travel only in the override annotations",
			repair: scyllav1.RepairTaskSpec{
				TaskSpec:            scyllav1.TaskSpec{Name: "weekly"},
				Intensity:           "0.5",
				SmallTableThreshold: "1GB",
			},
			want: func() *scyllav1alpha1.ScyllaDBManagerTask {
				task := defaultRepairTask()
				task.Annotations["internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-intensity-override"] = "0.5"
				task.Annotations["internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override"] = "1GB"
				task.Spec.Repair.Intensity = nil
				task.Spec.Repair.SmallTableThreshold = nil
				return task
			}(),
		},
		{
			name: "an intensity that is not a number is refused",
			repair: scyllav1.RepairTaskSpec{
				TaskSpec:  scyllav1.TaskSpec{Name: "weekly"},
				Intensity: "max",
			},
			wantError: `can't translate repair task "weekly": intensity "max" must be a non-negative number, e.g. 1 or 0.5`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := makeRepairTask(newBasicScyllaCluster(), &tc.repair)
			if (err == nil) != (len(tc.wantError) == 0) || (err != nil && err.Error() != tc.wantError) {
				t.Fatalf("expected error %q, got %v", tc.wantError, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected ScyllaDBManagerTask (-want +got):\n%s", diff)
			}
		})
	}
}

// defaultRepairTask is the translation of a repair task named weekly that sets nothing else.
func defaultRepairTask() *scyllav1alpha1.ScyllaDBManagerTask {
	return &scyllav1alpha1.ScyllaDBManagerTask{
		ObjectMeta: taskObjectMeta("Repair", "weekly", map[string]string{
			"internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-intensity-override":             "1",
			"internal.scylla-operator.scylladb.com/scylladb-manager-task-repair-small-table-threshold-override": "1GiB",
		}),
		Spec: scyllav1alpha1.ScyllaDBManagerTaskSpec{
			ScyllaDBClusterRef: scyllav1alpha1.LocalScyllaDBReference{Kind: "ScyllaDBDatacenter", Name: "basic"},
			Type:               scyllav1alpha1.ScyllaDBManagerTaskTypeRepair,
			Repair: &scyllav1alpha1.ScyllaDBManagerRepairTaskOptions{
				ScyllaDBManagerTaskSchedule: scyllav1alpha1.ScyllaDBManagerTaskSchedule{NumRetries: new(int64(3))},
				FailFast:                    new(false),
				Intensity:                   new(int64(1)),
				Parallel:                    new(int64(0)),
				SmallTableThreshold:         new(resource.MustParse("1Gi")),
			},
		},
	}
}

// taskObjectMeta returns the metadata of the ScyllaDBManagerTask translated from newBasicScyllaCluster's task of
// taskType and name, with extraAnnotations besides the name override.
func taskObjectMeta(taskType, name string, extraAnnotations map[string]string) metav1.ObjectMeta {
	annotations := map[string]string{"internal.scylla-operator.scylladb.com/scylladb-manager-task-name-override": name}
	for k, v := range extraAnnotations {
		annotations[k] = v
	}
	return metav1.ObjectMeta{
		Namespace: testNamespace,
		Name:      naming.ScyllaDBManagerTaskName("basic", taskType, name),
		Labels: map[string]string{
			"app":                          "scylla",
			"app.kubernetes.io/name":       "scylla",
			"app.kubernetes.io/managed-by": "scylla-operator",
			"scylla/cluster":               "basic",
		},
		Annotations:     annotations,
		OwnerReferences: []metav1.OwnerReference{testControllerRef()},
	}
}

func TestSplitArguments(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name      string
		in        string
		want      []string
		wantError string
	}{
		{name: "empty", in: "", want: nil},
		{name: "blanks only", in: " \t\n", want: nil},
		{name: "blank separated", in: "  --a 1\t--b\n2 ", want: []string{"--a", "1", "--b", "2"}},
		{name: "single quotes keep everything", in: `--x='a "b" \c'`, want: []string{`--x=a "b" \c`}},
		{name: "double quotes unescape", in: `"a \"b\" \\ \$ \n"`, want: []string{`a "b" \ $ \n`}},
		{name: "backslash escapes a blank", in: `a\ b c`, want: []string{"a b", "c"}},
		{name: "empty quoted argument", in: `a '' b`, want: []string{"a", "", "b"}},
		{name: "unterminated single quote", in: `a 'b`, wantError: `"a 'b" has an unterminated quote`},
		{name: "trailing backslash", in: `a \`, wantError: `"a \\" ends with an unescaped backslash`},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			got, err := validation.SplitArguments(tc.in)
			if (err == nil) != (len(tc.wantError) == 0) || (err != nil && err.Error() != tc.wantError) {
				t.Fatalf("expected error %q, got %v", tc.wantError, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unexpected arguments (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()

	tt := []struct {
		in   string
		want *resource.Quantity
	}{
		{in: "1GiB", want: new(resource.MustParse("1Gi"))},
		{in: "512MiB", want: new(resource.MustParse("512Mi"))},
		{in: "2048", want: new(resource.MustParse("2Ki"))},
		{in: "10B", want: new(resource.MustParse("10"))},
		{in: "1GB"},
		{in: "1.5GiB"},
		{in: "99999999999PiB"},
		{in: ""},
	}
	for _, tc := range tt {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()

			got := parseSize(tc.in)
			if (got == nil) != (tc.want == nil) || (got != nil && got.Cmp(*tc.want) != 0) {
				t.Errorf("expected %v, got %v", tc.want, got)
			}
		})
	}
}

// TestFullScyllaClusterSetsEveryField keeps the translation tests honest: newFullScyllaCluster must set every field
// of the ScyllaCluster API (down to every field of our own nested types), so that a field added to the API fails here
// until the translation and its expected output cover it.
func TestFullScyllaClusterSetsEveryField(t *testing.T) {
	t.Parallel()

	// Fields left at their zero value on purpose, with where they are covered instead.
	unset := map[string]string{
		"spec.repairs[0].failFast": "TestMakeRepairTask, failFast case",
		// Pod IP options are translated by one function, exercised through broadcastOptions.nodes.podIP and
		// listenOptions.nodes.podIP; they only mean something with type PodIP.
		"spec.exposeOptions.broadcastOptions.clients.podIP":             "broadcastOptions.nodes.podIP",
		"spec.exposeOptions.listenOptions.clients.podIP":                "listenOptions.nodes.podIP",
		"spec.exposeOptions.listenOptions.nodes.podIP.interfaceOptions": "broadcastOptions.nodes.podIP.interfaceOptions",
	}

	var missing []string
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		if _, ok := unset[path]; ok {
			return
		}
		if v.IsZero() || ((v.Kind() == reflect.Slice || v.Kind() == reflect.Map) && v.Len() == 0) {
			missing = append(missing, path)
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			// A set pointer to a scalar is set, even to its zero value.
			if v.Elem().Kind() == reflect.Struct {
				walk(path, v.Elem())
			}
		case reflect.Slice:
			walk(path+"[0]", v.Index(0))
		case reflect.Struct:
			// Only our own API types are walked into; Kubernetes types are copied whole.
			if !strings.HasPrefix(v.Type().PkgPath(), "github.com/scyllakube/api/") {
				return
			}
			for i := range v.NumField() {
				field := v.Type().Field(i)
				name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
				fieldPath := path + "." + name
				if field.Anonymous {
					fieldPath = path
				}
				walk(fieldPath, v.Field(i))
			}
		}
	}
	walk("spec", reflect.ValueOf(newFullScyllaCluster().Spec))

	if len(missing) != 0 {
		t.Errorf("newFullScyllaCluster leaves these fields unset; set them and extend the expected translation:\n%s", strings.Join(missing, "\n"))
	}
}
