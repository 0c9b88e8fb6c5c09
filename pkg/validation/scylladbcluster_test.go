package validation

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1 "github.com/scyllakube/api/scylla/v1"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func newScyllaDBCluster(t testing.TB) *scyllav1alpha1.ScyllaDBCluster {
	return exampleOf[*scyllav1alpha1.ScyllaDBCluster](t, "scylladbcluster-multi-dc.yaml")
}

func TestValidateScyllaDBClusterRefuses(t *testing.T) {
	t.Parallel()
	spec := field.NewPath("spec")
	dcs := spec.Child("datacenters")
	runValidationCases(t, newScyllaDBCluster, ValidateScyllaDBCluster, []validationCase[*scyllav1alpha1.ScyllaDBCluster]{
		{
			name:   "a name too long for a label value",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Name = strings.Repeat("a", 64) },
			want:   field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), strings.Repeat("a", 64), "must be no more than 63 bytes")},
		},
		{
			// Its ScyllaDBDatacenters would be named dev.eu-us-east-1, whose nodes' Service names can't have a dot.
			name:   "a name with a dot",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Name = "dev.eu" },
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), "dev.eu",
				"must not contain dots: the name labels the objects made for it and is part of its nodes' Service and host names")},
		},
		{
			name: "a ScyllaDB Manager cluster ID annotation that is not a UUID",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Annotations = map[string]string{naming.ScyllaDBManagerClusterIDAnnotation: "dev"}
			},
			want: field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(naming.ScyllaDBManagerClusterIDAnnotation), "dev", "must be a ScyllaDB Manager cluster ID (a UUID)")},
		},
		{
			name:   "no namespace",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Namespace = "" },
			want:   field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "it becomes a label value of the objects in the remote clusters")},
		},
		{
			name: "no images",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ScyllaDB.Image = ""
				sc.Spec.ScyllaDBManagerAgent.Image = new("")
				sc.Spec.ExposeOptions.NodeService.Type = scyllav1alpha1.NodeServiceTypeClusterIP
			},
			want: field.ErrorList{
				field.Required(spec.Child("scyllaDB", "image"), "the ScyllaDB image is required, e.g. docker.io/scylladb/scylla:2025.1.2"),
				field.Required(spec.Child("scyllaDBManagerAgent", "image"), "the ScyllaDB Manager Agent image is required, e.g. docker.io/scylladb/scylla-manager-agent:3.5.0"),
			},
		},
		{
			name: "the default Headless node Service on ScyllaDB 5.1",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:5.1.0"
				sc.Spec.ExposeOptions = nil
			},
			want: field.ErrorList{field.Invalid(spec.Child("exposeOptions", "nodeService", "type"), "Headless",
				`needs ScyllaDB 5.2 or later (2023.1 or later for enterprise versions) to replace nodes by host ID, but the tag of spec.scyllaDB.image is "5.1.0"`)},
		},
		{
			name:   "duplicate datacenter names, reported on the later one",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[2].Name = "us-east-1" },
			want:   field.ErrorList{field.Duplicate(dcs.Index(2).Child("name"), "us-east-1")},
		},
		{
			name: "an empty and an invalid datacenter name",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Datacenters[0].Name = ""
				sc.Spec.Datacenters[1].Name = "US_West"
			},
			want: field.ErrorList{
				field.Required(dcs.Index(0).Child("name"), "every datacenter needs a name"),
				field.Invalid(dcs.Index(1).Child("name"), "US_West", "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
			},
		},
		{
			name: "an empty and an invalid remote Kubernetes cluster name",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Datacenters[0].RemoteKubernetesClusterName = ""
				sc.Spec.Datacenters[1].RemoteKubernetesClusterName = "Worker_1"
			},
			want: field.ErrorList{
				field.Required(dcs.Index(0).Child("remoteKubernetesClusterName"), "the RemoteKubernetesCluster the datacenter runs in is required"),
				field.Invalid(dcs.Index(1).Child("remoteKubernetesClusterName"), "Worker_1", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
			},
		},
		{
			name:   "a datacenter without racks",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.Datacenters[1].Racks = nil },
			want:   field.ErrorList{field.Required(dcs.Index(1).Child("racks"), "the datacenter has no racks: neither spec.datacenterTemplate.racks nor its own racks list one")},
		},
		{
			name: "duplicate and empty rack names at both levels",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate.Racks = []scyllav1alpha1.RackSpec{{Name: "a"}, {Name: "a"}}
				sc.Spec.Datacenters[0].Racks = []scyllav1alpha1.RackSpec{{Name: ""}}
			},
			want: field.ErrorList{
				field.Duplicate(spec.Child("datacenterTemplate", "racks").Index(1).Child("name"), "a"),
				field.Required(dcs.Index(0).Child("racks").Index(0).Child("name"), "every rack needs a name"),
			},
		},
		{
			name: "storage dropped from the template leaves only the datacenter that sets its own",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate.RackTemplate.ScyllaDB = nil
				sc.Spec.Datacenters[0].RackTemplate = &scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "1Ti"}}}
				sc.Spec.Datacenters[1].Racks[0].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "1Ti"}}
				sc.Spec.Datacenters[1].Racks[1].ScyllaDB = &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "1Ti"}}
				sc.Spec.Datacenters[2].ScyllaDB.Storage = &scyllav1alpha1.StorageOptions{Capacity: "1Ti"}
			},
			want: field.ErrorList{field.Required(dcs.Index(1).Child("racks").Key("us-west-2c").Child("scyllaDB", "storage", "capacity"),
				`rack "us-west-2c" has no storage capacity: set scyllaDB.storage.capacity on the rack or in a template it inherits from`)},
		},
		{
			name: "datacenter-wide requests above the limits and a bad template label",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.Datacenters[2].ScyllaDB.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("17")
				sc.Spec.DatacenterTemplate.Metadata.Labels["bad key"] = "x"
			},
			want: field.ErrorList{
				field.Invalid(spec.Child("datacenterTemplate", "metadata", "labels"), "bad key", "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
				field.Invalid(dcs.Index(2).Child("scyllaDB", "resources", "requests").Key("cpu"), "17", "must be less than or equal to the cpu limit 16"),
			},
		},
		{
			name:   "an external seed that is not a host",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) { sc.Spec.ScyllaDB.ExternalSeeds = []string{"-seed"} },
			want:   field.ErrorList{field.Invalid(spec.Child("scyllaDB", "externalSeeds").Index(0), "-seed", `"-seed" is neither an IP address nor a DNS name`)},
		},
	})
}

// TestNodeServiceOnAnUnknownVersionIsAccepted shows that only a version known to be older than 5.2 (2023.1) keeps a
// node Service other than ClusterIP: an image pinned by digest, or tagged latest, says nothing about its version,
// and the established operator accepted such manifests.
func TestNodeServiceOnAnUnknownVersionIsAccepted(t *testing.T) {
	t.Parallel()
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for _, tc := range []struct {
		name     string
		validate func(t testing.TB) field.ErrorList
	}{
		{name: "a ScyllaDBCluster pinned by digest with the default Headless node Service", validate: func(t testing.TB) field.ErrorList {
			sc := newScyllaDBCluster(t)
			sc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla@" + digest
			sc.Spec.ExposeOptions = nil
			return ValidateScyllaDBCluster(sc)
		}},
		{name: "a ScyllaDBCluster pinned by tag and digest", validate: func(t testing.TB) field.ErrorList {
			sc := newScyllaDBCluster(t)
			sc.Spec.ScyllaDB.Image = "docker.io/scylladb/scylla:2025.1.2@" + digest
			return ValidateScyllaDBCluster(sc)
		}},
		{name: "a ScyllaDBDatacenter tagged latest with a LoadBalancer node Service", validate: func(t testing.TB) field.ErrorList {
			sdc := newScyllaDBDatacenter(t)
			sdc.Spec.ScyllaDB.Image = "scylladb/scylla:latest"
			sdc.Spec.ExposeOptions.NodeService.Type = scyllav1alpha1.NodeServiceTypeLoadBalancer
			return ValidateScyllaDBDatacenter(sdc)
		}},
		{name: "a ScyllaCluster whose version is pinned by digest with a Headless node Service", validate: func(t testing.TB) field.ErrorList {
			sc := newScyllaCluster(t)
			sc.Spec.Version = "2025.1.2@" + digest
			sc.Spec.ExposeOptions = &scyllav1.ExposeOptions{
				NodeService: &scyllav1.NodeServiceTemplate{Type: scyllav1.HeadlessServiceType},
				BroadcastOptions: &scyllav1.NodeBroadcastOptions{
					Nodes:   &scyllav1.BroadcastOptions{Type: scyllav1.PodIPBroadcastAddressType},
					Clients: &scyllav1.BroadcastOptions{Type: scyllav1.PodIPBroadcastAddressType},
				},
			}
			return ValidateScyllaCluster(sc)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if errs := tc.validate(t); len(errs) != 0 {
				t.Errorf("unexpected errors: %v", errs.ToAggregate())
			}
		})
	}
}

func TestValidateScyllaDBClusterUpdateRemovals(t *testing.T) {
	t.Parallel()
	path := field.NewPath("spec", "datacenters")
	// base has every datacenter scaled to zero and observed, with eu-central-1 and rack us-east-1c to be removed.
	base := func(t testing.TB) (*scyllav1alpha1.ScyllaDBCluster, *scyllav1alpha1.ScyllaDBCluster) {
		old := newScyllaDBCluster(t)
		old.Generation = 7
		old.Status.ObservedGeneration = new(int64(7))
		old.Spec.DatacenterTemplate.RackTemplate.Nodes = new(int32(0))
		old.Spec.Datacenters[2].RackTemplate.Nodes = new(int32(0))
		for _, dc := range old.Spec.Datacenters {
			st := scyllav1alpha1.ScyllaDBClusterDatacenterStatus{Name: dc.Name, NodeCounts: scyllav1alpha1.NodeCounts{Nodes: new(int32(0))}}
			for _, r := range dc.Racks {
				st.Racks = append(st.Racks, scyllav1alpha1.ScyllaDBClusterRackStatus{Name: r.Name, NodeCounts: scyllav1alpha1.NodeCounts{Nodes: new(int32(0))}})
			}
			old.Status.Datacenters = append(old.Status.Datacenters, st)
		}
		sc := old.DeepCopy()
		sc.Spec.Datacenters = sc.Spec.Datacenters[:2]
		sc.Spec.Datacenters[0].Racks = sc.Spec.Datacenters[0].Racks[:2]
		return sc, old
	}
	for _, tc := range []struct {
		name   string
		modify func(old *scyllav1alpha1.ScyllaDBCluster)
		want   field.ErrorList
	}{
		{name: "scaled to zero and observed", modify: func(*scyllav1alpha1.ScyllaDBCluster) {}},
		{
			name:   "a datacenter that still asks for nodes",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) { old.Spec.Datacenters[2].RackTemplate.Nodes = new(int32(2)) },
			want:   field.ErrorList{field.Forbidden(path, `datacenter "eu-central-1" can't be removed while its nodes are 6: scale it to 0 first`)},
		},
		{
			name:   "a datacenter that still runs nodes",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) { old.Status.Datacenters[2].Nodes = new(int32(1)) },
			want:   field.ErrorList{field.Forbidden(path, `datacenter "eu-central-1" can't be removed while it still runs 1 nodes: wait for the scale-down to 0 to finish`)},
		},
		{
			name:   "a rack that still runs nodes",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) { old.Status.Datacenters[0].Racks[2].Nodes = new(int32(2)) },
			want:   field.ErrorList{field.Forbidden(path, `rack "us-east-1c" of datacenter "us-east-1" can't be removed while it still runs 2 nodes: wait for the scale-down to 0 to finish`)},
		},
		{
			name: "a datacenter moved to another RemoteKubernetesCluster while it still runs nodes",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) {
				old.Spec.Datacenters[1].RemoteKubernetesClusterName = "dev-us-west-2-old"
				old.Status.Datacenters[1].Nodes = new(int32(3))
			},
			want: field.ErrorList{field.Forbidden(path.Index(1).Child("remoteKubernetesClusterName"), `datacenter "us-west-2" (moving it from RemoteKubernetesCluster "dev-us-west-2-old" to "dev-us-west-2" removes it from "dev-us-west-2-old") can't be removed while it still runs 3 nodes: wait for the scale-down to 0 to finish`)},
		},
		{
			name: "a datacenter moved to another RemoteKubernetesCluster that still asks for nodes",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) {
				old.Spec.Datacenters[1].RemoteKubernetesClusterName = "dev-us-west-2-old"
				old.Spec.Datacenters[1].RackTemplate = &scyllav1alpha1.RackTemplate{Nodes: new(int32(1))}
			},
			want: field.ErrorList{field.Forbidden(path.Index(1).Child("remoteKubernetesClusterName"), `datacenter "us-west-2" (moving it from RemoteKubernetesCluster "dev-us-west-2-old" to "dev-us-west-2" removes it from "dev-us-west-2-old") can't be removed while its nodes are 3: scale it to 0 first`)},
		},
		{
			name: "a datacenter moved to another RemoteKubernetesCluster once scaled to zero and observed",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) {
				old.Spec.Datacenters[1].RemoteKubernetesClusterName = "dev-us-west-2-old"
			},
		},
		{
			name:   "a stale datacenter status",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) { old.Status.Datacenters[0].Stale = new(true) },
			want:   field.ErrorList{field.Forbidden(path, `rack "us-east-1c" of datacenter "us-east-1" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`)},
		},
		{
			name:   "a status of an older generation",
			modify: func(old *scyllav1alpha1.ScyllaDBCluster) { old.Status.ObservedGeneration = new(int64(6)) },
			want: field.ErrorList{
				field.Forbidden(path, `rack "us-east-1c" of datacenter "us-east-1" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`),
				field.Forbidden(path, `datacenter "eu-central-1" can't be removed until the status shows the current generation: wait for the operator to observe the scale-down to 0`),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sc, old := base(t)
			tc.modify(old)
			if diff := cmp.Diff(tc.want, ValidateScyllaDBClusterUpdate(sc, old), ignoreOrigin); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateScyllaDBClusterUpdateRackStorage(t *testing.T) {
	t.Parallel()
	storagePath := field.NewPath("spec", "datacenters").Index(0).Child("racks").Key("us-east-1a").Child("scyllaDB", "storage")
	templateRack := func(capacity string) scyllav1alpha1.RackSpec {
		return scyllav1alpha1.RackSpec{Name: "us-east-1a", RackTemplate: scyllav1alpha1.RackTemplate{ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{
			Storage: &scyllav1alpha1.StorageOptions{Capacity: capacity, StorageClassName: new("scylladb-local-xfs")},
		}}}
	}
	for _, tc := range []struct {
		name   string
		modify func(sc *scyllav1alpha1.ScyllaDBCluster)
		want   field.ErrorList
	}{
		{
			name: "a template rack of an existing rack's name with other storage",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate.Racks = []scyllav1alpha1.RackSpec{templateRack("2Ti")}
			},
			want: field.ErrorList{field.Forbidden(storagePath, `rack "us-east-1a" of datacenter "us-east-1" can't change its storage from {"capacity":"1Ti","storageClassName":"scylladb-local-xfs"} to {"capacity":"2Ti","storageClassName":"scylladb-local-xfs"}: a rack's storage, merged from spec.datacenterTemplate, the datacenter and the rack, is immutable; keep the rack's storage as it was at every level`)},
		},
		{
			name: "a template rack of an existing rack's name with the same storage",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				sc.Spec.DatacenterTemplate.Racks = []scyllav1alpha1.RackSpec{templateRack("1Ti")}
			},
		},
		{
			name: "a new rack with its own storage",
			modify: func(sc *scyllav1alpha1.ScyllaDBCluster) {
				rack := templateRack("2Ti")
				rack.Name = "us-east-1d"
				sc.Spec.Datacenters[0].Racks = append(sc.Spec.Datacenters[0].Racks, rack)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old := newScyllaDBCluster(t)
			sc := old.DeepCopy()
			tc.modify(sc)
			if diff := cmp.Diff(tc.want, ValidateScyllaDBClusterUpdate(sc, old), ignoreOrigin); diff != "" {
				t.Errorf("errors differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateScyllaDBClusterUpdateRackStorageFromRemovedTemplateRack(t *testing.T) {
	t.Parallel()
	// A rack every datacenter gets from the template, whose us-east-1 copy is also listed by the datacenter: removing
	// it from the template leaves us-east-1a with the datacenter's rackTemplate storage.
	old := newScyllaDBCluster(t)
	old.Spec.DatacenterTemplate.Racks = []scyllav1alpha1.RackSpec{{Name: "us-east-1a", RackTemplate: scyllav1alpha1.RackTemplate{
		Nodes:    new(int32(0)),
		ScyllaDB: &scyllav1alpha1.ScyllaDBTemplate{Storage: &scyllav1alpha1.StorageOptions{Capacity: "2Ti"}},
	}}}
	old.Spec.Datacenters[0].Racks[0].Nodes = new(int32(3))
	old.Generation = 2
	old.Status.ObservedGeneration = new(int64(2))
	sc := old.DeepCopy()
	sc.Spec.DatacenterTemplate.Racks = nil
	want := field.ErrorList{field.Forbidden(field.NewPath("spec", "datacenters").Index(0).Child("racks").Key("us-east-1a").Child("scyllaDB", "storage"),
		`rack "us-east-1a" of datacenter "us-east-1" can't change its storage from {"capacity":"2Ti"} to {"capacity":"1Ti","storageClassName":"scylladb-local-xfs"}: a rack's storage, merged from spec.datacenterTemplate, the datacenter and the rack, is immutable; keep the rack's storage as it was at every level`)}
	if diff := cmp.Diff(want, ValidateScyllaDBClusterUpdate(sc, old), ignoreOrigin); diff != "" {
		t.Errorf("errors differ (-want +got):\n%s", diff)
	}
}
