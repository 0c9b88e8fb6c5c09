package scylladbcluster

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/scyllakube/scylla-operator/pkg/naming"
)

func TestSeedsFor(t *testing.T) {
	t.Parallel()
	// host is the seed Service host of datacenter from, as nodes of datacenter in resolve it.
	host := func(from, in string) string {
		return naming.ScyllaDBClusterSeedServiceHost("basic", from, remoteNamespace(in))
	}
	service := func(from string, addresses ...string) seedService {
		return seedService{datacenterName: from, name: naming.ScyllaDBClusterSeedServiceName("basic", from), addresses: addresses}
	}

	for _, tc := range []struct {
		name string
		dcs  []dcState
		want seedPlan
	}{
		{
			name: "no datacenters, nothing to do",
			want: seedPlan{datacenters: []datacenterSeeds{}},
		},
		{
			name: "the first datacenter bootstraps alone, without external seeds",
			dcs:  []dcState{{name: "dc1"}},
			want: seedPlan{next: "dc1", datacenters: []datacenterSeeds{{name: "dc1", mayProgress: true}}},
		},
		{
			name: "the second datacenter waits while the first is not rolled out",
			dcs:  []dcState{{name: "dc1", seedAddresses: []string{"10.0.0.1"}}, {name: "dc2"}},
			want: seedPlan{next: "dc1", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", seedServices: []seedService{service("dc1", "10.0.0.1")}},
			}},
		},
		{
			name: "the second datacenter seeds from the first once it is rolled out",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.2", "10.0.0.1", "10.0.0.2"}},
				{name: "dc2"},
			},
			want: seedPlan{next: "dc2", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", mayProgress: true, externalSeeds: []string{host("dc1", "dc2")}, seedServices: []seedService{service("dc1", "10.0.0.1", "10.0.0.2")}},
			}},
		},
		{
			name: "the third datacenter seeds from both before it, and the first never from later ones",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.1"}},
				{name: "dc2", rolledOut: true, seedAddresses: []string{"10.1.0.1"}},
				{name: "dc3"},
			},
			want: seedPlan{next: "dc3", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", mayProgress: true, externalSeeds: []string{host("dc1", "dc2")}, seedServices: []seedService{service("dc1", "10.0.0.1")}},
				{name: "dc3", mayProgress: true, externalSeeds: []string{host("dc1", "dc3"), host("dc2", "dc3")}, seedServices: []seedService{service("dc1", "10.0.0.1"), service("dc2", "10.1.0.1")}},
			}},
		},
		{
			name: "all rolled out: nothing is next and every datacenter may be updated",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.1"}},
				{name: "dc2", rolledOut: true, seedAddresses: []string{"10.1.0.1"}},
			},
			want: seedPlan{datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", mayProgress: true, externalSeeds: []string{host("dc1", "dc2")}, seedServices: []seedService{service("dc1", "10.0.0.1")}},
			}},
		},
		{
			name: "a removed datacenter drops out of the later ones' seeds",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.1"}},
				{name: "dc3", rolledOut: true, seedAddresses: []string{"10.2.0.1"}},
			},
			want: seedPlan{datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc3", mayProgress: true, externalSeeds: []string{host("dc1", "dc3")}, seedServices: []seedService{service("dc1", "10.0.0.1")}},
			}},
		},
		{
			name: "a not-rolled-out earlier datacenter holds the later ones back, whose seed Services still follow it",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.1"}},
				{name: "dc2", seedAddresses: []string{"10.1.0.9"}},
				{name: "dc3", rolledOut: true, seedAddresses: []string{"10.2.0.1"}},
			},
			want: seedPlan{next: "dc2", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", mayProgress: true, externalSeeds: []string{host("dc1", "dc2")}, seedServices: []seedService{service("dc1", "10.0.0.1")}},
				{name: "dc3", seedServices: []seedService{service("dc1", "10.0.0.1"), service("dc2", "10.1.0.9")}},
			}},
		},
		{
			name: "a rolled-out datacenter without addresses seeds no one, and one that would join through nothing is blocked",
			dcs: []dcState{
				{name: "dc1", rolledOut: true},
				{name: "dc2"},
			},
			want: seedPlan{
				blocked: `datacenter "dc2" waits for another datacenter to have running nodes to join through`,
				datacenters: []datacenterSeeds{
					{name: "dc1", mayProgress: true},
					{name: "dc2"},
				},
			},
		},
		{
			name: "a new datacenter put first joins the running ones after it instead of bootstrapping alone",
			dcs: []dcState{
				{name: "dc0"},
				{name: "dc1", rolledOut: true, seedAddresses: []string{"10.0.0.1"}},
			},
			want: seedPlan{next: "dc0", datacenters: []datacenterSeeds{
				{name: "dc0", mayProgress: true, externalSeeds: []string{host("dc1", "dc0")}, seedServices: []seedService{service("dc1", "10.0.0.1")}},
				{name: "dc1", seedServices: nil},
			}},
		},
		{
			name: "a first datacenter that bootstrapped takes no seeds from the later ones while it is not rolled out",
			dcs: []dcState{
				{name: "dc1", bootstrapped: true, seedAddresses: []string{"10.0.0.1"}},
				{name: "dc2", rolledOut: true, bootstrapped: true, seedAddresses: []string{"10.1.0.1"}},
			},
			want: seedPlan{next: "dc1", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", seedServices: []seedService{service("dc1", "10.0.0.1")}},
			}},
		},
		{
			name: "a later datacenter that bootstrapped goes on without seeds when the ones before it have no nodes",
			dcs: []dcState{
				{name: "dc1", rolledOut: true, bootstrapped: true},
				{name: "dc2", bootstrapped: true, seedAddresses: []string{"10.1.0.1"}},
				{name: "dc3", rolledOut: true, bootstrapped: true, seedAddresses: []string{"10.2.0.1"}},
			},
			want: seedPlan{next: "dc2", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true},
				{name: "dc2", mayProgress: true},
				{name: "dc3", seedServices: []seedService{service("dc2", "10.1.0.1")}},
			}},
		},
		{
			name: "the seed Services of a datacenter whose remote cluster can't be read are kept as they are",
			dcs: []dcState{
				{name: "dc1", unknown: true},
				{name: "dc2", rolledOut: true, bootstrapped: true, seedAddresses: []string{"10.1.0.1"}},
			},
			want: seedPlan{next: "dc1", datacenters: []datacenterSeeds{
				{name: "dc1", mayProgress: true, externalSeeds: []string{host("dc2", "dc1")}, seedServices: []seedService{service("dc2", "10.1.0.1")}},
				{name: "dc2", keptSeedServices: []string{naming.ScyllaDBClusterSeedServiceName("basic", "dc1")}},
			}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := seedsFor(testNamespace, "basic", tc.dcs)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(seedPlan{}, datacenterSeeds{}, seedService{})); diff != "" {
				t.Errorf("plan differs (-want +got):\n%s", diff)
			}
		})
	}
}
