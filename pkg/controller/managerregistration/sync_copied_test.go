package managerregistration

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	scyllav1alpha1 "github.com/scyllakube/api/scylla/v1alpha1"
	"github.com/scyllakube/managerclient"
	"github.com/scyllakube/scylla-operator/pkg/naming"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// otherUID is the UID of the object whose manifest, annotations included, the test datacenter was copied from.
const otherUID = types.UID("3d9c0e2a-5b1f-4c7d-8e6a-1f2b3c4d5e6f")

// otherClusterID is the ID derived for the other object's cluster.
var otherClusterID = naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", otherUID)

// copiedClusterCases are clusters of another object that a copied cluster ID annotation can name.
var copiedClusterCases = []struct {
	name string
	// cluster is the other object's cluster; an empty ID lets ScyllaDB Manager choose a random one.
	cluster managerclient.Cluster
	// wantRequests are ScyllaDB Manager's reads of it, by its ID, before the datacenter's own cluster is read.
	wantRequests func(id string) []string
	// wantOwner is how the event describes the owner found.
	wantOwner string
}{
	{
		name: "another object's derived ID",
		cluster: managerclient.Cluster{ID: otherClusterID, Name: "other/ScyllaDBDatacenter/basic", Host: "basic-client.other.svc",
			Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(otherUID), naming.ScyllaDBManagerManagedHashLabel: "x"}},
		// The version 5 ID says it is another object's without asking ScyllaDB Manager.
		wantRequests: func(string) []string { return nil },
		wantOwner:    "the ID is derived from another object's UID",
	},
	{
		name: "a cluster labelled with another owner",
		cluster: managerclient.Cluster{Name: "other/basic", Host: "basic-client.other.svc",
			Labels: map[string]string{naming.ScyllaDBManagerOwnerUIDLabel: string(otherUID), naming.ScyllaDBManagerManagedHashLabel: "x"}},
		wantRequests: func(id string) []string { return []string{"GET /api/v1/cluster/" + id} },
		wantOwner:    `ScyllaDB Manager holds it as cluster "other/basic" of owner scylla-operator.scylladb.com/owner-uid=` + string(otherUID),
	},
	{
		name:         "an unlabelled cluster under another name",
		cluster:      managerclient.Cluster{Name: "other/basic", Host: "basic-client.other.svc"},
		wantRequests: func(id string) []string { return []string{"GET /api/v1/cluster/" + id} },
		wantOwner:    `ScyllaDB Manager holds it as cluster "other/basic", without label scylla-operator.scylladb.com/owner-uid, and this object's cluster is named "scylla/ScyllaDBDatacenter/basic"`,
	},
}

func TestSyncRegistersItsOwnClusterWhenItsClusterIDAnnotationWasCopied(t *testing.T) {
	t.Parallel()

	for _, tc := range copiedClusterCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()

			f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
			id := f.registerCluster(tc.cluster)
			sdc := newWaitingSDC()
			sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
			f.update(sdc)
			before := f.manager.State().Clusters
			f.reset()

			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			after := f.manager.State().Clusters
			if diff := cmp.Diff(before, after[:1]); diff != "" {
				t.Errorf("the other object's cluster changed (-want +got):\n%s", diff)
			}
			// One write to ScyllaDB Manager, as for any first registration.
			if diff := cmp.Diff([]string{"POST /api/v1/clusters"}, f.managerRequests(true)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
			}
			wantRequests := append(tc.wantRequests(id), "GET /api/v1/cluster/"+testClusterID, "POST /api/v1/clusters")
			if diff := cmp.Diff(wantRequests, f.managerRequests(false)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			if len(after) != 2 || after[1].ID != testClusterID || after[1].Labels[naming.ScyllaDBManagerOwnerUIDLabel] != string(testUID) {
				t.Errorf("expected the datacenter's own cluster %q to be registered, got %+v", testClusterID, after)
			}
			if got := f.stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != testClusterID {
				t.Errorf("expected the annotation to name the datacenter's own cluster %q, got %q", testClusterID, got)
			}
			if diff := cmp.Diff(goodConditions(), ownedConditions(f.stored())); diff != "" {
				t.Errorf("unexpected conditions (-want +got):\n%s", diff)
			}
			wantEvents := []string{
				`Warning ScyllaDBManagerClusterIDNotOwned Annotation "internal.scylla-operator.scylladb.com/scylladb-manager-clusterid" names cluster ID ` + id +
					", which is not this object's (" + tc.wantOwner + "): it was copied from another object, whose cluster is left alone; this object uses its own cluster ID " + testClusterID,
				`Normal ScyllaDBManagerClusterRegistered Registered cluster "scylla/ScyllaDBDatacenter/basic" (ID ` + testClusterID + `) with ScyllaDB Manager`,
			}
			if diff := cmp.Diff(wantEvents, f.events()); diff != "" {
				t.Errorf("unexpected events (-want +got):\n%s", diff)
			}

			// From now on only the datacenter's own cluster is looked at.
			f.recache()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"GET /api/v1/cluster/" + testClusterID}, f.managerRequests(false)); diff != "" {
				t.Errorf("unexpected ScyllaDB Manager requests (-want +got):\n%s", diff)
			}
			if writes := f.writes(); len(writes) != 0 {
				t.Errorf("expected no writes, got %v", writes)
			}

			// Deleting the copy removes its own cluster only.
			deleted := f.stored().DeepCopy()
			deleted.DeletionTimestamp = new(metav1.NewTime(testNow))
			f.update(deleted)
			f.reset()
			if err := f.sync(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, f.manager.State().Clusters); diff != "" {
				t.Errorf("unexpected clusters after the deletion (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
				t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSyncDeletesOnlyItsOwnClusterWhenItsClusterIDAnnotationWasCopied(t *testing.T) {
	t.Parallel()

	for _, tc := range copiedClusterCases {
		for _, ownRegistered := range []bool{true, false} {
			name := tc.name + ", own cluster not registered"
			if ownRegistered {
				// A sync killed between the create and the annotation's replacement leaves this.
				name = tc.name + ", own cluster registered under the derived ID"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()

				f := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
				id := f.registerCluster(tc.cluster)
				foreign := f.manager.State().Clusters
				if ownRegistered {
					required, err := makeManagerCluster(testClusterID, testUID, &managerClusterSpec{Name: testClusterName, Host: testHost, AuthToken: testToken})
					if err != nil {
						t.Fatal(err)
					}
					f.registerCluster(*required)
				}
				sdc := newSDC()
				sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
				sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
				f.update(sdc)
				f.reset()

				if err := f.sync(); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(foreign, f.manager.State().Clusters); diff != "" {
					t.Errorf("unexpected clusters (-want +got):\n%s", diff)
				}
				var wantWrites []string
				if ownRegistered {
					wantWrites = []string{"DELETE /api/v1/cluster/" + testClusterID}
				}
				if diff := cmp.Diff(wantWrites, f.managerRequests(true)); diff != "" {
					t.Errorf("unexpected ScyllaDB Manager writes (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
					t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
				}
				events := f.events()
				if len(events) == 0 || !strings.HasPrefix(events[0], "Warning ") || !strings.Contains(events[0], id) {
					t.Errorf("expected a warning naming the other object's cluster %s, got %v", id, events)
				}
			})
		}
	}
}

func TestSyncLeavesAnUnlabelledClusterOfTheAnnotationWhenDeleted(t *testing.T) {
	t.Parallel()

	// Registered by the established operator under this datacenter's name, and never adopted: the deletion can't
	// prove the cluster is this datacenter's (its annotations may have been copied), so it stays.
	sdc := newTranslatedSDC()
	f := newFixture(t, sdc, newAuthTokenSecret(t, testToken))
	id := f.registerCluster(managerclient.Cluster{Name: "scylla/basic", Host: testHost})
	before := f.manager.State().Clusters
	sdc = sdc.DeepCopy()
	sdc.Annotations[naming.ScyllaDBManagerClusterIDAnnotation] = id
	sdc.DeletionTimestamp = new(metav1.NewTime(testNow))
	f.update(sdc)
	f.reset()

	if err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, f.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, f.stored().Finalizers); diff != "" {
		t.Errorf("unexpected finalizers (-want +got):\n%s", diff)
	}
	want := []string{`Warning ScyllaDBManagerClusterNotOwned Left cluster "scylla/basic" (ID ` + id + `) in ScyllaDB Manager: it has no scylla-operator.scylladb.com/owner-uid label, so it may be another object's`}
	if diff := cmp.Diff(want, f.events()); diff != "" {
		t.Errorf("unexpected events (-want +got):\n%s", diff)
	}
}

// TestSyncOfACopyInAnotherNamespaceLeavesTheOriginalRegistrationAlone registers a datacenter, then a copy of its
// manifest, annotations and finalizers included, in another namespace, registers and deletes the copy, and checks that
// the original's cluster is untouched throughout.
func TestSyncOfACopyInAnotherNamespaceLeavesTheOriginalRegistrationAlone(t *testing.T) {
	t.Parallel()

	original := newFixture(t, newSDC(), newAuthTokenSecret(t, testToken))
	if err := original.sync(); err != nil {
		t.Fatal(err)
	}
	registered := original.stored()
	before := original.manager.State().Clusters

	copied := registered.DeepCopy()
	copied.Namespace, copied.UID, copied.ResourceVersion = "restored", otherUID, "1"
	copied.Status.Conditions = newSDC().Status.Conditions
	secret := newAuthTokenSecret(t, testToken)
	secret.Namespace = copied.Namespace
	f := newFixture(t, copied, secret)
	// Both talk to the same ScyllaDB Manager.
	f.controller.registrar.managerClient = original.managerClient
	copyKey := copied.Namespace + "/" + copied.Name
	stored := func() *scyllav1alpha1.ScyllaDBDatacenter {
		t.Helper()
		obj, err := f.scyllaTracker.Get(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), copied.Namespace, copied.Name)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*scyllav1alpha1.ScyllaDBDatacenter)
	}

	if err := f.controller.sync(t.Context(), copyKey); err != nil {
		t.Fatal(err)
	}
	copyID := naming.ScyllaDBManagerClusterID("ScyllaDBDatacenter", otherUID)
	if got := stored().Annotations[naming.ScyllaDBManagerClusterIDAnnotation]; got != copyID {
		t.Errorf("expected the copy's annotation to name its own cluster %q, got %q", copyID, got)
	}
	clusters := original.manager.State().Clusters
	if len(clusters) != 2 || clusters[1].ID != copyID || clusters[1].Name != "restored/ScyllaDBDatacenter/basic" {
		t.Fatalf("expected the original's cluster and the copy's own, got %+v", clusters)
	}
	if diff := cmp.Diff(before[0], clusters[0]); diff != "" {
		t.Errorf("the original's cluster changed (-want +got):\n%s", diff)
	}

	deleted := stored().DeepCopy()
	deleted.DeletionTimestamp = new(metav1.NewTime(testNow))
	if err := f.scyllaTracker.Update(scyllav1alpha1.SchemeGroupVersion.WithResource("scylladbdatacenters"), deleted, deleted.Namespace); err != nil {
		t.Fatal(err)
	}
	f.cache(stored())
	if err := f.controller.sync(t.Context(), copyKey); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, original.manager.State().Clusters); diff != "" {
		t.Errorf("unexpected clusters after the copy's deletion (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"example.com/other"}, stored().Finalizers); diff != "" {
		t.Errorf("unexpected finalizers of the copy (-want +got):\n%s", diff)
	}
}
