package sidecar

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

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
	decommissioning := func(s *corev1.Service, value string) *corev1.Service {
		s.Labels = map[string]string{naming.DecommissionedLabel: value}
		return s
	}

	tt := []struct {
		name     string
		self     string
		services []*corev1.Service
		pods     []*corev1.Pod
		external []string
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
			name:     "a first node without an address yet is skipped for the next one",
			self:     "c",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), ""), svc("c", at(2), "")},
			pods:     []*corev1.Pod{makePod("a", false), makePod("b", false, "10.0.0.2")},
			want:     Seeds{Seeds: []string{"10.0.0.2"}, LocalSeed: "b"},
		},
		{
			name:     "a later node waits when no other node has an address",
			self:     "b",
			services: []*corev1.Service{svc("a", at(0), ""), svc("b", at(1), "")},
			wantErr:  `no other node of the datacenter has an address to seed from (Pod "ns/a" doesn't exist: not available yet): not available yet`,
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

func TestChooseSeedsNeverLetsTwoNodesSeedFromThemselves(t *testing.T) {
	t.Parallel()
	// Every node of a datacenter computes its seeds from the same view; exactly one of them may be first.
	services := []*corev1.Service{
		makeService("a", clusterIPService, baseTime.Add(2*time.Minute), []string{"10.96.0.1"}, nil),
		makeService("b", clusterIPService, baseTime, []string{"10.96.0.2"}, nil),
		makeService("c", clusterIPService, baseTime, []string{"10.96.0.3"}, nil),
		makeService("d", clusterIPService, baseTime.Add(time.Minute), []string{"10.96.0.4"}, nil),
	}
	for _, readyPods := range [][]string{nil, {"a"}, {"d", "a"}, {"a", "b", "c", "d"}} {
		var pods []*corev1.Pod
		for _, name := range readyPods {
			pods = append(pods, makePod(name, true, "10.0.0.1"))
		}
		firsts := 0
		for _, s := range services {
			got, err := ChooseSeeds(SeedsInput{MemberServiceName: s.Name, Services: services, Pods: pods, BroadcastAddress: "10.0.0.99", IPFamily: IPv4})
			if err != nil {
				t.Fatal(err)
			}
			if got.First {
				firsts++
			}
		}
		if firsts != 1 {
			t.Errorf("ready %v: %d nodes think they are first", readyPods, firsts)
		}
	}
}
