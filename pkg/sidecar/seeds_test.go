package sidecar

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

func TestChooseSeeds(t *testing.T) {
	t.Parallel()
	at := func(m int) time.Time { return baseTime.Add(time.Duration(m) * time.Minute) }
	svc := func(name string, created time.Time, clusterIP string) *corev1.Service {
		if clusterIP == "" {
			return makeService(name, headlessService, created, nil, nil)
		}
		return makeService(name, clusterIPService, created, []string{clusterIP}, nil)
	}
	recorded := func(s *corev1.Service, address, podUID string) *corev1.Service {
		s.Annotations = map[string]string{naming.BroadcastAddressAnnotation: address, naming.BroadcastAddressPodUIDAnnotation: podUID}
		return s
	}
	podWithUID := func(p *corev1.Pod, uid string) *corev1.Pod {
		p.UID = types.UID(uid)
		return p
	}
	decommissioning := func(s *corev1.Service, value string) *corev1.Service {
		s.Labels = map[string]string{naming.DecommissionedLabel: value}
		return s
	}
	inMaintenance := func(s *corev1.Service) *corev1.Service {
		s.Labels = map[string]string{naming.NodeMaintenanceLabel: ""}
		return s
	}

	tt := []struct {
		name     string
		self     string
		services []*corev1.Service
		pods     []*corev1.Pod
		external []string
		// joined: the node's volume records that it joined the ring.
		joined   bool
		want     Seeds
		wantErr  string
		waitable bool
	}{
		{
			name:     "the only node seeds from itself",
			self:     "a",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1")},
			want:     Seeds{Seeds: []string{"10.0.0.99"}, First: true},
		},
		{
			name:     "the only node with external seeds seeds from them alone",
			self:     "a",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1")},
			external: []string{"x.example.com", "198.51.100.1"},
			want:     Seeds{Seeds: []string{"x.example.com", "198.51.100.1"}, First: true},
		},
		{
			name:     "with nobody ready the oldest Service is first",
			self:     "b",
			services: []*corev1.Service{svc("b", at(1), "10.96.0.2"), svc("a", at(0), "10.96.0.1"), svc("c", at(2), "10.96.0.3")},
			want:     Seeds{Seeds: []string{"10.96.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "the oldest Service seeds from itself when nobody is ready",
			self:     "a",
			services: []*corev1.Service{svc("b", at(1), "10.96.0.2"), svc("a", at(0), "10.96.0.1")},
			want:     Seeds{Seeds: []string{"10.0.0.99"}, First: true},
		},
		{
			name:     "equal creation times fall back to the name",
			self:     "b",
			services: []*corev1.Service{svc("b", at(0), "10.96.0.2"), svc("a", at(0), "10.96.0.1")},
			want:     Seeds{Seeds: []string{"10.96.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "a ready node comes before an older unready one",
			self:     "a",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1"), svc("b", at(1), "10.96.0.2"), svc("c", at(2), "10.96.0.3")},
			pods:     []*corev1.Pod{makePod("c", true, "10.0.0.3"), makePod("b", false, "10.0.0.2")},
			want:     Seeds{Seeds: []string{"10.96.0.3"}, LocalSeed: "c"},
		},
		{
			// The operator may add a node while another is in maintenance.
			name:     "a Ready node in maintenance is no seed: it reports ready even with ScyllaDB stopped",
			self:     "c",
			services: []*corev1.Service{inMaintenance(svc("a", at(0), "10.96.0.1")), svc("b", at(1), "10.96.0.2"), svc("c", at(2), "10.96.0.3")},
			pods:     []*corev1.Pod{makePod("a", true, "10.0.0.1"), makePod("b", true, "10.0.0.2")},
			want:     Seeds{Seeds: []string{"10.96.0.2"}, LocalSeed: "b"},
		},
		{
			name:     "a node in maintenance doesn't count as Ready: with no other Ready node, the first node is the oldest",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1"), inMaintenance(svc("b", at(1), "10.96.0.2")), svc("c", at(2), "10.96.0.3")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1"), makePod("b", true, "10.0.0.2")},
			want:     Seeds{Seeds: []string{"10.96.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "a later node gets the external seeds plus one local seed",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1"), svc("b", at(1), "10.96.0.2")},
			external: []string{"x.example.com"},
			want:     Seeds{Seeds: []string{"x.example.com", "10.96.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "a headless member is seeded by its Pod IP",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1")},
			want:     Seeds{Seeds: []string{"10.0.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "a later node waits for the first node's address rather than seeding from another unready node",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), "")},
			pods:     []*corev1.Pod{makePod("a", false), makePod("b", false, "10.0.0.2")},
			wantErr:  `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Pod "ns/a" has no IP in its status: not available yet`,
			waitable: true,
		},
		{
			name:     "a later node waits when the first node's Pod doesn't exist yet",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			wantErr:  `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Pod "ns/a" doesn't exist: not available yet`,
			waitable: true,
		},
		{
			name:     "a later node seeds from the earliest Ready node that has an address",
			self:     "d",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), ""), svc("d", at(3), "")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1"), makePod("b", true), makePod("c", true, "10.0.0.3")},
			want:     Seeds{Seeds: []string{"10.0.0.3"}, LocalSeed: "c"},
		},
		{
			name:     "a later node waits when no Ready node has an address",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), "")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1"), makePod("b", true)},
			wantErr:  `no Ready node of the datacenter has an address to seed from (Pod "ns/b" has no IP in its status: not available yet): not available yet`,
			waitable: true,
		},
		{
			name:     "the broadcast address a node recorded is its seed address",
			self:     "b",
			services: []*corev1.Service{recorded(svc("a", at(0), ""), "192.168.1.1", "uid-a"), svc("b", at(1), "")},
			pods:     []*corev1.Pod{podWithUID(makePod("a", true, "10.0.0.1"), "uid-a")},
			want:     Seeds{Seeds: []string{"192.168.1.1"}, LocalSeed: "a"},
		},
		{
			name:     "the broadcast address an unready first node recorded is its seed address",
			self:     "b",
			services: []*corev1.Service{recorded(svc("a", at(0), "10.96.0.1"), "192.168.1.1", "uid-a"), svc("b", at(1), "10.96.0.2")},
			pods:     []*corev1.Pod{podWithUID(makePod("a", false, "10.0.0.1"), "uid-a")},
			want:     Seeds{Seeds: []string{"192.168.1.1"}, LocalSeed: "a"},
		},
		{
			name:     "an address recorded by an earlier Pod of the node is ignored",
			self:     "b",
			services: []*corev1.Service{recorded(svc("a", at(0), ""), "192.168.1.1", "uid-old"), svc("b", at(1), "")},
			pods:     []*corev1.Pod{podWithUID(makePod("a", true, "10.0.0.1"), "uid-a")},
			want:     Seeds{Seeds: []string{"10.0.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "an address recorded by a Pod that is gone is ignored",
			self:     "b",
			services: []*corev1.Service{recorded(svc("a", at(0), ""), "192.168.1.1", "uid-a"), svc("b", at(1), "")},
			wantErr:  `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Pod "ns/a" doesn't exist: not available yet`,
			waitable: true,
		},
		{
			name:     "a recorded address that is not an IP of the family is waited on",
			self:     "b",
			services: []*corev1.Service{recorded(svc("a", at(0), ""), "fd00::1", "uid-a"), svc("b", at(1), "")},
			pods:     []*corev1.Pod{podWithUID(makePod("a", false, "10.0.0.1"), "uid-a")},
			wantErr:  `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Service "ns/a" records broadcast address "fd00::1" in annotation "internal.scylla-operator.scylladb.com/broadcast-address", which is not an IPv4 address; its node's sidecar corrects it: not available yet`,
			waitable: true,
		},
		{
			name: "other nodes being decommissioned are left out",
			self: "c",
			services: []*corev1.Service{
				decommissioning(svc("a", at(0), "10.96.0.1"), naming.DecommissionedLabelTrue),
				decommissioning(svc("b", at(1), "10.96.0.2"), naming.DecommissionedLabelFalse),
				svc("c", at(2), "10.96.0.3"),
			},
			want: Seeds{Seeds: []string{"10.0.0.99"}, First: true},
		},
		{
			name:     "the node's own decommission label doesn't remove it",
			self:     "a",
			services: []*corev1.Service{decommissioning(svc("a", at(0), "10.96.0.1"), naming.DecommissionedLabelFalse), svc("b", at(1), "10.96.0.2")},
			want:     Seeds{Seeds: []string{"10.0.0.99"}, First: true},
		},
		{
			name:     "the node's own Service must be listed",
			self:     "z",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1")},
			wantErr:  `member Service "z" is not among the datacenter's member Services`,
		},
		{
			name:     "after a full outage a node that joined the ring seeds from itself instead of waiting for the first node's address",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), "")},
			pods:     []*corev1.Pod{makePod("a", false), makePod("b", false, "10.0.0.2"), makePod("c", false, "10.0.0.99")},
			joined:   true,
			want: Seeds{Seeds: []string{"10.0.0.99"}, LocalSeed: "c",
				SkippedWait: `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Pod "ns/a" has no IP in its status: not available yet`},
		},
		{
			name:     "a node that joined the ring seeds from the external seeds and itself when the first node's Pod is gone",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			external: []string{"x.example.com"},
			joined:   true,
			want: Seeds{Seeds: []string{"x.example.com", "10.0.0.99"}, LocalSeed: "b",
				SkippedWait: `no node of the datacenter is Ready, so the only safe local seed is its first node "a": Pod "ns/a" doesn't exist: not available yet`},
		},
		{
			name:     "a node that joined the ring seeds from itself when no Ready node has an address",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), "")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1"), makePod("b", true)},
			joined:   true,
			want: Seeds{Seeds: []string{"10.0.0.99"}, LocalSeed: "c",
				SkippedWait: `no Ready node of the datacenter has an address to seed from (Pod "ns/b" has no IP in its status: not available yet): not available yet`},
		},
		{
			name:     "a node that joined the ring still seeds from the unready first node when it has an address",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			pods:     []*corev1.Pod{makePod("a", false, "10.0.0.1")},
			joined:   true,
			want:     Seeds{Seeds: []string{"10.0.0.1"}, LocalSeed: "a"},
		},
		{
			name:     "a node that joined the ring still seeds from a Ready node",
			self:     "a",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1"), svc("b", at(1), "10.96.0.2")},
			pods:     []*corev1.Pod{makePod("b", true, "10.0.0.2")},
			external: []string{"x.example.com"},
			joined:   true,
			want:     Seeds{Seeds: []string{"x.example.com", "10.96.0.2"}, LocalSeed: "b"},
		},
		{
			name:     "the first node that joined the ring seeds as the first node",
			self:     "a",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			external: []string{"x.example.com"},
			joined:   true,
			want:     Seeds{Seeds: []string{"x.example.com"}, First: true},
		},
		{
			name:     "a node that joined the ring still needs its own Service listed",
			self:     "z",
			services: []*corev1.Service{svc("a", at(0), "10.96.0.1")},
			joined:   true,
			wantErr:  `member Service "z" is not among the datacenter's member Services`,
		},
	}
	for _, tc := range tt {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := SeedsInput{
				MemberServiceName: tc.self,
				Services:          tc.services,
				Pods:              tc.pods,
				ExternalSeeds:     tc.external,
				BroadcastAddress:  "10.0.0.99",
				IPFamily:          IPv4,
				Joined:            tc.joined,
			}
			rev := in
			rev.Services = slices.Clone(in.Services)
			slices.Reverse(rev.Services)
			rev.Pods = slices.Clone(in.Pods)
			slices.Reverse(rev.Pods)
			for _, input := range []SeedsInput{in, rev} {
				got, err := ChooseSeeds(input)
				checkError(t, err, tc.wantErr, tc.waitable)
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("unexpected seeds (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// nodeState is one node's Pod as the seed choice sees it.
type nodeState int

const (
	noPod nodeState = iota
	podWithoutIP
	podWithIP
	readyPodWithoutIP
	readyPodWithIP
	nodeStates
)

func (s nodeState) ready() bool { return s == readyPodWithoutIP || s == readyPodWithIP }

func (s nodeState) String() string {
	return [...]string{"noPod", "podWithoutIP", "podWithIP", "readyPodWithoutIP", "readyPodWithIP"}[s]
}

// TestChooseSeedsNeverSplitsADatacenter checks, over every combination of readiness, address availability and
// recorded broadcast address of three nodes and every member Service kind, that every node computes the same first node, that a later node seeds
// only from that first node or from a Ready node, that only the first node seeds from itself, and that the answer
// doesn't depend on the input order. A node that seeds from an unready node other than the first could found a
// second ring with it.
func TestChooseSeedsNeverSplitsADatacenter(t *testing.T) {
	t.Parallel()
	names := []string{"a", "b", "c"}
	// b and c were created at the same time; the name orders them.
	created := map[string]time.Time{"a": baseTime, "b": baseTime.Add(time.Minute), "c": baseTime.Add(time.Minute)}
	clusterIPs := map[string]string{"a": "10.96.0.1", "b": "10.96.0.2", "c": "10.96.0.3"}
	podIPs := map[string]string{"a": "10.0.0.1", "b": "10.0.0.2", "c": "10.0.0.3"}
	// What a node's sidecar recorded on its Service: nothing, its current Pod's address, or an earlier Pod's.
	recordedIPs := map[string]string{"a": "192.168.0.1", "b": "192.168.0.2", "c": "192.168.0.3"}
	staleIPs := map[string]string{"a": "192.168.9.1", "b": "192.168.9.2", "c": "192.168.9.3"}
	const (
		notRecorded = iota
		recordedByThisPod
		recordedByAnEarlierPod
		recordStates
	)
	// selfSeeders are the nodes that ever seeded from themselves while not Ready, that is while bootstrapping.
	selfSeeders := map[string]bool{}
	combinations := 0
	for _, kind := range []serviceKind{clusterIPService, headlessService, loadBalancerService} {
		for code := 0; code < pow(int(nodeStates)*recordStates, len(names)); code++ {
			states := map[string]nodeState{}
			records := map[string]int{}
			var services []*corev1.Service
			var pods []*corev1.Pod
			var ready []string
			for i, name := range names {
				digit := code / pow(int(nodeStates)*recordStates, i) % (int(nodeStates) * recordStates)
				state, record := nodeState(digit%int(nodeStates)), digit/int(nodeStates)
				states[name], records[name] = state, record
				svc := makeService(name, kind, created[name], []string{clusterIPs[name]}, nil)
				switch record {
				case recordedByThisPod:
					svc.Annotations = map[string]string{naming.BroadcastAddressAnnotation: recordedIPs[name], naming.BroadcastAddressPodUIDAnnotation: "uid-" + name}
				case recordedByAnEarlierPod:
					svc.Annotations = map[string]string{naming.BroadcastAddressAnnotation: staleIPs[name], naming.BroadcastAddressPodUIDAnnotation: "uid-earlier-" + name}
				}
				services = append(services, svc)
				var pod *corev1.Pod
				switch state {
				case podWithoutIP, readyPodWithoutIP:
					pod = makePod(name, state.ready())
				case podWithIP, readyPodWithIP:
					pod = makePod(name, state.ready(), podIPs[name])
				}
				if pod != nil {
					pod.UID = types.UID("uid-" + name)
					pods = append(pods, pod)
				}
				if state.ready() {
					ready = append(ready, name)
				}
			}
			combinations++
			// The first node: the earliest Ready one, else the earliest one. names is in creation and name order.
			founder := names[0]
			if len(ready) > 0 {
				founder = ready[0]
			}
			address := func(name string) (string, bool) {
				if records[name] == recordedByThisPod && states[name] != noPod {
					return recordedIPs[name], true
				}
				if kind != headlessService {
					return clusterIPs[name], true
				}
				s := states[name]
				return podIPs[name], s == podWithIP || s == readyPodWithIP
			}
			for _, self := range names {
				t.Run(fmt.Sprintf("%s/%v/recorded=%v/%s", kind, states, records, self), func(t *testing.T) {
					in := SeedsInput{MemberServiceName: self, Services: services, Pods: pods, BroadcastAddress: "self", IPFamily: IPv4}
					rev := in
					rev.Services = slices.Clone(services)
					slices.Reverse(rev.Services)
					rev.Pods = slices.Clone(pods)
					slices.Reverse(rev.Pods)
					got, err := ChooseSeeds(in)
					gotRev, errRev := ChooseSeeds(rev)
					if fmt.Sprint(err) != fmt.Sprint(errRev) {
						t.Fatalf("the error depends on the input order: %v versus %v", err, errRev)
					}
					if diff := cmp.Diff(got, gotRev); diff != "" {
						t.Fatalf("the seeds depend on the input order (-given +reversed):\n%s", diff)
					}
					if err != nil {
						if !errors.Is(err, ErrNotYetAvailable) {
							t.Fatalf("a missing address gave a final error: %v", err)
						}
						return
					}
					switch {
					case got.First:
						if self != founder {
							t.Fatalf("%s seeds from itself but the first node is %s: %+v", self, founder, got)
						}
						if !states[self].ready() {
							selfSeeders[self] = true
						}
					case got.LocalSeed == self:
						t.Fatalf("%s seeds from itself without being first: %+v", self, got)
					case got.LocalSeed != founder && !states[got.LocalSeed].ready():
						t.Fatalf("%s seeds from %s, which is neither Ready nor the first node %s", self, got.LocalSeed, founder)
					default:
						want, ok := address(got.LocalSeed)
						if !ok {
							t.Fatalf("%s seeds from %s, which has no address", self, got.LocalSeed)
						}
						if diff := cmp.Diff([]string{want}, got.Seeds); diff != "" {
							t.Fatalf("unexpected seeds (-want +got):\n%s", diff)
						}
					}
				})
			}
		}
	}
	if combinations != 3*15*15*15 {
		t.Errorf("checked %d combinations", combinations)
	}
	if len(selfSeeders) > 1 {
		t.Errorf("several nodes seeded from themselves while bootstrapping: %v", selfSeeders)
	}
}

func pow(base, exp int) int {
	out := 1
	for range exp {
		out *= base
	}
	return out
}
