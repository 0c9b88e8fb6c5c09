package sidecar

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/scyllakube/scylla-operator/pkg/naming"
)

const (
	replacedHostID = "8d5ed9f4-7764-4dbd-bad8-43fddce94b7c"
	// badHostIDError is ReplaceNodeHostID's error for the label value "not-a-uuid" on memberServiceWithLabels.
	badHostIDError = `member Service "ns/sc-dc-r-1" has label internal.scylla-operator.scylladb.com/replacing-node-hostid: "not-a-uuid" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c; ScyllaDB is not started until the label names the host ID of the node to replace or is removed`
)

func TestParseHostIDAcceptsOnlyTheUUIDsNodesHave(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want, wantErr string
	}{
		{in: replacedHostID, want: replacedHostID},
		{in: "8D5ED9F4-7764-4DBD-BAD8-43FDDCE94B7C", want: replacedHostID},
		{in: "", wantErr: `"" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "not-a-uuid", wantErr: `"not-a-uuid" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "10.96.0.1", wantErr: `"10.96.0.1" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "8d5ed9f477644dbdbad843fddce94b7c", wantErr: `"8d5ed9f477644dbdbad843fddce94b7c" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "{8d5ed9f4-7764-4dbd-bad8-43fddce94b7c}", wantErr: `"{8d5ed9f4-7764-4dbd-bad8-43fddce94b7c}" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "urn:uuid:8d5ed9f4-7764-4dbd-bad8-43fddce94b7c", wantErr: `"urn:uuid:8d5ed9f4-7764-4dbd-bad8-43fddce94b7c" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "8d5ed9f4-7764-4dbd-bad8-43fddce94b7g", wantErr: `"8d5ed9f4-7764-4dbd-bad8-43fddce94b7g" is not a host ID: want a UUID like 8d5ed9f4-7764-4dbd-bad8-43fddce94b7c`},
		{in: "00000000-0000-0000-0000-000000000000", wantErr: `"00000000-0000-0000-0000-000000000000" is the nil UUID, which is no node's host ID`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseHostID(tc.in)
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("ParseHostID(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestReplaceNodeHostIDReadsTheMemberServiceLabel(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		labels  map[string]string
		want    string
		wantErr string
	}{
		{name: "no label: the node replaces none"},
		{
			name:   "the user's request alone replaces none: the operator sets the host ID once it may",
			labels: map[string]string{naming.ReplaceLabel: ""},
		},
		{
			name:   "an empty label replaces none",
			labels: map[string]string{naming.ReplacingNodeHostIDLabel: ""},
		},
		{
			name:   "the host ID the operator recorded",
			labels: map[string]string{naming.ReplaceLabel: "", naming.ReplacingNodeHostIDLabel: replacedHostID},
			want:   replacedHostID,
		},
		{
			name:    "a value that is no host ID is refused",
			labels:  map[string]string{naming.ReplacingNodeHostIDLabel: "not-a-uuid"},
			wantErr: badHostIDError,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ReplaceNodeHostID(memberServiceWithLabels(tc.labels))
			if diff := cmp.Diff(tc.wantErr, errorString(err)); diff != "" {
				t.Errorf("unexpected error (-want +got):\n%s", diff)
			}
			if got != tc.want {
				t.Errorf("ReplaceNodeHostID() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestComputeNodeConfigCarriesTheReplacedHostID checks that the node's configuration names the node it replaces and
// that a bad label ends the start at once, even while the addresses are still waited for.
func TestComputeNodeConfigCarriesTheReplacedHostID(t *testing.T) {
	t.Parallel()
	input := func(label string, podIPs ...string) NodeConfigInput {
		svc := memberServiceWithLabels(map[string]string{naming.ReplacingNodeHostIDLabel: label})
		pod := makePod(selfName, false, podIPs...)
		return NodeConfigInput{
			Options: AddressOptions{
				BroadcastNodes:   BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
				BroadcastClients: BroadcastOptions{Type: BroadcastServiceClusterIP},
				ListenNodes:      ListenOptions{Type: ListenAny},
				ListenClients:    ListenOptions{Type: ListenAny},
				IPFamily:         IPv4,
			},
			Pod: pod, Service: svc, Services: []*corev1.Service{svc}, Pods: []*corev1.Pod{pod},
			Interfaces: fakeInterfaces{},
		}
	}

	nc, err := ComputeNodeConfig(input(replacedHostID, "10.0.0.11"))
	if err != nil {
		t.Fatal(err)
	}
	if nc.ReplaceNodeHostID != replacedHostID {
		t.Errorf("ReplaceNodeHostID = %q, want %q", nc.ReplaceNodeHostID, replacedHostID)
	}

	// Without a Pod IP the addresses would be waited for; the bad label is reported instead, as final.
	_, err = ComputeNodeConfig(input("not-a-uuid"))
	if diff := cmp.Diff(badHostIDError, errorString(err)); diff != "" {
		t.Errorf("unexpected error (-want +got):\n%s", diff)
	}
	if errors.Is(err, ErrNotYetAvailable) {
		t.Error("a bad label is waited for instead of refused at once")
	}
}

// TestComputeNodeConfigIgnoresTheJoinedMarkerOfAReplacingNode runs the full-outage case, the first node's Pod without
// an IP: a node whose volume records that it joined seeds from itself, but one asked to replace another waits, as
// it must join the ring anew through a live node.
func TestComputeNodeConfigIgnoresTheJoinedMarkerOfAReplacingNode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		labels    map[string]string
		wantSeeds Seeds
		wantErr   string
	}{
		{
			name: "a node that joined seeds from itself",
			wantSeeds: Seeds{Seeds: []string{"10.0.0.11"}, LocalSeed: selfName,
				SkippedWait: `no node of the datacenter is Ready, so the only safe local seed is its first node "sc-dc-r-0": Pod "ns/sc-dc-r-0" has no IP in its status: not available yet`},
		},
		{
			name:    "a replacing node waits for the first node",
			labels:  map[string]string{naming.ReplacingNodeHostIDLabel: replacedHostID},
			wantErr: `no node of the datacenter is Ready, so the only safe local seed is its first node "sc-dc-r-0": Pod "ns/sc-dc-r-0" has no IP in its status: not available yet`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			first := makeService(otherName, headlessService, baseTime, nil, nil)
			self := makeService(selfName, headlessService, baseTime.Add(time.Minute), nil, nil)
			self.Labels = tc.labels
			pod := makePod(selfName, false, "10.0.0.11")
			nc, err := ComputeNodeConfig(NodeConfigInput{
				Options: AddressOptions{
					BroadcastNodes:   BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					BroadcastClients: BroadcastOptions{Type: BroadcastPodIP, PodIP: PodIPOptions{Source: PodIPSourceStatus}},
					ListenNodes:      ListenOptions{Type: ListenAny},
					ListenClients:    ListenOptions{Type: ListenAny},
					IPFamily:         IPv4,
				},
				Pod: pod, Service: self, Services: []*corev1.Service{first, self},
				Pods:       []*corev1.Pod{makePod(otherName, false), pod},
				Interfaces: fakeInterfaces{},
				Joined:     true,
			})
			checkError(t, err, tc.wantErr, tc.wantErr != "")
			if diff := cmp.Diff(tc.wantSeeds, nc.Seeds); diff != "" {
				t.Errorf("unexpected seeds (-want +got):\n%s", diff)
			}
		})
	}
}
