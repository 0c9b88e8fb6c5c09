package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newScyllaDBDatacenter(t testing.TB) *scyllav1alpha1.ScyllaDBDatacenter {
	return exampleOf[*scyllav1alpha1.ScyllaDBDatacenter](t, "scylladbdatacenter-basic.yaml")
}

func TestValidateScyllaDBDatacenterRefuses(t *testing.T) {
	t.Parallel()
	spec := field.NewPath("spec")
	annotations := field.NewPath("metadata", "annotations")
	runValidationCases(t, newScyllaDBDatacenter, ValidateScyllaDBDatacenter, []validationCase[*scyllav1alpha1.ScyllaDBDatacenter]{
		{
			name: "no images",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.Image = ""
				sdc.Spec.ScyllaDBManagerAgent = nil
			},
			want: field.ErrorList{
				field.Required(spec.Child("scyllaDB", "image"), "the ScyllaDB image is required, e.g. docker.io/scylladb/scylla:2025.1.2"),
				field.Required(spec.Child("scyllaDBManagerAgent", "image"), "the ScyllaDB Manager Agent image is required, e.g. docker.io/scylladb/scylla-manager-agent:3.5.0"),
			},
		},
		{
			// scylla/cluster=<name> labels every object made for it, and a label value has at most 63 characters.
			name:   "a name too long for a label value",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Name = strings.Repeat("a", 64) },
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), strings.Repeat("a", 64),
				"must be no more than 63 characters: the name labels the objects made for it and is part of its nodes' Service and host names")},
		},
		{
			// The Pods would need a dnsConfig, which a ScyllaDBDatacenter has no field for: Kubernetes refuses them.
			name:   "dnsPolicy None",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Spec.DNSPolicy = new(corev1.DNSNone) },
			want: field.ErrorList{field.Invalid(spec.Child("dnsPolicy"), "None",
				"must be ClusterFirstWithHostNet, ClusterFirst or Default: None needs a dnsConfig, which a ScyllaDBDatacenter can't set, and Kubernetes refuses such Pods")},
		},
		{
			name: "parallel node operations on an image pinned by digest",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
				sdc.Spec.EnableParallelNodeOperations = new(true)
			},
			want: field.ErrorList{field.Invalid(spec.Child("enableParallelNodeOperations"), true, `needs ScyllaDB 2026.2 or later, but the tag of spec.scyllaDB.image is ""`)},
		},
		{
			name: "a LoadBalancer node Service on an image tagged 5.1.9",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.Image = "scylladb/scylla:5.1.9"
				sdc.Spec.ExposeOptions.NodeService.Type = scyllav1alpha1.NodeServiceTypeLoadBalancer
			},
			want: field.ErrorList{field.Invalid(spec.Child("exposeOptions", "nodeService", "type"), "LoadBalancer",
				`needs ScyllaDB 5.2 or later (2023.1 or later for enterprise versions) to replace nodes by host ID, but the tag of spec.scyllaDB.image is "5.1.9"`)},
		},
		{
			name:   "a rack whose merged settings have no storage",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Spec.RackTemplate.ScyllaDB.Storage = nil },
			want: field.ErrorList{
				field.Required(spec.Child("racks").Index(0).Child("scyllaDB", "storage", "capacity"), `rack "europe-west1-b" has no storage capacity: set scyllaDB.storage.capacity on the rack or in a template it inherits from`),
				field.Required(spec.Child("racks").Index(1).Child("scyllaDB", "storage", "capacity"), `rack "europe-west1-c" has no storage capacity: set scyllaDB.storage.capacity on the rack or in a template it inherits from`),
				field.Required(spec.Child("racks").Index(2).Child("scyllaDB", "storage", "capacity"), `rack "europe-west1-d" has no storage capacity: set scyllaDB.storage.capacity on the rack or in a template it inherits from`),
			},
		},
		{
			name: "a rack overriding the storage with a zero capacity",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.Racks[1].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "0"}}
			},
			want: field.ErrorList{field.Invalid(spec.Child("racks").Index(1).Child("scyllaDB", "storage", "capacity"), "0", "must be a positive quantity, e.g. 10Gi")},
		},
		{
			name: "requests above limits in the rack template and a bad rack node Service label",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.RackTemplate.ScyllaDB.Resources.Requests[corev1.ResourceMemory] = resource.MustParse("32Gi")
				sdc.Spec.Racks[2].ExposeOptions = &scyllav1alpha1.RackExposeOptions{NodeService: &scyllav1alpha1.RackNodeServiceTemplate{
					ObjectTemplateMetadata: scyllav1alpha1.ObjectTemplateMetadata{Labels: map[string]string{"x": "-"}},
				}}
			},
			want: field.ErrorList{
				field.Invalid(spec.Child("rackTemplate", "scyllaDB", "resources", "requests").Key("memory"), "32Gi", "must be less than or equal to the memory limit 16Gi"),
				field.Invalid(spec.Child("racks").Index(2).Child("exposeOptions", "nodeService", "labels"), "-", "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
			},
		},
		{
			name: "translator annotations that don't parse",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{
					naming.HostNetworkingAnnotation:               "yes",
					naming.AlternatorPortAnnotation:               "70000",
					naming.AlternatorInsecureEnableHTTPAnnotation: "true",
				}
			},
			want: field.ErrorList{
				field.Invalid(annotations.Key(naming.HostNetworkingAnnotation), "yes", `must be "true" or "false"`),
				field.Invalid(annotations.Key(naming.AlternatorPortAnnotation), "70000", "must be a port number between 1 and 65535"),
			},
		},
		{
			name: "a sysctls annotation that is not a JSON list",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{naming.SysctlsAnnotation: "fs.aio-max-nr=1"}
			},
			want: field.ErrorList{field.Invalid(annotations.Key(naming.SysctlsAnnotation), "fs.aio-max-nr=1", `must be a JSON list of key=value strings, e.g. ["fs.aio-max-nr=30000000"]`)},
		},
		{
			name: "a sysctls annotation with a setting without a value",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Annotations = map[string]string{naming.SysctlsAnnotation: `["fs.aio-max-nr=1","vm.swappiness"]`}
			},
			want: field.ErrorList{field.Invalid(annotations.Key(naming.SysctlsAnnotation).Index(1), "vm.swappiness", "must be key=value with a sysctl name as key, e.g. fs.aio-max-nr=30000000")},
		},
		{
			name: "CQL ingress without DNS domains",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{CQL: &scyllav1alpha1.CQLExposeOptions{Ingress: &scyllav1alpha1.IngressOptions{}}}
			},
			want: field.ErrorList{field.Required(spec.Child("dnsDomains"), "CQL ingress (spec.exposeOptions.cql.ingress) needs at least one DNS domain")},
		},
		{
			name: "CQL ingress with a DNS domain",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.DNSDomains = []string{"scylla.example.com"}
				sdc.Spec.ExposeOptions = &scyllav1alpha1.ExposeOptions{CQL: &scyllav1alpha1.CQLExposeOptions{Ingress: &scyllav1alpha1.IngressOptions{}}}
			},
		},
		{
			name: "an external seed with a port",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.ExternalSeeds = []string{"seed.example.com:7000"}
			},
			want: field.ErrorList{field.Invalid(spec.Child("scyllaDB", "externalSeeds").Index(0), "seed.example.com:7000", `"seed.example.com:7000" is neither an IP address nor a DNS name`)},
		},
		{
			name: "an IPv6 broadcast address argument in an IPv4 datacenter",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ScyllaDB.AdditionalScyllaDBArguments = []string{"--smp=2", "--broadcast-address", "fd00::1"}
			},
			want: field.ErrorList{field.Invalid(spec.Child("scyllaDB", "additionalScyllaDBArguments").Index(2), "fd00::1", "--broadcast-address must be an IPv4 address: the cluster's primary IP family is IPv4")},
		},
		{
			name:   "two racks with the same name",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) { sdc.Spec.Racks[2].Name = sdc.Spec.Racks[0].Name },
			want:   field.ErrorList{field.Duplicate(spec.Child("racks").Index(2).Child("name"), "europe-west1-b")},
		},
		{
			name: "a readiness gate with an invalid prefix",
			modify: func(sdc *scyllav1alpha1.ScyllaDBDatacenter) {
				sdc.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "Example.com/ready"}}
			},
			want: field.ErrorList{field.Invalid(spec.Child("readinessGates").Index(0).Child("conditionType"), "Example.com/ready",
				"prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")},
		},
	})
}

func TestValidateScyllaDBDatacenterUpdateRackRemoval(t *testing.T) {
	t.Parallel()
	racks := field.NewPath("spec", "racks")
	for _, tc := range []struct {
		name   string
		modify func(old *scyllav1alpha1.ScyllaDBDatacenter)
		want   field.ErrorList
	}{
		{name: "scaled to zero and observed", modify: func(*scyllav1alpha1.ScyllaDBDatacenter) {}},
		{
			name:   "nodes inherited from the rack template",
			modify: func(old *scyllav1alpha1.ScyllaDBDatacenter) { old.Spec.Racks[2].Nodes = nil },
			want:   field.ErrorList{field.Forbidden(racks, `rack "europe-west1-d" can't be removed while its nodes are 3: scale it to 0 first`)},
		},
		{
			name:   "nodes still running",
			modify: func(old *scyllav1alpha1.ScyllaDBDatacenter) { old.Status.Racks[2].Nodes = new(int32(1)) },
			want:   field.ErrorList{field.Forbidden(racks, `rack "europe-west1-d" can't be removed while it still runs 1 nodes: wait for the scale-down to 0 to finish`)},
		},
		{
			name:   "a status without an observed generation",
			modify: func(old *scyllav1alpha1.ScyllaDBDatacenter) { old.Status.ObservedGeneration = nil },
			want:   field.ErrorList{field.Forbidden(racks, `rack "europe-west1-d" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := newScyllaDBDatacenter(t)
			old.Generation = 2
			old.Status.ObservedGeneration = new(int64(2))
			old.Spec.Racks[2].Nodes = new(int32(0))
			for _, r := range old.Spec.Racks {
				old.Status.Racks = append(old.Status.Racks, scyllav1alpha1.RackStatus{Name: r.Name, NodeCounts: scyllav1alpha1.NodeCounts{Nodes: new(int32(0))}})
			}
			tc.modify(old)
			sdc := old.DeepCopy()
			sdc.Spec.Racks = sdc.Spec.Racks[:2]
			if diff := cmp.Diff(tc.want, ValidateScyllaDBDatacenterUpdate(sdc, old), ignoreOrigin); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWarningsForScyllaDBDatacenter(t *testing.T) {
	t.Parallel()
	sdc := newScyllaDBDatacenter(t)
	if w := WarningsForScyllaDBDatacenter(sdc); len(w) != 0 {
		t.Errorf("unexpected warnings: %q", w)
	}
	sdc.Spec.ExposeOptions.CQL = &scyllav1alpha1.CQLExposeOptions{}
	want := []string{"spec.exposeOptions.cql is deprecated: expose nodes with spec.exposeOptions.nodeService and broadcastOptions instead"}
	if diff := cmp.Diff(want, WarningsForScyllaDBDatacenter(sdc)); diff != "" {
		t.Errorf("warnings differ (-want +got):\n%s", diff)
	}
}
