//go:build e2e

package smoke

import (
	"testing"

	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/e2e/framework"
)

// The fake ScyllaDB Manager runs as a process beside the control plane, and tests can inspect its state without
// the client under test.
func TestFakeScyllaDBManagerCanBeStartedAndInspected(t *testing.T) {
	t.Parallel()
	f := framework.NewFramework(t)
	m := f.StartFakeScyllaDBManager(f.Cluster(), "fake-scylladb-manager-smoke")

	st, err := m.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Clusters) != 0 {
		t.Fatalf("a new fake holds %d clusters, want 0", len(st.Clusters))
	}

	client, err := managerclient.New(managerclient.Options{URL: m.URL, UserAgent: f.UserAgent})
	if err != nil {
		t.Fatal(err)
	}
	id, err := client.CreateCluster(t.Context(), &managerclient.Cluster{Name: "smoke/basic", Host: "10.96.0.10", AuthToken: "token"})
	if err != nil {
		t.Fatal(err)
	}

	st, err = m.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Clusters) != 1 || st.Clusters[0].ID != id || st.Clusters[0].Name != "smoke/basic" {
		t.Fatalf("want the one cluster %q named smoke/basic, got %+v", id, st.Clusters)
	}
}
