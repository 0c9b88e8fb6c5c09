package scylladbdatacenter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/scyllaagent"
	"github.com/scyllakube/scylla-operator/pkg/sidecar"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// expectedServicePorts are the ports of every Service of newBasicSDC.
func expectedServicePorts() []corev1.ServicePort {
	port := func(name string, p int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: p, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(p)}
	}
	return []corev1.ServicePort{
		port("inter-node", 7000),
		port("inter-node-ssl", 7001),
		port("cql", 9042),
		port("cql-ssl", 9142),
		port("cql-sa", 19042),
		port("cql-ssl-sa", 19142),
		port("prometheus", 9180),
		port("agent-api", 10001),
		port("agent-prom", 5090),
	}
}

// expectedMemberService is the member Service of pod basic-dc1-a-0 of newBasicSDC.
func expectedMemberService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: testNamespace,
			Name:      "basic-dc1-a-0",
			Labels: with(clusterLabels(),
				"scylla/datacenter", "dc1",
				"scylla/rack", "a",
				"scylla-operator.scylladb.com/scylla-service-type", "member",
			),
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			Selector:                 map[string]string{"statefulset.kubernetes.io/pod-name": "basic-dc1-a-0"},
			Ports:                    expectedServicePorts(),
			PublishNotReadyAddresses: true,
		},
	}
}

func TestMakeMemberService(t *testing.T) {
	t.Parallel()

	local := corev1.ServiceExternalTrafficPolicyLocal
	internalLocal := corev1.ServiceInternalTrafficPolicyLocal
	podIPBroadcast := &scyllav1alpha1.NodeBroadcastOptions{
		Nodes:   &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
		Clients: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypePodIP},
	}

	tt := []struct {
		name           string
		modify         func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		decommissioned string
		want           func(svc *corev1.Service)
		wantErr        string
	}{
		{
			name: "without expose options a node gets a ClusterIP Service",
		},
		{
			name: "nodeService ClusterIP with an internal traffic policy",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{
					Type:                  scyllav1alpha1.NodeServiceTypeClusterIP,
					InternalTrafficPolicy: &internalLocal,
				}}
			},
			want: func(svc *corev1.Service) {
				svc.Spec.InternalTrafficPolicy = &internalLocal
			},
		},
		{
			name: "nodeService Headless with Pod IP broadcast has no cluster IP",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService:      &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless},
					BroadcastOptions: podIPBroadcast,
				}
			},
			want: func(svc *corev1.Service) {
				svc.Spec.ClusterIP = corev1.ClusterIPNone
			},
		},
		{
			name: "nodeService LoadBalancer with every option, template and rack metadata",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{
						Labels:      map[string]string{"dc-label": "dc", "shared": "dc"},
						Annotations: map[string]string{"lb.example.com/internal": "true", "shared": "dc"},
					},
					Type:                          scyllav1alpha1.NodeServiceTypeLoadBalancer,
					ExternalTrafficPolicy:         &local,
					InternalTrafficPolicy:         &internalLocal,
					AllocateLoadBalancerNodePorts: new(false),
					LoadBalancerClass:             new("example.com/lb"),
				}}
				sdc.Spec.RackTemplate.ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"template": "t", "shared": "template"}},
				}}
				sdc.Spec.Racks[0].ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{
						Labels:      map[string]string{"shared": "rack"},
						Annotations: map[string]string{"shared": "rack", "rack-annotation": "a"},
					},
				}}
			},
			want: func(svc *corev1.Service) {
				svc.Labels = with(svc.Labels, "dc-label", "dc", "template", "t", "shared", "rack")
				svc.Annotations = map[string]string{"lb.example.com/internal": "true", "shared": "rack", "rack-annotation": "a"}
				svc.Spec.Type = corev1.ServiceTypeLoadBalancer
				svc.Spec.ExternalTrafficPolicy = local
				svc.Spec.InternalTrafficPolicy = &internalLocal
				svc.Spec.AllocateLoadBalancerNodePorts = new(false)
				svc.Spec.LoadBalancerClass = new("example.com/lb")
			},
		},
		{
			name: "the operator's labels win over the node Service template's and the rack's",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"scylla/cluster": "dc", "dc-label": "dc"}},
					Type:                   scyllav1alpha1.NodeServiceTypeClusterIP,
				}}
				sdc.Spec.Racks[0].ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{
						"scylla-operator.scylladb.com/scylla-service-type": "rack", "dc-label": "rack",
					}},
				}}
			},
			want: func(svc *corev1.Service) {
				svc.Labels = with(svc.Labels, "dc-label", "rack")
			},
		},
		{
			name: "host networking defaults the node Service to Headless",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
			},
			want: func(svc *corev1.Service) {
				svc.Spec.ClusterIP = corev1.ClusterIPNone
			},
		},
		{
			name: "host networking keeps an explicit LoadBalancer node Service",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{
					NodeService:      &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeLoadBalancer},
					BroadcastOptions: podIPBroadcast,
				}
			},
			want: func(svc *corev1.Service) {
				svc.Spec.Type = corev1.ServiceTypeLoadBalancer
			},
		},
		{
			name:           "a decommission request is a label",
			decommissioned: "false",
			want: func(svc *corev1.Service) {
				svc.Labels["scylla/decommissioned"] = "false"
			},
		},
		{
			name: "the pods' metadata stays off the Service; IP families",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{
					Labels:      map[string]string{"team": "db", "app": "mine"},
					Annotations: map[string]string{"owner": "db-team"},
				}
				sdc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyPreferDualStack)
				sdc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
			},
			want: func(svc *corev1.Service) {
				svc.Spec.IPFamilyPolicy = new(corev1.IPFamilyPolicyPreferDualStack)
				svc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
			},
		},
		{
			name: "an HTTP Alternator port is exposed",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true"}
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
			},
			want: func(svc *corev1.Service) {
				ports := expectedServicePorts()
				svc.Spec.Ports = append(ports[:7:7], corev1.ServicePort{Name: "alternator", Port: 8000, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8000)}, ports[7], ports[8])
			},
		},
		{
			name: "host networking refuses a node broadcast address other than the Pod IP",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "true"}
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{BroadcastOptions: &scyllav1alpha1.NodeBroadcastOptions{
					Nodes: &scyllav1alpha1.BroadcastOptions{Type: scyllav1alpha1.BroadcastAddressTypeServiceClusterIP},
				}}
			},
			wantErr: `host networking (annotation "internal.scylla-operator.scylladb.com/host-networking") needs spec.exposeOptions.broadcastOptions.nodes.type PodIP, got ServiceClusterIP`,
		},
		{
			name: "a Headless node Service can't give a ServiceClusterIP broadcast address",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: scyllav1alpha1.NodeServiceTypeHeadless}}
			},
			wantErr: "spec.exposeOptions.broadcastOptions.nodes.type ServiceClusterIP needs a node Service with a cluster IP, but its type is Headless",
		},
		{
			name: "load balancer options need a LoadBalancer node Service",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{
					Type:              scyllav1alpha1.NodeServiceTypeClusterIP,
					LoadBalancerClass: new("example.com/lb"),
				}}
			},
			wantErr: "spec.exposeOptions.nodeService: externalTrafficPolicy, allocateLoadBalancerNodePorts and loadBalancerClass need type LoadBalancer",
		},
		{
			name: "an unknown node Service type",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{NodeService: &scyllav1alpha1.NodeServiceTemplate{Type: "NodePort"}}
			},
			wantErr: `spec.exposeOptions.nodeService.type "NodePort" is not one of Headless, ClusterIP, LoadBalancer`,
		},
		{
			name: "a host networking annotation that is not a boolean",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/host-networking": "yes"}
			},
			wantErr: `annotation "internal.scylla-operator.scylladb.com/host-networking" must be "true" or "false", got "yes"`,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc, rack := newModifiedSDC(tc.modify)
			got, err := makeMemberService(sdc, rack, "basic-dc1-a-0", tc.decommissioned, false)
			if checkError(t, err, tc.wantErr, true) {
				return
			}
			want := expectedMemberService()
			if tc.want != nil {
				tc.want(want)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected Service (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMakeClientService(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	sdc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"team": "db"}}
	sdc.Spec.IPFamilies = []corev1.IPFamily{corev1.IPv6Protocol}

	got, err := makeClientService(sdc, false)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            "basic-client",
			Labels:          with(clusterLabels(), "scylla-operator.scylladb.com/scylla-service-type", "identity"),
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: corev1.ServiceSpec{
			Type:       corev1.ServiceTypeClusterIP,
			Selector:   with(clusterLabels(), "scylla-operator.scylladb.com/pod-type", "scylladb-node"),
			Ports:      expectedServicePorts(),
			IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("unexpected Service (-want +got):\n%s", diff)
	}
}

func TestMakePodDisruptionBudgetAllowsOneNodeDown(t *testing.T) {
	t.Parallel()
	maxUnavailable := intstr.FromInt32(1)
	want := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       testNamespace,
			Name:            "basic",
			Labels:          clusterLabels(),
			OwnerReferences: []metav1.OwnerReference{testControllerRef()},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: with(clusterLabels(), "scylla-operator.scylladb.com/pod-type", "scylladb-node")},
		},
	}
	if diff := cmp.Diff(want, makePodDisruptionBudget(newBasicSDC())); diff != "" {
		t.Errorf("unexpected PodDisruptionBudget (-want +got):\n%s", diff)
	}
}

func TestMakeMemberRBAC(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	meta := metav1.ObjectMeta{
		Namespace:       testNamespace,
		Name:            "basic-member",
		Labels:          clusterLabels(),
		OwnerReferences: []metav1.OwnerReference{testControllerRef()},
	}

	if diff := cmp.Diff(&corev1.ServiceAccount{ObjectMeta: meta}, makeServiceAccount(sdc)); diff != "" {
		t.Errorf("unexpected ServiceAccount (-want +got):\n%s", diff)
	}

	wantRoleBinding := &rbacv1.RoleBinding{
		ObjectMeta: meta,
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "scylla-operator-member"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: testNamespace, Name: "basic-member"}},
	}
	if diff := cmp.Diff(wantRoleBinding, makeRoleBinding(sdc)); diff != "" {
		t.Errorf("unexpected RoleBinding (-want +got):\n%s", diff)
	}
}

// TestMemberClusterRoleGrantsWhatTheSidecarUses pins the member ClusterRole to what pkg/sidecar calls: it gets and
// lists Pods, and gets, lists, watches (an informer) and patches Services, all in its own namespace.
func TestMemberClusterRoleGrantsWhatTheSidecarUses(t *testing.T) {
	t.Parallel()
	want := &rbacv1.ClusterRole{
		TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   "scylla-operator-member",
			Labels: map[string]string{"app.kubernetes.io/managed-by": "scylla-operator"},
		},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}},
			{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"get", "list", "watch", "patch"}},
		},
	}
	if diff := cmp.Diff(want, MakeMemberClusterRole()); diff != "" {
		t.Errorf("unexpected ClusterRole (-want +got):\n%s", diff)
	}
}

func TestMakeManagedConfigMap(t *testing.T) {
	t.Parallel()

	tt := []struct {
		name          string
		modify        func(sdc *scyllav1alpha1.ScyllaDBDatacenter)
		customConfigs map[string][]byte
		want          map[string]string
		wantErr       string
		wantSpecErr   bool
	}{
		{
			name: "without custom config or managed settings every rack gets an empty map",
			want: map[string]string{"scylla-a.yaml": "{}\n", "scylla-b.yaml": "{}\n"},
		},
		{
			name: "Alternator settings from the spec and the translator's annotations",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{
					"internal.scylla-operator.scylladb.com/alternator-port":                           "8080",
					"internal.scylla-operator.scylladb.com/alternator-insecure-disable-authorization": "true",
				}
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{WriteIsolation: scyllav1alpha1.AlternatorWriteIsolationOnlyRMWUsesLWT}
			},
			want: map[string]string{
				"scylla-a.yaml": "alternator_enforce_authorization: false\nalternator_port: 8080\nalternator_write_isolation: only_rmw_uses_lwt\n",
				"scylla-b.yaml": "alternator_enforce_authorization: false\nalternator_port: 8080\nalternator_write_isolation: only_rmw_uses_lwt\n",
			},
		},
		{
			name: "a rack's custom config with the managed settings on top",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-insecure-enable-http": "true"}
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
				sdc.Spec.Racks[1].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("tuned")}
			},
			customConfigs: map[string][]byte{"tuned": []byte("compaction_throughput_mb_per_sec: 0\nalternator_enforce_authorization: false\n")},
			want: map[string]string{
				"scylla-a.yaml": "alternator_enforce_authorization: true\nalternator_port: 8000\n",
				"scylla-b.yaml": "alternator_enforce_authorization: true\nalternator_port: 8000\ncompaction_throughput_mb_per_sec: 0\n",
			},
		},
		{
			name: "racks naming the same custom config share it, a rack naming another gets its own",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.CustomConfigMapRef = new("tuned")
				sdc.Spec.Racks = append(sdc.Spec.Racks, scyllav1alpha1.RackSpec{Name: "c", RackTemplate: scyllav1alpha1.RackTemplate{
					ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{CustomConfigMapRef: new("other")},
				}})
			},
			customConfigs: map[string][]byte{
				"tuned": []byte("compaction_throughput_mb_per_sec: 0\n"),
				"other": []byte("compaction_throughput_mb_per_sec: 16\n"),
			},
			want: map[string]string{
				"scylla-a.yaml": "compaction_throughput_mb_per_sec: 0\n",
				"scylla-b.yaml": "compaction_throughput_mb_per_sec: 0\n",
				"scylla-c.yaml": "compaction_throughput_mb_per_sec: 16\n",
			},
		},
		{
			name: "Alternator without plain HTTP stays off with automatic TLS off and an OperatorManaged certificate: no certificate for HTTPS",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{WriteIsolation: scyllav1alpha1.AlternatorWriteIsolationAlways}
			},
			want: map[string]string{"scylla-a.yaml": "{}\n", "scylla-b.yaml": "{}\n"},
		},
		{
			name: "a custom config that is not a YAML map",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.CustomConfigMapRef = new("broken")
			},
			customConfigs: map[string][]byte{"broken": []byte("- a list")},
			wantErr:       `can't make the scylla.yaml of rack "a": key "scylla.yaml" of ConfigMap "broken" is not a YAML map: yaml: unmarshal errors:` + "\n" + `  line 1: cannot unmarshal !!seq into map[string]interface {}`,
			wantSpecErr:   true,
		},
		{
			name: "a custom config that was not read",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.CustomConfigMapRef = new("missing")
			},
			wantErr: `can't make the scylla.yaml of rack "a": custom config ConfigMap "missing" is missing`,
		},
		{
			name: "an Alternator port annotation that is not a port",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{"internal.scylla-operator.scylladb.com/alternator-port": "70000"}
				sdc.Spec.ScyllaDB.AlternatorOptions = &scyllav1alpha1.AlternatorOptions{}
			},
			wantErr:     `annotation "internal.scylla-operator.scylladb.com/alternator-port" must be a port number, got "70000"`,
			wantSpecErr: true,
		},
	}

	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sdc, _ := newModifiedSDC(tc.modify)
			got, err := makeManagedConfigMap(sdc, effectiveRacks(sdc), tc.customConfigs, false)
			if checkError(t, err, tc.wantErr, tc.wantSpecErr) {
				return
			}
			want := &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{
					Namespace:       testNamespace,
					Name:            "basic-managed-config",
					Labels:          clusterLabels(),
					OwnerReferences: []metav1.OwnerReference{testControllerRef()},
				},
				Data: tc.want,
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unexpected ConfigMap (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChooseAuthTokenPrecedence(t *testing.T) {
	t.Parallel()
	generate := func() (string, error) { return "generated", nil }

	tt := []struct {
		name     string
		sources  authTokenSources
		generate func() (string, error)
		want     string
		wantErr  string
	}{
		{
			name:    "the custom agent config wins over everything",
			sources: authTokenSources{customConfig: "custom", override: "override", existing: "existing"},
			want:    "custom",
		},
		{
			name:    "the override Secret wins over the existing token",
			sources: authTokenSources{override: "override", existing: "existing"},
			want:    "override",
		},
		{
			name:    "the existing token is kept",
			sources: authTokenSources{existing: "existing"},
			want:    "existing",
		},
		{
			name: "without any a token is generated",
			want: "generated",
		},
		{
			name:     "a failing generator",
			generate: func() (string, error) { return "", errors.New("no entropy") },
			wantErr:  "can't generate an agent auth token: no entropy",
		},
		{
			name:     "a generator returning nothing",
			generate: func() (string, error) { return "", nil },
			wantErr:  "can't generate an agent auth token: the generator returned an empty token",
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gen := generate
			if tc.generate != nil {
				gen = tc.generate
			}
			got, err := chooseAuthToken(tc.sources, gen)
			if checkError(t, err, tc.wantErr, false) {
				return
			}
			if got != tc.want {
				t.Errorf("expected token %q, got %q", tc.want, got)
			}
		})
	}
}

func TestMakeAgentAuthTokenSecretRoundTrips(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"plain", "with: colon", "'quoted' \"both\"", "#hash"} {
		secret, err := makeAgentAuthTokenSecret(newBasicSDC(), token, []byte("key"), nil)
		if err != nil {
			t.Fatal(err)
		}
		if secret.Name != "basic-auth-token" || secret.Type != corev1.SecretTypeOpaque || len(secret.Data) != 2 {
			t.Errorf("unexpected Secret %s of type %s with %d keys", secret.Name, secret.Type, len(secret.Data))
		}
		if got := string(secret.Data["auth-token-hmac-key"]); got != "key" {
			t.Errorf("unexpected HMAC key %q", got)
		}
		got, err := scyllaagent.AuthTokenFromConfig(secret.Data["auth-token.yaml"])
		if err != nil {
			t.Fatal(err)
		}
		if got != token {
			t.Errorf("token %q read back as %q", token, got)
		}
	}
}

func TestShellJoinSplitsBackTheSame(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--smp", "2"},
		{"--abort-on-lsa-bad-alloc=1", "--blocked-reactor-notify-ms=100"},
		{"--logger-log-level", "it's=debug", "a b", "", `back\slash`, `"dq"`, "$HOME"},
	} {
		joined := shellJoin(args)
		got, err := sidecar.SplitArgs(joined)
		if err != nil {
			t.Fatalf("can't split %q: %v", joined, err)
		}
		if diff := cmp.Diff(args, got); diff != "" {
			t.Errorf("%q split back differently (-want +got):\n%s", joined, diff)
		}
	}
}

func TestImageVersion(t *testing.T) {
	t.Parallel()
	for image, want := range map[string]string{
		"docker.io/scylladb/scylla:2025.1.2":               "2025.1.2",
		"localhost:5000/scylla:6.2":                        "6.2",
		"localhost:5000/scylla":                            "",
		"scylla@sha256:" + strings.Repeat("a", 64):         "",
		"scylla:6.2@sha256:" + strings.Repeat("a", 64):     "6.2",
		"registry.example.com:443/team/scylla:2024.1.0-rc": "2024.1.0-rc",
	} {
		if got := imageVersion(image); got != want {
			t.Errorf("imageVersion(%q) = %q, want %q", image, got, want)
		}
	}
}

// parseSidecarArgs parses args the way `scylla-operator sidecar` does, with the downward API variables of pod
// basic-dc1-a-0 in namespace scylla expanded, and validates them.
func parseSidecarArgs(t *testing.T, args []string) *sidecar.Options {
	t.Helper()
	expanded := make([]string, 0, len(args))
	for _, a := range args {
		a = strings.ReplaceAll(a, "$(POD_NAME)", "basic-dc1-a-0")
		expanded = append(expanded, strings.ReplaceAll(a, "$(POD_NAMESPACE)", testNamespace))
	}
	o := sidecar.NewOptions()
	cmd := &cobra.Command{}
	o.AddFlags(cmd)
	if err := cmd.ParseFlags(expanded); err != nil {
		t.Fatalf("the sidecar refuses %q: %v", expanded, err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("the sidecar refuses %q: %v", expanded, err)
	}
	return o
}

func TestDatacenterMetadataReachesOnlyThePods(t *testing.T) {
	t.Parallel()

	sdc := newBasicSDC()
	sdc.Spec.Metadata = &scyllav1alpha1.ObjectTemplateMetadata{
		Labels:      map[string]string{"team": "db"},
		Annotations: map[string]string{"sidecar.example.com/inject": "true"},
	}
	rack := &effectiveRacks(sdc)[0]
	build := func(obj metav1.Object, err error) metav1.Object {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return obj
	}
	clientService, err := makeClientService(sdc, false)
	memberService, memberErr := makeMemberService(sdc, rack, "basic-dc1-a-0", "", false)
	configMap, configErr := makeManagedConfigMap(sdc, effectiveRacks(sdc), nil, false)
	secret, secretErr := makeAgentAuthTokenSecret(sdc, testToken, []byte("key"), nil)
	sts, stsErr := makeStatefulSet(sdc, rack, statefulSetInputs{operatorImage: testOperatorImage, replicas: 3})
	objects := []metav1.Object{
		build(clientService, err),
		build(memberService, memberErr),
		build(configMap, configErr),
		build(secret, secretErr),
		build(sts, stsErr),
		makeServiceAccount(sdc),
		makeRoleBinding(sdc),
		makePodDisruptionBudget(sdc),
	}
	for _, obj := range objects {
		if _, ok := obj.GetLabels()["team"]; ok {
			t.Errorf("%T %s carries the pods' label: %v", obj, obj.GetName(), obj.GetLabels())
		}
		if _, ok := obj.GetAnnotations()["sidecar.example.com/inject"]; ok {
			t.Errorf("%T %s carries the pods' annotation: %v", obj, obj.GetName(), obj.GetAnnotations())
		}
	}
	template := sts.Spec.Template
	if template.Labels["team"] != "db" || template.Annotations["sidecar.example.com/inject"] != "true" {
		t.Errorf("the pod template lacks the datacenter's metadata: %v %v", template.Labels, template.Annotations)
	}
}

func TestControllerRefIsTheOneMetav1Builds(t *testing.T) {
	t.Parallel()
	sdc := newBasicSDC()
	if diff := cmp.Diff(*metav1.NewControllerRef(sdc, scyllaDBDatacenterGVK), controllerRef(sdc)); diff != "" {
		t.Errorf("unexpected controllerRef (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(testControllerRef(), controllerRef(sdc)); diff != "" {
		t.Errorf("unexpected controllerRef (-want +got):\n%s", diff)
	}
	// Every object gets its own pointers: changing one reference changes no other.
	a, b := controllerRef(sdc), controllerRef(sdc)
	*a.Controller = false
	if !*b.Controller {
		t.Error("two controllerRefs share their Controller field")
	}
}
