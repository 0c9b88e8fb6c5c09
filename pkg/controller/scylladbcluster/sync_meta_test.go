package scylladbcluster

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// clientSlices returns the addresses of each EndpointSlice of the client Service in the meta cluster, by name.
func (f *fixture) clientSlices() map[string][]string {
	f.t.Helper()
	list, err := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).List(f.ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: naming.ScyllaDBClusterClientServiceName(testName)}).String(),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, slice := range list.Items {
		addresses := []string{}
		for _, e := range slice.Endpoints {
			addresses = append(addresses, e.Addresses...)
		}
		out[slice.Name] = addresses
	}
	return out
}

// clientAddresses returns the addresses the client Service's DNS name resolves to: those of all its EndpointSlices.
func (f *fixture) clientAddresses() []string {
	f.t.Helper()
	var out []string
	for _, addresses := range f.clientSlices() {
		out = append(out, addresses...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func clientSliceName(dcName string) string {
	return naming.ScyllaDBClusterClientEndpointSliceName(testName, dcName, discoveryv1.AddressTypeIPv4)
}

// legacyClientSliceName is the name of the un-attributed IPv4 EndpointSlice of the client Service of earlier
// versions, which listed every datacenter's addresses.
var legacyClientSliceName = naming.ScyllaDBClusterClientServiceName(testName) + "-ipv4"

func endpointSliceWrites(writes []string) []string {
	return slices.DeleteFunc(slices.Clone(writes), func(w string) bool { return !strings.HasSuffix(w, "endpointslices") })
}

func TestTheClientServiceHasOneEndpointSliceOfEachDatacentersAddresses(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	want := map[string][]string{clientSliceName("dc1"): {"10.1.0.5"}, clientSliceName("dc2"): {"10.2.0.7"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices (-want +got):\n%s", diff)
	}
	slice, err := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Get(f.ctx, clientSliceName("dc2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slice.Labels[naming.ScyllaDBClusterDatacenterNameLabel] != "dc2" {
		t.Errorf("want dc2's EndpointSlice labelled with its datacenter, got %v", slice.Labels)
	}

	t.Log("At rest, nothing is written")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := endpointSliceWrites(f.writes()["meta"]); len(writes) != 0 {
		t.Errorf("the client EndpointSlices were written though nothing changed: %v", writes)
	}
}

func TestWhileADatacenterCantBeReadAnotherOnesOldAddressesLeaveTheClientService(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	before, _ := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Get(f.ctx, clientSliceName("dc2"), metav1.GetOptions{})

	t.Log("w2's caches can't list; dc1's node moves to another pod IP")
	f.reloadCaches("w2", errors.New("the server is currently unable to handle the request"))
	f.rollOut("w1", "dc1", "10.1.0.9")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"10.1.0.9", "10.2.0.7"}, f.clientAddresses()); diff != "" {
		t.Errorf("client Service addresses: dc1's old address must go, dc2's stay (-want +got):\n%s", diff)
	}
	want := map[string][]string{clientSliceName("dc1"): {"10.1.0.9"}, clientSliceName("dc2"): {"10.2.0.7"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices: dc1's old address must go, dc2's stay (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"update endpointslices"}, endpointSliceWrites(f.writes()["meta"])); diff != "" {
		t.Errorf("client EndpointSlice writes: only dc1's may change (-want +got):\n%s", diff)
	}
	after, _ := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Get(f.ctx, clientSliceName("dc2"), metav1.GetOptions{})
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("dc2's EndpointSlice changed while its remote cluster can't be read (-before +after):\n%s", diff)
	}

	t.Log("Nothing else changes: nothing is written")
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := endpointSliceWrites(f.writes()["meta"]); len(writes) != 0 {
		t.Errorf("the client EndpointSlices were written though nothing changed: %v", writes)
	}
}

func TestARemovedDatacentersAddressesLeaveTheClientServiceWhileAnotherCantBeRead(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	f.reloadCaches("w1", errors.New("the server is currently unable to handle the request"))
	f.updateScyllaDBCluster(func(sc *scyllav1alpha1.ScyllaDBCluster) {
		sc.Spec.Datacenters = sc.Spec.Datacenters[:1]
	})
	// dc2 was not scaled to zero first: that is reported, and its client addresses go all the same.
	if err := f.sync(); err == nil || !strings.Contains(err.Error(), "still has nodes") {
		t.Fatalf("want an error saying the removed dc2 still has nodes, got %v", err)
	}
	want := map[string][]string{clientSliceName("dc1"): {"10.1.0.5"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices: the removed dc2's must go, the unreadable dc1's stay (-want +got):\n%s", diff)
	}
}

func TestTheClientServiceDropsTheUnattributedEndpointSlicesOfEarlierVersionsOnceNoDatacenterNeedsThem(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)

	t.Log("An earlier version wrote one EndpointSlice of every datacenter's addresses, 10.1.0.1 an old one of dc1's")
	legacy, err := makeEndpointSlices(metaObjectMeta(f.scyllaDBCluster(), naming.ScyllaDBClusterClientServiceName(testName)), naming.ScyllaDBClusterClientServiceName(testName),
		familySliceName(naming.ScyllaDBClusterClientServiceName(testName)), clientPorts, []endpoint{{"10.1.0.1", true}, {"10.1.0.5", true}, {"10.2.0.7", true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{clientSliceName("dc1"), clientSliceName("dc2")} {
		if err := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Delete(f.ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Create(f.ctx, legacy[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()

	t.Log("The operator is upgraded while w2 can't be read: the old EndpointSlice stays as it is, dc1 gets its own")
	w2Synced := f.reloadCaches("w2", errors.New("the server is currently unable to handle the request"))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{legacyClientSliceName: {"10.1.0.1", "10.1.0.5", "10.2.0.7"}, clientSliceName("dc1"): {"10.1.0.5"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices (-want +got):\n%s", diff)
	}
	f.clearActions()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if writes := endpointSliceWrites(f.writes()["meta"]); len(writes) != 0 {
		t.Errorf("the client EndpointSlices were written though nothing changed: %v", writes)
	}

	t.Log("w2 can be read again: dc2 gets its own EndpointSlice and the old one goes")
	w2Synced()
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	want = map[string][]string{clientSliceName("dc1"): {"10.1.0.5"}, clientSliceName("dc2"): {"10.2.0.7"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices (-want +got):\n%s", diff)
	}
}

func TestTheUnattributedEndpointSlicesOfEarlierVersionsGoOnceAnUnreadableDatacenterHasItsOwn(t *testing.T) {
	t.Parallel()
	f := newRolledOutFixture(t)
	legacy, err := makeEndpointSlices(metaObjectMeta(f.scyllaDBCluster(), naming.ScyllaDBClusterClientServiceName(testName)), naming.ScyllaDBClusterClientServiceName(testName),
		familySliceName(naming.ScyllaDBClusterClientServiceName(testName)), clientPorts, []endpoint{{"10.1.0.1", true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.kubeClient.DiscoveryV1().EndpointSlices(testNamespace).Create(f.ctx, legacy[0], metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.settle()
	f.reloadCaches("w2", errors.New("the server is currently unable to handle the request"))
	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{clientSliceName("dc1"): {"10.1.0.5"}, clientSliceName("dc2"): {"10.2.0.7"}}
	if diff := cmp.Diff(want, f.clientSlices()); diff != "" {
		t.Errorf("client EndpointSlices (-want +got):\n%s", diff)
	}
}
