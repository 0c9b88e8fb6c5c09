package naming

import (
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func TestOperatorEndpointSlicesSelectorsSelectOnlyTheSlicesTheOperatorWrites(t *testing.T) {
	t.Parallel()
	written := func(l map[string]string) labels.Set {
		out := labels.Set{discoveryv1.LabelManagedBy: EndpointSliceManagedByValue}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	// Kubernetes' EndpointSlice controller copies a Service's labels and sets its own managed-by.
	kubernetes := func(l map[string]string) labels.Set {
		out := labels.Set{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}
		for k, v := range l {
			out[k] = v
		}
		return out
	}
	meta := labels.Set{ManagedByLabel: ManagedByLabelValue}
	remote := ScyllaDBClusterRemoteLabels("scylla", "basic", "dc2")
	for _, tc := range []struct {
		name                 string
		set                  labels.Set
		wantMeta, wantRemote bool
	}{
		{name: "a ScyllaDBCluster's client seed slice in its own cluster", set: written(meta), wantMeta: true, wantRemote: true},
		{name: "a ScyllaDBCluster's seed slice in a remote cluster", set: written(remote), wantMeta: false, wantRemote: true},
		{name: "Kubernetes' slice of a member Service", set: kubernetes(meta)},
		{name: "Kubernetes' slice of a remote Service", set: kubernetes(remote)},
		{name: "someone else's slice", set: written(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := OperatorEndpointSlicesSelector().Matches(tc.set); got != tc.wantMeta {
				t.Errorf("OperatorEndpointSlicesSelector matches %v: %v, want %v", tc.set, got, tc.wantMeta)
			}
			if got := RemoteOperatorEndpointSlicesSelector().Matches(tc.set); got != tc.wantRemote {
				t.Errorf("RemoteOperatorEndpointSlicesSelector matches %v: %v, want %v", tc.set, got, tc.wantRemote)
			}
		})
	}
}
